package labcmd

import (
	"context"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"pidb/internal/cmdutil"
	"pidb/lab"
	"pidb/usage"
)

// TestLabHostsFlag reads --hosts: boards alone or counted, numbered hosts
// by name, each once in the order given; each mistake is exit 2.
func TestLabHostsFlag(t *testing.T) {
	got, err := labHostsFlag("zero, pi5=3,pi4,pi5-2,cm4=1")
	if err != nil || strings.Join(got, " ") != "zero pi5-1 pi5-2 pi5-3 pi4 cm4-1" {
		t.Errorf("hosts %v, %v", got, err)
	}
	for spec, msg := range map[string]string{
		"pi6":       `no lab board "pi6"`,
		"pi5=0":     "want a count from 1 to 14",
		"pi5=15":    "want a count from 1 to 14",
		"pi5=x":     "want a count from 1 to 14",
		"pi5-2=3":   `no lab board "pi5-2"`,
		"pi5-0":     `no lab board "pi5-0"`,
		"pi5-03":    `no lab board "pi5-03"`,
		" , ":       "no boards named",
		"pi4-2gb-x": `no lab board "pi4-2gb-x"`,
	} {
		if _, err := labHostsFlag(spec); err == nil || !strings.Contains(err.Error(), msg) || !usage.Is(err) {
			t.Errorf("--hosts %q: %v, want a usage error with %q", spec, err, msg)
		}
	}
}

// labUpFlagsOf runs `lab up`'s flags into a lab, without bringing it up.
func labUpFlagsOf(t *testing.T, args ...string) (*lab.Lab, error) {
	t.Helper()
	var up *cli.Command
	for _, c := range Command(Run{}).Subcommands {
		if c.Name == "up" {
			up = c
		}
	}
	l := lab.New(t.TempDir(), nil)
	var got error
	cmd := &cli.Command{Name: "up", Flags: up.Flags, Action: func(c *cli.Context) error { got = labUpFlags(c, l); return nil }}
	app := &cli.App{Name: "pidb", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{cmd}, ExitErrHandler: func(*cli.Context, error) {}}
	if err := app.RunContext(context.Background(), append([]string{"pidb", "up"}, args...)); err != nil {
		t.Fatal(err)
	}
	return l, got
}

// TestLabUpFlags: each per-host flag for all hosts (the "*" key) or per
// host, --storage a drive where the board has the bus for it, the hosts
// without vcgencmd and simulated time; each mistake named, exit 2.
func TestLabUpFlags(t *testing.T) {
	l, err := labUpFlagsOf(t, "--cooling", "pi4=case, zero=fan", "--cpu", "board", "--latency", "pi4=1.5ms, zero=0", "--storage", "pi4=usb-ssd, pi5-2=nvme",
		"--release", "trixie,zero=bookworm", "--without-vcgencmd", "pi3", "--thermal-speed", "20")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]lab.Cooling{"pi4": lab.CoolingCase, "zero": lab.CoolingFan}; !maps.Equal(l.Cooling, want) {
		t.Errorf("cooling: %v, want %v", l.Cooling, want)
	}
	for what, c := range map[string]struct{ got, want map[string]string }{
		"cpu":     {l.CPU, map[string]string{"*": "board"}},
		"latency": {l.Latency, map[string]string{"pi4": "1.5ms", "zero": "0s"}},
		"drives":  {l.Drives, map[string]string{"pi4": "usb-ssd", "pi5-2": "nvme"}},
		"release": {l.Releases, map[string]string{"*": "trixie", "zero": "bookworm"}},
	} {
		if !maps.Equal(c.got, c.want) {
			t.Errorf("%s: %v, want %v", what, c.got, c.want)
		}
	}
	if !l.NoVcgencmd["pi3"] || len(l.NoVcgencmd) != 1 || l.ThermalSpeed != 20 {
		t.Errorf("without vcgencmd %v, thermal speed %g", l.NoVcgencmd, l.ThermalSpeed)
	}
	if l, err := labUpFlagsOf(t); err != nil || len(l.Cooling)+len(l.CPU)+len(l.Latency)+len(l.Drives)+len(l.Releases) != 0 || l.ThermalSpeed != 1 {
		t.Errorf("no flags: %+v %v; want each host as it was, real time", l, err)
	}
	for args, want := range map[string]string{
		"--cpu fast":                 `--cpu "fast": want board or full, for all hosts or as NAME=board`,
		"--cpu pi9=board":            `--cpu: no lab host "pi9"`,
		"--cpu pi4=turbo":            `--cpu "pi4=turbo": want board or full`,
		"--cpu board,pi4=":           `--cpu "pi4=": want board or full`,
		"--cooling pi4=ice":          `--cooling "pi4=ice": want case or fan, for all hosts or as NAME=case`,
		"--latency 20":               `--latency "20": want a round trip like 20ms (0: none)`,
		"--latency -5ms":             `--latency "-5ms"`,
		"--latency 3s":               `--latency "3s"`,
		"--latency pi9=20ms":         `--latency: no lab host "pi9"`,
		"--storage usb-ssd":          `--storage "usb-ssd": want NAME=usb-ssd or NAME=nvme`,
		"--storage pi9=usb-ssd":      `--storage: no lab host "pi9"`,
		"--storage pi4=sd-a2":        `--storage "pi4=sd-a2": a host's card is always there`,
		"--storage pi3=usb-ssd":      `--storage: pi3: a Raspberry Pi 3 Model B Rev 1.2 has no USB 3`,
		"--storage pi4-3=nvme":       `--storage: pi4-3: a Raspberry Pi 4 Model B Rev 1.4 has no PCIe`,
		"--storage pi5=nvme,":        `--storage "": want NAME=usb-ssd or NAME=nvme`,
		"--release sid":              `--release "sid": want bookworm or trixie or ubuntu, for all hosts or as NAME=trixie`,
		"--release pi9=trixie":       `--release: no lab host "pi9"`,
		"--without-vcgencmd pi3,pi9": `--without-vcgencmd: no lab host "pi9"`,
		"--thermal-speed 0":          `--thermal-speed 0: want more than 0, at most 1000`,
		"--thermal-speed 1001":       `--thermal-speed 1001: want more than 0, at most 1000`,
	} {
		if _, err := labUpFlagsOf(t, strings.Fields(args)...); err == nil || !strings.Contains(err.Error(), want) || !usage.Is(err) {
			t.Errorf("%s: %v; want a usage error with %q", args, err, want)
		}
	}
}

// TestLabFlagsToOptions: lab up, snapshot and down read their flags and
// arguments into what they ask of the lab, and refuse mistakes with exit
// 2 before the lab is touched.
func TestLabFlagsToOptions(t *testing.T) {
	var up labUpOptions
	var snap labSnapshotOptions
	var down labDownOptions
	ran := 0
	cmd := Command(Run{
		up:       func(_ *cli.Context, o labUpOptions) error { up, ran = o, ran+1; return nil },
		snapshot: func(_ *cli.Context, o labSnapshotOptions) error { snap, ran = o, ran+1; return nil },
		down:     func(_ *cli.Context, o labDownOptions) error { down, ran = o, ran+1; return nil },
	})
	dir := t.TempDir()
	if code, errOut := runWith(t, cmd, "lab", "up", "--dir", dir, "--hosts", "pi5=2", "--from", "seeded", "--cooling", "case"); code != 0 ||
		strings.Join(up.Hosts, ",") != "pi5-1,pi5-2" || up.From != "seeded" || up.Lab == nil || up.Lab.Cooling[lab.AllHosts] != lab.CoolingCase {
		t.Errorf("lab up: exit %d (%s), %+v", code, errOut, up)
	}
	if code, _ := runWith(t, cmd, "lab", "snapshot", "--dir", dir, "pi4"); code != 0 || snap.Host != "pi4" || snap.Name != "pi4" || snap.List || snap.Remove != "" {
		t.Errorf("lab snapshot pi4: exit %d, %+v; want pi4's disk as the snapshot pi4", code, snap)
	}
	if code, _ := runWith(t, cmd, "lab", "snapshot", "--dir", dir, "--remove", "old"); code != 0 || snap.Remove != "old" {
		t.Errorf("lab snapshot --remove old: exit %d, %+v", code, snap)
	}
	if code, _ := runWith(t, cmd, "lab", "down", "--dir", dir, "--hosts", "pi3"); code != 0 || strings.Join(down.Hosts, ",") != "pi3" {
		t.Errorf("lab down --hosts pi3: exit %d, %+v", code, down)
	}
	if code, _ := runWith(t, cmd, "lab", "down", "--dir", dir); code != 0 || len(down.Hosts) != 0 {
		t.Errorf("lab down: exit %d, %+v; want the whole lab", code, down)
	}
	ran = 0
	for _, c := range []struct{ args, want string }{
		{"up --from seeded", "--from needs --hosts"},
		{"up --hosts pi6", `no lab board "pi6"`},
		{"up --cooling oven", `--cooling "oven": want case or fan`},
		{"up now", `unexpected argument "now"`},
		{"snapshot", "name the host to snapshot"},
		{"snapshot pi4 a b", "name the host to snapshot"},
		{"snapshot --list pi4", `unexpected argument "pi4"`},
		{"down pi4", `unexpected argument "pi4"`},
	} {
		code, errOut := runWith(t, cmd, append([]string{"lab"}, strings.Fields(c.args)...)...)
		if code != 2 || ran != 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("lab %s: exit %d, ran %d, stderr %q; want exit 2 with %q before the lab is touched", c.args, code, ran, errOut, c.want)
		}
	}
}

// runWith runs one command as pidb does and returns its exit code and
// what it said on stderr, its error last.
func runWith(t *testing.T, cmd *cli.Command, args ...string) (int, string) {
	t.Helper()
	var errb strings.Builder
	app := &cli.App{Name: "pidb", Writer: io.Discard, ErrWriter: &errb, Commands: []*cli.Command{cmd}, ExitErrHandler: func(*cli.Context, error) {}}
	cmdutil.SetUsageErrors(app.Commands)
	app.OnUsageError = cmdutil.OnUsageError
	err := app.RunContext(context.Background(), append([]string{"pidb"}, args...))
	switch {
	case err == nil:
		return 0, errb.String()
	case usage.Is(err):
		return 2, errb.String() + err.Error()
	}
	return 1, errb.String() + err.Error()
}
