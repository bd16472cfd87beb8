package tables

import (
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"pidb/action"
	"pidb/cluster"
	"pidb/config"
	"pidb/facts"
	"pidb/inventory"
	"pidb/job"
	"pidb/provision"
	"pidb/results"
)

func rowsEqual(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// TestBench: a host that failed before its run has the failed cell; a
// run's errors are in one order whatever the map's, after the time the
// server was down, and their share of the tries where it is over 1%; tpcc's types and tpmC, and the checks, are tables of
// their own.
func TestBench(t *testing.T) {
	js := []job.BenchResult{
		{Host: "pi4", Workload: "tpcc", Clients: 8, Transactions: 1200, DurationS: 60, TPS: 20, QPS: 410.26, LatencyMs: results.Latency{Avg: 12.3456, P99: 40}, P95Ms: 30.1,
			Errors: map[string]int64{"timeout": 2, "deadlock": 5}, DownS: 3.25, RunDir: "runs/pi4/1", TpmC: 540, Retries: 5, RolledBack: 11,
			Ops:    []job.Op{{Name: "new_order", Count: 540, Rate: 9, P50Ms: 10, P95Ms: 20, P99Ms: 30, Errors: 1}},
			Checks: []results.Check{{Table: 1, Warehouse: 1, Condition: 3, Name: "order ids", Pass: false, Detail: "d_next_o_id 3001, max 2999"}}},
		{Host: "pi3", Workload: "oltp-read-only", Error: "pi3: connect: refused"},
		{Host: "pi3b", Workload: "tpcc", Clients: 16, Transactions: 9493, DurationS: 30, TPS: 316.4, Errors: map[string]int64{"payment: mysql 1020": 1197, "new_order: mysql 1020": 1647},
			ErrorShare: 2844.0 / 12337, RunDir: "runs/pi3b/1"},
	}
	rowsEqual(t, "bench", Bench(js).Rows, [][]string{
		{"pi4", "tpcc", "8", "1200", "60.00", "20.0", "410.3", "12.346", "30.100", "40.000", "DOWN 3.2s (see stderr),deadlock:5,timeout:2", "runs/pi4/1"},
		{"pi3", "oltp-read-only", "", "", "", "", "", "", "", "", "FAILED (see stderr)", ""},
		{"pi3b", "tpcc", "16", "9493", "30.00", "316.4", "0.0", "0.000", "0.000", "0.000", "23.1% OF TRIES,new_order: mysql 1020:1647,payment: mysql 1020:1197", "runs/pi3b/1"},
	})
	rowsEqual(t, "ops", Ops(js).Rows, [][]string{
		{"pi4", "new_order", "540", "9.00", "10.000", "20.000", "30.000", "1"},
		{"pi4", "tpmC", "540.0", "", "", "", "", "5 retried, 11 rolled back"},
	})
	rowsEqual(t, "checks", BenchChecks(js).Rows, [][]string{{"pi4", "1", "1", "3: order ids", "FAIL", "d_next_o_id 3001, max 2999"}})
	rowsEqual(t, "tpcc check of a host that failed", Check([]job.CheckResult{{Host: "pi3", Error: "gone"}}).Rows, [][]string{{"pi3", "", "", "", "FAILED (see stderr)", ""}})
	rowsEqual(t, "cleanup", Cleanup([]job.CleanupResult{{Host: "pi4", Database: "pidb", Dropped: true}, {Host: "pi3", Database: "pidb"}, {Host: "zero", Database: "pidb", Error: "x"}}).Rows,
		[][]string{{"pi4", "pidb", "dropped"}, {"pi3", "pidb", "nothing to drop"}, {"zero", "pidb", "FAILED (see stderr)"}})
}

// TestValidate: the verdict's row, with "-" for a temperature nobody read,
// and a line per reason under the table.
func TestValidate(t *testing.T) {
	hot := 83.4
	js := []job.ValidateResult{
		{Host: "pi4", Verdict: "FAIL", TPS: 512.04, MaxTempC: &hot, Throttled: true, TPSFirstQuarter: 700, TPSLastQuarter: 420.55, RunDir: "r/pi4",
			Reasons: []results.Reason{{Code: "temperature", Message: "83.4 C, over 80 C", Fail: true}, {Code: "sag", Message: "TPS fell 40%"}}},
		{Host: "zero", Verdict: "PASS", TPS: 50, RunDir: "r/zero"},
	}
	rowsEqual(t, "validate", Validate(js).Rows, [][]string{
		{"pi4", "FAIL", "512.0", "83.4", "true", "700.0", "420.6", "temperature,sag", "r/pi4"},
		{"zero", "PASS", "50.0", "-", "false", "0.0", "0.0", "", "r/zero"},
	})
	want := []string{"pi4: FAIL temperature: 83.4 C, over 80 C", "pi4: WARN sag: TPS fell 40%"}
	if got := Reasons(js); !reflect.DeepEqual(got, want) {
		t.Errorf("reasons: %q, want %q", got, want)
	}
}

// TestFacts: a simulated board says so, the page size is in KiB ("?" when
// unknown), a failed host has its cell, and its JSON object its error.
func TestFacts(t *testing.T) {
	rs := []action.HostFacts{
		{Host: inventory.Host{Name: "pi4"}, Value: facts.Facts{Host: "pi4", Model: "Raspberry Pi 4 Model B Rev 1.4", Simulated: "board", RAMBytes: 4 << 30, MemBytes: 3840 << 20,
			CPUs: 4, Arch: "aarch64", PageSize: 16384, OS: facts.OSRelease{ID: "debian", VersionID: "12"}, Storage: "sd", Governor: "performance", SwapBytes: 100 << 20, Swappiness: 10, Overcommit: facts.Overcommit{Mode: 2, Ratio: 60, Known: true}, BootTarget: "multi-user.target", Thermal: true,
			Engine: facts.EngineState{Flavor: "postgres", Version: "15.8", Running: true}}},
		{Host: inventory.Host{Name: "pi3", Address: "10.0.0.3"}, Err: errors.New("pi3: connect: refused")},
		{Host: inventory.Host{Name: "pi4b"}, Value: facts.Facts{Host: "pi4b", Model: "Raspberry Pi 4 Model B Rev 1.4", RAMBytes: 4 << 30, MemBytes: 3840 << 20,
			CPUs: 4, Arch: "aarch64", PageSize: 4096, OS: facts.OSRelease{ID: "debian", VersionID: "12"}, Storage: "sd", BootTarget: "multi-user.target",
			DataDir: "/srv/pidb-data/mysql", DataDevice: "/dev/sda", DataStorage: "usb", Swappiness: -1, Engine: facts.EngineState{Flavor: "mariadb", Version: "10.11.6"}}},
	}
	rowsEqual(t, "facts", Facts(rs).Rows, [][]string{
		{"pi4", "Raspberry Pi 4 Model B Rev 1.4 (simulated, board speed)", "4096 MiB", "3840 MiB", "4", "aarch64", "16K", "debian 12", "sd", "performance", "100 MiB (10) strict 60%", "multi-user.target", "no", "yes", "postgres 15.8 (running)"},
		{"pi3", "FAILED (see stderr)", "", "", "", "", "", "", "", "", "", "", "", "", ""},
		{"pi4b", "Raspberry Pi 4 Model B Rev 1.4", "4096 MiB", "3840 MiB", "4", "aarch64", "4K", "debian 12", "sd, data on usb (/dev/sda)", "?", "none", "multi-user.target", "no", "no", "mariadb 10.11.6 (stopped)"},
	})
	js := FactsJSON(rs)
	if e, ok := js[1].(map[string]any); !ok || e["error"] != "pi3: connect: refused" || e["address"] != "10.0.0.3" {
		t.Errorf("a failed host's JSON: %v", js[1])
	}
}

// TestProvision: what changed, "nothing", a dry run's steps, a failed
// host; and a dry run's plan with its commands and diff.
func TestProvision(t *testing.T) {
	out := []action.ProvisionResult{
		{Host: "pi4", OK: true, Changed: []string{"install", "configure"}, DurationS: 61.25, Engine: "postgres", EngineVersion: "15.8", Preset: "balanced"},
		{Host: "pi3", OK: true, Engine: "mariadb", Preset: "fast"},
		{Host: "zero", OK: false, Error: "boom"},
	}
	rowsEqual(t, "provision", Provision(out, false).Rows, [][]string{
		{"pi4", "postgres 15.8", "balanced", "install,configure", "ok", "61.2s"},
		{"pi3", "mariadb", "fast", "nothing", "ok", "0.0s"},
		{"zero", "", "", "nothing", "FAILED (see stderr)", "0.0s"},
	})
	dry := []action.ProvisionResult{
		{Host: "pi4", OK: true, Plan: []provision.Planned{{Step: "configure", Diff: "-a\n+b", Commands: []string{"systemctl restart postgresql"}, Note: "a restart"}}},
		{Host: "pi3", OK: true},
	}
	rowsEqual(t, "a dry run", Provision(dry, true).Rows, [][]string{
		{"pi4", "", "", "would: configure", "dry run", "0.0s"},
		{"pi3", "", "", "nothing", "dry run", "0.0s"},
	})
	want := "== pi4: configure would change (a restart)\n   $ systemctl restart postgresql\n-a\n+b\n\n== pi3: nothing to change\n\n"
	if got := Plans(dry); got != want {
		t.Errorf("the plan:\n%q\nwant\n%q", got, want)
	}
}

// TestHosts: the inventory's resolved hosts: a port other than 22 with the
// address, connections by RAM, who may log in and with what.
func TestHosts(t *testing.T) {
	hosts := []inventory.Host{
		{Name: "pi4", Address: "10.0.0.4", Port: 2222, User: "pi", Engine: "postgres", Preset: "balanced", Storage: "usb", Connections: 50,
			AllowFrom: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24")}, TLS: true,
			Settings: inventory.Section{"work_mem": {Raw: "8MB"}}, Databases: []inventory.Database{{Name: "inv", Owner: "app", Adopt: true}}},
		{Name: "pi3", Address: "10.0.0.3", Port: 22, User: "pi", Engine: "mysql", Preset: "fast"},
	}
	hosts[0].Cluster = &inventory.Cluster{Name: "quiz", Primary: "pi5", Replicas: []string{"pi4"}}
	checked := []action.CheckedHost{{Host: hosts[0]}, {Host: hosts[1], Settings: config.Resolved{Bench: map[string]any{"clients": 8}, From: map[string]string{"bench.clients": "default"}}}}
	rowsEqual(t, "hosts", Hosts(checked).Rows, [][]string{
		{"pi4", "10.0.0.4:2222", "pi", "postgres", "balanced", "50", "usb", "10.0.0.0/24 (TLS)", "work_mem", "inv(app, adopted)", "quiz (replica)"},
		{"pi3", "10.0.0.3", "pi", "mysql", "fast", "by RAM", "detect", "localhost only", "", "", "-"},
	})
	js := HostsJSON(checked)
	if js[1].Connections != nil || js[1].Storage != "detect" || len(js[1].AllowFrom) != 0 || js[0].Settings["work_mem"] != "8MB" ||
		js[1].Bench["clients"] != 8 || js[1].From["bench.clients"] != "default" || js[1].Cluster != nil || *js[0].Cluster != (clusterView{"quiz", "replica"}) {
		t.Errorf("the hosts' JSON: %+v", js)
	}
}

// TestNeverMeasured: a host that could not be validated has ERROR, and
// "-" in the table and null in the JSON for what was never measured, not
// a zero; a measured host's zero stays a zero.
func TestNeverMeasured(t *testing.T) {
	gone := job.ValidateResult{Host: "zero", Verdict: results.Error, Reasons: []results.Reason{}, Error: "zero: connect: no route to host"}
	rowsEqual(t, "validate", Validate([]job.ValidateResult{gone}).Rows, [][]string{{"zero", "ERROR", "", "-", "", "", "", "", ""}})
	data, err := json.Marshal(gone)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tps", "qps", "p95_ms", "max_temp_c", "throttled", "tps_first_quarter", "tps_last_quarter"} {
		if v, ok := got[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null: %s", k, v, ok, data)
		}
	}
	if got["verdict"] != "ERROR" || got["error"] != "zero: connect: no route to host" || got["host"] != "zero" {
		t.Errorf("the host and its error: %s", data)
	}
	ran := job.ValidateResult{Host: "pi4", Verdict: results.Fail, RunDir: "r/pi4"}
	if data, _ := json.Marshal(ran); !strings.Contains(string(data), `"tps":0,`) || !strings.Contains(string(data), `"throttled":false`) {
		t.Errorf("a measured host's zero TPS: %s", data)
	}
}

// TestBenchNeverMeasured: a host bench could not run has null, not zero,
// for its numbers in the JSON.
func TestBenchNeverMeasured(t *testing.T) {
	data, err := json.Marshal(job.BenchResult{Host: "zero", Workload: "tpcb", Clients: 8, Error: "zero: connect: no route to host"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tps", "qps", "transactions", "duration_s", "latency_ms", "p95_ms", "retries", "rolled_back"} {
		if v, ok := got[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null: %s", k, v, ok, data)
		}
	}
	if got["clients"] != float64(8) || got["workload"] != "tpcb" {
		t.Errorf("what was asked is kept: %s", data)
	}
}

// TestClusterStatus: the primary, then each replica, with its lag and
// the WAL kept for it written for people, "-" where not known.
func TestClusterStatus(t *testing.T) {
	u := func(x uint64) *uint64 { return &x }
	f := func(x float64) *float64 { return &x }
	async := "async"
	st := []cluster.Status{{Cluster: "quiz", Primary: cluster.PrimaryStatus{Host: "pi4", State: "primary"}, Replicas: []cluster.ReplicaStatus{
		{Host: "pi3", State: "streaming", LagBytes: u(1536), LagS: f(0.25), Sync: &async, RetainedBytes: u(3 << 20)},
		{Host: "pi5", State: "not streaming", RetainedBytes: u(5 << 30), Error: "in recovery, but its WAL receiver is not running"},
		{Host: "pi6", State: "unreachable", Error: "pi6: no route to host"},
	}}}
	rowsEqual(t, "cluster status", ClusterStatus(st).Rows, [][]string{
		{"quiz", "pi4", "primary", "primary", "", "", "", "", ""},
		{"quiz", "pi3", "replica", "streaming", "1.5 kB", "0.2", "async", "3.0 MB", ""},
		{"quiz", "pi5", "replica", "not streaming", "-", "-", "-", "5.0 GB", "in recovery, but its WAL receiver is not running"},
		{"quiz", "pi6", "replica", "unreachable", "-", "-", "-", "-", "pi6: no route to host"},
	})
}

// TestBenchCluster: a row per host, then the cluster's own: the measured
// hosts' clients, transactions, TPS and QPS added up.
func TestBenchCluster(t *testing.T) {
	js := []job.BenchResult{
		{Host: "pi4", Workload: "quiz", Clients: 50, Transactions: 1000, DurationS: 10, TPS: 100, QPS: 300.5, RunDir: "r/pi4"},
		{Host: "pi3", Workload: "quiz", Clients: 50, Transactions: 500, DurationS: 10, TPS: 50, QPS: 150.25, RunDir: "r/pi3"},
		{Host: "zero", Workload: "quiz", Error: "zero: connect: no route to host"},
	}
	rows := BenchCluster(js).Rows
	if len(rows) != 4 {
		t.Fatalf("rows: %q", rows)
	}
	rowsEqual(t, "the cluster's", rows[3:], [][]string{{"all 2", "", "100", "1500", "", "150.0", "450.8", "", "", "", "", ""}})
}

// TestReplicaLag: a row per replica of a primary measured under writes.
func TestReplicaLag(t *testing.T) {
	js := []job.BenchResult{{Host: "pi4", Replicas: []job.ReplicaLag{{Host: "pi3", Readings: 12, MaxBytes: 3 << 20, MaxS: 0.42}, {Host: "zero", Readings: 12, NotConnected: 12}}}, {Host: "alone"}}
	rowsEqual(t, "replica lag", ReplicaLag(js).Rows, [][]string{{"pi3", "pi4", "12", "3.0 MB", "0.4", "0"}, {"zero", "pi4", "12", "0 B", "0.0", "12"}})
}
