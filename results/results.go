// Package results is the saved-run format shared by bench, validate and the
// report: one versioned JSON document per run (run.json) with the host's
// facts, the live settings, the workload's parameters, the summary and the
// interval series, plus series.csv beside it for spreadsheets. Runs live in
// DIR/HOST/RUN-ID/.
package results

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Schema is the version of the format this package writes. A reader
// refuses documents from a newer schema rather than misreading them.
const Schema = 1

// Run is one saved run.
type Run struct {
	Schema   int            `json:"schema"`
	ID       string         `json:"run_id"`
	Kind     string         `json:"kind"` // bench, validate
	Host     string         `json:"host"`
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	Facts    map[string]any `json:"facts,omitempty"`    // as `pidb facts --json` prints them
	Settings []Setting      `json:"settings,omitempty"` // live values when the run started
	Workload Workload       `json:"workload"`
	Summary  Summary        `json:"summary"`
	Series   []Interval     `json:"series"`
	Thermal  []Reading      `json:"thermal,omitempty"`
	Verdict  *Verdict       `json:"verdict,omitempty"` // validate's
}

// Setting is a server setting as it was live.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Workload is what ran and how.
type Workload struct {
	Name      string  `json:"name"`
	Engine    string  `json:"engine"`
	Clients   int     `json:"clients"`
	DurationS float64 `json:"duration_s"`
	WarmupS   float64 `json:"warmup_s"`
	Scale     int     `json:"scale,omitempty"`
	Tables    int     `json:"tables,omitempty"`
	TableSize int     `json:"table_size,omitempty"`
	Protocol  string  `json:"protocol,omitempty"`
	Via       string  `json:"via,omitempty"`
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
	Ops          map[string]Latency `json:"ops,omitempty"`   // per operation
	Errors       map[string]int64   `json:"errors"`          // by kind
	Retries      int64              `json:"retries"`         // serialization failures and deadlocks retried
	Reconnects   int64              `json:"reconnects"`      // dropped connections made again
	ConnectMs    Latency            `json:"connect_ms"`      // connection set-up, apart from the transactions
	MeasuredS    float64            `json:"measured_s"`      // the time TPS is over
	Extra        map[string]float64 `json:"extra,omitempty"` // workload-specific figures
}

// Interval is one point of the series, at T seconds after the measured
// start (negative during the warm-up).
type Interval struct {
	T            float64 `json:"t"`
	Transactions int64   `json:"transactions"`
	TPS          float64 `json:"tps"`
	QPS          float64 `json:"qps"`
	P95Ms        float64 `json:"p95_ms"`
	Errors       int64   `json:"errors"`
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
	Verdict         string   `json:"verdict"` // PASS, WARN or FAIL
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

// NewID names a run by its start (UTC, sortable) and what ran.
func NewID(start time.Time, what string) string {
	return start.UTC().Format("20060102T150405Z") + "-" + what
}

// Save writes the run to dir/HOST/ID/ (run.json and series.csv) and returns
// that folder. Files are written to temporary names and renamed, so a
// reader never sees half a run.
func Save(dir string, r Run) (string, error) {
	if r.Host == "" || r.ID == "" {
		return "", errors.New("save run: no host or run id")
	}
	r.Schema = Schema
	runDir := filepath.Join(dir, r.Host, r.ID)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	if err := writeAtomic(filepath.Join(runDir, "run.json"), append(data, '\n')); err != nil {
		return "", err
	}
	var rows [][]string
	rows = append(rows, []string{"t_s", "transactions", "tps", "qps", "p95_ms", "errors"})
	for _, i := range r.Series {
		rows = append(rows, []string{f(i.T), strconv.FormatInt(i.Transactions, 10), f(i.TPS), f(i.QPS), f(i.P95Ms), strconv.FormatInt(i.Errors, 10)})
	}
	if err := writeCSV(filepath.Join(runDir, "series.csv"), rows); err != nil {
		return "", err
	}
	return runDir, nil
}

func f(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// Load reads a run.json.
func Load(path string) (Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Run{}, err
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return Run{}, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema < 1 || r.Schema > Schema {
		return Run{}, fmt.Errorf("%s: schema %d; this pidb reads 1 to %d", path, r.Schema, Schema)
	}
	return r, nil
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func writeCSV(path string, rows [][]string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := csv.NewWriter(tmp)
	if err := w.WriteAll(rows); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
