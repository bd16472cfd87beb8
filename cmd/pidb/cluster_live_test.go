package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pidb/cluster"
	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/secrets"
)

// TestPostgresClusterOnTheLab: a synchronous PostgreSQL cluster of a Pi 4
// primary, a Pi 4 and a Zero replica (clones of provisioned Pis, each on
// its own), provisioned as the inventory's [[cluster]] says: the replicas seeded
// from the primary and streaming (pidb cluster status, and the servers'
// own pg_stat_replication), rows written on the primary on both replicas,
// a second run changing nothing. A replica stopped makes cluster status
// fail and name it; started again, it catches up. A replica made anew (a
// fresh cluster in its place, as a re-imaged card has) is seeded again by
// the next provision.
func TestPostgresClusterOnTheLab(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "pi4", "pi4", "zero")
	primary, r1, r2 := inv.Hosts[0], inv.Hosts[1], inv.Hosts[2]
	addCluster(t, inv, "quiz", "synchronous = true\n")
	root := func(h inventory.Host) inventory.Host { return labtest.RootHost(t, inv, h.Name) }
	psqlIn := func(h inventory.Host, db, sql string) string {
		return strings.TrimSpace(labtest.MustSSH(t, root(h), "cd /tmp && runuser -u postgres -- psql -AtqX -d "+db+" -c "+shellQuote(sql)))
	}
	psql := func(h inventory.Host, sql string) string { return psqlIn(h, "postgres", sql) }

	// every command line on the replicas while they are seeded, read there
	// every 100 ms: pg_basebackup's is seen, and the replication password
	// is on none (any local user may read them in ps)
	const cmdlines = "/root/pidb-cmdlines"
	for _, h := range []inventory.Host{r1, r2} {
		labtest.MustSSH(t, root(h), "rm -f "+cmdlines+"*; setsid sh -c "+shellQuote(`while [ ! -e `+cmdlines+`.stop ]; do cat /proc/[0-9]*/cmdline 2>/dev/null; echo; sleep 0.1; done >> `+cmdlines)+" </dev/null >/dev/null 2>&1 &")
	}
	code, res, errOut := provisionLab(t, "-i", inv.Path)
	if code != 0 {
		t.Fatalf("provision: exit %d %+v\n%s", code, res, errOut)
	}
	sec, err := secrets.LoadCluster(inv.Path, "quiz")
	if err != nil || len(sec.Replication) < 16 {
		t.Fatalf("the cluster's replication password: %v", err)
	}
	for _, h := range []inventory.Host{r1, r2} {
		seen := labtest.MustSSH(t, root(h), "touch "+cmdlines+".stop; sleep 0.3; cat "+cmdlines)
		if !strings.Contains(seen, "pg_basebackup") || strings.Contains(seen, sec.Replication) {
			t.Errorf("%s's command lines during its seed (%d bytes): pg_basebackup seen %v, the replication password seen %v",
				h.Name, len(seen), strings.Contains(seen, "pg_basebackup"), strings.Contains(seen, sec.Replication))
		}
	}
	if !contains(res[primary.Name].Changed, "replication") || !contains(res[r1.Name].Changed, "replica") || !contains(res[r2.Name].Changed, "replica") {
		t.Errorf("the primary's replication and the replicas' seeding: %+v", res)
	}
	// the servers' own word: the primary sends to both, over TLS, through
	// pidb's slots, as pidb_replication
	// (synchronous: each a quorum standby of ANY 1)
	senders := psql(primary, "SELECT string_agg(r.application_name || ':' || r.state || ':' || r.usename || ':' || s.ssl::text || ':' || r.sync_state, ',' ORDER BY r.application_name) FROM pg_stat_replication r JOIN pg_stat_ssl s USING (pid)")
	want := strings.Join(slices.Sorted(slices.Values([]string{r1.Name + ":streaming:pidb_replication:true:quorum", r2.Name + ":streaming:pidb_replication:true:quorum"})), ",")
	if senders != want {
		t.Errorf("pg_stat_replication: %q, want %q", senders, want)
	}
	if slots := psql(primary, "SELECT string_agg(slot_name || ':' || active::text, ',' ORDER BY slot_name) FROM pg_replication_slots"); slots != strings.Join(slices.Sorted(slices.Values([]string{cluster.SlotName(r1.Name) + ":true", cluster.SlotName(r2.Name) + ":true"})), ",") {
		t.Errorf("slots: %s", slots)
	}
	status := func() (int, []cluster.Status, string) { t.Helper(); return clusterStatus(t, inv.Path) }
	if code, sts, errOut := status(); code != 0 || len(sts) != 1 || !sts[0].OK || sts[0].Replicas[0].State != cluster.Streaming || sts[0].Replicas[1].State != cluster.Streaming || sts[0].Replicas[0].LagBytes == nil {
		t.Errorf("cluster status: exit %d %+v\n%s", code, sts, errOut)
	}

	// validate judges the replicas by their replication, with no workload
	validateReplicas := func(limit string) (int, map[string]validateJSON) {
		t.Helper()
		return validateHosts(t, inv.Path, limit)
	}
	// (a replica just seeded may not have replayed its first record yet
	// on a busy machine: validate says so, and is asked again)
	for start := time.Now(); ; time.Sleep(2 * time.Second) {
		code, vs := validateReplicas(r1.Name + "," + r2.Name)
		if code == 0 && vs[r1.Name].Verdict == "PASS" && vs[r2.Name].Verdict == "PASS" && vs[r1.Name].TPS == nil {
			break
		}
		if time.Since(start) > time.Minute {
			t.Errorf("validate the replicas, a minute on: exit %d %+v", code, vs)
			break
		}
	}

	// rows written on the primary are on both replicas
	psql(primary, "CREATE TABLE canary (id int PRIMARY KEY, note text); INSERT INTO canary SELECT g, 'row ' || g FROM generate_series(1, 1000) g")
	replicated := func(h inventory.Host, n string) {
		t.Helper()
		for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
			got := psql(h, "SELECT count(*) FROM canary")
			if got == n {
				return
			}
			if time.Since(start) > time.Minute {
				t.Fatalf("%s has %s canary rows a minute on, not %s", h.Name, got, n)
			}
		}
	}
	replicated(r1, "1000")
	replicated(r2, "1000")

	// the cluster measured: the quiz's data made on the primary, read on
	// every host at once, each server counting its own transactions
	commits := func(h inventory.Host) int64 {
		t.Helper()
		n, err := strconv.ParseInt(psql(h, "SELECT xact_commit FROM pg_stat_database WHERE datname = 'pidb'"), 10, 64)
		if err != nil {
			t.Fatalf("%s: xact_commit: %v", h.Name, err)
		}
		return n
	}
	before := map[string]int64{}
	for _, h := range inv.Hosts {
		before[h.Name] = commits(h)
	}
	code, out, errOut := runPidb(t, "bench", "-i", inv.Path, "--cluster", "quiz", "--workload", "quiz", "--clients", "4", "--duration", "5s", "--warmup", "1s", "--out", t.TempDir(), "--json")
	var runs []struct {
		Host         string         `json:"host"`
		Transactions int64          `json:"transactions"`
		Errors       map[string]int `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &runs); code != 0 || err != nil || len(runs) != 3 {
		t.Fatalf("bench --cluster: exit %d, %v: %s\n%s", code, err, out, errOut)
	}
	for _, r := range runs {
		h := labtest.Host(t, inv, r.Host)
		if grew := commits(h) - before[h.Name]; r.Transactions == 0 || len(r.Errors) != 0 || grew < r.Transactions {
			t.Errorf("%s: %d transactions, errors %v, the server counted %d more commits", r.Host, r.Transactions, r.Errors, grew)
		}
	}
	// a workload that writes: on the primary alone, each replica's lag
	// read beside it, and the rows it wrote on both replicas
	code, out, errOut = runPidb(t, "bench", "-i", inv.Path, "--cluster", "quiz", "--workload", "tpcb", "--clients", "4", "--duration", "8s", "--warmup", "1s", "--thermal-interval", "1s", "--out", t.TempDir(), "--json")
	var writes []clusterBenchJSON
	if err := json.Unmarshal([]byte(out), &writes); code != 0 || err != nil || len(writes) != 1 || writes[0].Host != primary.Name || len(writes[0].Replicas) != 2 {
		t.Fatalf("bench --cluster with tpcb: exit %d, %v: %s\n%s", code, err, out, errOut)
	}
	for _, r := range writes[0].Replicas {
		// how many readings fit in the run is the machine's pace: one
		// is the evidence that it was read beside the workload
		if r.Readings < 1 || r.NotConnected != 0 {
			t.Errorf("%s's lag under tpcb: %+v, want readings, each of it connected\n%s", r.Host, r, out)
		}
	}
	history := psqlIn(primary, "pidb", "SELECT count(*) FROM pgbench_history")
	caughtUp := func(h inventory.Host, table, n string) {
		t.Helper()
		for start := time.Now(); psqlIn(h, "pidb", "SELECT count(*) FROM "+table) != n; time.Sleep(200 * time.Millisecond) {
			if time.Since(start) > time.Minute {
				t.Fatalf("%s has not the primary's %s rows of %s a minute on", h.Name, n, table)
			}
		}
	}
	caughtUp(r1, "pgbench_history", history)
	caughtUp(r2, "pgbench_history", history)

	// again: nothing to change anywhere
	code, res, errOut = provisionLab(t, "-i", inv.Path)
	if code != 0 {
		t.Fatalf("provision again: exit %d\n%s", code, errOut)
	}
	for _, h := range inv.Hosts {
		if len(res[h.Name].Changed) != 0 {
			t.Errorf("provision again changed %s: %v %v", h.Name, res[h.Name].Changed, res[h.Name].Notes)
		}
	}

	// a replica stopped: status fails and names it; started, it catches up
	labtest.MustSSH(t, root(r2), "systemctl stop "+labtest.PGUnit)
	code, sts, _ := status()
	if code != 1 || sts[0].OK || sts[0].Replicas[1].State != cluster.Unreachable || sts[0].Replicas[1].RetainedBytes == nil {
		t.Errorf("a stopped replica: exit %d %+v", code, sts)
	}
	psql(primary, "INSERT INTO canary SELECT g, 'row ' || g FROM generate_series(1001, 2000) g")
	labtest.MustSSH(t, root(r2), "systemctl start "+labtest.PGUnit)
	replicated(r2, "2000")

	// a replica made anew, a server of its own: seeded again
	labtest.MustSSH(t, root(r1), "pg_dropcluster --stop "+labtest.PG+" main && pg_createcluster "+labtest.PG+" main >/dev/null && systemctl start "+labtest.PGUnit)
	if code, sts, _ := status(); code != 1 || sts[0].Replicas[0].State != cluster.NotAStandby {
		t.Errorf("a replica made anew: exit %d %+v", code, sts)
	}
	if code, vs := validateReplicas(r1.Name); code != 1 || vs[r1.Name].Verdict != "FAIL" || !strings.Contains(fmt.Sprint(vs[r1.Name].Reasons), "is a server of its own, not a standby") {
		t.Errorf("validate a replica made anew: exit %d %+v", code, vs)
	}
	code, res, errOut = provisionLab(t, "-i", inv.Path)
	if code != 0 || !contains(res[r1.Name].Changed, "replica") {
		t.Fatalf("provision after a replica was made anew: exit %d %+v\n%s", code, res[r1.Name], errOut)
	}
	replicated(r1, "2000")
	if code, sts, errOut := status(); code != 0 || !sts[0].OK {
		t.Errorf("cluster status after the new seed: exit %d %+v\n%s", code, sts, errOut)
	}

	// a switchover to r1 and back: a dry run changes nothing; then the
	// roles change, the inventory says so, rows written on the new
	// primary reach the old one and the other replica, and a provision
	// after it changes nothing
	switchover := func(to inventory.Host, more ...string) (int, string) {
		t.Helper()
		return switchoverTo(t, inv.Path, "quiz", to, more...)
	}
	if code, out := switchover(r1, "--dry-run"); code != 0 || !strings.Contains(out, "would promote "+r1.Name) {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if psql(primary, "SELECT pg_is_in_recovery()") != "f" {
		t.Fatal("the dry run changed the primary")
	}
	rows := 2000
	for _, step := range []struct{ to, from inventory.Host }{{r1, primary}, {primary, r1}} {
		if code, out := switchover(step.to); code != 0 {
			t.Fatalf("switchover to %s: exit %d\n%s", step.to.Name, code, out)
		}
		if got := psql(step.to, "SELECT pg_is_in_recovery()"); got != "f" {
			t.Fatalf("%s after the switchover to it: in recovery %s", step.to.Name, got)
		}
		// synchronous on the new primary too: its drop-in written for
		// its part, reloaded, and both standbys in its quorum
		for start := time.Now(); psql(step.to, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'quorum'") != "2"; time.Sleep(200 * time.Millisecond) {
			if time.Since(start) > 30*time.Second {
				t.Fatalf("%s after the switchover to it: synchronous_standby_names %q, %s quorum standbys", step.to.Name, psql(step.to, "SHOW synchronous_standby_names"), psql(step.to, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'quorum'"))
			}
		}
		if src, _ := os.ReadFile(inv.Path); !strings.Contains(string(src), "primary = \""+step.to.Name+"\"\nreplicas = [\""+step.from.Name+"\"") {
			t.Errorf("the inventory after the switchover to %s:\n%s", step.to.Name, src)
		}
		psql(step.to, fmt.Sprintf("INSERT INTO canary SELECT g, 'row ' || g FROM generate_series(%d, %d) g", rows+1, rows+1000))
		rows += 1000
		for _, h := range inv.Hosts {
			replicated(h, fmt.Sprint(rows))
		}
		if code, sts, errOut := status(); code != 0 || !sts[0].OK || sts[0].Primary.Host != step.to.Name {
			t.Errorf("cluster status after the switchover to %s: exit %d %+v\n%s", step.to.Name, code, sts, errOut)
		}
		code, res, errOut := provisionLab(t, "-i", inv.Path)
		if code != 0 {
			t.Fatalf("provision after the switchover to %s: exit %d\n%s", step.to.Name, code, errOut)
		}
		for _, h := range inv.Hosts {
			if len(res[h.Name].Changed) != 0 {
				t.Errorf("provision after the switchover to %s changed %s: %v %v", step.to.Name, h.Name, res[h.Name].Changed, res[h.Name].Notes)
			}
		}
	}
	// to a replica that is stopped: refused, the primary as it was
	labtest.MustSSH(t, root(r2), "systemctl stop "+labtest.PGUnit)
	if code, out := switchover(r2); code != 1 || psql(primary, "SELECT pg_is_in_recovery()") != "f" {
		t.Errorf("a switchover to a stopped replica: exit %d\n%s", code, out)
	}
	labtest.MustSSH(t, root(r2), "systemctl start "+labtest.PGUnit)
	// every canary row on every host
	for _, h := range inv.Hosts {
		replicated(h, fmt.Sprint(rows))
		if got := psql(h, "SELECT count(DISTINCT note) FROM canary"); got != fmt.Sprint(rows) {
			t.Errorf("%s: %s distinct canary rows, want %d", h.Name, got, rows)
		}
	}
}

// clusterStatus runs pidb cluster status --json on the inventory.
func clusterStatus(t *testing.T, inv string) (int, []cluster.Status, string) {
	t.Helper()
	code, out, errOut := runPidb(t, "cluster", "status", "-i", inv, "--json")
	var sts []cluster.Status
	if err := json.Unmarshal([]byte(out), &sts); err != nil {
		t.Fatalf("cluster status: not JSON (%v): %s\n%s", err, out, errOut)
	}
	return code, sts, errOut
}

// validateHosts runs pidb validate --json on the hosts limit names: each
// host's verdict, by name.
func validateHosts(t *testing.T, inv, limit string) (int, map[string]validateJSON) {
	t.Helper()
	code, out, errOut := runPidb(t, "validate", "-i", inv, "--limit", limit, "--json")
	var vs []validateJSON
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		t.Fatalf("validate: not JSON (%v): %s\n%s", err, out, errOut)
	}
	m := map[string]validateJSON{}
	for _, v := range vs {
		m[v.Host] = v
	}
	return code, m
}

// switchoverTo runs pidb cluster switchover to the host, with more flags.
func switchoverTo(t *testing.T, inv, name string, to inventory.Host, more ...string) (int, string) {
	t.Helper()
	code, out, errOut := runPidb(t, append([]string{"cluster", "switchover", "-i", inv}, append(more, name, to.Name)...)...)
	return code, out + errOut
}

// addCluster appends a [[cluster]] of the inventory's first host and its
// others to the inventory's file, with more lines in it.
func addCluster(t *testing.T, inv *inventory.Inventory, name, more string) {
	t.Helper()
	src, err := os.ReadFile(inv.Path)
	if err != nil {
		t.Fatal(err)
	}
	var replicas []string
	for _, h := range inv.Hosts[1:] {
		replicas = append(replicas, `"`+h.Name+`"`)
	}
	src = append(src, []byte("\n[[cluster]]\nname = \""+name+"\"\nprimary = \""+inv.Hosts[0].Name+"\"\nreplicas = ["+strings.Join(replicas, ", ")+"]\n"+more)...)
	if err := os.WriteFile(inv.Path, src, 0o644); err != nil {
		t.Fatal(err)
	}
}

// validateJSON is a host as pidb validate --json prints it.
type validateJSON struct {
	Host    string           `json:"host"`
	Verdict string           `json:"verdict"`
	Reasons []map[string]any `json:"reasons"`
	TPS     *float64         `json:"tps"`
}

// clusterBenchJSON is what bench --cluster --json says of a run on a
// cluster's primary: its replicas' lag, read beside the run.
type clusterBenchJSON struct {
	Host     string `json:"host"`
	Replicas []struct {
		Host            string  `json:"host"`
		Readings        int     `json:"readings"`
		NotConnected    int     `json:"not_connected"`
		MaxTransactions *uint64 `json:"max_transactions"` // the MySQL family's
	} `json:"replicas"`
}
