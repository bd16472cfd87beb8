// Package job is pidb's run pipeline below the command line: for one host,
// resolve a workload's plan from the configuration, prepare its data,
// connect (directly or through the SSH connection), run it with the
// thermal sampler beside it and the idle time around it, build the saved
// run and save it. `pidb bench`, `pidb validate` (with its checks and
// verdict on top, in Validate) and `pidb demo` call it; the command line
// only turns flags into a Plan and prints what comes back.
package job

import (
	"context"
	"fmt"
	"math"
	"net"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"pidb/bench"
	"pidb/bench/sqldb"
	"pidb/bench/workloads"
	"pidb/config"
	"pidb/engine"
	"pidb/facts"
	"pidb/inventory"
	"pidb/progress"
	"pidb/provision"
	"pidb/remote"
	"pidb/results"
	"pidb/secrets"
	"pidb/thermal"
	"pidb/tune"
	"pidb/usage"
)

// usagef is bad input found before any host is touched: exit code 2.
func usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// Conn is a host's SSH connection as the pipeline uses it.
type Conn struct {
	User remote.Runner // the login user: facts, thermal readings
	Root remote.Runner // root (sudo -n): the server's administrator
	// Forward opens a local listener whose connections reach addr on the
	// host (ssh -L); stop closes it.
	Forward func(addr string) (local string, stop func(), err error)
}

// Over is the Conn of an SSH client.
func Over(c *remote.Client) Conn { return Conn{User: c, Root: c.AsRoot(), Forward: c.Forward} }

// Env is what every host's run shares.
type Env struct {
	Inventory *inventory.Inventory
	Out       string // save runs under this folder
	Version   string // pidb's, saved with every run
	// ReadSettings reads the live settings recorded with a run; nil: from
	// the server, over the workload's connection (sqldb.DB.Settings).
	ReadSettings func(ctx context.Context, db sqldb.DB, mysqlNames []string) ([][2]string, error)
}

// Plan is one host's workload, resolved: what runs, with what, and the
// thermal readings around it.
type Plan struct {
	Spec    workloads.Spec
	Params  workloads.Params // resolved: the workload's defaults filled in
	Bench   config.Bench     // Via resolved to direct or ssh, TLS to on or off
	Thermal config.Thermal
	Preset  string // the host's preset, saved with the run
}

// Resolve checks a host's configuration and makes its plan; what it refuses
// is a usage error naming the host.
func Resolve(h inventory.Host, b config.Bench, t config.Thermal) (Plan, error) {
	p := Plan{Bench: b, Thermal: t, Preset: h.Preset}
	var err error
	if b.Workload == "" {
		p.Spec = workloads.Default(h.Engine)
	} else if p.Spec, err = workloads.Get(b.Workload); err != nil {
		return p, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
	}
	switch {
	case !p.Spec.Fits(h.Engine):
		return p, usagef("%s: workload %s needs %s; the host's engine is %s", h.Name, p.Spec.Name, engineNames(p.Spec.Engines), h.Engine)
	case b.Threads < 0:
		return p, usagef("--threads %d: want 0 or more", b.Threads)
	case t.Interval <= 0 || t.IdleBefore < 0 || t.IdleAfter < 0:
		return p, usagef("[thermal] interval %s (want more than zero), idle_before %s and idle_after %s (want zero or more)", t.Interval, t.IdleBefore, t.IdleAfter)
	case b.Clients < 1 || b.Scale < 0 || b.Tables < 0 || b.TableSize < 0 || b.Duration <= 0 || b.Warmup < 0 || b.Interval <= 0:
		return p, usagef("%s: %s", h.Name, badBench(b))
	case b.Protocol != "" && b.Protocol != "simple" && b.Protocol != "prepared":
		return p, usagef("--protocol %q: want simple or prepared", b.Protocol)
	case b.Queries < 0:
		return p, usagef("--queries %d: want 1 or more", b.Queries)
	case b.Check && p.Spec.Check == nil:
		return p, usagef("%s: --check is for %s, whose data has consistency conditions; %s has none", h.Name, workloads.NamesWhere(func(s workloads.Spec) bool { return s.Check != nil }), p.Spec.Name)
	case b.Queries > 0 && !p.Spec.FixedWork:
		return p, usagef("%s: --queries is for %s, whose transaction is one query (load.py's QUERIES); %s runs for --duration", h.Name, workloads.NamesWhere(func(s workloads.Spec) bool { return s.FixedWork }), p.Spec.Name)
	}
	if b.Queries > 0 {
		// as load.py: no warm-up, measured from the start to the last
		// client's last query; the duration is the most it may take
		p.Bench.Warmup = 0
	}
	if p.Params, err = p.Spec.Resolve(workloads.Params{Scale: b.Scale, Tables: b.Tables, TableSize: b.TableSize, Protocol: b.Protocol, Mix: b.Mix, Reload: b.Reload, NoFK: !b.UseFK}); err != nil {
		return p, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
	}
	switch b.Via {
	case "auto":
		p.Bench.Via = "ssh"
		if len(h.AllowFrom) > 0 {
			p.Bench.Via = "direct"
		}
	case "direct", "ssh":
	default:
		return p, usagef("--via %q: want auto, direct or ssh", b.Via)
	}
	switch b.TLS {
	case "", "auto":
		// the SSH forward arrives at localhost, encrypted by SSH already
		p.Bench.TLS = "off"
		if p.Bench.Via == "direct" && h.NetworkTLS() {
			p.Bench.TLS = "on"
		}
	case "on", "off":
	default:
		return p, usagef("--tls %q: want auto, on or off", b.TLS)
	}
	return p, nil
}

// badBench names the bench values out of range, with what each wants.
func badBench(b config.Bench) string {
	var bad []string
	for _, c := range []struct {
		wrong bool
		what  string
	}{
		{b.Clients < 1, fmt.Sprintf("--clients %d: want 1 or more", b.Clients)},
		{b.Scale < 0, fmt.Sprintf("--scale %d: want 1 or more", b.Scale)},
		{b.Tables < 0, fmt.Sprintf("--tables %d: want 1 or more", b.Tables)},
		{b.TableSize < 0, fmt.Sprintf("--table-size %d: want 1 or more", b.TableSize)},
		{b.Duration <= 0, fmt.Sprintf("--duration %s: want more than zero", b.Duration)},
		{b.Warmup < 0, fmt.Sprintf("--warmup %s: want zero or more", b.Warmup)},
		{b.Interval <= 0, fmt.Sprintf("--interval %s: want more than zero", b.Interval)},
	} {
		if c.wrong {
			bad = append(bad, c.what)
		}
	}
	return strings.Join(bad, "; ")
}

func engineNames(families []string) string {
	names := map[string]string{"postgres": "PostgreSQL", "mysql": "MySQL/MariaDB"}
	out := ""
	for i, f := range families {
		if i > 0 {
			out += " or "
		}
		out += names[f]
	}
	return out
}

// Threads is how many threads the plans' clients wait in together: the
// program needs one P more than that (see package bench).
func Threads(plans []Plan) int {
	n := 0
	for _, p := range plans {
		n += p.Bench.Threads
	}
	return n
}

// Measured is a workload's run on one host, not yet saved.
type Measured struct {
	Run      results.Run
	Start    time.Time         // when the measured time began (after the warm-up)
	End      time.Time         // when the workload ended
	Readings []thermal.Reading // from the idle time before to the idle time after
}

// prepared is a workload whose data is loaded and checked, ready to run.
type prepared struct {
	w        bench.Workload
	db       sqldb.DB
	settings []results.Setting
	close    func() // stops the SSH port forward, if any
}

// prepare connects the workload to the host (connect), loads or checks
// its data, and reads the live settings.
func (e Env) prepare(ctx context.Context, h inventory.Host, c Conn, f facts.Facts, p Plan, r progress.Reporter) (*prepared, error) {
	db, closeDB, err := e.connect(ctx, h, c, f, p)
	if err != nil {
		return nil, err
	}
	pw := &prepared{db: db, close: closeDB}
	params := p.Params
	params.Log = r.Step
	pw.w = p.Spec.New(db, params)
	r.Step("preparing " + p.Spec.Name)
	if err := pw.w.Prepare(ctx); err != nil {
		pw.close()
		return nil, fmt.Errorf("%s: prepare %s: %w%s", h.Name, p.Spec.Name, err, e.hint(h, err))
	}
	if en, err := engine.Of(f); err == nil {
		what := "sync"
		if en.Flavor == "postgres" {
			what = "CHECKPOINT, then sync"
		}
		r.Step("writing the data out before the measured run (" + what + ")")
		if _, err := c.Root.Run(ctx, en.Settle()); err != nil {
			pw.close()
			return nil, fmt.Errorf("%s: write the data out before the run: %w", h.Name, err)
		}
	}
	read := e.ReadSettings
	if read == nil {
		read = func(ctx context.Context, db sqldb.DB, names []string) ([][2]string, error) {
			return db.Settings(ctx, names)
		}
	}
	live, err := read(ctx, db, tune.Names(f.Engine.Flavor, f.Engine.Version))
	if err != nil {
		pw.close()
		return nil, fmt.Errorf("%s: read the live settings: %w", h.Name, err)
	}
	pw.settings = withReasons(live, f, h, e.Inventory.Path, p.Preset)
	return pw, nil
}

// hint says what to do about an error that names a cause pidb knows.
func (e Env) hint(h inventory.Host, err error) string {
	switch {
	case sqldb.MissingDatabase(err):
		return fmt.Sprintf(" (pidb's database %q is not there: run pidb provision -i %s to make it again)", engine.BenchDatabase, e.Inventory.Path)
	case sqldb.BadPassword(err):
		where := "this controller's secrets"
		if dir, err := secrets.Dir(); err == nil {
			where = dir
		}
		return fmt.Sprintf(" (the server has another password for %s than the one kept in %s, as after provisioning from another controller or user: run pidb provision -i %s --limit %s, which gives it the one kept)",
			engine.BenchUser, where, e.Inventory.Path, h.Name)
	}
	return ""
}

// connect is where the plan's clients reach the host's server (directly or
// through an SSH forward, which close stops; with TLS, the server's
// certificate pinned to the one read from the host).
func (e Env) connect(ctx context.Context, h inventory.Host, c Conn, f facts.Facts, p Plan) (sqldb.DB, func(), error) {
	if !f.Engine.Running {
		return sqldb.DB{}, nil, fmt.Errorf("%s: no database server is running here: run pidb provision first", h.Name)
	}
	if err := clearLogin(h, f, p); err != nil {
		return sqldb.DB{}, nil, err
	}
	sec, err := secrets.Load(e.Inventory.Path, h.Name)
	if err != nil {
		return sqldb.DB{}, nil, err
	}
	if sec.Pidb == "" {
		return sqldb.DB{}, nil, fmt.Errorf("%s: no password for the pidb account: run pidb provision -i %s first", h.Name, e.Inventory.Path)
	}
	closeIt := func() {}
	t := sqldb.Target{Engine: h.Engine, Host: h.Address, Port: engine.Port(h.Engine), User: engine.BenchUser, Password: sec.Pidb, Database: engine.BenchDatabase}
	if p.Bench.Via == "ssh" {
		local, stop, err := c.Forward(net.JoinHostPort("127.0.0.1", strconv.Itoa(t.Port)))
		if err != nil {
			return sqldb.DB{}, nil, err
		}
		closeIt = stop
		lh, lp, err := net.SplitHostPort(local)
		if err != nil {
			stop()
			return sqldb.DB{}, nil, fmt.Errorf("%s: forward: %w", h.Name, err)
		}
		t.Host = lh
		t.Port, _ = strconv.Atoi(lp)
	}
	if p.Bench.TLS == "on" {
		t.TLS = true
		if t.ServerCert, err = serverCert(ctx, c.Root, f); err != nil {
			closeIt()
			return sqldb.DB{}, nil, fmt.Errorf("%s: TLS: %w", h.Name, err)
		}
	}
	db, err := sqldb.New(t)
	if err != nil {
		closeIt()
		return sqldb.DB{}, nil, err
	}
	return db, closeIt, nil
}

// withReasons are the live settings with what the tuner wants for each and
// why, for the report; where the tuner cannot tell (an engine it does not
// know), they go without.
func withReasons(live [][2]string, f facts.Facts, h inventory.Host, invPath, preset string) []results.Setting {
	var want tune.Settings
	if eng, err := engine.Of(f); err == nil {
		_, want, _ = engine.Desired(eng, f, h, invPath, preset)
	}
	out := make([]results.Setting, 0, len(live))
	for _, kv := range live {
		s := results.Setting{Name: kv[0], Value: kv[1]}
		if w, ok := want.Get(kv[0]); ok {
			s.Tuned, s.Why = w.Value.Render(f.Engine.Flavor), w.Why
		}
		out = append(out, s)
	}
	return out
}

// Measure runs the plan's workload on a host whose facts are f, with the
// thermal sampler beside it on the host's connection from the idle time
// before the load to the idle time after it.
func (e Env) Measure(ctx context.Context, h inventory.Host, c Conn, f facts.Facts, p Plan, kind string, r progress.Reporter) (Measured, error) {
	pw, err := e.prepare(ctx, h, c, f, p, r)
	if err != nil {
		return Measured{}, err
	}
	defer pw.close()

	// only the sampler appends; the readings are read after it ended;
	// the latest temperature goes into the progress as it comes
	var readings []thermal.Reading
	var latest atomic.Pointer[string]
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		s := &thermal.Sampler{R: c.User, Model: f.Model}
		s.Run(sampleCtx, p.Thermal.Interval, func(rd thermal.Reading, err error) {
			if err != nil {
				r.Note("thermal reading failed: " + err.Error())
				return
			}
			readings = append(readings, rd)
			if !math.IsNaN(rd.TempC) {
				s := fmt.Sprintf("%.1f C", rd.TempC)
				latest.Store(&s)
			}
		})
	}()
	stop := func() []thermal.Reading {
		stopSampling()
		<-sampled
		return readings
	}
	defer stop()

	if err := idle(ctx, p.Thermal.IdleBefore, "before the load (thermal baseline)", r); err != nil {
		return Measured{}, err
	}
	m, err := e.run(ctx, h, f, p, pw, kind, r, func() string {
		if s := latest.Load(); s != nil {
			return *s
		}
		return ""
	})
	if err != nil {
		return Measured{}, err
	}
	if p.Bench.Check {
		r.Step("checking " + p.Spec.Name + "'s data")
		if m.Run.Checks, err = p.Spec.Check(ctx, pw.db, p.Params); err != nil {
			return Measured{}, fmt.Errorf("%s: check: %w", h.Name, err)
		}
	}
	if err := idle(ctx, p.Thermal.IdleAfter, "after the load (cool-down)", r); err != nil {
		return Measured{}, err
	}
	m.Readings = stop()
	m.Run.Thermal = results.FromThermal(m.Readings, m.Start)
	m.Run.Finished = time.Now()
	return m, nil
}

// run runs the prepared workload and builds the run; temp is the host's
// latest temperature, for the progress ("" while unknown).
func (e Env) run(ctx context.Context, h inventory.Host, f facts.Facts, p Plan, pw *prepared, kind string, r progress.Reporter, temp func() string) (Measured, error) {
	b := p.Bench
	start, cpu := time.Now(), processCPU()
	m := Measured{Start: start.Add(b.Warmup)}
	first := true
	if b.Queries > 0 {
		r.Step(fmt.Sprintf("running %s: %d clients, %d queries each (at most %s)", p.Spec.Name, b.Clients, b.Queries, b.Duration))
	} else {
		r.Step(fmt.Sprintf("running %s: %d clients, %s (after %s warm-up)", p.Spec.Name, b.Clients, b.Duration, b.Warmup))
	}
	sum, series, err := bench.Run(ctx, pw.w, bench.Options{Clients: b.Clients, Duration: b.Duration, Warmup: b.Warmup, Interval: b.Interval, Threads: b.Threads, PerClient: b.Queries,
		OnInterval: func(iv results.Interval) {
			if first { // the driver's own measured start, from its first point
				m.Start, first = time.Now().Add(-time.Duration(iv.T*float64(time.Second))), false
			}
			line := fmt.Sprintf("%s %3.0fs  tps %8.1f  qps %9.1f  p95 %7.2f ms  errors %d", p.Spec.Name, iv.T, iv.TPS, iv.QPS, iv.P95Ms, iv.Errors)
			if t := temp(); t != "" {
				line += "  " + t
			}
			switch {
			case iv.Transactions == 0 && iv.Errors > 0:
				line += "  (no transaction: is the server gone?)"
			case iv.Transactions == 0:
				line += "  (nothing came back: is the host down?)"
			}
			r.Status(line)
		}})
	if err != nil {
		return m, fmt.Errorf("%s: %s: %w", h.Name, p.Spec.Name, err)
	}
	m.End = time.Now()
	if p.Spec.Figures != nil {
		sum.Extra = p.Spec.Figures(sum)
	}
	var client *results.Client
	if used := processCPU() - cpu; used > 0 {
		client = &results.Client{CPUS: used.Seconds(), WallS: m.End.Sub(start).Seconds(), Cores: runtime.NumCPU()}
	}
	id := p.Spec.Name
	if kind != results.KindBench {
		id = kind
	}
	wl := results.Workload{Name: p.Spec.Name, Engine: f.Engine.Flavor, Clients: b.Clients, DurationS: b.Duration.Seconds(), WarmupS: b.Warmup.Seconds(),
		Scale: p.Params.Scale, Tables: p.Params.Tables, TableSize: p.Params.TableSize, Protocol: p.Params.Protocol, Via: b.Via, TLS: b.TLS == "on",
		Revision: p.Spec.Revision, Queries: b.Queries, Mix: p.Params.Mix}
	if b.Queries > 0 { // the time the work took is the summary's (Resolve left no warm-up)
		wl.DurationS = 0
	}
	m.Run = results.Run{ID: results.NewID(start, id), Kind: kind, Host: h.Name, PidbVersion: e.Version, Preset: p.Preset,
		Started: start, Facts: &f, Settings: pw.settings, Workload: wl, Summary: sum, Series: series, Client: client}
	return m, nil
}

// idle waits d (the thermal sampler goes on beside it), or until ctx ends.
func idle(ctx context.Context, d time.Duration, what string, r progress.Reporter) error {
	if d <= 0 {
		return nil
	}
	r.Step(fmt.Sprintf("idle for %s %s", d, what))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// BenchResult is one host as `pidb bench --json` prints it.
type BenchResult struct {
	Host         string           `json:"host"`
	Workload     string           `json:"workload"`
	Engine       string           `json:"engine"`
	Clients      int              `json:"clients"`
	TLS          bool             `json:"tls"` // the clients logged in with TLS
	DurationS    float64          `json:"duration_s"`
	Queries      int              `json:"queries_per_client,omitempty"` // a fixed amount of work: duration_s is the time it took
	Transactions int64            `json:"transactions"`
	TPS          float64          `json:"tps"`
	QPS          float64          `json:"qps"`
	LatencyMs    results.Latency  `json:"latency_ms"`
	P95Ms        float64          `json:"p95_ms"`
	Errors       map[string]int64 `json:"errors"`
	DownS        float64          `json:"down_s,omitempty"` // the server gone or not answering: left out of TPS
	Retries      int64            `json:"retries"`          // deadlocks and serialization failures tried again
	RolledBack   int64            `json:"rolled_back"`      // of the transactions, those rolled back by design (tpcc: New-Orders of an unused item, 1%)
	TpmC         float64          `json:"tpmc,omitempty"`   // tpcc: New-Orders per minute
	Ops          []Op             `json:"ops,omitempty"`    // per operation (tpcc: per transaction type)
	Checks       []results.Check  `json:"checks,omitempty"` // --check: the data's consistency after the run
	RunDir       string           `json:"run_dir"`
	Error        string           `json:"error,omitempty"`
}

// Op is one operation's (a transaction type's) share of a run, as bench
// prints it.
type Op struct {
	Name   string  `json:"name"`
	Count  int64   `json:"count"`
	Rate   float64 `json:"per_s"`
	P50Ms  float64 `json:"p50_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	Errors int64   `json:"errors"` // the errors that ended a transaction of this type
}

// ops are a summary's operations, in the order names gives (others after,
// by name), with their errors: those whose kind begins with the name and
// ": ".
func ops(sum results.Summary, names []string) []Op {
	var keys []string
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := sum.Ops[n]; ok {
			keys, seen[n] = append(keys, n), true
		}
	}
	var rest []string
	for k := range sum.Ops {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	up := sum.MeasuredS - sum.DownS
	var out []Op
	for _, k := range append(keys, rest...) {
		l := sum.Ops[k]
		o := Op{Name: k, Count: l.Count, P50Ms: l.P50, P95Ms: l.P95, P99Ms: l.P99}
		if up > 0 {
			o.Rate = float64(l.Count) / up
		}
		for kind, n := range sum.Errors {
			if strings.HasPrefix(kind, k+": ") {
				o.Errors += n
			}
		}
		out = append(out, o)
	}
	return out
}

// failedChecks says which checks failed, or "" when none did.
func failedChecks(cs []results.Check) string {
	var bad []string
	for _, c := range cs {
		if !c.Pass {
			bad = append(bad, fmt.Sprintf("condition %d (%s) on warehouse %d of table copy %d: %s", c.Condition, c.Name, c.Warehouse, c.Table, c.Detail))
		}
	}
	return strings.Join(bad, "; ")
}

// Bench runs the plan's workload on one host and saves the run.
func (e Env) Bench(ctx context.Context, h inventory.Host, c Conn, p Plan, r progress.Reporter) (BenchResult, error) {
	r.Step("gathering facts")
	f, err := facts.Collect(ctx, c.User, h)
	if err != nil {
		return BenchResult{}, err
	}
	m, err := e.Measure(ctx, h, c, f, p, results.KindBench, r)
	if err != nil {
		return BenchResult{}, err
	}
	dir, err := save(e.Out, m.Run)
	if err != nil {
		return BenchResult{}, err
	}
	sum := m.Run.Summary
	if q := p.Bench.Queries; q > 0 {
		// the write-up's own words for a fixed amount of work (load.py)
		r.Step(fmt.Sprintf("completed in %.2f seconds, QPS = %.2f", sum.MeasuredS, sum.QPS))
	} else if tpmc, ok := sum.Extra["tpmc"]; ok {
		r.Step(fmt.Sprintf("%.1f tpmC, %.1f TPS, %.1f QPS, p95 %.2f ms, %d retried", tpmc, sum.TPS, sum.QPS, sum.Latency.P95, sum.Retries))
	} else {
		r.Step(fmt.Sprintf("%.1f TPS, %.1f QPS, p95 %.2f ms", sum.TPS, sum.QPS, sum.Latency.P95))
	}
	res := BenchResult{Host: h.Name, Workload: p.Spec.Name, Engine: f.Engine.Flavor, Clients: p.Bench.Clients, TLS: m.Run.Workload.TLS, DurationS: sum.MeasuredS,
		Queries: p.Bench.Queries, Transactions: sum.Transactions, TPS: sum.TPS, QPS: sum.QPS, LatencyMs: sum.Latency, P95Ms: sum.Latency.P95, Errors: sum.Errors, DownS: sum.DownS, RunDir: dir,
		Retries: sum.Retries, RolledBack: sum.RolledBack, TpmC: sum.Extra["tpmc"], Checks: m.Run.Checks}
	if len(p.Spec.Ops) > 0 {
		res.Ops = ops(sum, p.Spec.Ops)
	}
	if len(sum.Outages) > 0 {
		return res, fmt.Errorf("%s: %s; the numbers leave that time out, and the run is saved in %s", h.Name, outages(sum.Outages), dir)
	}
	if bad := failedChecks(m.Run.Checks); bad != "" {
		return res, fmt.Errorf("%s: the data is not consistent after the run: %s; the run is saved in %s", h.Name, bad, dir)
	}
	if want := int64(p.Bench.Queries) * int64(p.Bench.Clients); want > 0 && sum.Transactions < want {
		return res, fmt.Errorf("%s: the clients had run %d of their %d queries when --duration %s ran out; the run is saved in %s", h.Name, sum.Transactions, want, p.Bench.Duration, dir)
	}
	return res, nil
}

// outages says when and for how long the clients lost the server in a run.
func outages(os []results.Outage) string {
	var parts []string
	for _, o := range os {
		parts = append(parts, o.String())
	}
	return strings.Join(parts, "; and ")
}

func save(out string, r results.Run) (string, error) {
	dir, err := results.Save(out, r)
	if err != nil {
		return "", fmt.Errorf("save the run: %w", err)
	}
	return dir, nil
}

// Check is one consistency condition on one warehouse, as a run keeps it.
type Check = results.Check

// CheckResult is one host as `pidb bench tpcc check --json` prints it.
type CheckResult struct {
	Host     string          `json:"host"`
	Workload string          `json:"workload"`
	Pass     bool            `json:"pass"`
	Checks   []results.Check `json:"checks"`
	Error    string          `json:"error,omitempty"`
}

// Check tests the plan's workload's data on one host (tpcc: the
// standard's consistency conditions); a condition that fails is an error.
func (e Env) Check(ctx context.Context, h inventory.Host, c Conn, p Plan, r progress.Reporter) (CheckResult, error) {
	res := CheckResult{Host: h.Name, Workload: p.Spec.Name}
	if p.Spec.Check == nil {
		return res, fmt.Errorf("%s: %s has no consistency check", h.Name, p.Spec.Name)
	}
	r.Step("gathering facts")
	f, err := facts.Collect(ctx, c.User, h)
	if err != nil {
		return res, err
	}
	db, closeDB, err := e.connect(ctx, h, c, f, p)
	if err != nil {
		return res, err
	}
	defer closeDB()
	r.Step("checking " + p.Spec.Name + "'s data")
	if res.Checks, err = p.Spec.Check(ctx, db, p.Params); err != nil {
		return res, fmt.Errorf("%s: check: %w%s", h.Name, err, e.hint(h, err))
	}
	passed := 0
	for _, c := range res.Checks {
		if c.Pass {
			passed++
		}
	}
	res.Pass = passed == len(res.Checks)
	r.Step(fmt.Sprintf("%d of %d checks passed", passed, len(res.Checks)))
	if bad := failedChecks(res.Checks); bad != "" {
		return res, fmt.Errorf("%s: the data is not consistent: %s", h.Name, bad)
	}
	return res, nil
}

// CleanupResult is one host as `pidb bench cleanup --json` prints it.
type CleanupResult struct {
	Host     string `json:"host"`
	Database string `json:"database"`
	Dropped  bool   `json:"dropped"`
	Error    string `json:"error,omitempty"`
}

// Cleanup drops pidb's benchmark database on one host where pidb made it,
// and leaves any other database of that name alone, with an error.
func (e Env) Cleanup(ctx context.Context, h inventory.Host, c Conn, r progress.Reporter) (CleanupResult, error) {
	res := CleanupResult{Host: h.Name, Database: engine.BenchDatabase}
	r.Step("gathering facts")
	f, err := facts.Collect(ctx, c.User, h)
	if err != nil || f.Engine.Flavor == "" {
		return res, err // no server, so no database
	}
	r.Step("dropping database " + engine.BenchDatabase)
	res.Dropped, err = provision.DropBenchDatabase(ctx, provision.NewTarget(h, e.Inventory.Path, c.Root, f, h.Preset, r.Step))
	return res, err
}

// LoadInventory reads an inventory with everything pidb can check before
// it touches a host: the workloads' and presets' names, and each
// [host.settings] against the tuner's catalogue for its engine.
func LoadInventory(path string) (*inventory.Inventory, error) {
	return inventory.Load(path, inventory.Workloads(workloads.Names()...), inventory.Presets(tune.PresetNames()...), inventory.Settings(tune.Check))
}
