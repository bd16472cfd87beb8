// Package results is the saved-run format shared by bench, validate and the
// report: one versioned JSON document per run (run.json) with the host's
// facts, the live settings, the workload's parameters, the summary, the
// interval series and the thermal readings, plus series.csv and thermal.csv
// beside it for spreadsheets. Runs live in DIR/HOST/RUN-ID/; Save writes a
// run's folder whole or not at all, and List walks a results folder.
package results

import (
	"fmt"
	"math"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/facts"
	"pidb/thermal"
)

// Schema is the version of the format this package writes. A reader
// refuses documents from a newer schema rather than misreading them, and
// reads older ones: schema 2 added each interval's p50 and p99, the run's
// latency histogram and each setting's tuned value and reason, which a
// schema 1 run has not (they load as zero values).
const Schema = 2

// Kind is which command made a run.
type Kind string

// The kinds of run.
const (
	KindBench    Kind = "bench"
	KindValidate Kind = "validate"
)

// Grade is a verdict's word.
type Grade string

// Validate's verdicts.
const (
	Pass Grade = "PASS"
	Warn Grade = "WARN"
	Fail Grade = "FAIL"
	// Error is a host that could not be validated (unreachable, or its
	// server would not answer): its error is on stderr, and nothing of it
	// was measured. It fails the command, as FAIL does.
	Error Grade = "ERROR"
)

// Run is one saved run.
type Run struct {
	Schema      int          `json:"schema"`
	ID          string       `json:"run_id"`
	Kind        Kind         `json:"kind"`
	Host        string       `json:"host"` // the inventory's name for it
	PidbVersion string       `json:"pidb_version,omitempty"`
	Preset      string       `json:"preset,omitempty"` // the tuner's preset the host was provisioned with
	Started     time.Time    `json:"started"`
	Finished    time.Time    `json:"finished"`
	Facts       *facts.Facts `json:"facts,omitempty"`    // as `pidb facts --json` prints them
	Settings    []Setting    `json:"settings,omitempty"` // live values when the run started
	Workload    Workload     `json:"workload"`
	Summary     Summary      `json:"summary"`
	Series      []Interval   `json:"series"`
	Thermal     []Reading    `json:"thermal,omitempty"`
	Client      *Client      `json:"client,omitempty"` // what pidb used of the controller
	// Alongside is how many other hosts' workloads this controller ran
	// at the same time, at most (the command's hosts and --concurrency);
	// nil in a run saved before pidb recorded it
	Alongside *int     `json:"alongside,omitempty"`
	Verdict   *Verdict `json:"verdict,omitempty"` // validate's
	Checks    []Check  `json:"checks,omitempty"`  // the data's consistency after the run (bench --check)
	// Replication is, for a cluster's primary under a workload that
	// writes (bench --cluster), where each replica was behind it through
	// the run
	Replication []Lag `json:"replication,omitempty"`
	// Cluster is the [[cluster]] this run measured a host of, with the
	// others at once (bench --cluster): the report stacks their
	// throughput
	Cluster string `json:"cluster,omitempty"`
}

// Lag is a replica's place behind its primary at one reading.
type Lag struct {
	AtS     float64  `json:"at_s"` // from the measured time's start (negative in the warm-up)
	Host    string   `json:"host"`
	Bytes   *uint64  `json:"bytes"`   // the primary's WAL it has not replayed; null: not connected (or MariaDB's)
	Seconds *float64 `json:"seconds"` // the primary's replay_lag for it (0 when it has all); null: not connected, or not known
	// Transactions are, on MariaDB, the primary's transactions it had
	// not applied (its GTID positions'); null: not replicating, or
	// PostgreSQL's (Seconds: its Seconds_Behind_Master)
	Transactions *uint64 `json:"transactions,omitempty"`
}

// Connected reports whether the replica was connected at the reading.
func (l Lag) Connected() bool { return l.Bytes != nil || l.Transactions != nil }

// Setting is a server setting as it was live, with what the tuner wanted
// for it and why (empty for a setting the tuner leaves alone).
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Tuned string `json:"tuned,omitempty"`
	Why   string `json:"why,omitempty"`
}

// Workload is what ran and how.
type Workload struct {
	Name      string      `json:"name"`
	Engine    dbms.Flavor `json:"engine"`
	Clients   int         `json:"clients"`
	DurationS float64     `json:"duration_s"`
	WarmupS   float64     `json:"warmup_s"`
	Scale     int         `json:"scale,omitempty"`
	Tables    int         `json:"tables,omitempty"`
	TableSize int         `json:"table_size,omitempty"`
	Protocol  string      `json:"protocol,omitempty"`
	Via       string      `json:"via,omitempty"`
	TLS       bool        `json:"tls,omitempty"` // the clients' logins used TLS
	// Queries is, for a fixed amount of work (load.py's QUERIES), how many
	// each client ran; 0: a timed run (DurationS). A fixed run's measured
	// time is how long the work took (Summary.MeasuredS).
	Queries int `json:"queries,omitempty"`
	// Revision is the workload's revision, where its work changed since
	// its first (quiz: 2, the write-up's own schema and loop).
	Revision int `json:"revision,omitempty"`
	// Mix is tpcc's weights of its five transactions, new_order:payment:
	// order_status:delivery:stock_level ("45:43:4:4:4", the standard's).
	Mix string `json:"mix,omitempty"`
	// Script is the sql workload's script, Setup its setup script: runs
	// of other text are other work
	Script *File `json:"script,omitempty"`
	Setup  *File `json:"setup_script,omitempty"`
}

// What names the work a run did, as tables and reports show it: the
// workload's name, with the script's for the sql workload ("sql app.sql").
func (w Workload) What() string {
	if w.Script != nil {
		return w.Name + " " + w.Script.Name
	}
	return w.Name
}

// File is a user's file a run ran: its name and its text's SHA-256, in
// hex.
type File struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// Check is one consistency condition tested on one warehouse after a
// run (tpcc: the standard's conditions 1-4), with the numbers behind
// its verdict.
type Check struct {
	Table     int    `json:"table"` // the table copy (sysbench-tpcc's --tables)
	Warehouse int64  `json:"warehouse"`
	Condition int    `json:"condition"`
	Name      string `json:"name"`
	Pass      bool   `json:"pass"`
	Detail    string `json:"detail"`
}

// EarlierQuiz is the name a run of pidb's first quiz is read under: it had
// other tables and columns, SELECT * and a table at random per query, so
// its numbers are not the write-up's quiz's (revision 2 and later).
const EarlierQuiz = "quiz-v1"

// Client is what pidb's own process used of the controller while a
// workload ran (its warm-up and measured time): CPU seconds (user and
// system, from the kernel's accounting), against the wall time and the
// controller's cores. Several hosts run in one process, so it is the
// process's, not one host's.
type Client struct {
	CPUS  float64 `json:"cpu_s"`
	WallS float64 `json:"wall_s"`
	Cores int     `json:"cores"`
}

// Latency is a latency distribution in milliseconds.
type Latency struct {
	Avg    float64 `json:"avg"`
	Stddev float64 `json:"stddev"`
	P50    float64 `json:"p50"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
	Count  int64   `json:"count"`
}

// Summary is a run's totals over its measured time (after the warm-up).
type Summary struct {
	Transactions int64              `json:"transactions"`
	Queries      int64              `json:"queries"`
	TPS          float64            `json:"tps"`
	QPS          float64            `json:"qps"`
	Latency      Latency            `json:"latency_ms"`
	Ops          map[string]Latency `json:"ops,omitempty"`         // per operation
	Errors       map[string]int64   `json:"errors"`                // by kind
	Retries      int64              `json:"retries"`               // serialization failures and deadlocks retried
	RolledBack   int64              `json:"rolled_back,omitempty"` // of the transactions, those that ended in a ROLLBACK by design (tpcc's New-Orders of an unused item)
	Reconnects   int64              `json:"reconnects"`            // dropped connections made again
	ConnectMs    Latency            `json:"connect_ms"`            // connection set-up, apart from the transactions
	MeasuredS    float64            `json:"measured_s"`            // the measured time; TPS is over it less DownS
	// Outages are the stretches of the measured time when the clients lost
	// the server: no transaction finished, and the connections failed or
	// nothing came back at all. DownS is their total, left out of TPS and
	// QPS.
	Outages []Outage           `json:"outages,omitempty"`
	DownS   float64            `json:"down_s,omitempty"`
	Extra   map[string]float64 `json:"extra,omitempty"` // workload-specific figures
	// Histogram is the measured transactions' latency distribution: how
	// many took up to each bucket's bound, in buckets ten to a decade
	// (1, 1.26, 1.58 ... ms), empty buckets left out.
	Histogram []Bucket `json:"histogram,omitempty"`
}

// Outage is a stretch of a run when the clients lost the server, in
// seconds from the measured start, with the connections that failed in it.
type Outage struct {
	FromS          float64 `json:"from_s"`
	ToS            float64 `json:"to_s"`
	FailedConnects int64   `json:"failed_connects"`
	// Kind is ServerGone or NoAnswer; runs saved before there were kinds
	// have none, and theirs were all ServerGone.
	Kind string `json:"kind,omitempty"`
}

// The kinds of outage.
const (
	ServerGone = "server_gone" // no transaction, and the connections failed: the server went away
	NoAnswer   = "no_answer"   // nothing came back, neither a transaction nor an error: the network or the host was down
)

// Gone reports whether the server went away (ServerGone, or a run from
// before outages had kinds), rather than stopped answering.
func (o Outage) Gone() bool { return o.Kind != NoAnswer }

// String says when and for how long, and what the clients saw.
func (o Outage) String() string {
	if !o.Gone() {
		return fmt.Sprintf("the host stopped answering %.1f s into the measured time, for %.1f s (no transaction and no error came back: the network, or the host, was down)", o.FromS, o.ToS-o.FromS)
	}
	return fmt.Sprintf("the server went away %.1f s into the measured time, for %.1f s (%d failed connections)", o.FromS, o.ToS-o.FromS, o.FailedConnects)
}

// Bucket is one bar of a latency histogram: Count transactions took more
// than the bucket before's bound and at most UpToMs.
type Bucket struct {
	UpToMs float64 `json:"up_to_ms"`
	Count  int64   `json:"count"`
}

// Interval is one point of the series, at T seconds after the measured
// start (negative during the warm-up).
type Interval struct {
	T            float64 `json:"t"`
	Transactions int64   `json:"transactions"`
	TPS          float64 `json:"tps"`
	QPS          float64 `json:"qps"`
	P50Ms        float64 `json:"p50_ms"`
	P95Ms        float64 `json:"p95_ms"`
	P99Ms        float64 `json:"p99_ms"`
	Errors       int64   `json:"errors"`
	// Ops are the interval's transactions per second by operation, when
	// more than one kind ended in it (tpcc's types, quiz's tables).
	Ops map[string]float64 `json:"ops,omitempty"`
}

// Reading is a thermal sample on the run's timeline: T seconds after the
// measured start (negative in the idle time before it). A value the host
// could not tell is null.
type Reading struct {
	T         float64   `json:"t"`
	At        time.Time `json:"at"`
	TempC     *float64  `json:"temp_c"`
	ArmHz     *int64    `json:"arm_hz"`
	Throttled *uint32   `json:"throttled"` // vcgencmd get_throttled's value
}

// Verdict is validate's judgement of a host, with its reasons.
type Verdict struct {
	Verdict         Grade    `json:"verdict"`
	Reasons         []Reason `json:"reasons"`
	MaxTempC        *float64 `json:"max_temp_c"`
	Throttled       bool     `json:"throttled"`
	TPSFirstQuarter float64  `json:"tps_first_quarter"`
	TPSLastQuarter  float64  `json:"tps_last_quarter"`
}

// Reason is one finding: a stable code and a sentence.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Fail    bool   `json:"fail"` // FAIL; else WARN
}

// Codes are the reasons' codes, in order, as the tables show them.
func Codes(rs []Reason) []string {
	codes := make([]string, 0, len(rs))
	for _, r := range rs {
		codes = append(codes, r.Code)
	}
	return codes
}

// NewID names a run by its start (UTC, sortable) and what ran.
func NewID(start time.Time, what string) string {
	return start.UTC().Format("20060102T150405Z") + "-" + what
}

// FromThermal puts readings on a run's timeline: T is seconds from the
// measured start; what the host could not tell is null.
func FromThermal(rs []thermal.Reading, measured time.Time) []Reading {
	out := make([]Reading, 0, len(rs))
	for _, rd := range rs {
		x := Reading{T: rd.At.Sub(measured).Seconds(), At: rd.At}
		if !math.IsNaN(rd.TempC) {
			c := rd.TempC
			x.TempC = &c
		}
		if rd.ArmHz > 0 {
			hz := rd.ArmHz
			x.ArmHz = &hz
		}
		if rd.ThrottledKnown {
			fl := uint32(rd.Throttled)
			x.Throttled = &fl
		}
		out = append(out, x)
	}
	return out
}

// ErrorShareLimit is the share of a run's tries that may end in an error
// before the run says its figures are not clean: a hundredth, the share
// TPC-C itself rolls back by design (a New-Order of an unused item, which
// is no error). More than that, the TPS counts only what survived: a run
// on MariaDB 11.8 that did not try its snapshot isolation's failures
// again lost a quarter of its transactions and still printed a tpmC.
const ErrorShareLimit = 0.01

// Failures are the transactions that ended in an error, of every kind
// but a failed connection ("connect: ..."), which is no transaction
// tried (and is counted through the warm-up too: a server still
// starting refuses them then).
func (s Summary) Failures() int64 {
	var n int64
	for k, v := range s.Errors {
		if !strings.HasPrefix(k, "connect: ") {
			n += v
		}
	}
	return n
}

// ErrorShare is the share of the transactions tried that ended in an
// error: the failures over the committed and the failed together (0 when
// none was tried).
func (s Summary) ErrorShare() float64 {
	f := s.Failures()
	if f == 0 {
		return 0
	}
	return float64(f) / float64(f+s.Transactions)
}

// Lossy reports whether more than ErrorShareLimit of the run's tries
// ended in an error.
func (s Summary) Lossy() bool { return s.ErrorShare() > ErrorShareLimit }
