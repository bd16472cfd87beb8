package main

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/config"
	"pidb/demo"
	"pidb/internal/cmdutil"
	"pidb/job"
)

// runWith runs one command, built with a seam that keeps its options
// instead of running, and returns the exit code and stderr.
func runWith(t *testing.T, cmd *cli.Command, args ...string) (int, string) {
	t.Helper()
	return runWithEnv(t, nil, cmd, args...)
}

// runWithEnv is runWith with the environment pidb reads set as env says
// (each unset otherwise: the caller's own must not leak in).
func runWithEnv(t *testing.T, env map[string]string, cmd *cli.Command, args ...string) (int, string) {
	t.Helper()
	for _, name := range []string{"PIDB_INVENTORY", "PIDB_CONNECT_TIMEOUT"} {
		t.Setenv(name, env[name])
	}
	var out, errb bytes.Buffer
	app := &cli.App{Name: "pidb", Writer: &out, ErrWriter: &errb, Commands: []*cli.Command{cmd}, ExitErrHandler: func(*cli.Context, error) {}}
	cmdutil.SetUsageErrors(app.Commands)
	app.OnUsageError = cmdutil.OnUsageError
	err := app.RunContext(context.Background(), append([]string{"pidb"}, args...))
	return exitCode(err, &errb), errb.String()
}

// TestFleetFlagsToOptions: the flags every fleet command shares become
// its Fleet, with the defaults written out; bad ones are exit 2 before
// anything runs.
func TestFleetFlagsToOptions(t *testing.T) {
	var got action.FactsOptions
	ran := 0
	capture := func(_ *cli.Context, o action.FactsOptions) error { got, ran = o, ran+1; return nil }
	if code, errOut := runWith(t, factsCommand(capture), "facts", "-i", "lab.toml", "--limit", "pi4,zero", "--concurrency", "3", "--connect-timeout", "5s", "--accept-new-host-keys"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f := got.Fleet
	if f.Inventory != "lab.toml" || f.Limit != "pi4,zero" || f.Concurrency != 3 || f.ConnectTimeout != 5*time.Second || !f.AcceptNewHostKeys || f.View == nil || f.Warnings == nil {
		t.Errorf("facts' fleet: %+v", f)
	}
	if code, errOut := runWith(t, factsCommand(capture), "facts", "-i", "lab.toml"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if f := got.Fleet; f.Limit != "" || f.Concurrency != 10 || f.ConnectTimeout != 10*time.Second || f.AcceptNewHostKeys {
		t.Errorf("facts' fleet by default: %+v, want every host, 10 at once, a 10 s connect timeout", f)
	}
	for args, want := range map[string]string{
		"facts":                                  "no inventory: give -i FILE (or set PIDB_INVENTORY)",
		"facts -i lab.toml --concurrency 0":      "--concurrency must be at least 1",
		"facts -i lab.toml --connect-timeout 0s": "--connect-timeout must be more than zero",
		"facts -i lab.toml pi4":                  `unexpected argument "pi4"`,
		"facts -i lab.toml --concurrency many":   `--concurrency "many": want a whole number`,
		"facts -i lab.toml --x":                  "unknown flag --x: see pidb facts --help",
		"facts -i lab.toml --concurency 3":       "unknown flag --concurency (did you mean --concurrency?)",
		"facts -i lab.toml --connect-timeout 5":  `--connect-timeout "5": want a number and a unit, like "90s", "5m" or "1h"`,
	} {
		ran = 0
		code, errOut := runWith(t, factsCommand(capture), strings.Fields(args)...)
		if code != 2 || !strings.Contains(errOut, want) || ran != 0 {
			t.Errorf("%s: exit %d, ran %d, stderr %q; want exit 2 with %q before running", args, code, ran, errOut, want)
		}
	}
}

// TestConnectTimeoutFromTheEnvironment: PIDB_CONNECT_TIMEOUT is
// --connect-timeout where the flag is not given (as ANSIBLE_TIMEOUT is
// Ansible's), the flag wins, and a bad value names the variable.
func TestConnectTimeoutFromTheEnvironment(t *testing.T) {
	var got action.FactsOptions
	ran := 0
	capture := func(_ *cli.Context, o action.FactsOptions) error { got, ran = o, ran+1; return nil }
	for _, c := range []struct {
		env, flag string
		want      time.Duration
	}{{"30s", "", 30 * time.Second}, {"30s", "5s", 5 * time.Second}, {"", "", 10 * time.Second}} {
		args := []string{"facts", "-i", "lab.toml"}
		if c.flag != "" {
			args = append(args, "--connect-timeout", c.flag)
		}
		code, errOut := runWithEnv(t, map[string]string{"PIDB_CONNECT_TIMEOUT": c.env}, factsCommand(capture), args...)
		if code != 0 || got.Fleet.ConnectTimeout != c.want {
			t.Errorf("PIDB_CONNECT_TIMEOUT=%q, --connect-timeout %q: exit %d, %v, want %v\n%s", c.env, c.flag, code, got.Fleet.ConnectTimeout, c.want, errOut)
		}
	}
	ran = 0
	code, errOut := runWithEnv(t, map[string]string{"PIDB_CONNECT_TIMEOUT": "5"}, factsCommand(capture), "facts", "-i", "lab.toml")
	if want := `PIDB_CONNECT_TIMEOUT="5" (for --connect-timeout): want a number and a unit`; code != 2 || ran != 0 || !strings.Contains(errOut, want) {
		t.Errorf("PIDB_CONNECT_TIMEOUT=5: exit %d, ran %d, stderr %q; want exit 2 with %q before running", code, ran, errOut, want)
	}
}

// TestLimitGivenEmpty: --limit "" is a mistake (a variable that was not
// set), never every host in silence.
func TestLimitGivenEmpty(t *testing.T) {
	ran := 0
	capture := func(_ *cli.Context, o action.FactsOptions) error { ran++; return nil }
	code, errOut := runWith(t, factsCommand(capture), "facts", "-i", "lab.toml", "--limit", "")
	if code != 2 || ran != 0 || !strings.Contains(errOut, `--limit "": name the hosts`) {
		t.Errorf("exit %d, ran %d, stderr %q", code, ran, errOut)
	}
}

// TestThermalFlagsToOptions: --interval overrides [thermal]'s interval by
// its key; --duration and --csv are the options' own.
func TestThermalFlagsToOptions(t *testing.T) {
	var got action.ThermalOptions
	capture := func(_ *cli.Context, o action.ThermalOptions) error { got = o; return nil }
	if code, errOut := runWith(t, thermalCommand(capture), "thermal", "-i", "lab.toml", "--interval", "15s", "--duration", "1h", "--csv", "temps.csv"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !maps.Equal(got.Thermal, config.Values{"interval": 15 * time.Second}) || got.Duration != time.Hour || got.CSVFile != "temps.csv" || got.Inventory != "lab.toml" {
		t.Errorf("thermal's options: %+v", got)
	}
	if code, _ := runWith(t, thermalCommand(capture), "thermal", "-i", "lab.toml"); code != 0 || len(got.Thermal) != 0 || got.Duration != 0 || got.CSVFile != "" {
		t.Errorf("thermal by default: exit %d, %+v; want the inventory's interval, one reading, no CSV", code, got)
	}
	// a setting's flag is checked by its key's rule as it is read, and
	// named as this command calls it
	for args, want := range map[string]string{"--interval 0s": "--interval: want more than zero, not 0s", "--duration -1s": "--duration -1s: want zero (one reading) or more"} {
		got = action.ThermalOptions{}
		code, errOut := runWith(t, thermalCommand(capture), append([]string{"thermal", "-i", "lab.toml"}, strings.Fields(args)...)...)
		if code != 2 || !strings.Contains(errOut, want) || got.Inventory != "" {
			t.Errorf("thermal %s: exit %d, stderr %q, options %+v; want exit 2 with %q before running", args, code, errOut, got, want)
		}
	}
}

// TestBenchFlagsToOptions: the flags given override [bench] and [thermal]
// by the inventory's keys, and only those given; --out and pidb's
// version go into each run.
func TestBenchFlagsToOptions(t *testing.T) {
	var got action.BenchOptions
	capture := benchRun{bench: func(_ *cli.Context, o action.BenchOptions) error { got = o; return nil }}
	if code, errOut := runWith(t, benchCommand(capture), "bench", "-i", "lab.toml", "--workload", "tpcc", "--clients", "32", "--mix", "10:10:1:1:1",
		"--use-fk=false", "--via", "ssh", "--table-size", "5000", "--idle-before", "1m", "--out", "runs"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantBench := config.Values{"workload": "tpcc", "clients": 32, "mix": "10:10:1:1:1", "use_fk": false, "via": "ssh", "table_size": 5000}
	if !maps.Equal(got.Bench, wantBench) || !maps.Equal(got.Thermal, config.Values{"idle_before": time.Minute}) || got.Out != "runs" || got.Version == "" {
		t.Errorf("bench's options: bench %v, thermal %v, out %q, version %q; want bench %v", got.Bench, got.Thermal, got.Out, got.Version, wantBench)
	}
	if code, _ := runWith(t, benchCommand(capture), "bench", "-i", "lab.toml", "--cluster", "quiz"); code != 0 || got.Cluster != "quiz" {
		t.Errorf("bench --cluster: exit %d, %+v", code, got)
	}
	if code, _ := runWith(t, benchCommand(capture), "bench", "-i", "lab.toml"); code != 0 || len(got.Bench) != 0 || len(got.Thermal) != 0 || got.Out != "pidb-results" || got.Cluster != "" {
		t.Errorf("bench by default: exit %d, %+v; want the inventory's [bench] and runs under pidb-results", code, got)
	}
	for args, want := range map[string]string{
		"--clients 0":          "--clients: 0 is out of range 1-10000",
		"--via pigeon":         `--via: unknown value "pigeon": want one of "auto", "direct", "ssh"`,
		"--warmup -1s":         "--warmup: want zero or more, not -1s",
		"--thermal-interval 0": "--thermal-interval: want more than zero, not 0s",
		"--workload tpc-h":     `--workload: unknown workload "tpc-h"`,
	} {
		got = action.BenchOptions{}
		code, errOut := runWith(t, benchCommand(capture), append([]string{"bench", "-i", "lab.toml"}, strings.Fields(args)...)...)
		if code != 2 || !strings.Contains(errOut, want) || got.Inventory != "" {
			t.Errorf("bench %s: exit %d, stderr %q; want exit 2 with %q before running", args, code, errOut, want)
		}
	}

	var check action.CheckOptions
	var cleanup action.CleanupOptions
	capture = benchRun{
		check:   func(_ *cli.Context, o action.CheckOptions) error { check = o; return nil },
		cleanup: func(_ *cli.Context, o action.CleanupOptions) error { cleanup = o; return nil },
	}
	if code, errOut := runWith(t, benchCommand(capture), "bench", "tpcc", "check", "-i", "lab.toml", "--tables", "3", "--tls", "on"); code != 0 {
		t.Fatalf("tpcc check: exit %d: %s", code, errOut)
	}
	if !maps.Equal(check.Bench, config.Values{"tables": 3, "tls": "on"}) || check.Inventory != "lab.toml" {
		t.Errorf("tpcc check's options: %+v", check)
	}
	if code, errOut := runWith(t, benchCommand(capture), "bench", "cleanup", "-i", "lab.toml", "--limit", "pi3"); code != 0 || cleanup.Limit != "pi3" {
		t.Errorf("cleanup: exit %d %s, options %+v", code, errOut, cleanup)
	}
}

// TestValidateFlagsToOptions: --strict overrides [validate], the thermal
// flags [thermal], the workload's [bench].
func TestValidateFlagsToOptions(t *testing.T) {
	var got action.ValidateOptions
	capture := func(_ *cli.Context, o action.ValidateOptions) error { got = o; return nil }
	if code, errOut := runWith(t, validateCommand(capture), "validate", "-i", "lab.toml", "--strict", "--thermal-interval", "5s", "--idle-after", "30s", "--duration", "2m", "--out", "v"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !maps.Equal(got.Validate, config.Values{"strict": true}) || !maps.Equal(got.Thermal, config.Values{"interval": 5 * time.Second, "idle_after": 30 * time.Second}) ||
		!maps.Equal(got.Bench, config.Values{"duration": 2 * time.Minute}) || got.Out != "v" {
		t.Errorf("validate's options: %+v", got)
	}
}

// TestProvisionFlagsToOptions: provision runs every step, tune apply the
// configure step alone and tune rollback its rollback, each with the
// flags it has; a lock wait of nothing is exit 2.
func TestProvisionFlagsToOptions(t *testing.T) {
	var got action.ProvisionOptions
	capture := func(_ *cli.Context, o action.ProvisionOptions) error { got = o; return nil }
	if code, errOut := runWith(t, provisionCommand(capture), "provision", "-i", "lab.toml", "--preset", "oltp", "--dry-run", "--now", "--apt-lock-timeout", "2m"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got.Steps != job.AllSteps || got.Preset != "oltp" || !got.DryRun || !got.Now || got.AptLockWait != 2*time.Minute {
		t.Errorf("provision's options: %+v", got.ProvisionOptions)
	}
	if code, errOut := runWith(t, provisionCommand(capture), "provision", "-i", "lab.toml", "--apt-lock-timeout", "0s"); code != 2 || !strings.Contains(errOut, "--apt-lock-timeout 0s: want more than 0") {
		t.Errorf("--apt-lock-timeout 0s: exit %d, %q", code, errOut)
	}
	if code, errOut := runWith(t, tuneCommand(tuneRun{steps: capture}), "tune", "apply", "-i", "lab.toml", "--preset", "balanced"); code != 0 || got.Steps != job.Configure || got.Preset != "balanced" || got.DryRun || got.AptLockWait != 0 {
		t.Errorf("tune apply: exit %d %s, options %+v", code, errOut, got.ProvisionOptions)
	}
	if code, errOut := runWith(t, tuneCommand(tuneRun{steps: capture}), "tune", "rollback", "-i", "lab.toml"); code != 0 || got.Steps != job.Rollback || got.Preset != "" {
		t.Errorf("tune rollback: exit %d %s, options %+v", code, errOut, got.ProvisionOptions)
	}
}

// TestCredentialsFlagsToOptions: one host by name, its database, and the
// --ca file made absolute; no host, or two, is exit 2.
func TestCredentialsFlagsToOptions(t *testing.T) {
	var got action.CredentialsOptions
	ran := 0
	capture := func(_ *cli.Context, o action.CredentialsOptions) error { got, ran = o, ran+1; return nil }
	dir := t.TempDir()
	t.Chdir(dir)
	if code, errOut := runWith(t, credentialsCommand(capture), "credentials", "-i", "lab.toml", "--database", "shop", "--ca", "pi4-ca.pem", "pi4"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got.Host != "pi4" || got.Database != "shop" || got.CAFile != filepath.Join(dir, "pi4-ca.pem") || got.Inventory != "lab.toml" || got.ConnectTimeout != 10*time.Second {
		t.Errorf("credentials' options: %+v", got)
	}
	for _, args := range [][]string{{"credentials", "-i", "lab.toml"}, {"credentials", "-i", "lab.toml", "pi4", "pi3"}} {
		ran = 0
		if code, errOut := runWith(t, credentialsCommand(capture), args...); code != 2 || ran != 0 || !strings.Contains(errOut, "credentials needs one host name") {
			t.Errorf("%v: exit %d, ran %d, %q", args, code, ran, errOut)
		}
	}
}

// TestTuneShowFlagsToOptions: the board from its flags, --mem in binary
// units, each --set as name=value; a board half described, or a --set
// without a name, is exit 2.
func TestTuneShowFlagsToOptions(t *testing.T) {
	var got action.TuneShowOptions
	ran := 0
	capture := tuneRun{show: func(_ *cli.Context, o action.TuneShowOptions) error { got, ran = o, ran+1; return nil }}
	if code, errOut := runWith(t, tuneCommand(capture), "tune", "show", "--engine", "mariadb", "--mem", "4GiB", "--cpus", "4", "--storage", "usb",
		"--set", "max_connections=50", "--set", "innodb_buffer_pool_size=1G", "--preset", "seed"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := action.TuneShowOptions{Engine: "mariadb", RAMBytes: 4 << 30, CPUs: 4, Storage: "usb", Preset: "seed",
		Set: map[string]string{"max_connections": "50", "innodb_buffer_pool_size": "1G"}}
	if got.Engine != want.Engine || got.RAMBytes != want.RAMBytes || got.CPUs != want.CPUs || got.Storage != want.Storage || got.Preset != want.Preset || !maps.Equal(got.Set, want.Set) {
		t.Errorf("tune show's options: %+v, want %+v", got, want)
	}
	for args, msg := range map[string]string{
		"tune show --engine postgres --mem 1GiB":                   "tune show needs --cpus",
		"tune show --engine postgres --mem 1GiB --cpus 4 --set =5": `--set "=5": want name=value`,
		"tune show --engine postgres --mem lots --cpus 4":          "--mem:",
	} {
		ran = 0
		if code, errOut := runWith(t, tuneCommand(capture), strings.Fields(args)...); code != 2 || ran != 0 || !strings.Contains(errOut, msg) {
			t.Errorf("%s: exit %d, ran %d, %q; want exit 2 with %q", args, code, ran, errOut, msg)
		}
	}
}

// TestReportFlagsToOptions: report's runs and files; compare is report
// --compare.
func TestReportFlagsToOptions(t *testing.T) {
	var got action.ReportOptions
	capture := func(_ *cli.Context, o action.ReportOptions) error { got = o; return nil }
	if code, errOut := runWith(t, reportCommand(capture), "report", "-o", "fleet.html", "--png", "charts", "--dir", "runs", "a", "b"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got.Output != "fleet.html" || got.PNGDir != "charts" || got.Dir != "runs" || strings.Join(got.Runs, ",") != "a,b" || got.Compare || got.Version == "" {
		t.Errorf("report's options: %+v", got)
	}
	if code, _ := runWith(t, reportCommand(capture), "report", "--compare", "a", "b"); code != 0 || !got.Compare || got.Output != "report.html" || got.Dir != "pidb-results" {
		t.Errorf("report --compare: exit %d, %+v", code, got)
	}
	if code, _ := runWith(t, compareCommand(capture), "compare", "x", "y", "z"); code != 0 || !got.Compare || strings.Join(got.Runs, ",") != "x,y,z" {
		t.Errorf("compare: exit %d, %+v", code, got)
	}
}

// TestRunsFlagsToOptions: the results folder (the default, or the one
// argument) and the filter; two folders, or --last below 0, are exit 2.
func TestRunsFlagsToOptions(t *testing.T) {
	var got action.RunsOptions
	ran := 0
	capture := func(_ *cli.Context, o action.RunsOptions) error { got, ran = o, ran+1; return nil }
	if code, errOut := runWith(t, runsCommand(capture), "runs", "--host", "pi4", "--workload", "tpcc", "--last", "3", "old-results"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got.Dir != "old-results" || got.Filter.Host != "pi4" || got.Filter.Workload != "tpcc" || got.Filter.Last != 3 {
		t.Errorf("runs' options: %+v", got)
	}
	if code, _ := runWith(t, runsCommand(capture), "runs"); code != 0 || got.Dir != "pidb-results" || got.Filter.Host != "" || got.Filter.Last != 0 {
		t.Errorf("runs by default: exit %d, %+v", code, got)
	}
	for args, want := range map[string]string{"runs a b": "want one results folder, have 2 arguments", "runs --last -1": "--last -1: want 0 (all) or more"} {
		ran = 0
		if code, errOut := runWith(t, runsCommand(capture), strings.Fields(args)...); code != 2 || ran != 0 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, ran %d, %q; want exit 2 with %q", args, code, ran, errOut, want)
		}
	}
}

// TestInventoryCheckFlagsToOptions: inventory check reads the inventory
// and the selection, and takes no argument.
func TestInventoryCheckFlagsToOptions(t *testing.T) {
	var got action.Fleet
	ran := 0
	capture := func(_ *cli.Context, f action.Fleet) error { got, ran = f, ran+1; return nil }
	if code, errOut := runWith(t, inventoryCommand(capture), "inventory", "check", "-i", "pis.toml", "--limit", "pi4"); code != 0 || got.Inventory != "pis.toml" || got.Limit != "pi4" || got.Warnings == nil {
		t.Errorf("exit %d (%s), options %+v; want pis.toml, pi4 and the warnings on stderr", code, errOut, got)
	}
	if code, errOut := runWith(t, inventoryCommand(capture), "inventory", "check", "-i", "pis.toml", "pi4"); code != 2 || ran != 1 || !strings.Contains(errOut, `unexpected argument "pi4"`) {
		t.Errorf("an argument: exit %d, ran %d, stderr %q; want exit 2 before running", code, ran, errOut)
	}
}

// TestDemoFlagsToOptions: the demo's flags, its defaults, and the values
// it refuses before the lab is touched.
func TestDemoFlagsToOptions(t *testing.T) {
	var got demo.Options
	ran := 0
	capture := func(_ *cli.Context, o demo.Options) error { got, ran = o, ran+1; return nil }
	if code, errOut := runWith(t, demoCommand(capture), "demo", "--keep", "--duration", "1m", "--warmup", "0s", "--idle", "20s", "--thermal-speed", "40", "--out", "d", "--dir", "/tmp/lab"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !got.Keep || got.Duration != time.Minute || got.Warmup != 0 || got.Idle != 20*time.Second || got.ThermalSpeed != 40 || got.Out != "d" || got.LabDir != "/tmp/lab" || got.View == nil || got.Version == "" {
		t.Errorf("demo's options: %+v", got)
	}
	if code, _ := runWith(t, demoCommand(capture), "demo"); code != 0 || got.Keep || got.Duration != demo.DefaultDuration || got.ThermalSpeed != demo.DefaultThermalSpeed || got.Out != demo.DefaultOut {
		t.Errorf("demo by default: exit %d, %+v", code, got)
	}
	for args, want := range map[string]string{
		"--duration 0s":        "--duration 0s: want more than zero",
		"--warmup -1s":         "--warmup -1s: want zero or more",
		"--idle -1s":           "--idle -1s: want zero or more",
		"--thermal-speed 2000": "--thermal-speed 2000: want more than 0, at most 1000",
		"now":                  `unexpected argument "now"`,
	} {
		ran = 0
		code, errOut := runWith(t, demoCommand(capture), append([]string{"demo"}, strings.Fields(args)...)...)
		if code != 2 || ran != 0 || !strings.Contains(errOut, want) {
			t.Errorf("demo %s: exit %d, ran %d, stderr %q; want exit 2 with %q before the lab is touched", args, code, ran, errOut, want)
		}
	}
}

// TestClusterStatusFlagsToOptions: the clusters named are the arguments,
// none for every one; a cluster is read whole, so there is no --limit.
func TestClusterStatusFlagsToOptions(t *testing.T) {
	var got action.ClusterOptions
	capture := func(_ *cli.Context, o action.ClusterOptions) error { got = o; return nil }
	if code, errOut := runWith(t, clusterCommand(capture), "cluster", "status", "-i", "lab.toml", "--json", "quiz", "shop"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got.Inventory != "lab.toml" || strings.Join(got.Clusters, ",") != "quiz,shop" || got.Concurrency != 10 {
		t.Errorf("options: %+v", got)
	}
	if code, _ := runWith(t, clusterCommand(capture), "cluster", "status", "-i", "lab.toml"); code != 0 || len(got.Clusters) != 0 {
		t.Errorf("every cluster: exit %d, %+v", code, got.Clusters)
	}
	if code, errOut := runWith(t, clusterCommand(capture), "cluster", "status", "-i", "lab.toml", "--limit", "pi4"); code != 2 || !strings.Contains(errOut, "--limit") {
		t.Errorf("--limit: exit %d, %q", code, errOut)
	}
}

// TestSwitchoverFlagsToOptions: the cluster and the new primary are the
// two arguments; anything else is exit 2 before anything runs.
func TestSwitchoverFlagsToOptions(t *testing.T) {
	var got action.SwitchoverOptions
	ran := 0
	capture := func(_ *cli.Context, o action.SwitchoverOptions) error { got, ran = o, ran+1; return nil }
	if code, errOut := runWith(t, clusterCommands(nil, capture), "cluster", "switchover", "-i", "lab.toml", "--dry-run", "quiz", "pi3"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got.Cluster != "quiz" || got.To != "pi3" || !got.DryRun || got.Inventory != "lab.toml" {
		t.Errorf("options: %+v", got)
	}
	for _, args := range []string{"cluster switchover -i lab.toml quiz", "cluster switchover -i lab.toml quiz pi3 pi5"} {
		ran = 0
		if code, errOut := runWith(t, clusterCommands(nil, capture), strings.Fields(args)...); code != 2 || ran != 0 || !strings.Contains(errOut, "want CLUSTER NEW_PRIMARY") {
			t.Errorf("%s: exit %d, ran %d, %q", args, code, ran, errOut)
		}
	}
}
