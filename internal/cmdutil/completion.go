package cmdutil

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/usage"
)

// The shells' completion scripts: each asks pidb itself what comes next
// (urfave/cli's --generate-bash-completion: the commands, or with a word
// that begins with "-" the flags), so they never go stale. They are the
// files beside this one, set at build time and never changed.
var (
	//go:embed completion.bash
	bashCompletion string
	//go:embed completion.zsh
	zshCompletion string
)

// CompletionCommand is `pidb completion bash|zsh|fish`: the shell's script.
// The bash and zsh scripts complete files after -i, -o and --csv, folders
// after --out, --dir and --png, and ask values (its hidden --values) for
// the names after --workload ("workloads") and --limit ("hosts", of the
// inventory -i names).
func CompletionCommand(values func(c *cli.Context, what string) ([]string, error)) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		UsageText: "pidb completion bash|zsh|fish\n\n   source <(pidb completion bash)\n   pidb completion fish > ~/.config/fish/completions/pidb.fish",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "values", Hidden: true},
			&cli.StringFlag{Name: "inventory", Aliases: []string{"i"}, Hidden: true, EnvVars: []string{"PIDB_INVENTORY"}},
		},
		Action: func(c *cli.Context) error {
			if what := c.String("values"); what != "" {
				names, err := values(c, what)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(c.App.Writer, strings.Join(names, "\n"))
				return err
			}
			if c.NArg() != 1 {
				return usage.Errorf("completion needs one shell: bash, zsh or fish")
			}
			switch c.Args().First() {
			case "bash":
				_, err := fmt.Fprint(c.App.Writer, bashCompletion)
				return err
			case "zsh":
				_, err := fmt.Fprint(c.App.Writer, zshCompletion)
				return err
			case "fish":
				s, err := c.App.ToFishCompletion()
				if err != nil {
					return err
				}
				_, err = fmt.Fprint(c.App.Writer, s)
				return err
			}
			return usage.Errorf("completion %q: want bash, zsh or fish", c.Args().First())
		},
	}
}

// ManCommand prints pidb's man page, made from the same definitions as
// its help, with the sections help has no place for after them (sections:
// roff, EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES): `pidb man > pidb.1;
// man ./pidb.1`.
func ManCommand(sections string) *cli.Command {
	return &cli.Command{
		Name:      "man",
		Usage:     "print pidb's man page (roff), made from the same definitions as its help",
		UsageText: "pidb man > pidb.1 && man ./pidb.1",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usage.Errorf("unexpected argument %q", c.Args().First())
			}
			s, err := c.App.ToManWithSection(1)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.App.Writer, strings.TrimRight(s, "\n")+"\n\n"+sections)
			return err
		},
	}
}
