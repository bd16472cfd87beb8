// Package cmdutil is the command line's plumbing over urfave/cli, as
// cli/cli's cmdutil is gh's: a command's action built from its options and
// its work, with a seam for the tests of its options (WithOptions, OrWork);
// bad flags, arguments and commands as usage errors, exit code 2
// (SetUsageErrors, GroupAction, NoArguments); help that states each
// default once (TidyFlags); how results print (PrintResults, Table,
// Lines, Printed) and how progress looks (NewView); and the flags of the
// inventory's settings, made from their declaration (Settings). The commands themselves are cmd/pidb's.
package cmdutil

import (
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/usage"
)

// GroupAction runs for a command that only holds subcommands: with no
// argument it shows help, with an unknown one it is a usage error naming
// the command it was close to.
func GroupAction(c *cli.Context) error {
	if c.Args().Present() {
		name, cmds := c.App.Name, c.App.Commands
		if c.Command != nil && c.Command.FullName() != "" && c.Command.FullName() != c.App.Name {
			name, cmds = name+" "+c.Command.FullName(), c.Command.Subcommands
		}
		return unknownCommand(c.Args().First(), name, cmds)
	}
	return cli.ShowSubcommandHelp(c)
}

// OnUsageError makes a flag urfave/cli cannot read a usage error.
func OnUsageError(c *cli.Context, err error, _ bool) error {
	return flagError(c, err)
}

// SetUsageErrors makes every command's bad flags usage errors, and gives a
// command that only holds subcommands GroupAction.
func SetUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = OnUsageError
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = GroupAction
		}
		SetUsageErrors(c.Subcommands)
	}
}

// TidyFlags has every flag's help say its default once: a default the
// usage text states ("(default: the inventory's [bench], else 8)") becomes
// the flag's default text, and a bool that is off unless given says
// nothing. A number whose zero means "not given" states its default.
func TidyFlags(cmds []*cli.Command) {
	for _, c := range cmds {
		for _, f := range c.Flags {
			tidyFlag(f)
		}
		TidyFlags(c.Subcommands)
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

// NoArguments refuses a command's arguments, for one that takes none.
func NoArguments(c *cli.Context) error {
	if c.Args().Present() {
		return usage.Errorf("unexpected argument %q: %s takes no arguments", c.Args().First(), c.Command.HelpName)
	}
	return nil
}

// JSONFlag is --json: results as one JSON document, for programs.
func JSONFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout"}
}
