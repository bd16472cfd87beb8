package job

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"pidb/dbms"
	"pidb/facts"
	"pidb/inventory"
	"pidb/progress"
	"pidb/results"
)

// BenchResult is one host as `pidb bench --json` prints it.
type BenchResult struct {
	Host         string           `json:"host"`
	Workload     string           `json:"workload"`
	Engine       dbms.Flavor      `json:"engine"`
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
	// ErrorShare is the share of the transactions tried that ended in an
	// error; over results.ErrorShareLimit, the TPS is not the server's
	ErrorShare float64         `json:"error_share"`
	DownS      float64         `json:"down_s,omitempty"` // the server gone or not answering: left out of TPS
	Retries    int64           `json:"retries"`          // deadlocks and serialization failures tried again
	RolledBack int64           `json:"rolled_back"`      // of the transactions, those rolled back by design (tpcc: New-Orders of an unused item, 1%)
	TpmC       float64         `json:"tpmc,omitempty"`   // tpcc: New-Orders per minute
	Ops        []Op            `json:"ops,omitempty"`    // per operation (tpcc: per transaction type)
	Checks     []results.Check `json:"checks,omitempty"` // --check: the data's consistency after the run
	// Replicas are, for a cluster's primary under a workload that writes,
	// how far behind it each replica was through the run
	Replicas []ReplicaLag `json:"replicas,omitempty"`
	RunDir   string       `json:"run_dir"`
	Error    string       `json:"error,omitempty"`
}

// ReplicaLag is how far behind its primary a replica was through a run:
// the readings, the most in bytes and in seconds, and the readings it
// was not connected at.
type ReplicaLag struct {
	Host         string  `json:"host"`
	Readings     int     `json:"readings"`
	MaxBytes     uint64  `json:"max_bytes"`
	MaxS         float64 `json:"max_s"`
	NotConnected int     `json:"not_connected"`
	// MaxTransactions is, on MariaDB, the most transactions it was
	// behind (MaxBytes: 0)
	MaxTransactions *uint64 `json:"max_transactions,omitempty"`
}

// replicaLags sums up each replica's readings, in the order first read.
func replicaLags(ls []results.Lag) []ReplicaLag {
	var out []ReplicaLag
	at := map[string]int{}
	for _, l := range ls {
		i, ok := at[l.Host]
		if !ok {
			i = len(out)
			at[l.Host] = i
			out = append(out, ReplicaLag{Host: l.Host})
		}
		r := &out[i]
		r.Readings++
		if !l.Connected() {
			r.NotConnected++
			continue
		}
		if l.Bytes != nil {
			r.MaxBytes = max(r.MaxBytes, *l.Bytes)
		}
		if l.Transactions != nil {
			n := *l.Transactions
			if r.MaxTransactions != nil {
				n = max(n, *r.MaxTransactions)
			}
			r.MaxTransactions = &n
		}
		if l.Seconds != nil {
			r.MaxS = max(r.MaxS, *l.Seconds)
		}
	}
	return out
}

// Measured reports whether the host's workload ran and was saved: a host
// that failed before its run has no numbers.
func (b BenchResult) Measured() bool { return b.RunDir != "" }

// MarshalJSON writes null, not zero, for what was never measured.
func (b BenchResult) MarshalJSON() ([]byte, error) {
	type plain BenchResult
	if b.Measured() {
		return json.Marshal(plain(b))
	}
	var engine *dbms.Flavor // known where facts were read
	if b.Engine != "" {
		engine = &b.Engine
	}
	return json.Marshal(struct {
		plain
		Engine       *dbms.Flavor     `json:"engine"`
		TLS          *bool            `json:"tls"`
		DurationS    *float64         `json:"duration_s"`
		Transactions *int64           `json:"transactions"`
		TPS          *float64         `json:"tps"`
		QPS          *float64         `json:"qps"`
		LatencyMs    *results.Latency `json:"latency_ms"`
		P95Ms        *float64         `json:"p95_ms"`
		Retries      *int64           `json:"retries"`
		RolledBack   *int64           `json:"rolled_back"`
	}{plain: plain(b), Engine: engine})
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

// lossNote says that more than results.ErrorShareLimit of a run's tries
// ended in errors, and what that makes of its figures.
func lossNote(sum results.Summary) string {
	return fmt.Sprintf("%d of the %d transactions tried (%.1f%%) ended in an error, more than %.0f%%: the TPS counts only those that committed, so it is not the server's throughput",
		sum.Failures(), sum.Failures()+sum.Transactions, 100*sum.ErrorShare(), 100*results.ErrorShareLimit)
}

// failedChecks says which checks failed, or "" when none did.
func failedChecks(cs []results.Check) string {
	var bad []string
	for _, c := range cs {
		switch {
		case c.Pass:
		case c.Table == 0: // a condition on the whole data (tpcb's)
			bad = append(bad, fmt.Sprintf("condition %d (%s): %s", c.Condition, c.Name, c.Detail))
		default:
			bad = append(bad, fmt.Sprintf("condition %d (%s) on warehouse %d of table copy %d: %s", c.Condition, c.Name, c.Warehouse, c.Table, c.Detail))
		}
	}
	return strings.Join(bad, "; ")
}

// Prepare makes the plan's data on a host, or finds it there, as a run
// would, and runs nothing: a cluster's primary, before its replicas are
// measured on the copy.
func (e Env) Prepare(ctx context.Context, h inventory.Host, c Conn, p Plan, r progress.Reporter) error {
	r.Step("gathering facts")
	f, err := facts.Collect(ctx, c.User, h)
	if err != nil {
		return err
	}
	pw, err := e.prepare(ctx, h, c, f, p, r)
	if err != nil {
		return err
	}
	pw.close()
	return nil
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
		Retries: sum.Retries, RolledBack: sum.RolledBack, TpmC: sum.Extra["tpmc"], Checks: m.Run.Checks, Replicas: replicaLags(m.Run.Replication), ErrorShare: sum.ErrorShare()}
	if sum.Lossy() {
		r.Note(lossNote(sum))
	}
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
