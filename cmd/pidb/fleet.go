package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"strings"
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
// its verdicts are coloured. Its cells hold what hosts said (facts, live
// settings, errors): sanitized before the columns are laid out, and
// before the colours, which are pidb's own.
func table(c *cli.Context, t tables.Table) error {
	header, rows := t.Header, t.Rows
	safe := make([][]string, len(rows))
	for i, r := range rows {
		safe[i] = make([]string, len(r))
		for j, cell := range r {
			safe[i][j] = progress.Sanitize(cell)
		}
	}
	rows = safe
	w := c.App.Writer
	if !isTerminal(w) || !useColor(c) {
		return output.Table(w, header, rows)
	}
	var b strings.Builder
	if err := output.Table(&b, header, rows); err != nil {
		return err
	}
	_, err := io.WriteString(w, output.Paint(b.String()))
	return err
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
	if c.Args().Present() {
		return action.Fleet{}, usage.Errorf("unexpected argument %q: %s takes no arguments, and pidb reads no flag after one (put -i FILE and the other flags before it)", c.Args().First(), c.Command.HelpName)
	}
	return fleetFlagsOf(c)
}

// fleetFlagsOf is fleetOf for a command that takes arguments.
func fleetFlagsOf(c *cli.Context) (action.Fleet, error) {
	if c.String("inventory") == "" {
		return action.Fleet{}, usage.Errorf("no inventory: give -i FILE (or set PIDB_INVENTORY)")
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
