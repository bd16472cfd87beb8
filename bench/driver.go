// Package bench runs a workload from the controller: one goroutine per
// client runs the workload's transaction until the duration ends, latencies
// go into HDR histograms per operation, errors into counts by kind, and a
// ticker turns each interval into a point of the series. The workloads
// themselves live in subpackages.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"pidb/results"
)

// Outcome is what one call of a worker's Do did.
type Outcome struct {
	Op      string // the operation, for per-operation latencies ("tpcb", "point_select")
	Queries int    // statements sent, for QPS
	Retries int    // serialization failures and deadlocks it retried (pgbench --max-tries)
	// RolledBack says the transaction ended in the ROLLBACK its workload
	// asks for (TPC-C's New-Order on an unused item): done, not an error.
	RolledBack bool
}

// Worker is one client: its own connection, its own state.
type Worker interface {
	// Do runs one transaction (or one query, for query-rate workloads).
	Do(ctx context.Context) (Outcome, error)
	Close() error
}

// Interrupter is a Worker whose waits can be ended from outside: when the
// run ends (or is cancelled) the driver calls Interrupt, from another
// goroutine, and the worker's Do returns. A worker that implements it may
// leave the context of Do alone and save the cost of watching it on every
// round trip.
type Interrupter interface {
	Interrupt()
}

// Async is a Worker that can also run as a state machine on a non-blocking
// socket, so that one thread serves several clients and waits on all their
// sockets at once, as each of pgbench's threads (-j) does. The driver puts
// the socket in non-blocking mode, calls Begin to start a transaction and
// Readable whenever the socket has something to read, until it reports the
// transaction done.
type Async interface {
	Worker
	// Fd is the socket; -1 when the worker cannot run this way.
	Fd() int
	// Begin starts a transaction: it sends its first request.
	Begin() error
	// Readable reads what the server sent and sends the next request when
	// one is due; done says the transaction ended, with its outcome or error.
	Readable() (done bool, out Outcome, err error)
}

// DoAsync runs one transaction of an Async worker on a blocking socket,
// where each Readable waits for the server: Begin, then Readable until the
// transaction is done or sending failed. An Async worker's Do can be this.
func DoAsync(a interface {
	Begin() error
	Readable() (bool, Outcome, error)
}) (Outcome, error) {
	if err := a.Begin(); err != nil {
		return Outcome{}, err
	}
	for {
		if done, out, err := a.Readable(); done || err != nil {
			return out, err
		}
	}
}

// Workload is a benchmark.
type Workload interface {
	Name() string
	// Prepare loads the data, or checks that what is there matches.
	Prepare(ctx context.Context) error
	// NewWorker connects one client.
	NewWorker(ctx context.Context, id int) (Worker, error)
	// ErrorKind names an error for the counts; reconnect says the
	// connection is gone and the client must connect again.
	ErrorKind(err error) (kind string, reconnect bool)
}

// Options are a run's parameters.
type Options struct {
	Clients  int
	Duration time.Duration // measured time, after the warm-up; with PerClient, the most the run may take (0: no limit)
	Warmup   time.Duration // none with PerClient
	// PerClient, when more than zero, is a fixed amount of work: each
	// client stops after this many transactions went through (pgbench -t;
	// load.py's QUERIES, quiz's transaction being one query), and the
	// run, measured from its start with no warm-up, ends when the last
	// client is done.
	PerClient int
	Interval  time.Duration // one point of the series per interval; default 1s
	// OnInterval, if set, gets each point as it is made (progress output).
	OnInterval func(results.Interval)
	// Threads, when more than zero and every worker is Async (and this
	// system has epoll), is how many threads the clients share, as
	// pgbench -j; otherwise each client has its own goroutine. Each such
	// thread keeps its P while it waits for answers (a raw epoll_wait), so
	// GOMAXPROCS should be at least Threads+1, for the rest of the program.
	Threads int
	// StallAfter is how long no transaction may finish and no error come
	// back before the run counts the host as not answering (an outage of
	// kind no_answer: the network or the host is down); default 10s.
	StallAfter time.Duration
}

// histogram range: 1 microsecond to 5 minutes, 3 significant digits.
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 300_000_000, 3) }

// lockedHist is a histogram every client records into.
type lockedHist struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

func (l *lockedHist) record(d time.Duration) {
	l.mu.Lock()
	_ = l.h.RecordValue(max(d.Microseconds(), 1))
	l.mu.Unlock()
}

// stats are one client's counts; the ticker and the client share them under mu.
type stats struct {
	mu sync.Mutex
	// a fixed amount of work: the transactions the client is to run (0:
	// until the run ends) and those it ran
	quota, ran int64
	// the measured run
	total      *hdrhistogram.Histogram
	ops        map[string]*hdrhistogram.Histogram
	txns       int64
	queries    int64
	retries    int64
	rolledBack int64
	errors     map[string]int64
	reconnects int64
	// the current interval
	ivHist     *hdrhistogram.Histogram
	ivTxns     int64
	ivOps      map[string]int64 // of ivTxns, by operation
	ivQueries  int64
	ivErrors   int64
	ivConnErrs int64 // of ivErrors: connections lost or not made
}

func newStats(quota int) *stats {
	return &stats{quota: int64(quota), total: newHist(), ops: map[string]*hdrhistogram.Histogram{}, errors: map[string]int64{}, ivHist: newHist(), ivOps: map[string]int64{}}
}

// finished reports whether the client did its fixed amount of work. A
// timed run's clients (no quota, which never changes) take no lock.
func (s *stats) finished() bool {
	if s.quota == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ran >= s.quota
}

// Run runs the workload with o.Clients clients and returns the summary of
// the measured time and the series (warm-up points have T < 0).
func Run(ctx context.Context, w Workload, o Options) (results.Summary, []results.Interval, error) {
	if o.Clients < 1 {
		return results.Summary{}, nil, errors.New("clients must be at least 1")
	}
	if o.PerClient < 0 || (o.Duration <= 0 && o.PerClient == 0) {
		return results.Summary{}, nil, errors.New("duration must be more than zero, or the transactions per client given")
	}
	if o.PerClient > 0 {
		o.Warmup = 0
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	connect := &lockedHist{h: newHist()}
	workers := make([]Worker, o.Clients)
	for i := range workers {
		t0 := time.Now()
		wk, err := w.NewWorker(ctx, i)
		if err != nil {
			for _, x := range workers[:i] {
				x.Close()
			}
			return results.Summary{}, nil, fmt.Errorf("connect client %d: %w", i+1, err)
		}
		connect.record(time.Since(t0))
		workers[i] = wk
	}

	start := time.Now()
	measured := start.Add(o.Warmup)
	runCtx, cancel := context.WithCancel(ctx)
	if o.Duration > 0 {
		runCtx, cancel = context.WithDeadline(ctx, measured.Add(o.Duration))
	}
	defer cancel()

	all := make([]*stats, o.Clients)
	for i := range all {
		all[i] = newStats(o.PerClient)
	}
	var wg sync.WaitGroup
	if groups := multiplexed(workers, o.Threads); groups != nil {
		for _, ids := range groups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				group(runCtx, w, ids, workers, all, measured, connect)
			}()
		}
	} else {
		for i := range workers {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				client(runCtx, w, i, &workers[i], all[i], measured, connect)
			}(i)
		}
	}

	var series []results.Interval
	gone := outages{stallAfter: 10, quietFrom: -1, clients: int64(o.Clients)}
	if o.StallAfter > 0 {
		gone.stallAfter = o.StallAfter.Seconds()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	last, ended := start, time.Time{}
	seenOps := map[string]bool{} // the operations seen so far
	for running := true; running; {
		select {
		case <-done:
			running, ended = false, time.Now()
		case <-tick.C:
		}
		now := time.Now()
		if now.Sub(last) <= 0 {
			continue
		}
		iv, connErrs := interval(all, now.Sub(last), seenOps)
		iv.T = now.Sub(measured).Seconds()
		if iv.T > 0 {
			gone.add(max(0, last.Sub(measured).Seconds()), iv.T, iv.Transactions, iv.Errors, connErrs)
		}
		last = now
		if iv.Transactions == 0 && iv.Errors == 0 && !running {
			break // nothing after the last full interval
		}
		series = append(series, iv)
		if o.OnInterval != nil {
			o.OnInterval(iv)
		}
	}
	for _, wk := range workers {
		if wk != nil {
			wk.Close()
		}
	}
	elapsed := ended.Sub(measured)
	if o.Duration > 0 && elapsed > o.Duration {
		elapsed = o.Duration
	}
	sum := summarize(all, connect, elapsed, gone.list)
	if ctx.Err() != nil {
		return sum, series, ctx.Err()
	}
	return sum, series, nil
}

// outages gathers the stretches of a run when the clients lost the
// server, through every interval after without a transaction (the
// clients wait between attempts to connect, so an interval can pass
// without one), to the next transaction. One begins at an interval in
// which no transaction finished and connections were lost or could not
// be made (the server went away), or after stallAfter seconds in which
// nothing came back at all, neither a transaction nor an error (no
// answer: the network or the host is down, and the clients wait on
// connections that carry nothing). Where fewer connections failed than
// there are clients, it is the server gone only once another connection
// fails before a transaction finishes: one session killed on a slow run
// (three clients, a transaction a third of a second) left an interval
// without a transaction, and its client connected again at once.
type outages struct {
	list       []results.Outage
	open       bool    // the last interval was in one
	stallAfter float64 // seconds
	quietFrom  float64 // where the current silence began; -1: none
	clients    int64
	lost       *results.Outage // connections lost, not yet the server gone
}

func (o *outages) add(from, to float64, txns, errs, connErrs int64) {
	if txns > 0 {
		o.open, o.quietFrom, o.lost = false, -1, nil
		return
	}
	if !o.open {
		switch {
		case connErrs > 0 && o.lost == nil && connErrs < o.clients:
			o.lost = &results.Outage{FromS: from, ToS: to, Kind: results.ServerGone, FailedConnects: connErrs}
			return
		case connErrs > 0:
			if o.lost != nil {
				o.list = append(o.list, *o.lost)
				o.lost = nil
			} else {
				o.list = append(o.list, results.Outage{FromS: from, Kind: results.ServerGone})
			}
		case o.lost != nil:
			if to-o.lost.FromS < o.stallAfter {
				return // no transaction yet, and no other connection failed
			}
			o.list = append(o.list, *o.lost)
			o.lost = nil
		case errs > 0: // the server answers, with errors
			o.quietFrom = -1
			return
		default:
			if o.quietFrom < 0 {
				o.quietFrom = from
			}
			if to-o.quietFrom < o.stallAfter {
				return
			}
			o.list = append(o.list, results.Outage{FromS: o.quietFrom, Kind: results.NoAnswer})
		}
		o.open, o.quietFrom = true, -1
	}
	cur := &o.list[len(o.list)-1]
	cur.ToS, cur.FailedConnects = to, cur.FailedConnects+connErrs
}

// multiplexed splits the clients into threads groups, when they can run
// that way: every worker Async with a socket, and epoll here.
func multiplexed(workers []Worker, threads int) [][]int {
	if threads < 1 || !canMultiplex {
		return nil
	}
	for _, wk := range workers {
		if a, ok := wk.(Async); !ok || a.Fd() < 0 {
			return nil
		}
	}
	threads = min(threads, len(workers))
	groups := make([][]int, threads)
	for i := range workers {
		groups[i%threads] = append(groups[i%threads], i)
	}
	return groups
}

// client runs one worker until ctx ends, reconnecting when its connection
// goes away.
func client(ctx context.Context, w Workload, id int, wk *Worker, s *stats, measured time.Time, connect *lockedHist) {
	stop := func() bool { return false }
	watch := func() {
		if in, ok := (*wk).(Interrupter); ok {
			stop = context.AfterFunc(ctx, in.Interrupt)
		}
	}
	watch()
	defer func() { stop() }()
	for ctx.Err() == nil && !s.finished() {
		if *wk == nil {
			if !reconnect(ctx, w, id, wk, s, connect) {
				continue
			}
			watch()
		}
		t0 := time.Now()
		out, err := (*wk).Do(ctx)
		now := time.Now()
		if err != nil && ctx.Err() != nil {
			return // cut off by the end of the run: neither a result nor an error
		}
		if s.record(w, now, t0, measured, out, err) {
			stop()
			(*wk).Close()
			*wk = nil
		}
	}
}

// reconnect connects a client again; after a failure (counted) it waits a
// moment and reports false.
func reconnect(ctx context.Context, w Workload, id int, wk *Worker, s *stats, connect *lockedHist) bool {
	t0 := time.Now()
	nw, err := w.NewWorker(ctx, id)
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		kind, _ := w.ErrorKind(err)
		s.mu.Lock()
		s.errors["connect: "+kind]++
		s.ivErrors++
		s.ivConnErrs++
		s.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		return false
	}
	connect.record(time.Since(t0))
	s.mu.Lock()
	s.reconnects++
	s.mu.Unlock()
	*wk = nw
	return true
}

// record counts one transaction that started at t0 and ended at now, with
// its outcome or error. It reports whether the error means the client must
// connect again.
func (s *stats) record(w Workload, now, t0, measured time.Time, out Outcome, err error) (reconnect bool) {
	lat := max(now.Sub(t0).Microseconds(), 1)
	inRun := !now.Before(measured)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		kind, again := w.ErrorKind(err)
		s.ivErrors++
		if again {
			s.ivConnErrs++
		}
		if inRun {
			s.errors[kind]++
		}
		return again
	}
	_ = s.ivHist.RecordValue(lat)
	s.ran++
	s.ivTxns++
	s.ivOps[out.Op]++
	s.ivQueries += int64(out.Queries)
	if inRun {
		_ = s.total.RecordValue(lat)
		h := s.ops[out.Op]
		if h == nil {
			h = newHist()
			s.ops[out.Op] = h
		}
		_ = h.RecordValue(lat)
		s.txns++
		s.queries += int64(out.Queries)
		s.retries += int64(out.Retries)
		if out.RolledBack {
			s.rolledBack++
		}
	}
	return false
}

// interval takes and resets every client's interval counts; connErrs is
// how many of its errors were connections lost or not made. seen gathers
// the operations of the run so far: once there are two or more, every
// interval has each one's rate (none for a workload of one).
func interval(all []*stats, d time.Duration, seen map[string]bool) (iv results.Interval, connErrs int64) {
	h := newHist()
	var queries int64
	var ops map[string]int64
	for _, s := range all {
		s.mu.Lock()
		h.Merge(s.ivHist)
		s.ivHist.Reset()
		iv.Transactions += s.ivTxns
		for op, n := range s.ivOps {
			if n > 0 {
				if ops == nil {
					ops = map[string]int64{}
				}
				ops[op] += n
				s.ivOps[op] = 0
			}
		}
		queries += s.ivQueries
		iv.Errors += s.ivErrors
		connErrs += s.ivConnErrs
		s.ivTxns, s.ivQueries, s.ivErrors, s.ivConnErrs = 0, 0, 0, 0
		s.mu.Unlock()
	}
	iv.TPS = float64(iv.Transactions) / d.Seconds()
	for op := range ops {
		seen[op] = true
	}
	if len(seen) > 1 { // a workload of several kinds of transaction: each one's rate, from when a second kind came
		iv.Ops = map[string]float64{}
		for op := range seen {
			iv.Ops[op] = float64(ops[op]) / d.Seconds()
		}
	}
	iv.QPS = float64(queries) / d.Seconds()
	iv.P50Ms = float64(h.ValueAtQuantile(50)) / 1000
	iv.P95Ms = float64(h.ValueAtQuantile(95)) / 1000
	iv.P99Ms = float64(h.ValueAtQuantile(99)) / 1000
	return iv, connErrs
}

func latency(h *hdrhistogram.Histogram) results.Latency {
	if h.TotalCount() == 0 {
		return results.Latency{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return results.Latency{
		Avg: h.Mean() / 1000, Stddev: h.StdDev() / 1000,
		P50: ms(h.ValueAtQuantile(50)), P95: ms(h.ValueAtQuantile(95)), P99: ms(h.ValueAtQuantile(99)),
		Max: ms(h.Max()), Count: h.TotalCount(),
	}
}

// bucketsPerDecade is how finely a run's saved histogram divides latency.
const bucketsPerDecade = 10

// buckets is the histogram's counts in buckets ten to a decade of
// milliseconds (bounds 10^(k/10) ms), the empty ones left out. A value
// goes to the first bucket whose bound is at least the value's.
func buckets(h *hdrhistogram.Histogram) []results.Bucket {
	counts := map[int]int64{}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		ms := float64(bar.To) / 1000
		k := int(math.Ceil(bucketsPerDecade*math.Log10(ms) - 1e-9))
		counts[k] += bar.Count
	}
	keys := make([]int, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	out := make([]results.Bucket, 0, len(keys))
	for _, k := range keys {
		up := math.Pow(10, float64(k)/bucketsPerDecade)
		out = append(out, results.Bucket{UpToMs: math.Round(up*1000) / 1000, Count: counts[k]})
	}
	return out
}

// summarize merges the clients' measured counts; TPS and QPS are over the
// measured time less the outages.
func summarize(all []*stats, connect *lockedHist, measured time.Duration, gone []results.Outage) results.Summary {
	total := newHist()
	ops := map[string]*hdrhistogram.Histogram{}
	sum := results.Summary{Errors: map[string]int64{}, Ops: map[string]results.Latency{}}
	for _, s := range all {
		s.mu.Lock()
		total.Merge(s.total)
		for op, h := range s.ops {
			if ops[op] == nil {
				ops[op] = newHist()
			}
			ops[op].Merge(h)
		}
		sum.Transactions += s.txns
		sum.Queries += s.queries
		sum.Retries += s.retries
		sum.RolledBack += s.rolledBack
		sum.Reconnects += s.reconnects
		for k, v := range s.errors {
			sum.Errors[k] += v
		}
		s.mu.Unlock()
	}
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	for _, op := range names {
		sum.Ops[op] = latency(ops[op])
	}
	sum.Latency = latency(total)
	sum.Histogram = buckets(total)
	connect.mu.Lock()
	sum.ConnectMs = latency(connect.h)
	connect.mu.Unlock()
	sum.MeasuredS = measured.Seconds()
	sum.Outages = gone
	for _, o := range gone {
		sum.DownS += min(o.ToS, sum.MeasuredS) - o.FromS
	}
	if up := sum.MeasuredS - sum.DownS; up > 0 {
		sum.TPS = float64(sum.Transactions) / up
		sum.QPS = float64(sum.Queries) / up
	}
	return sum
}
