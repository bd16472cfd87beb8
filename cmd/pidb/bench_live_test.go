package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/job"
	"pidb/results"
)

// TestBenchTPCB runs the tpcb case on pi4 (scale 1 to keep the lab
// test short), directly and through SSH, and checks the result against
// what the server itself counted. On a Pi 4 and a Pi 3 of its own (clones
// of provisioned ones, named pi4 and pi3 in its inventory): it loads and
// benchmarks the Pi 4, and asks the Pi 3 for tpcb only to be refused.
func TestBenchTPCB(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4", "pi3")
	pi4 := labtest.Host(t, inv, "pi4")
	pi4.User = "root"
	if code, _, errOut := runPidb(t, "provision", "-i", inv.Path, "--limit", "pi4"); code != 0 {
		t.Fatalf("provision pi4: exit %d\n%s", code, errOut)
	}
	commits := func() int64 { return serverCount(t, pi4, "postgres") }
	out := t.TempDir()
	for _, via := range []string{"direct", "ssh"} {
		t.Run(via, func(t *testing.T) {
			// load first, so the counted commits are the run's
			if code, _, errOut := runPidb(t, "bench", "-i", inv.Path, "--limit", "pi4", "--workload", "tpcb", "--scale", "1",
				"--clients", "2", "--duration", "1s", "--warmup", "0s", "--out", out); code != 0 {
				t.Fatalf("load: exit %d\n%s", code, errOut)
			}
			rows := labtest.MustSSH(t, pi4, `cd /tmp && runuser -u postgres -- psql -AtX -d pidb -c "SELECT (SELECT count(*) FROM pgbench_branches) || ' ' || (SELECT count(*) FROM pgbench_tellers) || ' ' || (SELECT count(*) FROM pgbench_accounts)"`)
			if strings.TrimSpace(rows) != "1 10 100000" {
				t.Errorf("rows at scale 1: %q, want pgbench's 1 10 100000", rows)
			}
			before := commits()
			b := benchOne(t, "bench", "-i", inv.Path, "--limit", "pi4", "--workload", "tpcb", "--scale", "1",
				"--clients", "4", "--duration", "3s", "--warmup", "1s", "--via", via, "--out", out)
			after := commits()
			if b.Host != "pi4" || b.TPS <= 0 || b.P95Ms <= 0 || b.Transactions == 0 || len(b.Errors) != 0 {
				t.Errorf("result %+v", b)
			}
			if b.QPS < 6.9*b.TPS || b.QPS > 7.1*b.TPS {
				t.Errorf("qps %.1f is not 7 statements per transaction at tps %.1f", b.QPS, b.TPS)
			}
			// the server committed every measured transaction, plus those of
			// the warm-up (the run's points before 0 s), those cut at the
			// end (one a client at most), and a few of pidb's own
			all := ranInAll(t, b)
			if got := after - before; got < b.Transactions || got > all+4+200 {
				t.Errorf("server commits %d for %d measured transactions, %d with the warm-up's", got, b.Transactions, all)
			}
			run, err := results.Load(filepath.Join(b.RunDir, "run.json"))
			if err != nil {
				t.Fatal(err)
			}
			if run.Workload.Via != via || run.Summary.Transactions != b.Transactions || len(run.Series) < 3 || run.Facts == nil || run.Facts.Model != "Raspberry Pi 4 Model B Rev 1.4" || len(run.Settings) == 0 {
				t.Errorf("saved run: via %s, %d transactions, %d points, facts %v, %d settings", run.Workload.Via, run.Summary.Transactions, len(run.Series), run.Facts, len(run.Settings))
			}
			if len(run.Thermal) == 0 || run.Thermal[0].TempC == nil || run.Thermal[0].Throttled == nil {
				t.Errorf("saved run: no thermal readings beside it: %+v", run.Thermal)
			}
		})
	}
	t.Run("protocols", func(t *testing.T) {
		// what the server's sessions last ran: the values in the text with
		// the simple protocol, $n parameters with the prepared one. The
		// watcher polls the server over SSH: a busy machine left a 3 s run
		// no UPDATE to be seen in, and a 6 s one too, so a run in which it
		// saw none is run again, longer (what it saw decides, not how soon)
		for _, proto := range []string{"simple", "prepared"} {
			var b job.BenchResult
			var seen string
			for _, d := range []string{"6s", "30s", "90s"} {
				b, seen = benchSeeing(t, pi4, "UPDATE%", "bench", "-i", inv.Path, "--limit", "pi4", "--workload", "tpcb", "--scale", "1",
					"--clients", "2", "--duration", d, "--warmup", "0s", "--protocol", proto, "--out", out)
				if seen != "" {
					break
				}
				t.Logf("%s: a %s run, and the watcher saw no UPDATE in it: again, longer", proto, d)
			}
			if b.Transactions == 0 || len(b.Errors) != 0 {
				t.Errorf("%s: %+v", proto, b)
			}
			if seen == "" || strings.Contains(seen, "$1") != (proto == "prepared") {
				t.Errorf("%s: the server's sessions ran:\n%s", proto, seen)
			}
		}
	})
	t.Run("pgbench", func(t *testing.T) {
		// pgbench on the Pi, as the pidb account over loopback
		u, err := url.Parse(credentials(t, inv.Path, "pi4", ""))
		if err != nil {
			t.Fatal(err)
		}
		u.Host = "127.0.0.1"
		pgbench := func(args string) string {
			t.Helper()
			stdout, errOut, err := labtest.SSH(pi4, "pgbench "+args+" "+shellQuote(u.String()))
			if err != nil {
				t.Fatalf("pgbench %s: %v\n%s", args, err, strings.ReplaceAll(errOut, u.String(), redact(u.String())))
			}
			return stdout
		}
		// pidb's data (scale 1, loaded above) under pgbench -n
		if got := pgbench("-n -T 2 -c 2"); !strings.Contains(got, "number of failed transactions: 0") || !strings.Contains(got, "scaling factor: 1") {
			t.Errorf("pgbench -n on pidb's data:\n%s", got)
		}
		// pgbench's data under pidb: recognised, not loaded again
		pgbench("-i -s 2 -q")
		code, stdout, errOut := runPidb(t, "bench", "-i", inv.Path, "--limit", "pi4", "--workload", "tpcb", "--scale", "2",
			"--clients", "2", "--duration", "2s", "--warmup", "0s", "--out", out, "--json")
		if code != 0 || !strings.Contains(errOut, "scale 2 is loaded already") || !strings.Contains(stdout, `"tps"`) {
			t.Errorf("pidb on pgbench's data: exit %d\n%s\n%s", code, stdout, errOut)
		}
	})
	t.Run("scale 10", func(t *testing.T) {
		if code, _, errOut := runPidb(t, "bench", "-i", inv.Path, "--limit", "pi4", "--workload", "tpcb", "--scale", "10",
			"--clients", "1", "--duration", "1s", "--warmup", "0s", "--out", out); code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		rows := labtest.MustSSH(t, pi4, `cd /tmp && runuser -u postgres -- psql -AtX -d pidb -c "SELECT (SELECT count(*) FROM pgbench_branches) || ' ' || (SELECT count(*) FROM pgbench_tellers) || ' ' || (SELECT count(*) FROM pgbench_accounts) || ' ' || (SELECT count(DISTINCT bid) FROM pgbench_accounts)"`)
		if strings.TrimSpace(rows) != "10 100 1000000 10" {
			t.Errorf("rows at scale 10: %q, want pgbench's 10 100 1000000, over 10 branches", rows)
		}
	})
	if code, _, errOut := runPidb(t, "bench", "-i", inv.Path, "--limit", "pi3", "--workload", "tpcb"); code != 2 || !strings.Contains(errOut, "tpcb needs PostgreSQL") {
		t.Errorf("tpcb on a MariaDB host: exit %d %s", code, errOut)
	}
	t.Run("power cut", func(t *testing.T) {
		// pidb's check of the tables at scale 10 fails where a balance is
		// not its history's; then the Pi 4's power is cut under a run
		// (TestBenchTPCC cuts the Pi 3's under MariaDB and tpcc)
		tpcbCheckFails(t, inv, pi4)
		cutDuringRun(t, inv, pi4, pgPowerCase())
	})
}

// TestBenchOLTPReadOnly runs sysbench's oltp_read_only on pi3's MariaDB and
// pi4's PostgreSQL, and checks it against what each server counted:
// prepared statements executed on MariaDB, commits on PostgreSQL. On a
// Pi 3 and a Pi 4 of its own (clones of provisioned ones): the counts are
// the server's, so no other test may run there meanwhile.
func TestBenchOLTPReadOnly(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4", "pi3")
	for _, tc := range []struct {
		host, engine, rows string
		perTx              int64 // what the server counts per transaction
	}{
		{"pi3", "mariadb", `mariadb -NBe "SELECT COUNT(*), COUNT(DISTINCT id), MAX(LENGTH(c)), MAX(LENGTH(pad)) FROM pidb.sbtest1"`, 14},
		{"pi4", "postgres", `cd /tmp && runuser -u postgres -- psql -AtX -F "	" -d pidb -c "SELECT COUNT(*), COUNT(DISTINCT id), MAX(LENGTH(c)), MAX(LENGTH(pad)) FROM sbtest1"`, 1},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			h := provisionedAsRoot(t, inv, tc.host)
			args := []string{"bench", "-i", inv.Path, "--limit", tc.host, "--workload", "oltp-read-only", "--table-size", "5000", "--clients", "4", "--out", t.TempDir()}
			if code, _, errOut := runPidb(t, append(args, "--duration", "1s", "--warmup", "0s")...); code != 0 {
				t.Fatalf("load: exit %d\n%s", code, errOut)
			}
			if rows := strings.TrimSpace(labtest.MustSSH(t, h, tc.rows)); rows != "5000\t5000\t119\t59" {
				t.Errorf("sbtest1: %q, want 5000 rows with sysbench's 119- and 59-character c and pad", rows)
			}
			before := serverCount(t, h, tc.engine)
			b := benchOne(t, append(args, "--duration", "3s", "--warmup", "1s")...)
			after := serverCount(t, h, tc.engine)
			if b.Workload != "oltp-read-only" || string(b.Engine) != tc.engine || b.QPS <= 0 || len(b.Errors) != 0 {
				t.Errorf("result %+v", b)
			}
			if b.QPS < 15.9*b.TPS || b.QPS > 16.1*b.TPS {
				t.Errorf("qps %.1f is not 16 statements per transaction at tps %.1f", b.QPS, b.TPS)
			}
			// the warm-up's transactions (the run's points before 0 s) and
			// those cut at the end (one a client at most) add some
			all := ranInAll(t, b)
			if got := after - before; got < tc.perTx*b.Transactions || got > tc.perTx*(all+4)+1000 {
				t.Errorf("the server counted %d for %d measured transactions, %d with the warm-up's (%d each)", got, b.Transactions, all, tc.perTx)
			}
		})
	}
}

// TestBenchQuiz: the write-up's quiz, loaded on MariaDB and PostgreSQL at
// 100 users (its four tables and columns, its rows per user, its text's
// shapes), run as a fixed amount of work with each protocol: exactly the
// clients x queries went through, which the servers' own counters agree
// with (MariaDB's selects for the simple protocol, its executed prepared
// statements for the prepared one; PostgreSQL's commits, and what its
// sessions ran: the id in the text, or $1), and the run is saved as the
// write-up's quiz (revision 2, its queries per client). On a Pi 3 and a
// Pi 4 of its own (clones), whose counters must see its queries alone.
func TestBenchQuiz(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4", "pi3")
	for _, tc := range []struct{ host, engine, rows, shapes string }{
		{"pi3", "mariadb", `mariadb -NBe "SELECT (SELECT COUNT(*) FROM pidb.user), (SELECT COUNT(*) FROM pidb.question), (SELECT COUNT(*) FROM pidb.answer), (SELECT COUNT(*) FROM pidb.attempt)"`,
			`mariadb -NBe "SELECT COUNT(*) FROM pidb.user WHERE email LIKE '%@%.com' AND pfp LIKE '/%/%.jpg' AND username REGEXP '^[a-z]+[0-9]{1,2}$'"`},
		{"pi4", "postgres", `cd /tmp && runuser -u postgres -- psql -AtX -F "	" -d pidb -c "SELECT (SELECT COUNT(*) FROM \"user\"), (SELECT COUNT(*) FROM question), (SELECT COUNT(*) FROM answer), (SELECT COUNT(*) FROM attempt)"`,
			`cd /tmp && runuser -u postgres -- psql -AtX -d pidb -c "SELECT COUNT(*) FROM \"user\" WHERE email LIKE '%@%.com' AND pfp LIKE '/%/%.jpg' AND username ~ '^[a-z]+[0-9]{1,2}$'"`},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			h := provisionedAsRoot(t, inv, tc.host)
			out := t.TempDir()
			args := []string{"bench", "-i", inv.Path, "--limit", tc.host, "--workload", "quiz", "--scale", "100", "--clients", "8", "--queries", "2000", "--out", out}
			for _, proto := range []string{"simple", "prepared"} {
				before := serverCounts(t, h, tc.engine)
				like := "" // MariaDB: the server's counters tell the protocols apart
				if tc.engine == "postgres" {
					like = `SELECT % WHERE %\\_id = %`
				}
				b, seen := benchSeeing(t, h, like, append(args, "--protocol", proto)...)
				after := serverCounts(t, h, tc.engine)
				if b.Workload != "quiz" || string(b.Engine) != tc.engine || b.Transactions != 16000 || b.Queries != 2000 || b.QPS <= 0 || b.QPS != b.TPS || b.DurationS <= 0 || len(b.Errors) != 0 {
					t.Errorf("%s: result %+v, want 8 x 2,000 queries", proto, b)
				}
				// the server saw every query, and few of anyone else's
				// (pidb's checks of the tables, the settings' read-back)
				switch counted := after.sub(before); {
				case tc.engine == "postgres" && (counted.commits < 16000 || counted.commits > 16100):
					t.Errorf("%s: the server committed %d statements for 16,000 queries", proto, counted.commits)
				case tc.engine == "postgres" && (seen == "" || strings.Contains(seen, "$1") != (proto == "prepared")):
					t.Errorf("%s: the server's sessions ran:\n%s", proto, seen)
				case tc.engine == "mariadb" && proto == "simple" && (counted.selects < 16000 || counted.selects > 16100 || counted.executes != 0):
					t.Errorf("simple: the server counted %d selects and %d executes for 16,000 queries in the text", counted.selects, counted.executes)
				case tc.engine == "mariadb" && proto == "prepared" && (counted.executes != 16000 || counted.prepares != 32):
					t.Errorf("prepared: the server counted %d executes and %d prepares for 16,000 queries of 4 statements on 8 connections", counted.executes, counted.prepares)
				}
				run, err := results.Load(filepath.Join(b.RunDir, "run.json"))
				if err != nil {
					t.Fatal(err)
				}
				if w := run.Workload; w.Name != "quiz" || w.Revision != 2 || w.Queries != 2000 || w.Protocol != proto || w.WarmupS != 0 || run.Summary.Transactions != 16000 {
					t.Errorf("%s: saved run's workload %+v, %d transactions", proto, w, run.Summary.Transactions)
				}
			}
			if rows := strings.TrimSpace(labtest.MustSSH(t, h, tc.rows)); rows != "100\t200\t200\t2000" {
				t.Errorf("quiz rows at 100 users: %q, want 100, 200, 200, 2000", rows)
			}
			if n := strings.TrimSpace(labtest.MustSSH(t, h, tc.shapes)); n != "100" {
				t.Errorf("%s of 100 users have the write-up's username, email and picture shapes", n)
			}
		})
	}
}

// benchSeeing runs a bench and, while it runs, reads what pidb's
// sessions on the PostgreSQL host h last ran, once one's statement is LIKE
// like ("" reads nothing): the values in the text with the simple
// protocol, $n with the prepared one. It reads on the host, every 50 ms
// until it sees one or the run has ended, over a connection made before
// the run: polled over a new ssh connection each time, a busy machine once
// let a 3 s run pass between two reads; and a run that took more than a
// minute to begin its workload once outlasted a reader that gave up then.
func benchSeeing(t *testing.T, h inventory.Host, like string, args ...string) (job.BenchResult, string) {
	t.Helper()
	if like == "" {
		return benchOne(t, args...), ""
	}
	// the run's end is a file the reader looks for (15 minutes at most)
	ended := fmt.Sprintf("/tmp/pidb-bench-ended.%d", time.Now().UnixNano())
	watch := labtest.Armed(t, h, `rm -f `+ended+`; while [ ! -e `+ended+` ] && [ $SECONDS -lt 900 ]; do q=$(cd /tmp && runuser -u postgres -- psql -AtX -c "SELECT query FROM pg_stat_activity WHERE usename = 'pidb' AND query LIKE '`+like+`'"); [ -n "$q" ] && { echo "$q"; break; }; sleep 0.05; done; rm -f `+ended)
	seen := make(chan string, 1)
	go func() { seen <- watch() }()
	read := ""
	stop := sync.OnceFunc(func() { // also when the bench fails the test: watch reports to t
		_, _, _ = labtest.SSH(h, "touch "+ended)
		read = <-seen
	})
	defer stop()
	b := benchOne(t, args...)
	stop()
	return b, read
}

// counts are what a server counted: MariaDB's selects, executed and
// prepared statements (SHOW GLOBAL STATUS), PostgreSQL's commits in pidb's
// database (flushed first).
type counts struct{ selects, executes, prepares, commits int64 }

func (a counts) sub(b counts) counts {
	return counts{a.selects - b.selects, a.executes - b.executes, a.prepares - b.prepares, a.commits - b.commits}
}

func serverCounts(t *testing.T, h inventory.Host, engine string) counts {
	t.Helper()
	cmd := `mariadb -NBe "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Com_stmt_execute', 'Com_stmt_prepare')"`
	if engine == "postgres" {
		cmd = `cd /tmp && runuser -u postgres -- psql -AtX -c "SELECT pg_stat_force_next_flush()" -c "SELECT 'commits', xact_commit FROM pg_stat_database WHERE datname = 'pidb'"`
	}
	out := labtest.MustSSH(t, h, cmd)
	var c counts
	seen, want := 0, map[string]int{"postgres": 1}[engine]
	if want == 0 {
		want = 3
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(strings.ReplaceAll(line, "|", " "))
		if len(f) < 2 {
			continue // pg_stat_force_next_flush's empty row
		}
		n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			t.Fatalf("%s's count %q", engine, line)
		}
		seen++
		switch f[0] {
		case "Com_select":
			c.selects = n
		case "Com_stmt_execute":
			c.executes = n
		case "Com_stmt_prepare":
			c.prepares = n
		case "commits":
			c.commits = n
		}
	}
	if seen != want {
		t.Fatalf("%s's counts: %d of %d in %q", engine, seen, want, out)
	}
	return c
}

// TestQuizWithTheWriteUpsLoadPy: the write-up's own load.py, from
// ../shared/peers/quiz, unchanged, reads the data pidb loaded on MariaDB
// (through an SSH forward, as pidb's localhost account: the network
// account requires TLS, which load.py does not ask for) and completes, and
// the server counted its queries. On a Pi 3 of its own (a clone), once it
// knows it can run: no host is made for a test that skips.
func TestQuizWithTheWriteUpsLoadPy(t *testing.T) {
	t.Parallel()
	loadPy, err := filepath.Abs("../../../shared/peers/quiz/load.py")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(loadPy); err != nil {
		labtest.Unavailable(t, "the write-up's load.py is not in ../shared/peers/quiz: "+err.Error())
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import MySQLdb").Run(); err != nil {
		labtest.Unavailable(t, "Debian's python3 has no MySQLdb (apt-get install python3-mysqldb): "+err.Error())
	}
	inv := labtest.CloneAsBoard(t, "pi3")
	h := provisionedAsRoot(t, inv, "pi3")
	if code, _, errOut := runPidb(t, "bench", "-i", inv.Path, "--limit", "pi3", "--workload", "quiz", "--scale", "100", "--clients", "1", "--queries", "4", "--out", t.TempDir()); code != 0 {
		t.Fatalf("load: exit %d\n%s", code, errOut)
	}
	u, err := url.Parse(credentials(t, inv.Path, "pi3", ""))
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := u.User.Password()
	port := freePort(t)
	ssh := labtest.Host(t, inv, "pi3")
	fwd := exec.Command("ssh", append([]string{"-N", "-o", "ExitOnForwardFailure=yes", "-L", fmt.Sprintf("127.0.0.1:%d:127.0.0.1:3306", port)}, labtest.SSHArgs(ssh)...)...)
	if err := fwd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { fwd.Process.Kill(); fwd.Wait() }()
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the SSH forward did not open")
		}
	}
	before := serverCounts(t, h, "mariadb")
	// load.py SCALE QUERIES THREADS, as the write-up ran it (1000 1000 50), smaller
	py := exec.Command("/usr/bin/python3", loadPy, "100", "400", "8")
	py.Env = append(os.Environ(), "PEER_HOST=127.0.0.1", "MYSQL_TCP_PORT="+strconv.Itoa(port), "PEER_USER="+u.User.Username(), "PEER_PASS="+pass,
		"PEER_DB="+strings.TrimPrefix(u.Path, "/"))
	stdout, err := py.CombinedOutput()
	if err != nil {
		t.Fatalf("load.py: %v\n%s", err, strings.ReplaceAll(string(stdout), pass, "(password)"))
	}
	after := serverCounts(t, h, "mariadb")
	if !regexp.MustCompile(`completed in [0-9.]+ seconds\nQPS = [0-9.]+`).Match(stdout) {
		t.Errorf("load.py said:\n%s", stdout)
	}
	if got := after.sub(before).selects; got < 3200 || got > 3300 {
		t.Errorf("the server counted %d selects for load.py's 8 x 400", got)
	}
}

// freePort is a TCP port on loopback that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// benchResult runs `pidb bench ... --json` for one host and returns its
// result, or what went wrong.
func benchResult(t *testing.T, args ...string) (job.BenchResult, error) {
	code, stdout, errOut := runPidb(t, append(args, "--json")...)
	if code != 0 {
		return job.BenchResult{}, fmt.Errorf("exit %d\n%s", code, errOut)
	}
	var res []job.BenchResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res) != 1 {
		return job.BenchResult{}, fmt.Errorf("not one result: %v\n%s", err, stdout)
	}
	return res[0], nil
}

// benchOne is benchResult that ends the test when the bench fails.
func benchOne(t *testing.T, args ...string) job.BenchResult {
	t.Helper()
	b, err := benchResult(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ranInAll is how many transactions b's run finished, its warm-up's
// included: the sum of its saved points, whose first are the warm-up's.
// A bound on what a server counted that a busy machine's swings between
// the warm-up and the measured time cannot break, as twice the measured
// transactions could.
func ranInAll(t *testing.T, b job.BenchResult) int64 {
	t.Helper()
	run, err := results.Load(filepath.Join(b.RunDir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, iv := range run.Series {
		n += iv.Transactions
	}
	if n < b.Transactions {
		t.Fatalf("the run's points add up to %d transactions, fewer than the %d measured", n, b.Transactions)
	}
	return n
}

// serverCount is what the host's server has counted: prepared statements
// executed on MariaDB, transactions committed in pidb's database on
// PostgreSQL.
func serverCount(t *testing.T, h inventory.Host, engine string) int64 {
	t.Helper()
	c := serverCounts(t, h, engine)
	if engine == "postgres" {
		return c.commits
	}
	return c.executes
}

// TestBenchCleanup drops pidb's database on each engine, and leaves alone a
// database of the same name that pidb did not make, in cleanup and in
// provision. On a Pi 4 and a Pi 3 of its own (clones), whose databases it
// drops and makes.
func TestBenchCleanup(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4", "pi3")
	for _, tc := range []struct {
		host, workload string
		admin          func(db, sql string) string // the server's own client, as its administrator; db "" = none
	}{
		{"pi4", "tpcb", func(db, sql string) string {
			return `cd /tmp && runuser -u postgres -- psql -AtX -d ` + cmp.Or(db, "postgres") + ` -c ` + shellQuote(sql)
		}},
		{"pi3", "oltp-read-only", func(db, sql string) string { return `mariadb -NB ` + db + ` -e ` + shellQuote(sql) }},
	} {
		t.Run(tc.host, func(t *testing.T) {
			h := labtest.Host(t, inv, tc.host)
			h.User = "root"
			databases := func() string {
				q := "SELECT datname FROM pg_database WHERE datname = 'pidb'"
				if tc.host == "pi3" {
					q = "SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'pidb'"
				}
				return strings.TrimSpace(labtest.MustSSH(t, h, tc.admin("", q)))
			}
			cleanup := func() (int, []job.CleanupResult, string) {
				code, stdout, errOut := runPidb(t, "bench", "cleanup", "-i", inv.Path, "--limit", tc.host, "--json")
				var res []job.CleanupResult
				if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res) != 1 {
					t.Fatalf("cleanup: not one result: %v\n%s\n%s", err, stdout, errOut)
				}
				return code, res, errOut
			}
			if code, _, errOut := runPidb(t, "provision", "-i", inv.Path, "--limit", tc.host); code != 0 {
				t.Fatalf("provision: exit %d\n%s", code, errOut)
			}
			bench := []string{"bench", "-i", inv.Path, "--limit", tc.host, "--workload", tc.workload, "--scale", "1", "--table-size", "1000",
				"--clients", "1", "--duration", "1s", "--warmup", "0s", "--out", t.TempDir()}
			if code, _, errOut := runPidb(t, bench...); code != 0 {
				t.Fatalf("bench: exit %d\n%s", code, errOut)
			}
			if code, res, errOut := cleanup(); code != 0 || !res[0].Dropped || databases() != "" {
				t.Fatalf("cleanup: exit %d, %+v, database left: %q\n%s", code, res[0], databases(), errOut)
			}
			if code, res, _ := cleanup(); code != 0 || res[0].Dropped {
				t.Errorf("a second cleanup: exit %d, %+v; want nothing dropped", code, res[0])
			}
			if code, _, errOut := runPidb(t, bench...); code != 1 || !strings.Contains(errOut, "run pidb provision") {
				t.Errorf("bench without pidb's database: exit %d\n%s", code, errOut)
			}

			// someone's own database "pidb", with a row of their data
			labtest.MustSSH(t, h, tc.admin("", "CREATE DATABASE pidb"))
			labtest.MustSSH(t, h, tc.admin("pidb", "CREATE TABLE mine (v text)"))
			labtest.MustSSH(t, h, tc.admin("pidb", "INSERT INTO mine VALUES ('keep me')"))
			t.Cleanup(func() {
				if t.Failed() { // leave no foreign database to the next test
					labtest.MustSSH(t, h, tc.admin("", "DROP DATABASE IF EXISTS pidb"))
				}
			})
			kept := func() string { return strings.TrimSpace(labtest.MustSSH(t, h, tc.admin("pidb", "SELECT v FROM mine"))) }
			if code, res, errOut := cleanup(); code != 1 || res[0].Dropped || !strings.Contains(errOut, "not made by pidb") || kept() != "keep me" {
				t.Errorf("cleanup of someone else's database: exit %d, %+v, data %q\n%s", code, res[0], kept(), errOut)
			}
			if code, _, errOut := runPidb(t, "provision", "-i", inv.Path, "--limit", tc.host); code != 1 || !strings.Contains(errOut, "not made by pidb") || kept() != "keep me" {
				t.Errorf("provision over someone else's database: exit %d, data %q\n%s", code, kept(), errOut)
			}
			labtest.MustSSH(t, h, tc.admin("", "DROP DATABASE pidb"))
			if code, _, errOut := runPidb(t, "provision", "-i", inv.Path, "--limit", tc.host); code != 0 || databases() != "pidb" {
				t.Errorf("provision after: exit %d, database %q\n%s", code, databases(), errOut)
			}
		})
	}
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestBenchSurvivesAKilledConnection kills one of pidb's sessions from the
// server's side in the middle of a run, on each engine: the run goes on, the
// error and the reconnect are counted, and the duration is kept to within
// one interval. On a Pi 4 and a Pi 3 of its own (clones): it kills a
// session of pidb's, and must not kill another test's. It kills once the
// run says it measures: a fixed wait after the clients connected was, on
// a busy machine, over before the run began (its sessions then were the
// load check's), over an ssh connection made before the run (a new one
// once took longer than the run), and "after the kill" is after the
// first point with an error, wherever the kill landed.
func TestBenchSurvivesAKilledConnection(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4", "pi3")
	for _, tc := range []struct{ host, workload, kill string }{
		// the pid of the session it ended ("" when none was there, or the
		// one picked had ended already)
		{"pi4", "tpcb", `cd /tmp && runuser -u postgres -- psql -AtX -c "SELECT pid FROM (SELECT pid, pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE usename = 'pidb' LIMIT 1) s WHERE ended"`},
		{"pi3", "oltp-read-only", `for id in $(mariadb -NBe "SELECT id FROM information_schema.processlist WHERE user = 'pidb' LIMIT 1"); do mariadb -e "KILL CONNECTION $id" 2>/dev/null && echo $id; done; true`},
	} {
		t.Run(tc.host, func(t *testing.T) {
			h := provisionedAsRoot(t, inv, tc.host)
			args := []string{"bench", "-i", inv.Path, "--limit", tc.host, "--workload", tc.workload, "--scale", "1", "--table-size", "1000",
				"--clients", "3", "--warmup", "1s", "--interval", "500ms", "--out", t.TempDir()}
			if code, _, errOut := runPidb(t, append(args, "--duration", "1s")...); code != 0 { // load
				t.Fatalf("load: exit %d\n%s", code, errOut)
			}
			// the kill, on a connection made before the run (on a busy
			// machine a new one took longer than the run once), tried for
			// 3 s on the host until it ends one of pidb's sessions
			kill := labtest.Armed(t, h, `for i in $(seq 30); do k=$(`+tc.kill+`); [ -n "$k" ] && { echo "$k"; break; }; sleep 0.1; done`)
			// the run measuring (its first status line, "tps"), then 1.5 s
			// into it
			measuring := tc.host + ": " + tc.workload + " "
			// 10 s: the kill, an SSH command on a board-speed Pi 3 of a busy
			// machine, once landed 3.5 s after it was fired, in a 5 s run's
			// last interval, with nothing after it to judge
			r := startWatching([]string{measuring}, append(args, "--duration", "10s", "--json")...)
			r.waitMark(t, measuring)
			time.Sleep(1500 * time.Millisecond)
			killed := strings.TrimSpace(kill())
			r.wait(t, 2*time.Minute)
			var res []job.BenchResult
			if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil || len(res) != 1 {
				t.Fatalf("bench: exit %d, not one result (%v)\n%s\n%s", r.code, err, r.stdout, r.stderr)
			}
			b := res[0]
			if killed == "" {
				t.Fatalf("no session of pidb's to end on the host in 3 s, from 1.5 s into the run; the run's stderr:\n%s", r.stderr)
			}
			run, err := results.Load(filepath.Join(b.RunDir, "run.json"))
			if err != nil {
				t.Fatal(err)
			}
			var errs int64
			for _, n := range run.Summary.Errors {
				errs += n
			}
			if errs < 1 || run.Summary.Reconnects < 1 {
				t.Errorf("after the kill of %s: errors %v, reconnects %d; want both counted; the run's points: %+v",
					killed, run.Summary.Errors, run.Summary.Reconnects, run.Series)
			}
			// the run went on after the kill (the first point with an
			// error), to its end
			var after int64
			killedAt := -1.0
			for _, iv := range run.Series {
				switch {
				case killedAt < 0 && iv.Errors > 0:
					killedAt = iv.T
				case killedAt >= 0:
					after += iv.Transactions
				}
			}
			if killedAt < 0 || after == 0 {
				t.Errorf("no transactions after the kill (the first error at %.1f s): %+v", killedAt, run.Series)
			}
			last := run.Series[len(run.Series)-1]
			// --duration 10s, to within one interval (0.5 s); the last
			// point is when the clients had ended, which a starved
			// machine delays (once 1 s past the end): only the wall time
			// below bounds that
			if last.T < 9.5 || b.DurationS < 9.5 || b.DurationS > 10.5 {
				t.Errorf("measured %.2f s, last point at %.2f s; want 10 s to within 0.5 s", b.DurationS, last.T)
			}
			// not stuck on the dead connection: warm-up, duration, an
			// interval, and closing, with room for a busy machine
			if wall := run.Finished.Sub(run.Started).Seconds(); wall > 1+10+0.5+10 {
				t.Errorf("the run took %.1f s for 1 s of warm-up and 10 s of measurement", wall)
			}
		})
	}
}

// TestStalePassword: a Pi 4 (a clone, its own) provisioned from another controller (another
// state folder: its own password for pidb) refuses this one's; the bench
// says what happened and what to run, and after that run it works. Each
// pidb command gets its state folder in its own environment.
func TestStalePassword(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4")
	mine, other := t.TempDir(), t.TempDir()
	as := func(state string, args ...string) (int, string) {
		t.Helper()
		code, _, errOut := runPidbEnv(t, []string{"XDG_STATE_HOME=" + state}, args...)
		return code, errOut
	}
	for _, state := range []string{mine, other} {
		if code, errOut := as(state, "provision", "-i", inv.Path, "--limit", "pi4"); code != 0 {
			t.Fatalf("provision: exit %d\n%s", code, errOut)
		}
	}
	args := []string{"bench", "-i", inv.Path, "--limit", "pi4", "--workload", "tpcb", "--scale", "1", "--clients", "1", "--duration", "1s", "--warmup", "0s", "--out", t.TempDir()}
	code, errOut := as(mine, args...)
	if code != 1 || !strings.Contains(errOut, "the server has another password for pidb than the one kept in "+mine) || !strings.Contains(errOut, "run pidb provision -i "+inv.Path+" --limit pi4") {
		t.Errorf("exit %d; want 1, and the hint\n%s", code, errOut)
	}
	if code, errOut := as(mine, "provision", "-i", inv.Path, "--limit", "pi4"); code != 0 {
		t.Fatalf("provision: exit %d\n%s", code, errOut)
	}
	if code, errOut := as(mine, args...); code != 0 {
		t.Errorf("after provision: exit %d\n%s", code, errOut)
	}
}
