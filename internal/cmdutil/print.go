package cmdutil

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"pidb/output"
	"pidb/progress"
)

// ViewFlags choose how progress looks on stderr (NewView reads them).
func ViewFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress on stderr: only results, failures and notes"},
		&cli.BoolFlag{Name: "verbose", Usage: "also every command pidb runs on the hosts (never what it sends them on stdin: files, passwords' verifiers)"},
		&cli.BoolFlag{Name: "no-color", Usage: "no colour, even on a terminal (also: the NO_COLOR environment variable)"},
	}
}

// NewView is the progress view the flags and stderr ask for: live lines
// on a terminal, plain timestamped lines elsewhere.
func NewView(c *cli.Context) *progress.View {
	w := c.App.ErrWriter
	tty := IsTerminal(w)
	return progress.New(w, progress.Options{Live: tty, Quiet: c.Bool("quiet"), Verbose: c.Bool("verbose"), Color: tty && UseColor(c)})
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Table writes a table on stdout; on a terminal, with colour allowed,
// its verdicts are coloured.
func Table(c *cli.Context, t output.Grid) error {
	return output.Table(c.App.Writer, t.Header, t.Rows, IsTerminal(c.App.Writer) && UseColor(c))
}

// UseColor is false with --no-color or NO_COLOR set (https://no-color.org).
func UseColor(c *cli.Context) bool {
	_, no := os.LookupEnv("NO_COLOR")
	return !no && !c.Bool("no-color")
}

// PrintResults prints the JSON document with --json, else the table, and
// then returns err, the command's own.
func PrintResults(c *cli.Context, js any, t output.Grid, err error) error {
	var perr error
	if c.Bool("json") {
		perr = output.JSON(c.App.Writer, js)
	} else {
		perr = Table(c, t)
	}
	return cmp.Or(perr, err)
}

// Lines prints lines on w, sanitized: what hosts said is in them.
func Lines(w io.Writer, ls ...string) {
	for _, l := range ls {
		fmt.Fprintln(w, progress.Sanitize(l))
	}
}

// WithOptions is a command's action: its options, read from the flags
// (a usage error stops it there), then run on them.
func WithOptions[O any](options func(*cli.Context) (O, error), run func(*cli.Context, O) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		o, err := options(c)
		if err != nil {
			return err
		}
		return run(c, o)
	}
}

// OrWork is run, a test's seam that keeps the options, or when it is nil
// the command's own work.
func OrWork[O any](run, work func(*cli.Context, O) error) func(*cli.Context, O) error {
	if run != nil {
		return run
	}
	return work
}

// Printed is the work of a fleet command that prints its results as they
// come: a table, or with --json the results themselves.
func Printed[O, R any](do func(context.Context, O) ([]R, error), layout func([]R) output.Grid) func(*cli.Context, O) error {
	return func(c *cli.Context, o O) error {
		rs, err := do(c.Context, o)
		if rs == nil {
			return err
		}
		return PrintResults(c, rs, layout(rs), err)
	}
}
