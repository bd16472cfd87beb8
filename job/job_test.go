package job

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"pidb/bench"
	"pidb/bench/sqldb"
	"pidb/bench/workloads"
	"pidb/config"
	"pidb/dbms"
	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/inventory"
	"pidb/progress"
	"pidb/results"
	"pidb/secrets"
	"pidb/thermal"
	"pidb/usage"
)

func TestResolve(t *testing.T) {
	pg := inventory.Host{Name: "pi4", Engine: "postgres", Preset: "balanced"}
	my := inventory.Host{Name: "pi3", Engine: "mysql", AllowFrom: nil}
	th := config.DefaultThermal(config.ForBench)
	with := func(f func(*config.Bench)) config.Bench {
		b := config.DefaultBench()
		f(&b)
		return b
	}
	p, err := Resolve(pg, config.DefaultBench(), th)
	if err != nil || p.Spec.Name != "tpcb" || p.Params.Scale != 10 || p.Params.Protocol != "simple" || p.Bench.Via != "ssh" || p.Preset != "balanced" {
		t.Errorf("postgres default: %+v %v", p, err)
	}
	p, err = Resolve(my, config.DefaultBench(), th)
	if err != nil || p.Spec.Name != "oltp-read-only" || p.Params.Tables != 1 || p.Params.TableSize != 10000 || p.Params.Scale != 0 || p.Params.Protocol != "prepared" {
		t.Errorf("mysql default: %+v %v", p, err)
	}
	p, err = Resolve(my, with(func(b *config.Bench) { b.Workload = "quiz" }), th)
	if err != nil || p.Params.Scale != 1000 {
		t.Errorf("quiz: %+v %v", p.Params, err)
	}
	direct := pg
	direct.AllowFrom = []netip.Prefix{netip.MustParsePrefix("10.213.41.0/24")}
	if p, _ := Resolve(direct, config.DefaultBench(), th); p.Bench.Via != "direct" {
		t.Errorf("auto with allow_from: via %s", p.Bench.Via)
	}
	for _, c := range []struct {
		host inventory.Host
		b    config.Bench
		want string
	}{
		{my, with(func(b *config.Bench) { b.Workload = "tpcb" }), "pi3: workload tpcb needs PostgreSQL; the host's engine is mysql"},
		{pg, with(func(b *config.Bench) { b.Workload = "tpc-h" }), `pi4: unknown workload "tpc-h"`},
		{pg, with(func(b *config.Bench) { b.Workload, b.Mix = "tpcc", "45:43:4:4" }), `pi4: --mix: want five weights`},
		{pg, with(func(b *config.Bench) { b.Workload, b.Mix = "tpcc", "0:0:0:0:0" }), `every weight in "0:0:0:0:0" is 0`},
		{pg, with(func(b *config.Bench) { b.Workload, b.Mix = "tpcb", "1:1:1:1:1" }), `pi4: --mix is for tpcc; tpcb runs one kind of transaction`},
		{pg, with(func(b *config.Bench) { b.Workload, b.Check = "quiz", true }), `pi4: --check is for tpcb and tpcc, whose data has consistency conditions; quiz has none`},
		{pg, with(func(b *config.Bench) { b.Workload, b.Protocol = "tpcc", "prepared" }), `--protocol prepared is not for tpcc`},
		{my, with(func(b *config.Bench) { b.Protocol = "simple" }), "is not for oltp-read-only"},
		{pg, with(func(b *config.Bench) { b.Protocol = "fast" }), `--protocol "fast": want simple or prepared`},
	} {
		_, err := Resolve(c.host, c.b, th)
		if !usage.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a usage error with %q", c.b, err, c.want)
		}
	}
}

// fakeWorkload runs on no server: Prepare fails with prepareErr, else each
// Do is one query.
type fakeWorkload struct{ prepareErr error }

func (w *fakeWorkload) Name() string                  { return "fake" }
func (w *fakeWorkload) Prepare(context.Context) error { return w.prepareErr }
func (w *fakeWorkload) NewWorker(context.Context, int) (bench.Worker, error) {
	return fakeWorker{}, nil
}
func (w *fakeWorkload) ErrorKind(error) (string, bool) { return "fake", false }

type fakeWorker struct{}

func (fakeWorker) Do(ctx context.Context) (bench.Outcome, error) {
	time.Sleep(time.Millisecond)
	return bench.Outcome{Op: "fake", Queries: 2}, ctx.Err()
}
func (fakeWorker) Close() error { return nil }

// rig is a host behind the fake runner: pi4 with PostgreSQL 15 running,
// pidb's password kept, and a thermal zone at 48.5 C.
type rig struct {
	env   Env
	host  inventory.Host
	run   *fakerun.Runner
	conn  Conn
	plan  Plan
	fwd   int // forwards opened
	stops int // and closed
}

func newRig(t *testing.T, factsOut string, prepareErr error) *rig {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	invPath := filepath.Join(dir, "inv.toml")
	inv, err := inventory.Parse(invPath, dir, "[[host]]\nname = \"pi4\"\naddress = \"10.213.41.40\"\npreset = \"fast\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := secrets.Save(invPath, "pi4", secrets.Host{Pidb: "s3cret"}); err != nil {
		t.Fatal(err)
	}
	r := &rig{env: Env{Inventory: inv, Out: filepath.Join(dir, "out"), Version: "v1.2.3"}, host: inv.Hosts[0], run: &fakerun.Runner{}}
	r.run.Exact(facts.Script, fakerun.Reply{Stdout: factsOut})
	r.run.Exact(thermal.Script, fakerun.Reply{Stdout: "temp=48500\nclock=frequency(48)=1500000000\nthrottled=throttled=0x0\n"})
	r.conn = Conn{User: r.run, Root: r.run, Forward: func(addr string) (string, func(), error) {
		r.fwd++
		return "127.0.0.1:40000", func() { r.stops++ }, nil
	}}
	spec := workloads.Spec{Name: "fake", Engines: []dbms.Family{dbms.PostgresFamily}, Protocols: []sqldb.Protocol{sqldb.Prepared},
		New: func(sqldb.DB, workloads.Params) bench.Workload { return &fakeWorkload{prepareErr: prepareErr} }}
	b := config.DefaultBench()
	b.Duration, b.Warmup, b.Interval, b.Clients, b.Threads = 300*time.Millisecond, 0, 100*time.Millisecond, 2, 0
	th := config.DefaultThermal(config.ForBench)
	th.Interval = 50 * time.Millisecond
	r.plan = Plan{Spec: spec, Bench: b, Thermal: th, Preset: "fast"}
	r.plan.Bench.Via = "ssh"
	return r
}

func factsFile(t *testing.T, edit func(string) string) string {
	data, err := os.ReadFile("../facts/testdata/pi4b-raspios-bookworm-arm64.txt")
	if err != nil {
		t.Fatal(err)
	}
	return edit(string(data))
}

func same(s string) string { return s }

func savedRuns(t *testing.T, out string) []results.Listed {
	l, err := results.List(out)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestBenchSavesTheRun(t *testing.T) {
	r := newRig(t, factsFile(t, same), nil)
	r.env.ReadSettings = func(_ context.Context, db sqldb.DB, _ []string) ([][2]string, error) {
		if db.Postgres == nil || db.Postgres.Host != "127.0.0.1" || db.Postgres.Port != 40000 || db.Postgres.User != "pidb" || db.Postgres.Password != "s3cret" {
			t.Errorf("the workload's connection: %+v", db.Postgres)
		}
		return [][2]string{{"shared_buffers", "1GB"}, {"track_io_timing", "off"}}, nil
	}
	r.plan.Thermal.IdleAfter = 100 * time.Millisecond
	res, err := r.env.Bench(context.Background(), r.host, r.conn, r.plan, progress.Lines(func(string) {}))
	if err != nil {
		t.Fatal(err)
	}
	if r.fwd != 1 || r.stops != 1 {
		t.Errorf("forwards opened %d, closed %d: want one of each", r.fwd, r.stops)
	}
	l := savedRuns(t, r.env.Out)
	if len(l) != 1 || l[0].Err != nil || l[0].Dir != res.RunDir {
		t.Fatalf("saved %+v, result %+v", l, res)
	}
	run := l[0].Run
	if run.Kind != results.KindBench || run.Host != "pi4" || run.PidbVersion != "v1.2.3" || run.Preset != "fast" || run.Facts == nil ||
		run.Facts.Engine.Version != "15.8" || run.Workload.Name != "fake" || run.Workload.Via != "ssh" || len(run.Settings) != 2 ||
		run.Summary.Transactions == 0 || run.Summary.Queries != 2*run.Summary.Transactions || res.Transactions != run.Summary.Transactions {
		t.Errorf("saved run %+v", run)
	}
	// each live setting with the tuner's value and reason, where it has one
	if s := run.Settings[0]; s.Tuned != "1GB" || !strings.Contains(s.Why, "25% of RAM") {
		t.Errorf("shared_buffers saved as %+v: want the tuner's 1GB and its reason", s)
	}
	if s := run.Settings[1]; s.Tuned != "" || s.Why != "" {
		t.Errorf("track_io_timing, which the tuner leaves alone, saved as %+v", s)
	}
	// readings from the start of the load to the end of the idle time after it
	if len(run.Thermal) < 3 || run.Thermal[0].TempC == nil || *run.Thermal[0].TempC != 48.5 || run.Thermal[len(run.Thermal)-1].T <= 0.3 {
		t.Errorf("thermal readings: %d, last at %v", len(run.Thermal), run.Thermal)
	}
}

func TestBenchSettingsUnreadable(t *testing.T) {
	r := newRig(t, factsFile(t, same), nil)
	r.env.ReadSettings = func(context.Context, sqldb.DB, []string) ([][2]string, error) {
		return nil, errors.New("permission denied for view pg_settings")
	}
	_, err := r.env.Bench(context.Background(), r.host, r.conn, r.plan, progress.Lines(func(string) {}))
	if err == nil || !strings.Contains(err.Error(), "pi4: read the live settings: permission denied") {
		t.Errorf("settings unreadable: %v", err)
	}
	if r.fwd != 1 || r.stops != 1 {
		t.Errorf("forwards opened %d, closed %d", r.fwd, r.stops)
	}
	if l := savedRuns(t, r.env.Out); len(l) != 0 {
		t.Errorf("a failed run was saved: %+v", l)
	}
}

func TestBenchRefusedWorkloadSaysWhatToDo(t *testing.T) {
	missing := &pgconn.PgError{Severity: "FATAL", Code: "3D000", Message: `database "pidb" does not exist`}
	r := newRig(t, factsFile(t, same), missing)
	_, err := r.env.Bench(context.Background(), r.host, r.conn, r.plan, progress.Lines(func(string) {}))
	if err == nil || !strings.Contains(err.Error(), "pi4: prepare fake") || !strings.Contains(err.Error(), "run pidb provision -i "+r.env.Inventory.Path) {
		t.Errorf("prepare refused by the server: %v", err)
	}
	if r.stops != r.fwd {
		t.Errorf("the forward was left open")
	}
}

func TestBenchForwardFails(t *testing.T) {
	r := newRig(t, factsFile(t, same), nil)
	r.conn.Forward = func(string) (string, func(), error) {
		return "", nil, errors.New("pi4: forward to 127.0.0.1:5432: administratively prohibited")
	}
	_, err := r.env.Bench(context.Background(), r.host, r.conn, r.plan, progress.Lines(func(string) {}))
	if err == nil || !strings.Contains(err.Error(), "administratively prohibited") {
		t.Errorf("forward refused: %v", err)
	}
	if l := savedRuns(t, r.env.Out); len(l) != 0 {
		t.Errorf("saved %d runs", len(l))
	}
}

func TestBenchWithoutServer(t *testing.T) {
	down := factsFile(t, func(s string) string { return strings.Replace(s, "postgresql active", "postgresql inactive", 1) })
	down = strings.Replace(down, "online", "down", 1)
	r := newRig(t, down, nil)
	_, err := r.env.Bench(context.Background(), r.host, r.conn, r.plan, progress.Lines(func(string) {}))
	if err == nil || !strings.Contains(err.Error(), "pi4: no database server is running here: run pidb provision first") {
		t.Errorf("no server: %v", err)
	}
	if r.fwd != 0 {
		t.Errorf("a forward was opened to a host with no server")
	}
}

func TestValidateServiceDown(t *testing.T) {
	down := factsFile(t, func(s string) string {
		return strings.Replace(strings.Replace(s, "postgresql active", "postgresql inactive", 1), "online", "down", 1)
	})
	r := newRig(t, down, nil)
	res, err := r.env.Validate(context.Background(), r.host, r.conn, r.plan, config.Validate{}, progress.Lines(func(string) {}))
	if err != nil || res.Verdict != results.Fail || len(res.Reasons) == 0 || res.Reasons[0].Code != "service_down" || res.RunDir != "" {
		t.Errorf("validate with the server down: %+v, %v", res, err)
	}
	for _, cmd := range r.run.Ran() {
		if cmd == thermal.Script || strings.Contains(cmd, "psql") {
			t.Errorf("ran %q on a host whose server is down", cmd)
		}
	}
	if !res.Failed(false) {
		t.Errorf("FAIL does not fail the command")
	}
}

// TestValidateReadBackFails: the server's own client fails on the host
// (psql exits 2): validate says so and runs nothing.
func TestValidateReadBackFails(t *testing.T) {
	r := newRig(t, factsFile(t, same), nil)
	r.run.Contains("FROM pg_settings WHERE name IN", fakerun.Reply{Code: 2, Stderr: "psql: error: connection to server on socket failed"})
	_, err := r.env.Validate(context.Background(), r.host, r.conn, r.plan, config.Validate{}, progress.Lines(func(string) {}))
	if err == nil || !strings.Contains(err.Error(), "read the live settings") || !strings.Contains(err.Error(), "connection to server on socket failed") {
		t.Errorf("read-back failed: %v", err)
	}
	if r.fwd != 0 {
		t.Errorf("the workload was started after the read-back failed")
	}
}

func TestResultFailed(t *testing.T) {
	for _, c := range []struct {
		verdict        results.Grade
		strict, failed bool
	}{{results.Pass, true, false}, {results.Warn, false, false}, {results.Warn, true, true}, {results.Fail, false, true}, {"ERROR", false, true}} {
		if got := (ValidateResult{Verdict: c.verdict}).Failed(c.strict); got != c.failed {
			t.Errorf("%s strict=%v: failed %v", c.verdict, c.strict, got)
		}
	}
}

// TestBenchRefusesMySQLInTheClear: a direct run without TLS to Oracle
// MySQL 8 is refused before any connection (no forward, no workload),
// naming the host, its address and what to do; MySQL through the SSH
// forward, and MariaDB directly in the clear (whose logins send a proof of
// the password, never the password), reach the workload.
func TestBenchRefusesMySQLInTheClear(t *testing.T) {
	reached := errors.New("reached the workload")
	for _, c := range []struct {
		facts, via string
		refused    bool
	}{
		{"pi5-ubuntu-2404-arm64.txt", "direct", true},
		{"pi5-ubuntu-2404-arm64.txt", "ssh", false},
		{"pi3b-raspios-bullseye-armhf.txt", "direct", false},
	} {
		data, err := os.ReadFile("../facts/testdata/" + c.facts)
		if err != nil {
			t.Fatal(err)
		}
		r := newRig(t, string(data), reached)
		r.host.Engine = "mysql"
		r.plan.Bench.Via, r.plan.Bench.TLS = config.Via(c.via), config.TLSOff
		_, err = r.env.Bench(context.Background(), r.host, r.conn, r.plan, progress.Lines(func(string) {}))
		if !c.refused {
			if !errors.Is(err, reached) {
				t.Errorf("%s via %s: %v, want the workload reached", c.facts, c.via, err)
			}
			continue
		}
		for _, want := range []string{"pi4: MySQL 8.0.39 logs in by caching_sha2_password", "at 10.213.41.40", "--tls on", "--via ssh"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s via %s: %v, want %q in it", c.facts, c.via, err, want)
			}
		}
		if errors.Is(err, reached) || r.fwd != 0 {
			t.Errorf("refused, but the workload was reached or a forward opened (%d)", r.fwd)
		}
	}
}
