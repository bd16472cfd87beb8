// Package report turns saved runs into what people read: the one-line
// overview of each run (`pidb runs`), the comparison of runs with each
// change set against the runs' own noise (`pidb report --compare`), a
// reading of each run in words, and one self-contained HTML page with the
// charts drawn by gonum/plot as SVG (`pidb report`).
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"pidb/results"
	"pidb/validate"
)

// Row is one saved run in a line: `pidb runs` prints it, the report's
// fleet table shows it. A folder that cannot be read has only Dir, Host,
// RunID and Error.
type Row struct {
	// Anchor is the run's own section on a report's page
	Anchor        string           `json:"-"`
	RunID         string           `json:"run_id"`
	Dir           string           `json:"dir"`
	Host          string           `json:"host"`
	Kind          results.Kind     `json:"kind"`
	Workload      string           `json:"workload"`
	Engine        string           `json:"engine"`
	EngineVersion string           `json:"engine_version"`
	Preset        string           `json:"preset"`
	Clients       int              `json:"clients"`
	Scale         int              `json:"scale,omitempty"`
	DurationS     float64          `json:"duration_s"`
	Started       time.Time        `json:"started"`
	TPS           float64          `json:"tps"`
	QPS           float64          `json:"qps"`
	TpmC          float64          `json:"tpmc,omitempty"` // tpcc: New-Orders a minute
	P50Ms         float64          `json:"p50_ms"`
	P95Ms         float64          `json:"p95_ms"`
	P99Ms         float64          `json:"p99_ms"`
	MaxTempC      *float64         `json:"max_temp_c"`  // null: no temperature was read
	MinArmMHz     *float64         `json:"min_arm_mhz"` // the lowest clock during the measured run
	Throttled     *bool            `json:"throttled"`   // null: the host cannot tell (no vcgencmd)
	Verdict       results.Grade    `json:"verdict,omitempty"`
	Reasons       []results.Reason `json:"reasons,omitempty"`
	Model         string           `json:"model,omitempty"`
	RAMBytes      uint64           `json:"ram_bytes,omitempty"`
	CPUs          int              `json:"cpus,omitempty"`
	Storage       string           `json:"storage,omitempty"`
	Script        string           `json:"script,omitempty"`    // the sql workload's script
	Simulated     string           `json:"simulated,omitempty"` // a board of pidb's lab: "board" or "full" (its CPU speed)
	OS            string           `json:"os,omitempty"`
	PidbVersion   string           `json:"pidb_version,omitempty"`
	Schema        int              `json:"schema,omitempty"`
	Error         string           `json:"error,omitempty"` // why the folder cannot be read
}

// MarshalJSON writes a row as `pidb runs --json` prints it: a run that
// cannot be read has its folder, host, id and error, and null for every
// value it has none of (not a TPS of 0, nor a start in the year 1).
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	data, err := json.Marshal(plain(r))
	if err != nil || r.Error == "" {
		return data, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	for k := range m {
		switch k {
		case "run_id", "dir", "host", "error":
		default:
			m[k] = nil
		}
	}
	return json.Marshal(m)
}

// Overview is a listed run's row.
func Overview(l results.Listed) Row {
	row := Row{Dir: l.Dir, RunID: filepath.Base(l.Dir), Host: filepath.Base(filepath.Dir(l.Dir))}
	if l.Err != nil {
		row.Error = l.Err.Error()
		return row
	}
	r := l.Run
	s := r.Summary
	row.RunID, row.Host, row.Kind, row.Preset, row.PidbVersion, row.Schema = r.ID, r.Host, r.Kind, r.Preset, r.PidbVersion, r.Schema
	row.Workload, row.Engine, row.Clients, row.Scale, row.DurationS, row.Started = r.Workload.Name, string(r.Workload.Engine), r.Workload.Clients, r.Workload.Scale, s.MeasuredS, r.Started
	row.TPS, row.QPS, row.P50Ms, row.P95Ms, row.P99Ms = s.TPS, s.QPS, s.Latency.P50, s.Latency.P95, s.Latency.P99
	row.TpmC = s.Extra["tpmc"]
	if f := r.Workload.Script; f != nil {
		row.Script = f.Name
	}
	if f := r.Facts; f != nil {
		row.EngineVersion, row.Model, row.RAMBytes, row.CPUs, row.Storage = f.Engine.Version, f.Model, f.RAMBytes, f.CPUs, f.Storage
		row.Simulated = f.Simulated
		row.OS = f.OS.ID + " " + f.OS.VersionID
		if f.OS.Codename != "" {
			row.OS += " (" + f.OS.Codename + ")"
		}
	}
	h := heatOf(r)
	row.MaxTempC, row.MinArmMHz, row.Throttled = h.maxC, h.minMHz, h.throttled
	if v := r.Verdict; v != nil {
		row.Verdict, row.Reasons = v.Verdict, v.Reasons
	}
	return row
}

// heat is what a run's thermal readings say.
type heat struct {
	maxC      *float64
	minMHz    *float64 // during the measured run
	topMHz    float64  // the highest clock during the measured run
	throttled *bool
	limitAt   *float64 // T of the first reading at or above the limit
}

// limitC is where the firmware starts to throttle (validate's default limit).
const limitC = validate.DefaultMaxTempC

func heatOf(r results.Run) heat {
	var h heat
	end := measuredEnd(r)
	for _, rd := range r.Thermal {
		if rd.TempC != nil {
			if h.maxC == nil || *rd.TempC > *h.maxC {
				c := *rd.TempC
				h.maxC = &c
			}
			if *rd.TempC >= limitC && h.limitAt == nil {
				t := rd.T
				h.limitAt = &t
			}
		}
		if rd.ArmHz != nil && rd.T >= 0 && rd.T <= end {
			mhz := float64(*rd.ArmHz) / 1e6
			if h.minMHz == nil || mhz < *h.minMHz {
				h.minMHz = &mhz
			}
			h.topMHz = math.Max(h.topMHz, mhz)
		}
	}
	if r.Verdict != nil && r.Verdict.MaxTempC != nil {
		h.maxC = r.Verdict.MaxTempC
	}
	if start, ok := measuredStart(r); ok {
		if fl := validate.Throttling(r.ThermalReadings(), start, start.Add(time.Duration(end*float64(time.Second)))); fl.Known {
			t := fl.ArmThrottled()
			h.throttled = &t
		}
	}
	if r.Verdict != nil && r.Verdict.Throttled {
		t := true
		h.throttled = &t
	}
	return h
}

// measuredEnd is when the measured time ended, in seconds from its start:
// what the summary measured, else the duration asked for.
func measuredEnd(r results.Run) float64 {
	if r.Summary.MeasuredS > 0 {
		return r.Summary.MeasuredS
	}
	return r.Workload.DurationS
}

// measuredStart is when the run's measured time began, from its readings
// (each has its time and its offset from that start).
func measuredStart(r results.Run) (time.Time, bool) {
	if len(r.Thermal) == 0 {
		return time.Time{}, false
	}
	rd := r.Thermal[0]
	return rd.At.Add(-time.Duration(rd.T * float64(time.Second))), true
}

// Filter picks runs for `pidb runs`: by host and workload (empty: all),
// and the newest Last of what is left (0: all).
type Filter struct {
	Host, Workload string
	Last           int
}

// Flags is the filter as the command line gives it ("--host pi9
// --workload tpcb"); "" for none.
func (f Filter) Flags() string {
	var out []string
	if f.Host != "" {
		out = append(out, "--host "+f.Host)
	}
	if f.Workload != "" {
		out = append(out, "--workload "+f.Workload)
	}
	if f.Last > 0 {
		out = append(out, "--last "+strconv.Itoa(f.Last))
	}
	return strings.Join(out, " ")
}

// Select keeps the rows the filter asks for, in their order (newest first,
// as results.List gives them). A broken run has no workload: a filter on
// the workload leaves it out, one on the host keeps it.
func Select(rows []Row, f Filter) []Row {
	var out []Row
	for _, r := range rows {
		if f.Host != "" && r.Host != f.Host {
			continue
		}
		if f.Workload != "" && r.Workload != f.Workload {
			continue
		}
		out = append(out, r)
		if f.Last > 0 && len(out) == f.Last {
			break
		}
	}
	return out
}

// NewestPerHost is the newest readable run of each host, in the order of
// the hosts' names, from a list that is newest first.
func NewestPerHost(l []results.Listed) []results.Listed {
	seen := map[string]bool{}
	var out []results.Listed
	for _, x := range l {
		if x.Err != nil || seen[x.Run.Host] {
			continue
		}
		seen[x.Run.Host] = true
		out = append(out, x)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Run.Host < out[j].Run.Host })
	return out
}

// Open reads the runs named on the command line: a run's folder or its
// run.json (or another name ending in .json).
func Open(paths []string) ([]results.Listed, error) {
	out := make([]results.Listed, 0, len(paths))
	for _, p := range paths {
		dir, file := p, filepath.Join(p, "run.json")
		if strings.HasSuffix(p, ".json") {
			dir, file = filepath.Dir(p), p
		}
		r, err := results.Load(file)
		if err != nil {
			return nil, err
		}
		out = append(out, results.Listed{Dir: dir, Run: r})
	}
	return out, nil
}

// broken are the runs of l that cannot be read.
func broken(l []results.Listed) []results.Listed {
	var out []results.Listed
	for _, x := range l {
		if x.Err != nil {
			out = append(out, x)
		}
	}
	return out
}

// Gather finds the runs the command line names. With no names, the newest
// run of each host in dir. Each name is a results folder (the newest run
// of each host in it), a host's folder in one (its newest run, as `pidb
// runs` takes the folder), a run's folder or its run.json, or a run id in dir
// (as `pidb runs` lists it). source says where they came from;
// unreadable are the runs in the folders it read that cannot be read (a
// run cut off before it was saved whole), left out of runs.
func Gather(names []string, dir string) (runs, unreadable []results.Listed, source string, err error) {
	if len(names) == 0 {
		l, err := results.List(dir)
		if err != nil {
			return nil, nil, "", err
		}
		if runs = NewestPerHost(l); len(runs) == 0 {
			return nil, nil, "", fmt.Errorf("no readable runs in %s: pidb bench and pidb validate save them there (--out)", dir)
		}
		return runs, broken(l), dir, nil
	}
	for _, n := range names {
		switch st, err := os.Stat(n); {
		case err == nil && st.IsDir() && !exists(filepath.Join(n, "run.json")):
			list := results.List // a results folder: its hosts' folders
			if runs, _ := filepath.Glob(filepath.Join(n, "*", "run.json")); len(runs) > 0 {
				list = results.ListHost // a host's folder: its runs
			}
			l, err := list(n)
			if err != nil {
				return nil, nil, "", err
			}
			newest := NewestPerHost(l)
			if len(newest) == 0 {
				return nil, nil, "", fmt.Errorf("%s: no readable runs here", n)
			}
			runs, unreadable = append(runs, newest...), append(unreadable, broken(l)...)
		case err == nil:
			r, err := Open([]string{n})
			if err != nil {
				return nil, nil, "", err
			}
			runs = append(runs, r...)
		default:
			matches, _ := filepath.Glob(filepath.Join(dir, "*", n, "run.json"))
			if exists(filepath.Join(dir, n, "run.json")) { // HOST/RUN-ID
				matches = []string{filepath.Join(dir, n, "run.json")}
			}
			switch len(matches) {
			case 0:
				return nil, nil, "", fmt.Errorf("%s: no such run folder, and no run of that id in %s", n, dir)
			case 1:
			default:
				return nil, nil, "", fmt.Errorf("%s: runs of %d hosts have that id in %s: name one as HOST/%s", n, len(matches), dir, n)
			}
			r, err := Open(matches)
			if err != nil {
				return nil, nil, "", err
			}
			runs = append(runs, r...)
		}
	}
	return runs, unreadable, strings.Join(names, ", "), nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// RowHeader names the columns of Cells: `pidb runs`'s table.
var RowHeader = []string{"RUN", "HOST", "KIND", "WORKLOAD", "ENGINE", "PRESET", "CLIENTS", "DURATION", "TPS", "QPS", "P95_MS", "MAX_C", "THROTTLED", "VERDICT"}

// Cells is the row as `pidb runs` prints it; a folder that cannot be read
// says so in the verdict's column.
func (r Row) Cells() []string {
	if r.Error != "" {
		return []string{r.RunID, r.Host, "?", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "UNREADABLE"}
	}
	return []string{r.RunID, r.Host, string(r.Kind), strings.TrimSpace(r.Workload + " " + r.Script), strings.TrimSpace(r.Engine + " " + r.EngineVersion), or(r.Preset, "-"),
		strconv.Itoa(r.Clients), time.Duration(r.DurationS * float64(time.Second)).Round(time.Second).String(),
		fmt.Sprintf("%.1f", r.TPS), fmt.Sprintf("%.1f", r.QPS), fmt.Sprintf("%.2f", r.P95Ms), optNum("%.1f", r.MaxTempC), yesNo(r.Throttled), or(string(r.Verdict), "-")}
}
