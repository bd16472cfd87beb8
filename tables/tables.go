// Package tables lays out each command's results for people: a table's
// header and rows, and the lines printed under it. The command line writes
// them (package output aligns and colours them); --json prints the results
// themselves. Every function here is pure, so each table is tested without
// a host.
package tables

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"pidb/action"
	"pidb/facts"
	"pidb/job"
	"pidb/output"
	"pidb/report"
	"pidb/results"
	"pidb/thermal"
)

// Table is a header and its rows (output.Grid, which the command line's
// plumbing prints without knowing this package).
type Table = output.Grid

// Failed is a failed host's cell; its error is on stderr.
const Failed = "FAILED (see stderr)"

// Bench is `pidb bench`'s table: a row per host.
func Bench(js []job.BenchResult) Table {
	t := Table{Header: []string{"HOST", "WORKLOAD", "CLIENTS", "TRANSACTIONS", "SECONDS", "TPS", "QPS", "AVG_MS", "P95_MS", "P99_MS", "ERRORS", "RUN"}}
	for _, b := range js {
		if !b.Measured() { // failed before its run: its error is on stderr
			t.Rows = append(t.Rows, []string{b.Host, b.Workload, "", "", "", "", "", "", "", "", Failed, ""})
			continue
		}
		var errs []string
		if b.DownS > 0 {
			errs = append(errs, fmt.Sprintf("DOWN %.1fs (see stderr)", b.DownS))
		}
		if b.ErrorShare > results.ErrorShareLimit {
			errs = append(errs, fmt.Sprintf("%.1f%% OF TRIES", 100*b.ErrorShare))
		}
		kinds := make([]string, 0, len(b.Errors))
		for k := range b.Errors {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			errs = append(errs, fmt.Sprintf("%s:%d", k, b.Errors[k]))
		}
		t.Rows = append(t.Rows, []string{b.Host, b.Workload, strconv.Itoa(b.Clients), strconv.FormatInt(b.Transactions, 10), fmt.Sprintf("%.2f", b.DurationS),
			fmt.Sprintf("%.1f", b.TPS), fmt.Sprintf("%.1f", b.QPS), fmt.Sprintf("%.3f", b.LatencyMs.Avg), fmt.Sprintf("%.3f", b.P95Ms),
			fmt.Sprintf("%.3f", b.LatencyMs.P99), strings.Join(errs, ","), b.RunDir})
	}
	return t
}

// BenchCluster is `pidb bench --cluster`'s table: a row per host, then,
// where more than one was measured, the cluster's: every host's
// transactions, TPS and QPS added up (of the hosts measured).
func BenchCluster(js []job.BenchResult) Table {
	t := Bench(js)
	var tx int64
	var tps, qps float64
	clients, n := 0, 0
	for _, b := range js {
		if b.Measured() {
			tx, tps, qps, clients, n = tx+b.Transactions, tps+b.TPS, qps+b.QPS, clients+b.Clients, n+1
		}
	}
	if n < 2 {
		return t // a workload that writes: the primary alone
	}
	t.Rows = append(t.Rows, []string{fmt.Sprintf("all %d", n), "", strconv.Itoa(clients), strconv.FormatInt(tx, 10), "", fmt.Sprintf("%.1f", tps), fmt.Sprintf("%.1f", qps), "", "", "", "", ""})
	return t
}

// Ops is, for the hosts whose workload reports its transaction types
// (tpcc), a row per type, then the host's tpmC.
func Ops(js []job.BenchResult) Table {
	t := Table{Header: []string{"HOST", "TRANSACTION", "COUNT", "PER_S", "P50_MS", "P95_MS", "P99_MS", "ERRORS"}}
	for _, b := range js {
		for _, o := range b.Ops {
			t.Rows = append(t.Rows, []string{b.Host, o.Name, strconv.FormatInt(o.Count, 10), fmt.Sprintf("%.2f", o.Rate), fmt.Sprintf("%.3f", o.P50Ms),
				fmt.Sprintf("%.3f", o.P95Ms), fmt.Sprintf("%.3f", o.P99Ms), strconv.FormatInt(o.Errors, 10)})
		}
		if len(b.Ops) > 0 {
			t.Rows = append(t.Rows, []string{b.Host, "tpmC", fmt.Sprintf("%.1f", b.TpmC), "", "", "", "", fmt.Sprintf("%d retried, %d rolled back", b.Retries, b.RolledBack)})
		}
	}
	return t
}

var checkHeader = []string{"HOST", "TABLE", "WAREHOUSE", "CONDITION", "RESULT", "DETAIL"}

// BenchChecks are the consistency checks that ran after the hosts' runs
// (bench --check).
func BenchChecks(js []job.BenchResult) Table {
	t := Table{Header: checkHeader}
	for _, b := range js {
		t.Rows = append(t.Rows, checkRows(b.Host, b.Checks)...)
	}
	return t
}

// Check is `pidb bench tpcc check`'s and `pidb bench tpcb check`'s table:
// every condition's result.
func Check(js []job.CheckResult) Table {
	t := Table{Header: checkHeader}
	for _, j := range js {
		t.Rows = append(t.Rows, checkRows(j.Host, j.Checks)...)
		if len(j.Checks) == 0 && j.Error != "" {
			t.Rows = append(t.Rows, []string{j.Host, "", "", "", Failed, ""})
		}
	}
	return t
}

func checkRows(host string, cs []results.Check) [][]string {
	var out [][]string
	for _, k := range cs {
		table, wh := strconv.Itoa(k.Table), strconv.FormatInt(k.Warehouse, 10)
		if k.Table == 0 { // tpcb's: a condition on the whole data
			table, wh = "-", "-"
		}
		out = append(out, []string{host, table, wh, fmt.Sprintf("%d: %s", k.Condition, k.Name), passFail(k.Pass), k.Detail})
	}
	return out
}

func passFail(pass bool) string {
	if pass {
		return string(results.Pass)
	}
	return string(results.Fail)
}

// Cleanup is `pidb bench cleanup`'s table.
func Cleanup(js []job.CleanupResult) Table {
	t := Table{Header: []string{"HOST", "DATABASE", "RESULT"}}
	for _, j := range js {
		what := "nothing to drop"
		switch {
		case j.Error != "":
			what = Failed
		case j.Dropped:
			what = "dropped"
		}
		t.Rows = append(t.Rows, []string{j.Host, j.Database, what})
	}
	return t
}

// Validate is `pidb validate`'s table: a verdict per host.
func Validate(js []job.ValidateResult) Table {
	t := Table{Header: []string{"HOST", "VERDICT", "TPS", "MAX_C", "THROTTLED", "TPS_Q1", "TPS_Q4", "REASONS", "RUN"}}
	for _, j := range js {
		if !j.Measured() { // never measured is not zero
			t.Rows = append(t.Rows, []string{j.Host, string(j.Verdict), "", numOr(j.MaxTempC, "%.1f"), "", "", "", strings.Join(j.Codes(), ","), ""})
			continue
		}
		t.Rows = append(t.Rows, []string{j.Host, string(j.Verdict), fmt.Sprintf("%.1f", j.TPS), numOr(j.MaxTempC, "%.1f"), fmt.Sprint(j.Throttled),
			fmt.Sprintf("%.1f", j.TPSFirstQuarter), fmt.Sprintf("%.1f", j.TPSLastQuarter), strings.Join(j.Codes(), ","), j.RunDir})
	}
	return t
}

// Reasons are the lines under validate's table: each reason of each host,
// "pi4: FAIL temperature: ...".
func Reasons(js []job.ValidateResult) []string {
	var out []string
	for _, j := range js {
		for _, x := range j.Reasons {
			level := results.Warn
			if x.Fail {
				level = results.Fail
			}
			out = append(out, fmt.Sprintf("%s: %s %s: %s", j.Host, level, x.Code, x.Message))
		}
	}
	return out
}

// Thermal is `pidb thermal`'s table: a summary per host.
func Thermal(js []thermal.Summary) Table {
	t := Table{Header: []string{"HOST", "SAMPLES", "MIN_C", "MAX_C", "MIN_ARM_MHZ", "THROTTLED", "FLAGS"}}
	for _, j := range js {
		flags := strings.Join(j.Flags, ",")
		if j.Error != "" {
			flags = Failed
		}
		throttled := "-"
		if j.Throttled != nil {
			throttled = *j.Throttled
		}
		t.Rows = append(t.Rows, []string{j.Host, strconv.Itoa(j.Samples), numOr(j.MinTempC, "%.1f"), numOr(j.MaxTempC, "%.1f"), numOr(j.MinArmMHz, "%.0f"),
			throttled, flags})
	}
	return t
}

func numOr(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// Facts is `pidb facts`' table: what each host is.
func Facts(rs []action.HostFacts) Table {
	t := Table{Header: []string{"HOST", "MODEL", "RAM", "MEMTOTAL", "CPUS", "ARCH", "PAGE", "OS", "STORAGE", "GOVERNOR", "SWAP", "BOOT", "DESKTOP", "THERMAL", "ENGINE"}}
	for _, r := range rs {
		if r.Err != nil {
			t.Rows = append(t.Rows, []string{r.Host.Name, Failed, "", "", "", "", "", "", "", "", "", "", "", "", ""})
			continue
		}
		f := r.Value
		engine := "none"
		if f.Engine.Flavor != "" {
			engine = string(f.Engine.Flavor) + " " + f.Engine.Version + map[bool]string{true: " (running)", false: " (stopped)"}[f.Engine.Running]
		}
		model := f.Model
		if f.Simulated != "" {
			model += " (simulated, " + f.Simulated + " speed)"
		}
		page := "?"
		if f.PageSize != 0 {
			page = strconv.Itoa(f.PageSize>>10) + "K"
		}
		t.Rows = append(t.Rows, []string{
			f.Host, model, mib(f.RAMBytes), mib(f.MemBytes), strconv.Itoa(f.CPUs), f.Arch, page,
			f.OS.ID + " " + f.OS.VersionID, dataStorage(f), governorOf(f), swapOf(f), f.BootTarget, yesNo(f.Desktop), yesNo(f.Thermal), engine,
		})
	}
	return t
}

// dataStorage is what a host's root filesystem is on, and its data where
// that is elsewhere: "sd, data on usb (/dev/sda)".
func dataStorage(f facts.Facts) string {
	if f.DataDevice == "" || f.DataStorage == f.Storage || f.DataStorage == "unknown" {
		return f.Storage
	}
	return f.Storage + ", data on " + f.DataStorage + " (" + f.DataDevice + ")"
}

// governorOf is a host's CPU frequency governor; "?" where it has none
// to read.
func governorOf(f facts.Facts) string {
	if f.Governor == "" {
		return "?"
	}
	return f.Governor
}

// swapOf is a host's swap and its swappiness, and the commit limit where
// the kernel commits strictly: "100 MiB (60)", "1024 MiB (10) strict 80%".
func swapOf(f facts.Facts) string {
	s := mib(f.SwapBytes)
	if f.SwapBytes == 0 {
		s = "none"
	}
	if f.Swappiness >= 0 {
		s += " (" + strconv.Itoa(f.Swappiness) + ")"
	}
	if f.Overcommit.Known && f.Overcommit.Mode == 2 {
		s += " strict " + strconv.Itoa(f.Overcommit.Ratio) + "%"
	}
	return s
}

// FactsJSON is `pidb facts --json`: one object per host, the facts, or the
// host and its error.
func FactsJSON(rs []action.HostFacts) []any {
	out := make([]any, 0, len(rs))
	for _, r := range rs {
		if r.Err != nil {
			out = append(out, map[string]any{"host": r.Host.Name, "address": r.Host.Address, "error": r.Err.Error()})
			continue
		}
		out = append(out, r.Value)
	}
	return out
}

func mib(b uint64) string { return fmt.Sprintf("%d MiB", b>>20) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Provision is `pidb provision`'s table (and tune apply's and rollback's):
// what changed on each host, or with dry, what would.
func Provision(out []action.ProvisionResult, dry bool) Table {
	t := Table{Header: []string{"HOST", "ENGINE", "PRESET", "CHANGED", "RESULT", "TIME"}}
	for _, r := range out {
		engine := strings.TrimSpace(string(r.Engine) + " " + r.EngineVersion)
		changed := strings.Join(r.Changed, ",")
		result := "ok"
		if dry {
			var steps []string
			for _, p := range r.Plan {
				steps = append(steps, p.Step)
			}
			changed = "would: " + strings.Join(steps, ",")
			if len(steps) == 0 {
				changed = "nothing"
			}
			result = "dry run"
		} else if changed == "" {
			changed = "nothing"
		}
		if !r.OK {
			result = Failed
		}
		t.Rows = append(t.Rows, []string{r.Host, engine, r.Preset, changed, result, fmt.Sprintf("%.1fs", r.DurationS)})
	}
	return t
}

// Plans is a dry run's plan, before its table: each step that would
// change, with its commands and its diff (the host's files as they are,
// sanitized by the caller).
func Plans(out []action.ProvisionResult) string {
	var b strings.Builder
	for _, r := range out {
		if !r.OK {
			continue
		}
		if len(r.Plan) == 0 {
			fmt.Fprintf(&b, "== %s: nothing to change\n\n", r.Host)
			continue
		}
		for _, p := range r.Plan {
			fmt.Fprintf(&b, "== %s: %s would change", r.Host, p.Step)
			if p.Note != "" {
				fmt.Fprintf(&b, " (%s)", p.Note)
			}
			b.WriteString("\n")
			for _, cmd := range p.Commands {
				fmt.Fprintf(&b, "   $ %s\n", cmd)
			}
			if p.Diff != "" {
				b.WriteString(p.Diff + "\n")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Runs is `pidb runs`' table: a row per saved run.
func Runs(rows []report.Row) Table {
	t := Table{Header: report.RowHeader}
	for _, r := range rows {
		t.Rows = append(t.Rows, r.Cells())
	}
	return t
}

// Comparison is a comparison's table: each metric of each run against the
// base.
func Comparison(c *report.Comparison) Table {
	h, rows := c.Table()
	return Table{Header: h, Rows: rows}
}

// Presets is `pidb tune presets`' table.
func Presets(ps []action.Preset) Table {
	t := Table{Header: []string{"PRESET", "DESCRIPTION"}}
	for _, p := range ps {
		t.Rows = append(t.Rows, []string{string(p.Name), p.Description})
	}
	return t
}
