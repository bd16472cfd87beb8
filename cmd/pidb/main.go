// Command pidb provisions, tunes and validates Raspberry Pi database hosts
// over SSH from one TOML inventory. This file only wires flags to packages and
// maps errors to exit codes: 0 success, 1 a host failed, 2 bad input.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/internal/build"
	"pidb/internal/cmdutil"
	"pidb/internal/labcmd"
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
	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, cmdutil.Intersperse(app.Commands, args))
	return exitCode(err, stderr)
}

// exitCode prints err and maps it to the exit codes ARCHITECTURE.md lists. The
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

// manSections are the man page's sections beside the commands' (EXIT
// STATUS, ENVIRONMENT, FILES, EXAMPLES): the file beside this one, set at
// build time and never changed.
//
//go:embed man.roff
var manSections string

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
			clusterCommand(nil),
			credentialsCommand(nil),
			benchCommand(benchRun{}),
			thermalCommand(nil),
			validateCommand(nil),
			runsCommand(nil),
			reportCommand(nil),
			compareCommand(nil),
			tuneCommand(tuneRun{}),
			labcmd.Command(labcmd.Run{}),
			demoCommand(nil),
			cmdutil.CompletionCommand(func(c *cli.Context, what string) ([]string, error) { return action.Names(what, c.String("inventory")) }),
			cmdutil.ManCommand(manSections),
			helpCommand(),
		},
	}
	app.Action = cmdutil.GroupAction
	cmdutil.SetUsageErrors(app.Commands)
	cmdutil.TidyFlags(app.Commands)
	app.OnUsageError = cmdutil.OnUsageError
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

// Flags shared by the commands that read an inventory; new ones each time
// (see fleetFlags).
func inventoryFlag() cli.Flag {
	return &cli.StringFlag{Name: "inventory", Aliases: []string{"i"}, Usage: "inventory `FILE` (TOML)", EnvVars: []string{"PIDB_INVENTORY"}}
}

func limitFlag() cli.Flag {
	return &cli.StringFlag{Name: "limit", Usage: "only these hosts: `NAMES`, comma-separated: names, patterns (pi*), and !NAME to leave hosts out",
		Action: func(_ *cli.Context, v string) error {
			if strings.TrimSpace(v) == "" {
				return usage.Errorf(`--limit "": name the hosts (pi4,pi3, pi*, !zero), or leave --limit out for every host`)
			}
			return nil
		}}
}
