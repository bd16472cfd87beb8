package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/job"
	"pidb/results"
)

// TestWrittenNotApplied: a run cut off between writing the tuner's drop-in
// and restarting the server leaves the new file on disk and the old values
// live. A re-run must see that from the server's live values (and on
// PostgreSQL its pending_restart), restart it and verify, not say that
// nothing changed. The state is made as the cut leaves it: the fast
// preset's file, kept aside, put back over the balanced one after the
// server restarted on that. On a Pi 4 and a Pi 3 of the test's own
// (clones of provisioned ones), whose files it rewrites.
func TestWrittenNotApplied(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "pi4", "pi3")
	for _, tc := range []struct{ host, conf, live string }{
		{inv.Hosts[0].Name, labtest.PGEtc + "/conf.d/90-pidb.conf", `cd /tmp && runuser -u postgres -- psql -AtX -c "SELECT setting FROM pg_settings WHERE name = 'synchronous_commit'" -c "SELECT count(*) FROM pg_settings WHERE pending_restart"`},
		{inv.Hosts[1].Name, "/etc/mysql/mariadb.conf.d/90-pidb.cnf", `mariadb -NBe "SELECT @@innodb_flush_log_at_trx_commit"`},
	} {
		t.Run(tc.host, func(t *testing.T) {
			h := provisionedAsRoot(t, inv, tc.host)
			apply := func(preset string) []string {
				t.Helper()
				code, res, errOut := provisionLabCmd(t, "tune", "apply", "-i", inv.Path, "--limit", tc.host, "--preset", preset)
				if code != 0 {
					t.Fatalf("tune apply --preset %s: exit %d %+v\n%s", preset, code, res, errOut)
				}
				return res[tc.host].Changed
			}
			apply("fast")
			fast := labtest.MustSSH(t, h, tc.live)
			labtest.MustSSH(t, h, "cp -p "+tc.conf+" /root/pidb-fast.conf")
			apply("balanced")
			balanced := labtest.MustSSH(t, h, tc.live)
			if fast == balanced {
				t.Fatalf("the presets give the same live values (%q): the test would prove nothing", fast)
			}
			// as a cut between the upload and the restart leaves it
			labtest.MustSSH(t, h, "cp -p /root/pidb-fast.conf "+tc.conf+" && rm /root/pidb-fast.conf")
			before := labtest.MustSSH(t, h, startTime)
			if changed := apply("fast"); strings.Join(changed, ",") != "configure" {
				t.Errorf("the re-run changed %v, want configure (restarted onto the file)", changed)
			}
			if now := labtest.MustSSH(t, h, startTime); now == before {
				t.Errorf("the server was not restarted")
			}
			if got := labtest.MustSSH(t, h, tc.live); got != fast {
				t.Errorf("live after the re-run: %q, want the fast preset's %q", got, fast)
			}
			// and then nothing to do, no restart
			before = labtest.MustSSH(t, h, startTime)
			if changed := apply("fast"); len(changed) != 0 {
				t.Errorf("a second re-run changed %v", changed)
			}
			if now := labtest.MustSSH(t, h, startTime); now != before {
				t.Errorf("a second re-run restarted the server")
			}
			apply("balanced")
		})
	}
}

// TestBenchServerKilled: the server killed (SIGKILL, as the kernel's OOM
// killer does) in the middle of a bench. The run says the server went
// away, when and for how long, leaves that time out of its TPS, and exits
// 1; systemd starts the server again (the service step's
// Restart=on-failure), the clients connect again and the run goes on; the
// canary rows are all there after.
func TestBenchServerKilled(t *testing.T) {
	t.Parallel()
	// systemd waits 5 s (RestartSec), then the server replays its WAL:
	// on a busy machine that took the rest of a 25 s run once, and of a
	// 45 s one another time
	f := startFaultBench(t, "500ms", "90s")
	time.Sleep(3 * time.Second)
	labtest.MustSSH(t, f.h, "systemctl kill -s KILL "+labtest.PGUnit)
	f.r.wait(t, 4*time.Minute)
	b, run := f.outcome(t)
	if f.r.code != 1 || b.DownS <= 0 || !strings.Contains(b.Error, "the server went away") || !strings.Contains(f.r.stderr, "the server went away") {
		t.Errorf("exit %d, down %.1f s, error %q; want 1, the time gone, and the sentence\n%s", f.r.code, b.DownS, b.Error, f.r.stderr)
	}
	s := run.Summary
	if len(s.Outages) != 1 || s.Outages[0].FromS < 1 || s.Outages[0].FailedConnects == 0 {
		t.Fatalf("outages %+v; want one, after the first second, with failed connections", s.Outages)
	}
	if s.Reconnects == 0 {
		t.Errorf("no reconnects: systemd did not start the server again, or the clients did not connect again")
	}
}

// faultBench is a bench on a Pi 4 of the test's own (a clone of a
// provisioned one) started for a fault to fall on it: the host (as root),
// the run, and the canary table's rows to count after.
type faultBench struct {
	h inventory.Host
	r *pidbRun
}

// startFaultBench clones a provisioned Pi 4, provisions it, loads tpcb at scale 1, makes a canary
// table of 1000 rows (dropped when the test ends), and starts a bench of
// three clients for duration with a point per interval; it returns once
// the clients are connected.
func startFaultBench(t *testing.T, interval, duration string) faultBench {
	t.Helper()
	inv := labtest.Clone(t, "pi4")
	h := provisionedAsRoot(t, inv, inv.Hosts[0].Name)
	args := []string{"bench", "-i", inv.Path, "--workload", "tpcb", "--scale", "1", "--clients", "3", "--warmup", "1s", "--interval", interval, "--out", t.TempDir()}
	if code, _, errOut := runPidb(t, append(args, "--duration", "1s")...); code != 0 { // load
		t.Fatalf("load: exit %d\n%s", code, errOut)
	}
	pidbSQL(t, h, "DROP TABLE IF EXISTS canary; CREATE TABLE canary AS SELECT generate_series(1, 1000) AS n")
	t.Cleanup(func() { pidbSQL(t, h, "DROP TABLE IF EXISTS canary") })
	r := startWatching(nil, append(args, "--duration", duration, "--json")...)
	waitForClients(t, h, `cd /tmp && runuser -u postgres -- psql -AtX -c "SELECT count(*) FROM pg_stat_activity WHERE usename = 'pidb'"`, 3)
	return faultBench{h, r}
}

// outcome reads the ended run's result and its saved run, and checks what
// every fault must leave: transactions after the first outage ended (the
// run went on), a TPS above the transactions over the whole measured time
// (the outage is left out of it), and the canary's 1000 rows.
func (f faultBench) outcome(t *testing.T) (job.BenchResult, results.Run) {
	t.Helper()
	var res []job.BenchResult
	if err := json.Unmarshal([]byte(f.r.stdout), &res); err != nil || len(res) != 1 {
		t.Fatalf("exit %d, not one result: %v\n%s\n%s", f.r.code, err, f.r.stdout, f.r.stderr)
	}
	run, err := results.Load(filepath.Join(res[0].RunDir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := run.Summary
	if len(s.Outages) > 0 {
		var after int64
		for _, iv := range run.Series {
			if iv.T > s.Outages[0].ToS {
				after += iv.Transactions
			}
		}
		if after == 0 {
			t.Errorf("no transactions after the outage ended at %.1f s: the run did not go on", s.Outages[0].ToS)
		}
	}
	if whole := float64(s.Transactions) / s.MeasuredS; s.TPS <= whole {
		t.Errorf("TPS %.1f, not above %.1f over the whole measured time: the outage is in it", s.TPS, whole)
	}
	if got := pidbSQL(t, f.h, "SELECT count(*) FROM canary"); got != "1000" {
		t.Errorf("canary rows after the fault: %s, want 1000", got)
	}
	return res[0], run
}

// TestUploadToAFullDisk: the folder of the tuner's drop-in is full (a
// tiny tmpfs over it, filled). tune apply fails for the host with an error
// that names the full disk, restarts nothing, and the server runs as it
// did; with room again, the same command applies. On a Pi 4 of the test's
// own (a clone of a provisioned one).
func TestUploadToAFullDisk(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "pi4")
	name := inv.Hosts[0].Name
	h := provisionedAsRoot(t, inv, name)
	const dir = labtest.PGEtc + "/conf.d"
	// a small disk under the drop-ins, postgres's as the folder is (a
	// folder anyone can write, tmpfs's own 1777, pidb refuses outright)
	labtest.MustSSH(t, h, "mount -t tmpfs -o size=16k,mode=0755,uid=$(id -u postgres),gid=$(id -g postgres) tmpfs "+dir+
		" && (dd if=/dev/zero of="+dir+"/filler bs=1k count=64 2>/dev/null || true)")
	defer labtest.MustSSH(t, h, "umount "+dir+" 2>/dev/null || true")
	before := labtest.MustSSH(t, h, startTime)
	code, res, errOut := provisionLabCmd(t, "tune", "apply", "-i", inv.Path, "--preset", "fast")
	msg := res[name].Error
	if code != 1 || !strings.Contains(msg, "is full") || !strings.Contains(msg, "nothing was changed, and postgres runs as it did") {
		t.Errorf("exit %d, error %q; want 1, the full disk named, nothing changed\n%s", code, msg, errOut)
	}
	if strings.Contains(msg, "FAILED too") || strings.Contains(errOut, "putting the previous configuration back") {
		t.Errorf("a rollback for nothing:\n%s", errOut)
	}
	if now := labtest.MustSSH(t, h, startTime); now != before {
		t.Errorf("the server was restarted for nothing")
	}
	labtest.MustSSH(t, h, "umount "+dir)
	if code, res, errOut := provisionLabCmd(t, "tune", "apply", "-i", inv.Path, "--preset", "fast"); code != 0 || !contains(res[name].Changed, "configure") {
		t.Errorf("with room again: exit %d %+v\n%s", code, res, errOut)
	}
	if code, _, errOut := provisionLabCmd(t, "tune", "apply", "-i", inv.Path, "--preset", "balanced"); code != 0 {
		t.Errorf("back to balanced: exit %d\n%s", code, errOut)
	}
}

// pidbSQL runs sql in pidb's database on h (as root: the host's own psql,
// as postgres) and returns what it printed, trimmed.
func pidbSQL(t *testing.T, h inventory.Host, sql string) string {
	t.Helper()
	return strings.TrimSpace(labtest.MustSSH(t, h, `cd /tmp && runuser -u postgres -- psql -AtX -d pidb -c "`+sql+`"`))
}
