package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"pidb/output"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"pidb/config"
	"pidb/usage"
)

// app runs one command the way pidb does, and returns stdout, stderr and
// the error.
func app(t *testing.T, cmd *cli.Command, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &cli.App{Name: "pidb", Writer: &out, ErrWriter: &errb, Commands: []*cli.Command{cmd}, ExitErrHandler: func(*cli.Context, error) {}}
	SetUsageErrors(a.Commands)
	a.OnUsageError = OnUsageError
	err := a.RunContext(context.Background(), append([]string{"pidb"}, args...))
	return out.String(), errb.String(), err
}

// TestWithOptions: a usage error from the options stops the command before
// its work; a seam given instead of the work sees the options; without
// one, the work runs.
func TestWithOptions(t *testing.T) {
	type opts struct{ N int }
	options := func(c *cli.Context) (opts, error) {
		if err := NoArguments(c); err != nil {
			return opts{}, err
		}
		return opts{N: c.Int("n")}, nil
	}
	var worked, seen []int
	work := func(_ *cli.Context, o opts) error { worked = append(worked, o.N); return nil }
	seam := func(_ *cli.Context, o opts) error { seen = append(seen, o.N); return nil }
	cmd := func(run func(*cli.Context, opts) error) *cli.Command {
		return &cli.Command{Name: "x", Flags: []cli.Flag{&cli.IntFlag{Name: "n"}}, Action: WithOptions(options, OrWork(run, work))}
	}
	if _, _, err := app(t, cmd(seam), "x", "--n", "3"); err != nil || len(seen) != 1 || seen[0] != 3 || len(worked) != 0 {
		t.Errorf("with a seam: %v, seen %v, worked %v", err, seen, worked)
	}
	if _, _, err := app(t, cmd(nil), "x", "--n", "4"); err != nil || len(worked) != 1 || worked[0] != 4 {
		t.Errorf("without one: %v, worked %v", err, worked)
	}
	_, _, err := app(t, cmd(nil), "x", "extra", "--n", "5")
	if !usage.Is(err) || !strings.Contains(err.Error(), `unexpected argument "extra"`) || len(worked) != 1 {
		t.Errorf("an argument: %v, worked %v; want a usage error before the work", err, worked)
	}
	if _, _, err := app(t, cmd(nil), "x", "--n", "many"); !usage.Is(err) {
		t.Errorf("a flag urfave/cli cannot read: %v, want a usage error", err)
	}
}

// TestGroupAction: a command that only holds subcommands shows its help,
// and an unknown subcommand is a usage error naming it.
func TestGroupAction(t *testing.T) {
	group := &cli.Command{Name: "lab", Subcommands: []*cli.Command{{Name: "up", Action: func(*cli.Context) error { return nil }}}}
	if out, _, err := app(t, group, "lab"); err != nil || !strings.Contains(out, "up") {
		t.Errorf("lab alone: %v, stdout %q; want its help", err, out)
	}
	if _, _, err := app(t, group, "lab", "upp"); !usage.Is(err) || err.Error() != `unknown command "upp" (did you mean "up"?): see pidb lab --help` {
		t.Errorf("lab upp: %v", err)
	}
}

// TestTidyFlags: a default the usage text states becomes the flag's
// default text, once; a bool off unless given states none.
func TestTidyFlags(t *testing.T) {
	n := &cli.IntFlag{Name: "clients", Usage: "client connections (default: the inventory's [bench], else 8)"}
	b := &cli.BoolFlag{Name: "json", Usage: "print JSON"}
	on := &cli.BoolFlag{Name: "use-fk", Usage: "foreign keys", Value: true}
	TidyFlags([]*cli.Command{{Name: "x", Flags: []cli.Flag{n, b, on}}})
	if n.Usage != "client connections" || n.DefaultText != "the inventory's [bench], else 8" {
		t.Errorf("clients: usage %q, default %q", n.Usage, n.DefaultText)
	}
	if !b.DisableDefaultText || on.DisableDefaultText {
		t.Errorf("bools: json says its default %v, use-fk hides its %v", !b.DisableDefaultText, on.DisableDefaultText)
	}
}

// TestPrintResults: the table, or with --json the document; the command's
// own error comes back after either.
func TestPrintResults(t *testing.T) {
	failed := errors.New("1 of 2 hosts failed")
	cmd := &cli.Command{Name: "x", Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}}, Action: func(c *cli.Context) error {
		return PrintResults(c, []map[string]int{{"tps": 5}}, output.Grid{Header: []string{"HOST", "TPS"}, Rows: [][]string{{"pi4", "5.0"}}}, failed)
	}}
	out, _, err := app(t, cmd, "x")
	if err != failed || out != "HOST  TPS\npi4   5.0\n" {
		t.Errorf("the table: %q, %v", out, err)
	}
	out, _, err = app(t, cmd, "x", "--json")
	if err != failed || out != "[\n  {\n    \"tps\": 5\n  }\n]\n" {
		t.Errorf("the JSON: %q, %v", out, err)
	}
}

// TestSettings: a setting's flag takes its key's help and rule: a bad
// value is a usage error naming the flag as the command calls it, and the
// values given come back by the inventory's keys.
func TestSettings(t *testing.T) {
	var got config.Values
	s := Settings{"clients", "thermal-interval=interval"}
	cmd := &cli.Command{Name: "x", Flags: s.Flags(config.ForBench), Action: func(c *cli.Context) error {
		got = s.Values(c, config.BenchSection)
		for k, v := range s.Values(c, config.ThermalSection) {
			got["thermal."+k] = v
		}
		return nil
	}}
	if _, _, err := app(t, cmd, "x", "--clients", "4", "--interval", "15s"); err != nil || len(got) != 2 || got["clients"] != 4 || got["thermal.interval"] != 15*time.Second {
		t.Errorf("the values given: %v, %v", got, err)
	}
	if _, _, err := app(t, cmd, "x", "--interval", "0s"); !usage.Is(err) || err.Error() != "--interval: want more than zero, not 0s" {
		t.Errorf("an interval of nothing: %v", err)
	}
	if _, _, err := app(t, cmd, "x", "--clients", "0"); !usage.Is(err) || err.Error() != "--clients: 0 is out of range 1-10000" {
		t.Errorf("no clients: %v", err)
	}
}

// TestIntersperse: a command's flags after its arguments move before them,
// each with its value (a switch has none), and the arguments follow "--";
// what has no command, a "--" of the user's, and the shells' completion
// request stay as they are.
func TestIntersperse(t *testing.T) {
	cmds := []*cli.Command{
		{Name: "report", Flags: []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}}, &cli.BoolFlag{Name: "compare"}}},
		{Name: "lab", Subcommands: []*cli.Command{{Name: "snapshot", Flags: []cli.Flag{&cli.StringFlag{Name: "dir"}, &cli.BoolFlag{Name: "list"}}}}},
	}
	for _, c := range []struct{ in, want string }{
		{"pidb report DIR -o x.html", "pidb report -o x.html -- DIR"},
		{"pidb report -o x.html DIR", "pidb report -o x.html -- DIR"},
		{"pidb report A --compare B -o=x.html", "pidb report --compare -o=x.html -- A B"},
		{"pidb report A -- -o", "pidb report -- A -o"},
		{"pidb lab snapshot pi4 --dir /tmp/lab seeded", "pidb lab snapshot --dir /tmp/lab -- pi4 seeded"},
		{"pidb lab snapshot --list", "pidb lab snapshot --list"},
		{"pidb report DIR --unknown x", "pidb report --unknown -- DIR x"},
		{"pidb --help", "pidb --help"},
		{"pidb nosuch a -b", "pidb nosuch a -b"},
		{"pidb report DIR --generate-bash-completion", "pidb report DIR --generate-bash-completion"},
	} {
		if got := strings.Join(Intersperse(cmds, strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestFlagErrors: the flag package's errors in pidb's words, with two
// dashes, what a value wants, and the flag or command a typo was close to.
func TestFlagErrors(t *testing.T) {
	provision := func() *cli.Command {
		return &cli.Command{Name: "provision", Flags: []cli.Flag{&cli.BoolFlag{Name: "dry-run"}, &cli.DurationFlag{Name: "apt-lock-timeout"},
			&cli.IntFlag{Name: "concurrency"}, &cli.Float64Flag{Name: "speed"}, &cli.StringFlag{Name: "inventory", Aliases: []string{"i"}}},
			Action: func(*cli.Context) error { return nil }}
	}
	for args, want := range map[string]string{
		"--dryrun":   "unknown flag --dryrun (did you mean --dry-run?): see pidb provision --help",
		"--zzzzzzzz": "unknown flag --zzzzzzzz: see pidb provision --help",
		// a letter: the one flag it begins, none where two do
		"-s":                   "unknown flag --s (did you mean --speed?): see pidb provision --help",
		"-c":                   "unknown flag --c (did you mean --concurrency?): see pidb provision --help",
		"-x":                   "unknown flag --x: see pidb provision --help",
		"--apt-lock-timeout 5": `--apt-lock-timeout "5": want a number and a unit, like "90s", "5m" or "1h"`,
		"--concurrency ten":    `--concurrency "ten": want a whole number`,
		"--speed fast":         `--speed "fast": want a number`,
		"--dry-run=maybe":      `--dry-run "maybe": want true or false`,
	} {
		_, _, err := app(t, provision(), append([]string{"provision"}, strings.Fields(args)...)...)
		if !usage.Is(err) || err.Error() != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	group := &cli.Command{Name: "bench", Subcommands: []*cli.Command{{Name: "cleanup", Action: func(*cli.Context) error { return nil }}}}
	if _, _, err := app(t, group, "bench", "clenaup"); !usage.Is(err) || err.Error() != `unknown command "clenaup" (did you mean "cleanup"?): see pidb bench --help` {
		t.Errorf("a misspelt subcommand: %v", err)
	}
}
