// Command pidb provisions, tunes and validates Raspberry Pi database hosts
// over SSH from one TOML inventory. This file only wires flags to packages and
// maps errors to exit codes: 0 success, 1 a host failed, 2 bad input.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"pidb/internal/build"
	"pidb/progress"
	"pidb/usage"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newApp(stdout, stderr).RunContext(ctx, args)
	return exitCode(err, stderr)
}

// exitCode prints err and maps it to the exit codes of DESIGN.md. The
// error is every failed host's, with what the host said (a command's
// stderr): sanitized, so that a host cannot send the terminal escapes.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "pidb:", progress.Sanitize(err.Error()))
	if usage.Is(err) {
		return 2
	}
	return 1
}

// release is the version a release build stamps in (scripts/release.sh:
// -ldflags "-X main.release=v1.2.3"); set by the linker, never changed.
var release string

// version is pidb's version: the release's, else the module's, with the
// commit it was built from.
func version() string { return build.Version(release) }

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:            "pidb",
		Usage:           "turn Raspberry Pis into tuned, proven database hosts over SSH",
		Version:         version(),
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true, // pidb's own: helpCommand
		// with a command named help, urfave/cli adds no --help of its own
		Flags:   []cli.Flag{cli.HelpFlag},
		Suggest: true,
		// what the shells' completion scripts ask (pidb completion)
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {}, // exit codes are mapped once, in run
		Commands: []*cli.Command{
			inventoryCommand(nil),
			factsCommand(nil),
			provisionCommand(nil),
			credentialsCommand(nil),
			benchCommand(benchRun{}),
			thermalCommand(nil),
			validateCommand(nil),
			runsCommand(nil),
			reportCommand(nil),
			compareCommand(nil),
			tuneCommand(tuneRun{}),
			labCommand(labRun{}),
			demoCommand(nil),
			completionCommand(),
			manCommand(),
			helpCommand(),
		},
	}
	app.Action = groupAction
	setUsageErrors(app.Commands)
	tidyFlags(app.Commands)
	app.OnUsageError = onUsageError
	return app
}

// helpCommand is `pidb help [CMD [SUB]]`: the same page as `pidb CMD SUB
// --help` (urfave/cli's own help command leaves out a group's commands
// and flags).
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the help of pidb or of a command: pidb help [CMD [SUB]]",
		UsageText: "pidb help [COMMAND [SUBCOMMAND]]",
		Action: func(c *cli.Context) error {
			args := append(append([]string{c.App.Name}, c.Args().Slice()...), "--help")
			return newApp(c.App.Writer, c.App.ErrWriter).RunContext(c.Context, args)
		},
	}
}

// groupAction runs for a command that only holds subcommands: with no
// argument it shows help, with an unknown one it is a usage error.
func groupAction(c *cli.Context) error {
	if c.Args().Present() {
		name := c.App.Name
		if c.Command != nil && c.Command.FullName() != "" && c.Command.FullName() != c.App.Name {
			name += " " + c.Command.FullName()
		}
		return usage.Errorf("unknown command %q (see %s --help)", c.Args().First(), name)
	}
	return cli.ShowSubcommandHelp(c)
}

func onUsageError(c *cli.Context, err error, _ bool) error {
	return usage.Wrap(err)
}

func setUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = onUsageError
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = groupAction
		}
		setUsageErrors(c.Subcommands)
	}
}

// tidyFlags has every flag's help say its default once: a default the
// usage text states ("(default: the inventory's [bench], else 8)") becomes
// the flag's default text, and a bool that is off unless given says
// nothing. A number whose zero means "not given" states its default.
func tidyFlags(cmds []*cli.Command) {
	for _, c := range cmds {
		for _, f := range c.Flags {
			tidyFlag(f)
		}
		tidyFlags(c.Subcommands)
	}
}

func tidyFlag(f cli.Flag) {
	switch f := f.(type) {
	case *cli.BoolFlag:
		if !statedDefault(&f.Usage, &f.DefaultText) && !f.Value {
			f.DisableDefaultText = true
		}
	case *cli.IntFlag:
		statedDefault(&f.Usage, &f.DefaultText)
	case *cli.DurationFlag:
		statedDefault(&f.Usage, &f.DefaultText)
	case *cli.Float64Flag:
		statedDefault(&f.Usage, &f.DefaultText)
	case *cli.StringFlag:
		statedDefault(&f.Usage, &f.DefaultText)
	}
}

// statedDefault moves a default the usage text ends with, " (default:
// X)", into the flag's default text, and reports whether there was one.
func statedDefault(usage, defaultText *string) bool {
	i := strings.LastIndex(*usage, " (default: ")
	if i < 0 || !strings.HasSuffix(*usage, ")") {
		return false
	}
	*defaultText = (*usage)[i+len(" (default: ") : len(*usage)-1]
	*usage = (*usage)[:i]
	return true
}

// Flags shared by the commands that read an inventory; new ones each time
// (see fleetFlags).
func inventoryFlag() cli.Flag {
	return &cli.StringFlag{Name: "inventory", Aliases: []string{"i"}, Usage: "inventory `FILE` (TOML)", EnvVars: []string{"PIDB_INVENTORY"}}
}

func limitFlag() cli.Flag {
	return &cli.StringFlag{Name: "limit", Usage: "only these hosts: `NAMES`, comma-separated"}
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"}
}
