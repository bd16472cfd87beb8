package job

import (
	"context"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"pidb/bench"
	"pidb/bench/sqldb"
	"pidb/bench/workloads/script"
	"pidb/cluster"
	"pidb/config"
	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/inventory"
	"pidb/progress"
	"pidb/remote"
	"pidb/results"
	"pidb/secrets"
	"pidb/thermal"
	"pidb/tune"
)

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
		if en.Flavor == dbms.Postgres {
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
	sec, err := accountSecrets(e.Inventory.Path, h)
	if err != nil {
		return sqldb.DB{}, nil, err
	}
	if sec.Pidb == "" {
		return sqldb.DB{}, nil, fmt.Errorf("%s: no password for the pidb account: run pidb provision -i %s first", h.Name, e.Inventory.Path)
	}
	closeIt := func() {}
	t := sqldb.Target{Engine: h.Engine, Host: h.Address, Port: engine.Port(h.Engine), User: engine.BenchUser, Password: sec.Pidb, Database: engine.BenchDatabase}
	if p.Bench.Via == config.ViaSSH {
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
	if p.Bench.TLS == config.TLSOn {
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
func (e Env) Measure(ctx context.Context, h inventory.Host, c Conn, f facts.Facts, p Plan, kind results.Kind, r progress.Reporter) (Measured, error) {
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

	lags := sampleLag(ctx, c.Root, p)
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
	m.Run.Replication = lags(m.Start)
	m.Run.Cluster = p.Cluster
	m.Run.Finished = time.Now()
	return m, nil
}

// run runs the prepared workload and builds the run; temp is the host's
// latest temperature, for the progress ("" while unknown).
func (e Env) run(ctx context.Context, h inventory.Host, f facts.Facts, p Plan, pw *prepared, kind results.Kind, r progress.Reporter, temp func() string) (Measured, error) {
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
		id = string(kind)
	}
	wl := results.Workload{Name: p.Spec.Name, Engine: f.Engine.Flavor, Clients: b.Clients, DurationS: b.Duration.Seconds(), WarmupS: b.Warmup.Seconds(),
		Scale: p.Params.Scale, Tables: p.Params.Tables, TableSize: p.Params.TableSize, Protocol: string(p.Params.Protocol), Via: string(b.Via), TLS: b.TLS == config.TLSOn,
		Revision: p.Spec.Revision, Queries: b.Queries}
	if p.Spec.HasMix {
		wl.Mix = p.Params.Mix.String()
	}
	for _, f := range []struct {
		s  *script.Script
		to **results.File
	}{{p.Params.Script, &wl.Script}, {p.Params.Setup, &wl.Setup}} {
		if f.s != nil {
			*f.to = &results.File{Name: filepath.Base(f.s.Name), SHA256: f.s.Digest}
		}
	}
	if b.Queries > 0 { // the time the work took is the summary's (Resolve left no warm-up)
		wl.DurationS = 0
	}
	m.Run = results.Run{ID: results.NewID(start, id), Kind: kind, Host: h.Name, PidbVersion: e.Version, Preset: p.Preset,
		Started: start, Facts: &f, Settings: pw.settings, Workload: wl, Summary: sum, Series: series, Client: client}
	alongside := e.Alongside
	m.Run.Alongside = &alongside
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

// sampleLag reads, on a cluster's primary, where each of the plan's
// replicas is behind it, every thermal interval from now until the
// returned function is called, which takes one last reading, whole (a
// run always has one, however slow the hosts answer), and gives the
// readings timed from start (the measured time's). Without replicas it
// reads nothing.
func sampleLag(ctx context.Context, root remote.Runner, p Plan) func(start time.Time) []results.Lag {
	if len(p.Replicas) == 0 {
		return func(time.Time) []results.Lag { return nil }
	}
	type reading struct {
		at  time.Time
		lag results.Lag
	}
	// read is one reading of every replica, nil where the primary could
	// not be read or ctx ended during it (a reading cut off is none)
	read := func(ctx context.Context) []reading {
		pg := engine.For(dbms.Postgres)
		var these []reading
		if p.ReplicaRoots != nil { // the MySQL family's: each replica is read on its own host
			st, err := cluster.Read(ctx, root, mysqlFamily())
			if err != nil {
				return nil
			}
			now := time.Now()
			for _, name := range p.Replicas {
				these = append(these, reading{now, familyLag(ctx, st, name, p.ReplicaRoots[name])})
			}
		} else {
			st, err := cluster.Read(ctx, root, pg)
			if err != nil {
				return nil
			}
			now := time.Now()
			for _, name := range p.Replicas {
				these = append(these, reading{now, lagOf(st, name)})
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		return these
	}
	var got []reading
	loop, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(p.Thermal.Interval)
		defer tick.Stop()
		for {
			got = append(got, read(loop)...)
			select {
			case <-loop.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func(start time.Time) []results.Lag {
		cancel()
		<-done
		last, stop := context.WithTimeout(ctx, lastLagWait)
		got = append(got, read(last)...)
		stop()
		out := make([]results.Lag, 0, len(got))
		for _, g := range got {
			g.lag.AtS = g.at.Sub(start).Seconds()
			out = append(out, g.lag)
		}
		return out
	}
}

// lastLagWait bounds the last reading of a cluster's lag, after the run.
const lastLagWait = 2 * time.Minute

// mysqlFamily is the engine cluster.Read is given for the MySQL family's
// hosts: it asks each host's client which flavour answers (MariaDB or
// Oracle MySQL) and reads that flavour's words.
func mysqlFamily() engine.Engine { return engine.For(dbms.MariaDB) }

// familyLag is where the MySQL family's replica called name, reached
// through root (nil: it could not be), is behind the primary that
// reported p: the primary's transactions it has not applied, and its
// seconds behind; nothing known where it does not replicate.
func familyLag(ctx context.Context, p cluster.Report, name string, root remote.Runner) results.Lag {
	l := results.Lag{Host: name}
	if root == nil {
		return l
	}
	r, err := cluster.Read(ctx, root, mysqlFamily())
	if err != nil || r.Receiver != cluster.Streaming {
		return l
	}
	l.Transactions, l.Seconds = cluster.Behind(p, r)
	return l
}

// lagOf is where the replica called name is behind the primary that
// reported st: nothing known where it is not connected.
func lagOf(st cluster.Report, name string) results.Lag {
	_, b, secs := cluster.Lag(st, name)
	return results.Lag{Host: name, Bytes: b, Seconds: secs}
}
