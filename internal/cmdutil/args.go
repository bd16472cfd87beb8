package cmdutil

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/units"
	"pidb/usage"
)

// Intersperse lets a command read its flags wherever they are written
// (pidb report DIR -o x.html, pidb runs DIR --host pi4): the flags after
// the command's arguments move before them, each with its value, and the
// arguments follow a "--". A "--" already there ends the flags, as
// everywhere; a line with no command, or the shells' completion request,
// is left as it is.
func Intersperse(cmds []*cli.Command, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return args
	}
	out := []string{args[0]}
	var cmd *cli.Command
	i := 1
	for ; i < len(args); i++ {
		c := find(cmds, args[i])
		if c == nil {
			break
		}
		cmd, cmds = c, c.Subcommands
		out = append(out, args[i])
	}
	if cmd == nil {
		return args
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		tok := args[i]
		switch {
		case tok == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(tok, "-") && tok != "-":
			flags = append(flags, tok)
			if !strings.Contains(tok, "=") && takesValue(cmd, strings.TrimLeft(tok, "-")) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			positional = append(positional, tok)
		}
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(append(out, "--"), positional...)
	}
	return out
}

// find is the command of cmds called name.
func find(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether cmd's flag called name reads the word after
// it: every known flag but a switch.
func takesValue(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}

var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	invalidValue  = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]+): `)
	// a flag's value from its environment variable (EnvVars)
	invalidEnvValue = regexp.MustCompile(`^could not parse "(.*)" as \w+ value from environment variable "([^"]+)" for flag ([^:]+): `)
)

// flagError says what the flag package's errors mean, in the words of
// pidb's help: two dashes, what a value wants, and the flag a typo was
// close to.
func flagError(c *cli.Context, err error) error {
	flags := c.App.Flags
	help := c.App.Name
	if c.Command != nil && c.Command.Name != "" {
		flags, help = c.Command.Flags, c.Command.HelpName
	}
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		var names []string
		for _, f := range flags {
			for _, n := range f.Names() {
				if len(n) > 1 { // -i and -q are too short to be what a typo meant
					names = append(names, n)
				}
			}
		}
		hint := ""
		if best := units.Closest(m[1], names); best != "" {
			hint = fmt.Sprintf(" (did you mean --%s?)", best)
		} else if len(m[1]) == 1 {
			// a letter (-v) too short to be a typo: the one flag it begins
			var begin []string
			for _, n := range names {
				if strings.HasPrefix(n, m[1]) {
					begin = append(begin, n)
				}
			}
			if len(begin) == 1 {
				hint = fmt.Sprintf(" (did you mean --%s?)", begin[0])
			}
		}
		return usage.Errorf("unknown flag --%s%s: see %s --help", m[1], hint, help)
	}
	if m := invalidValue.FindStringSubmatch(msg); m != nil {
		return usage.Errorf("--%s %q: %s", m[2], m[1], valueWanted(flags, m[2], help))
	}
	if m := invalidEnvValue.FindStringSubmatch(msg); m != nil {
		return usage.Errorf("%s=%q (for --%s): %s", m[2], m[1], m[3], valueWanted(flags, m[3], help))
	}
	return usage.Wrap(err)
}

// valueWanted says what the flag called name takes, by its kind.
func valueWanted(flags []cli.Flag, name, help string) string {
	for _, f := range flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		switch f.(type) {
		case *cli.DurationFlag:
			return `want a number and a unit, like "90s", "5m" or "1h"`
		case *cli.IntFlag:
			return "want a whole number"
		case *cli.Float64Flag:
			return "want a number"
		case *cli.BoolFlag:
			return "want true or false"
		}
	}
	return "see " + help + " --help"
}

// unknownCommand is the error for a command that is not one of cmds, with
// the one it was close to.
func unknownCommand(name, help string, cmds []*cli.Command) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	hint := ""
	if best := units.Closest(name, names); best != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", best)
	}
	return usage.Errorf("unknown command %q%s: see %s --help", name, hint, help)
}
