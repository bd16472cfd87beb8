package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"pidb/action"
	"pidb/output"
	"pidb/progress"
	"pidb/tables"
	"pidb/usage"
)

// fleetFlags are the flags of every fleet command, new for each command:
// urfave/cli writes into a flag as it parses, so two apps running at once
// (in tests) must not share one.
func fleetFlags() []cli.Flag {
	return append([]cli.Flag{inventoryFlag(), limitFlag(), jsonFlag(),
		&cli.IntFlag{Name: "concurrency", Usage: "hosts to work on at once", Value: 10},
		&cli.BoolFlag{Name: "accept-new-host-keys", Usage: "record the SSH host key of a host known_hosts does not know yet (a changed key is always refused)"},
		&cli.DurationFlag{Name: "connect-timeout", Usage: "give up on a host that does not answer SSH within `D`", Value: 10 * time.Second},
	}, viewFlags()...)
}

// viewFlags choose how progress looks on stderr.
func viewFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on stderr: only results, failures and notes"},
		&cli.BoolFlag{Name: "verbose", Usage: "also every command pidb runs on the hosts (never what it sends them on stdin: files, passwords' verifiers)"},
		&cli.BoolFlag{Name: "no-color", Usage: "no colour, even on a terminal (also: the NO_COLOR environment variable)"},
	}
}

// newView is the progress view the flags and stderr ask for: live lines
// on a terminal, plain timestamped lines elsewhere.
func newView(c *cli.Context) *progress.View {
	w := c.App.ErrWriter
	tty := isTerminal(w)
	return progress.New(w, progress.Options{Live: tty, Quiet: c.Bool("quiet"), Verbose: c.Bool("verbose"), Color: tty && useColor(c)})
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// table writes a table on stdout; on a terminal, with colour allowed,
// its verdicts are coloured.
func table(c *cli.Context, t tables.Table) error {
	return output.Table(c.App.Writer, t.Header, t.Rows, isTerminal(c.App.Writer) && useColor(c))
}

// useColor is false with --no-color or NO_COLOR set (https://no-color.org).
func useColor(c *cli.Context) bool {
	_, no := os.LookupEnv("NO_COLOR")
	return !no && !c.Bool("no-color")
}

// fleetOf reads the fleet flags: the inventory, the hosts, how to reach
// them (a key's passphrase is asked for on a terminal), and the progress
// view.
func fleetOf(c *cli.Context) (action.Fleet, error) {
	if err := noArguments(c); err != nil {
		return action.Fleet{}, err
	}
	return fleetFlagsOf(c)
}

// noArguments refuses a command's arguments, for one that takes none.
func noArguments(c *cli.Context) error {
	if c.Args().Present() {
		return usage.Errorf("unexpected argument %q: %s takes no arguments, and pidb reads no flag after one (put -i FILE and the other flags before it)", c.Args().First(), c.Command.HelpName)
	}
	return nil
}

// fleetFlagsOf is fleetOf for a command that takes arguments.
func fleetFlagsOf(c *cli.Context) (action.Fleet, error) {
	if c.String("inventory") == "" {
		return action.Fleet{}, action.ErrNoInventory
	}
	if c.Duration("connect-timeout") <= 0 {
		return action.Fleet{}, usage.Errorf("--connect-timeout must be more than zero")
	}
	if c.Int("concurrency") < 1 {
		return action.Fleet{}, usage.Errorf("--concurrency must be at least 1")
	}
	var ask func(file string) ([]byte, error)
	if term.IsTerminal(int(os.Stdin.Fd())) {
		ask = func(file string) ([]byte, error) {
			fmt.Fprintf(c.App.ErrWriter, "Passphrase for %s: ", file)
			defer fmt.Fprintln(c.App.ErrWriter)
			return term.ReadPassword(int(os.Stdin.Fd()))
		}
	}
	return action.Fleet{
		Inventory:         c.String("inventory"),
		Limit:             c.String("limit"),
		Concurrency:       c.Int("concurrency"),
		AcceptNewHostKeys: c.Bool("accept-new-host-keys"),
		ConnectTimeout:    c.Duration("connect-timeout"),
		View:              newView(c),
		Agent:             os.Getenv("SSH_AUTH_SOCK"),
		Passphrase:        ask,
		Warnings:          c.App.ErrWriter,
	}, nil
}

// printResults prints the JSON document with --json, else the table, and
// then returns err, the command's own.
func printResults(c *cli.Context, js any, t tables.Table, err error) error {
	var perr error
	if c.Bool("json") {
		perr = output.JSON(c.App.Writer, js)
	} else {
		perr = table(c, t)
	}
	return cmp.Or(perr, err)
}

// lines prints lines on w, sanitized: what hosts said is in them.
func lines(w io.Writer, ls ...string) {
	for _, l := range ls {
		fmt.Fprintln(w, progress.Sanitize(l))
	}
}

// withOptions is a command's action: its options, read from the flags
// (a usage error stops it there), then run on them.
func withOptions[O any](options func(*cli.Context) (O, error), run func(*cli.Context, O) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		o, err := options(c)
		if err != nil {
			return err
		}
		return run(c, o)
	}
}

// orWork is run, a test's seam that keeps the options, or when it is nil
// the command's own work.
func orWork[O any](run, work func(*cli.Context, O) error) func(*cli.Context, O) error {
	if run != nil {
		return run
	}
	return work
}

// printed is the work of a fleet command that prints its results as they
// come: a table, or with --json the results themselves.
func printed[O, R any](do func(context.Context, O) ([]R, error), table func([]R) tables.Table) func(*cli.Context, O) error {
	return func(c *cli.Context, o O) error {
		rs, err := do(c.Context, o)
		if rs == nil {
			return err
		}
		return printResults(c, rs, table(rs), err)
	}
}
