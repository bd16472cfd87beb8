package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/job"
)

// powerCase is one engine's power cut under a run (cutDuringRun).
type powerCase struct {
	engine, workload, scale string
	// done counts what the server has committed of the workload's
	// transactions (tpcb: history rows; tpcc: New-Orders)
	done func(t *testing.T, h inventory.Host) int64
	// sql runs statements as the server's administrator
	sql string
	// durable are the settings balanced keeps for a power cut, as the
	// server shows them
	durable, wantDurable string
	// canary makes 1,000 rows in a transaction of its own, committed
	canary, canaryCount string
	// recovered is what the server's log says when it starts on data it
	// did not shut down cleanly, and where that log is
	log, recovered string
}

// pgPowerCase is PostgreSQL under tpcb, for a power cut (TestBenchTPCB's
// Pi 4, whose tables it has loaded at scale 10).
func pgPowerCase() powerCase {
	return powerCase{
		engine: "postgres", workload: "tpcb", scale: "10",
		done: func(t *testing.T, h inventory.Host) int64 {
			return tpccQuery(t, h, "postgres", "SELECT count(*) FROM pgbench_history")
		},
		sql:         `cd /tmp && runuser -u postgres -- psql -AtX -v ON_ERROR_STOP=1 -d pidb -c "%s"`,
		durable:     "SELECT current_setting('fsync') || current_setting('full_page_writes') || current_setting('synchronous_commit')",
		wantDurable: "ononon",
		canary:      "CREATE TABLE canary AS SELECT generate_series(1, 1000) AS id",
		canaryCount: "SELECT count(*) FROM canary",
		log:         "cat /var/log/postgresql/postgresql-*-main.log",
		recovered:   "database system was interrupted",
	}
}

// myPowerCase is MariaDB under tpcc, for a power cut (TestBenchTPCC's Pi 3,
// whose tpcc tables it has loaded).
func myPowerCase() powerCase {
	return powerCase{
		engine: "mysql", workload: "tpcc", scale: "1",
		done: func(t *testing.T, h inventory.Host) int64 { return newOrders(t, h, "mysql") },
		sql:  `mariadb -NB -D pidb -e "%s"`,
		// innodb_flush_log_at_trx_commit, innodb_doublewrite (sync_binlog
		// does not matter without a binary log)
		durable:     "SELECT CONCAT(@@innodb_flush_log_at_trx_commit, @@innodb_doublewrite)",
		wantDurable: "1ON",
		canary:      "CREATE TABLE canary ENGINE=InnoDB AS SELECT seq AS id FROM seq_1_to_1000",
		canaryCount: "SELECT COUNT(*) FROM canary",
		log:         "journalctl -b -u mariadb --no-pager",
		recovered:   "Starting crash recovery",
	}
}

// tpcbCheckFails breaks one account of h's tpcb tables outside a
// transaction and holds that pidb bench tpcb check fails on it, naming
// it; then it mends it.
func tpcbCheckFails(t *testing.T, inv *inventory.Inventory, h inventory.Host) {
	t.Helper()
	sql := func(q string) { labtest.MustSSH(t, h, strings.Replace(pgPowerCase().sql, "%s", q, 1)) }
	sql("UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 4242")
	code, checks := checkData(t, inv, h.Name, "tpcb")
	sql("UPDATE pgbench_accounts SET abalance = abalance - 1 WHERE aid = 4242")
	if code != 1 || checks.Pass || len(checks.Checks) != 4 || checks.Checks[3].Pass || !checks.Checks[0].Pass ||
		!strings.Contains(checks.Checks[3].Detail, "1 rows differ, the first aid 4242") {
		t.Fatalf("tpcb check on an account changed outside a transaction: exit %d, %+v", code, checks)
	}
}

// cutDuringRun cuts the power of h, provisioned on the balanced preset with
// the case's workload's tables loaded, while pidb runs that workload on it.
// Afterwards the server runs again (pidb's provisioning enabled it), its
// own log says it recovered from a crash (so the cut was one: no clean
// shutdown came first), a file fsync'd just before the cut is whole, the
// rows committed before the cut are all there, every transaction the
// server had committed when the cut came is kept (its count is at least
// what it was), and pidb's own check of the workload's tables passes.
func cutDuringRun(t *testing.T, inv *inventory.Inventory, h inventory.Host, c powerCase) {
	t.Helper()
	sql := func(q string) string {
		return strings.TrimSpace(labtest.MustSSH(t, h, strings.Replace(c.sql, "%s", q, 1)))
	}
	if got := sql(c.durable); got != c.wantDurable {
		t.Fatalf("balanced on %s: %s = %q, want %q", c.engine, c.durable, got, c.wantDurable)
	}
	out := t.TempDir()
	// the workload writing, from pidb as its own process
	run := pidbCommand("bench", "-i", inv.Path, "--limit", h.Name, "--workload", c.workload, "--scale", c.scale, "--clients", "4",
		"--duration", "3m", "--warmup", "0s", "--out", out)
	var runOut strings.Builder
	run.Stderr = &runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- run.Wait() }()
	defer func() {
		_ = run.Process.Kill()
		<-ended
	}()
	start := c.done(t, h)
	for began := time.Now(); c.done(t, h) < start+50; time.Sleep(300 * time.Millisecond) {
		if time.Since(began) > 2*time.Minute {
			t.Fatalf("the run committed no 50 transactions in 2 minutes\n%s", runOut.String())
		}
	}
	sql(c.canary)
	committed := c.done(t, h)
	// a file fsync'd, and one written a moment before the cut and not
	// (the kernel writes such data back after 30 s): a crash of the
	// processes alone would keep both
	files := labtest.MustSSH(t, h, "dd if=/dev/urandom of=/root/synced bs=1M count=4 conv=fsync status=none && "+
		"dd if=/dev/urandom of=/root/unsynced bs=1M count=4 status=none && sha256sum /root/synced /root/unsynced")

	code, _, cutOut := runPidb(t, "lab", "power-cut", labtest.LabName(t, h), "--dir", labtest.Lab(t).Dir)
	if code != 0 {
		t.Fatalf("lab power-cut: exit %d\n%s", code, cutOut)
	}
	// how long the card took to take what it had been sent, before its copy
	t.Logf("the cut said:\n%s", cutOut)
	// the run's clients lost their connections: it goes on with new ones
	// once the server is back (TestBenchSurvivesAKilledConnection), which
	// is not this test's case; it ends here
	_ = run.Process.Kill()
	<-ended
	ended <- nil
	t.Logf("the run through the cut said:\n%s", tail(runOut.String(), 8))

	// the server, as the host's boot started it
	// (or, where it does not come back, what its log says)
	waitFor(t, h, strings.Replace(c.sql, "%s", "SELECT 1", 1)+" || { "+c.log+" | tail -20; false; }")
	// (read once the host is up again: an SSH that found it still booting
	// once read nothing, in CI)
	after := labtest.MustSSH(t, h, "sha256sum /root/synced /root/unsynced 2>&1; true")
	sums := strings.Split(strings.TrimSpace(files), "\n")
	if len(sums) != 2 || !strings.Contains(after, sums[0]) {
		t.Errorf("the fsync'd file is not whole after the cut; before:\n%s\nafter:\n%s", files, after)
	}
	// the other is lost unless the kernel wrote it back before the cut:
	// alone, it does not within 30 s, but a machine with much unwritten
	// data (CI's, with ten Pis installing) writes everything back at once
	t.Logf("the file not fsync'd, after the cut: lost %v", len(sums) == 2 && !strings.Contains(after, sums[1]))

	if log := labtest.MustSSH(t, h, c.log); !strings.Contains(log, c.recovered) {
		t.Errorf("the server's log has no %q: it did not start on data it had not shut down\n%s", c.recovered, tail(log, 20))
	}
	if got := sql(c.canaryCount); got != "1000" {
		t.Errorf("%d canary rows committed before the cut; %s after it", 1000, got)
	}
	if got := c.done(t, h); got < committed {
		t.Errorf("the server had committed %d of the run's transactions before the cut, and kept %d", committed, got)
	}
	if code, checks := checkData(t, inv, h.Name, c.workload); code != 0 || !checks.Pass || len(checks.Checks) != 4 {
		t.Errorf("%s check after the power cut: exit %d, %+v", c.workload, code, checks)
	}
	t.Logf("%s: %d transactions committed before the cut, %d after recovery", c.engine, committed, c.done(t, h))
}

// checkData runs pidb bench WORKLOAD check on one host of the inventory.
func checkData(t *testing.T, inv *inventory.Inventory, host, workload string) (int, job.CheckResult) {
	t.Helper()
	code, stdout, errOut := runPidb(t, "bench", workload, "check", "-i", inv.Path, "--limit", host, "--json")
	var checks []job.CheckResult
	if err := json.Unmarshal([]byte(stdout), &checks); err != nil || len(checks) != 1 {
		t.Fatalf("%s check: exit %d, not one host's: %v\n%s\n%s", workload, code, err, stdout, errOut)
	}
	return code, checks[0]
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
