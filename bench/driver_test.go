package bench

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"pidb/results"
)

// memWorkload is an in-memory workload for the driver's own tests: each
// transaction takes about a millisecond; every 50th call of a client fails
// as if its connection dropped, every 30th with a counted error.
type memWorkload struct {
	connects atomic.Int64
	calls    atomic.Int64
}

var errDropped = errors.New("connection dropped")
var errConstraint = errors.New("constraint violated")

func (m *memWorkload) Name() string                  { return "mem" }
func (m *memWorkload) Prepare(context.Context) error { return nil }
func (m *memWorkload) ErrorKind(err error) (string, bool) {
	if errors.Is(err, errDropped) {
		return "connection", true
	}
	return "other", false
}
func (m *memWorkload) NewWorker(context.Context, int) (Worker, error) {
	m.connects.Add(1)
	return &memWorker{m: m}, nil
}

type memWorker struct {
	m *memWorkload
	n int
}

func (w *memWorker) Do(ctx context.Context) (Outcome, error) {
	w.n++
	w.m.calls.Add(1)
	select {
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	case <-time.After(time.Millisecond):
	}
	switch {
	case w.n%50 == 0:
		return Outcome{}, errDropped
	case w.n%30 == 0:
		return Outcome{}, errConstraint
	}
	return Outcome{Op: "tx", Queries: 3}, nil
}
func (w *memWorker) Close() error { return nil }

func TestRun(t *testing.T) {
	m := &memWorkload{}
	var points []results.Interval
	sum, series, err := Run(context.Background(), m, Options{Clients: 4, Duration: 1200 * time.Millisecond, Warmup: 300 * time.Millisecond,
		Interval: 200 * time.Millisecond, OnInterval: func(iv results.Interval) { points = append(points, iv) }})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Transactions == 0 || sum.Queries != 3*sum.Transactions {
		t.Errorf("transactions %d, queries %d: want 3 queries each", sum.Transactions, sum.Queries)
	}
	// every client reconnected after each 50th call, and nothing stopped
	if sum.Reconnects == 0 || sum.Errors["connection"] == 0 || sum.Errors["other"] == 0 {
		t.Errorf("errors %v, reconnects %d", sum.Errors, sum.Reconnects)
	}
	// the workload's own count: a connection for each client, and one for
	// each reconnect (none of its connects fails)
	if m.connects.Load() != 4+sum.Reconnects {
		t.Errorf("connects %d for 4 clients and %d reconnects", m.connects.Load(), sum.Reconnects)
	}
	// a run that ran late (a busy machine) still measures its duration
	if sum.MeasuredS <= 0 || sum.MeasuredS > 1.2 {
		t.Errorf("measured %.3fs, want the 1.2 s duration at most", sum.MeasuredS)
	}
	// each call takes a millisecond at least, so four clients cannot
	// pass 4,000 a second: an upper bound, which load cannot break
	if sum.TPS <= 0 || sum.TPS > 4000 {
		t.Errorf("tps %.1f, want more than 0 and at most 4 clients' 1,000 a second", sum.TPS)
	}
	if sum.Latency.P50 < 1 || sum.Latency.P95 < sum.Latency.P50 || sum.Latency.Max < sum.Latency.P99 || sum.Ops["tx"].Count != sum.Transactions {
		t.Errorf("latency %+v, ops %+v", sum.Latency, sum.Ops)
	}
	if sum.ConnectMs.Count != 4+sum.Reconnects {
		t.Errorf("connect count %d", sum.ConnectMs.Count)
	}
	// the series: each point reported as it came, the last in the
	// measured run (how many there are is the machine's: a busy one
	// ticks late)
	if len(series) == 0 || len(points) != len(series) {
		t.Fatalf("%d points (%d reported)", len(series), len(points))
	}
	if last := series[len(series)-1].T; last <= 0 {
		t.Errorf("the series ends at %.2f s, before the measured run", last)
	}
	var inRun int64
	for _, iv := range series {
		if iv.T > 0 {
			inRun += iv.Transactions
		}
		if iv.Transactions > 0 && (iv.P50Ms < 1 || iv.P95Ms < iv.P50Ms || iv.P99Ms < iv.P95Ms) {
			t.Errorf("interval %+v: want 1 ms <= p50 <= p95 <= p99", iv)
		}
	}
	var inHist int64
	for _, b := range sum.Histogram {
		inHist += b.Count
	}
	if inHist != sum.Transactions {
		t.Errorf("the histogram holds %d transactions, the summary %d", inHist, sum.Transactions)
	}
	if inRun < sum.Transactions*8/10 {
		t.Errorf("the series' measured points hold %d transactions, the summary %d", inRun, sum.Transactions)
	}
}

func TestRunHonoursCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := Run(ctx, &memWorkload{}, Options{Clients: 2, Duration: time.Minute})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("cancelled run: %v after %v", err, time.Since(start))
	}
}

func BenchmarkRecord(b *testing.B) {
	s := newStats(0)
	for i := 0; i < b.N; i++ {
		s.mu.Lock()
		_ = s.ivHist.RecordValue(int64(i%100000 + 1))
		_ = s.total.RecordValue(int64(i%100000 + 1))
		s.mu.Unlock()
	}
}

// TestBuckets: latencies go to the first bucket of ten a decade whose
// bound is at least theirs (1, 1.259, 1.585 ... 50.119 ms).
func TestBuckets(t *testing.T) {
	h := newHist()
	for _, us := range []int64{1000, 1000, 1000, 1100, 50_000, 900} {
		_ = h.RecordValue(us)
	}
	got := buckets(h)
	// 0.9 ms is above the bucket before 1 ms (10^-0.1 = 0.794 ms), so it
	// is counted with the three of 1 ms
	want := []results.Bucket{{UpToMs: 1, Count: 4}, {UpToMs: 1.259, Count: 1}, {UpToMs: 50.119, Count: 1}}
	if len(got) != len(want) {
		t.Fatalf("buckets %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bucket %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// goneWorkload is a server that goes away for a while: from down to up
// after the run starts, every transaction fails as a dropped connection
// and every connect fails.
type goneWorkload struct {
	start    time.Time
	down, up time.Duration
}

func (g *goneWorkload) away() bool {
	d := time.Since(g.start)
	return d >= g.down && d < g.up
}
func (g *goneWorkload) Name() string                  { return "gone" }
func (g *goneWorkload) Prepare(context.Context) error { return nil }
func (g *goneWorkload) ErrorKind(err error) (string, bool) {
	return "connection", true
}
func (g *goneWorkload) NewWorker(context.Context, int) (Worker, error) {
	if g.away() {
		return nil, errDropped
	}
	return &goneWorker{g}, nil
}

type goneWorker struct{ g *goneWorkload }

func (w *goneWorker) Do(ctx context.Context) (Outcome, error) {
	select {
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	case <-time.After(time.Millisecond):
	}
	if w.g.away() {
		return Outcome{}, errDropped
	}
	return Outcome{Op: "tx", Queries: 1}, nil
}
func (w *goneWorker) Close() error { return nil }

// TestRunServerGone: the server away for a second in the middle of a
// three-second run is one outage, with its failed connects, about where it
// was; the TPS leaves that time out, so it is above the transactions over
// the whole measured time.
func TestRunServerGone(t *testing.T) {
	g := &goneWorkload{start: time.Now(), down: time.Second, up: 2 * time.Second}
	sum, _, err := Run(context.Background(), g, Options{Clients: 2, Duration: 3 * time.Second, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Outages) != 1 {
		t.Fatalf("outages %+v, want one", sum.Outages)
	}
	o := sum.Outages[0]
	if o.FailedConnects == 0 || o.FromS > 1.3 || o.ToS < 1.8 || sum.DownS < 0.6 || sum.DownS > 1.5 {
		t.Errorf("outage %+v, down %.2f s; want about 1 s to 2 s, with failed connects", o, sum.DownS)
	}
	if whole := float64(sum.Transactions) / sum.MeasuredS; sum.TPS <= whole*1.2 {
		t.Errorf("TPS %.1f with the dead time left out, %.1f over the whole run: the dead time is in it", sum.TPS, whole)
	}
	// a run without one has none
	sum, _, _ = Run(context.Background(), &memWorkload{}, Options{Clients: 2, Duration: 500 * time.Millisecond, Interval: 100 * time.Millisecond})
	if len(sum.Outages) != 0 || sum.DownS != 0 {
		t.Errorf("outages in a run whose server stayed: %+v", sum.Outages)
	}
}

// slowKillWorkload is a slow server (its clients' transactions end
// together, every quarter second) one of whose sessions is killed once,
// 0.7 s into the run, between two of them: that client loses its
// connection and connects again at once; the others go on.
type slowKillWorkload struct {
	start  time.Time
	killed atomic.Bool
}

func (s *slowKillWorkload) Name() string                  { return "slowkill" }
func (s *slowKillWorkload) Prepare(context.Context) error { return nil }
func (s *slowKillWorkload) ErrorKind(err error) (string, bool) {
	return "connection", errors.Is(err, errDropped)
}
func (s *slowKillWorkload) NewWorker(_ context.Context, id int) (Worker, error) {
	return &slowKillWorker{s, id}, nil
}

type slowKillWorker struct {
	s  *slowKillWorkload
	id int
}

func (w *slowKillWorker) Do(ctx context.Context) (Outcome, error) {
	// every transaction ends at the next quarter second of the run; the
	// kill falls between two of them, at 0.7 s
	since := time.Since(w.s.start)
	end := (since/(250*time.Millisecond) + 1) * 250 * time.Millisecond
	kill := w.id == 0 && since >= 450*time.Millisecond && !w.s.killed.Load()
	if kill {
		end = 700 * time.Millisecond
	}
	select {
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	case <-time.After(end - since):
	}
	if kill && w.s.killed.CompareAndSwap(false, true) {
		return Outcome{}, errDropped
	}
	return Outcome{Op: "tx", Queries: 1}, nil
}
func (w *slowKillWorker) Close() error { return nil }

// TestRunOneSessionKilled: on a slow server, one of three clients' session
// killed leaves intervals without a transaction, one with the lost
// connection; its client connects again at once and the others go on:
// an error and a reconnect, not the server gone (a lab test's run of 9
// TPS once called it an outage).
func TestRunOneSessionKilled(t *testing.T) {
	s := &slowKillWorkload{start: time.Now()}
	sum, _, err := Run(context.Background(), s, Options{Clients: 3, Duration: 2 * time.Second, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !s.killed.Load() || sum.Errors["connection"] != 1 || sum.Reconnects != 1 {
		t.Fatalf("killed %v, errors %v, reconnects %d; want the one kill counted and its reconnect", s.killed.Load(), sum.Errors, sum.Reconnects)
	}
	if len(sum.Outages) != 0 || sum.DownS != 0 {
		t.Errorf("one session killed made outages %+v (down %.2f s)", sum.Outages, sum.DownS)
	}
}

// silentWorkload is a host whose link goes dead for a while: from quiet to
// loud after the run starts, a transaction waits, with no answer and no
// error, until the link is back.
type silentWorkload struct {
	start       time.Time
	quiet, loud time.Duration
}

func (s *silentWorkload) Name() string                                   { return "silent" }
func (s *silentWorkload) Prepare(context.Context) error                  { return nil }
func (s *silentWorkload) ErrorKind(error) (string, bool)                 { return "other", false }
func (s *silentWorkload) NewWorker(context.Context, int) (Worker, error) { return s, nil }
func (s *silentWorkload) Close() error                                   { return nil }
func (s *silentWorkload) Do(ctx context.Context) (Outcome, error) {
	wait := time.Millisecond
	if d := time.Since(s.start); d >= s.quiet && d < s.loud {
		wait = s.loud - d
	}
	select {
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	case <-time.After(wait):
	}
	return Outcome{Op: "tx", Queries: 1}, nil
}

// TestRunNoAnswer: a link dead for a second in the middle of a run, with
// a stall limit of 0.3 s, is one outage of kind no_answer, about where it
// was, with no failed connects; a silence shorter than the limit is none.
func TestRunNoAnswer(t *testing.T) {
	s := &silentWorkload{start: time.Now(), quiet: time.Second, loud: 2 * time.Second}
	sum, _, err := Run(context.Background(), s, Options{Clients: 2, Duration: 3 * time.Second, Interval: 100 * time.Millisecond, StallAfter: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Outages) != 1 {
		t.Fatalf("outages %+v, want one", sum.Outages)
	}
	o := sum.Outages[0]
	if o.Kind != results.NoAnswer || o.FailedConnects != 0 || o.FromS < 0.8 || o.FromS > 1.3 || o.ToS < 1.8 || sum.DownS < 0.6 || sum.DownS > 1.5 {
		t.Errorf("outage %+v, down %.2f s; want no_answer from about 1 s to 2 s", o, sum.DownS)
	}
	s = &silentWorkload{start: time.Now(), quiet: time.Second, loud: 1200 * time.Millisecond}
	sum, _, _ = Run(context.Background(), s, Options{Clients: 2, Duration: 2 * time.Second, Interval: 100 * time.Millisecond, StallAfter: 500 * time.Millisecond})
	if len(sum.Outages) != 0 {
		t.Errorf("a 0.2 s silence under a 0.5 s limit: outages %+v", sum.Outages)
	}
}

// TestRunFixedWork: with PerClient each client runs that many
// transactions through, its failed ones not counted (memWorker fails every
// 30th and drops its connection every 50th), and the run ends when the
// last client is done, measured from its start with no warm-up; with a
// Duration too, the run ends there if the work is not done.
func TestRunFixedWork(t *testing.T) {
	m := &memWorkload{}
	sum, _, err := Run(context.Background(), m, Options{Clients: 4, PerClient: 300, Warmup: time.Hour, Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	errs := int64(0)
	for _, n := range sum.Errors {
		errs += n
	}
	if sum.Transactions != 1200 || sum.Queries != 3600 || errs == 0 || m.calls.Load() != 1200+errs || sum.MeasuredS <= 0 {
		t.Errorf("%d transactions, %d queries, %d errors, %d calls, %.3f s; want 1,200 and 3,600, the errors redone, time measured",
			sum.Transactions, sum.Queries, errs, m.calls.Load(), sum.MeasuredS)
	}
	if sum.TPS <= 0 || math.Abs(sum.QPS-3*sum.TPS) > 1e-9*sum.QPS {
		t.Errorf("TPS %.1f, QPS %.1f", sum.TPS, sum.QPS)
	}

	capped, _, err := Run(context.Background(), &memWorkload{}, Options{Clients: 2, PerClient: 1 << 30, Duration: 200 * time.Millisecond})
	if err != nil || capped.Transactions == 0 || capped.Transactions >= 2<<30 {
		t.Errorf("work past its time limit: %d transactions, %v", capped.Transactions, err)
	}
	if _, _, err := Run(context.Background(), m, Options{Clients: 1}); err == nil {
		t.Error("neither a duration nor the work: no error")
	}
}

// opsWorker ends every third transaction as operation "b", the others as "a".
type opsWorker struct{ n int }

func (w *opsWorker) Do(ctx context.Context) (Outcome, error) {
	w.n++
	time.Sleep(200 * time.Microsecond)
	if w.n%3 == 0 {
		return Outcome{Op: "b", Queries: 1, RolledBack: w.n%6 == 0}, nil
	}
	return Outcome{Op: "a", Queries: 1}, nil
}
func (w *opsWorker) Close() error { return nil }

type opsWorkload struct{ memWorkload }

func (m *opsWorkload) NewWorker(context.Context, int) (Worker, error) { return &opsWorker{}, nil }

// TestOpsSeries: a run of two kinds of transaction has each one's rate in
// every interval, the rates adding up to the interval's TPS; rolled-back
// transactions are counted apart. One kind alone has none.
func TestOpsSeries(t *testing.T) {
	sum, series, err := Run(context.Background(), &opsWorkload{}, Options{Clients: 2, Duration: 600 * time.Millisecond, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if b := sum.Ops["b"].Count; b == 0 || sum.RolledBack == 0 || sum.RolledBack > b || sum.Ops["a"].Count+b != sum.Transactions {
		t.Errorf("a %d, b %d (%d rolled back), of %d", sum.Ops["a"].Count, b, sum.RolledBack, sum.Transactions)
	}
	for _, iv := range series[1:] {
		if iv.Transactions == 0 {
			continue
		}
		if math.Abs(iv.Ops["a"]+iv.Ops["b"]-iv.TPS) > 1e-6*iv.TPS {
			t.Errorf("interval at %.2fs: %v, TPS %.1f", iv.T, iv.Ops, iv.TPS)
		}
	}
	// each client's every third is a b: whatever the machine's load, a
	// client's a's are at least its b's, and its first is an a
	if a, b := sum.Ops["a"].Count, sum.Ops["b"].Count; a <= b {
		t.Errorf("%d a's, %d b's", a, b)
	}
	_, series, err = Run(context.Background(), &memWorkload{}, Options{Clients: 1, Duration: 300 * time.Millisecond, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, iv := range series {
		if iv.Ops != nil {
			t.Errorf("one kind of transaction, yet rates by kind: %v", iv.Ops)
		}
	}
}
