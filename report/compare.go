package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"pidb/results"
)

// Comparison is runs side by side, the first one the base every other is
// compared with.
type Comparison struct {
	Runs     []Row
	Labels   []string // each run's name in the table and the charts
	Cautions []string // what makes the runs not alike (workload, scale, clients), said first
	Metrics  []Metric
	Settings []SettingDiff // every live setting that differs between the runs
	Figures  []*Figure
}

// Metric is one figure of every run, and its change from the base.
type Metric struct {
	Name    string
	Unit    string
	Higher  bool       // a higher value is better (TPS); else a lower one (latency)
	Values  []*float64 // per run; nil where the run does not tell
	Changes []Change   // per run after the base
}

// Change is a run's metric against the base's.
type Change struct {
	Pct         float64 // (run - base) / base, in percent
	Delta       float64 // run - base, in the metric's unit
	NoisePct    float64 // the bigger of the two runs' own noise, in percent; a change within it is none
	Significant bool
	Known       bool // both runs tell the metric
	Better      bool // significant, and for the better
	Text        string
}

// SettingDiff is a setting whose live value differs between the runs.
type SettingDiff struct {
	Name   string
	Values []string // per run; "" where the run did not record it
}

// Noise thresholds for what has no interval series: a temperature is
// read to a tenth of a degree, but a run's highest moves by degrees with
// the room and with the load the run happened to get (two runs of one
// state on the lab, one after the other: 59.1 and 55.9 C); the
// firmware's clock steps are far apart.
const (
	tempNoiseC     = 5.0
	clockNoisePct  = 5.0
	minNoisePct    = 1.0 // no two runs are closer than this
	noiseWindowSec = 10.0
)

// Compare puts runs side by side, the first as the base.
func Compare(runs []results.Listed) (*Comparison, error) {
	if len(runs) < 2 {
		return nil, fmt.Errorf("compare: want two runs or more, have %d", len(runs))
	}
	c := &Comparison{}
	rs := make([]results.Run, len(runs))
	for i, l := range runs {
		if l.Err != nil {
			return nil, fmt.Errorf("compare: %s: %w", l.Dir, l.Err)
		}
		rs[i] = l.Run
		c.Runs = append(c.Runs, Overview(l))
	}
	c.Labels = labels(rs)
	c.Cautions = cautions(rs)

	base := rs[0]
	// a metric with an interval series has that series' noise; the others
	// a fixed one (noisePct, of the base's value)
	metrics := []struct {
		name, unit string
		higher     bool
		value      func(Row) *float64
		series     func(results.Interval) float64
		noisePct   func(base float64) float64
	}{
		{"TPS", "", true, func(r Row) *float64 { return ptr(r.TPS) }, func(iv results.Interval) float64 { return iv.TPS }, nil},
		{"QPS", "", true, func(r Row) *float64 { return ptr(r.QPS) }, func(iv results.Interval) float64 { return iv.QPS }, nil},
		{"p95 latency", "ms", false, func(r Row) *float64 { return ptr(r.P95Ms) }, func(iv results.Interval) float64 { return iv.P95Ms }, nil},
		{"p99 latency", "ms", false, func(r Row) *float64 { return ptr(r.P99Ms) }, func(iv results.Interval) float64 { return math.Max(iv.P99Ms, iv.P95Ms) }, nil},
		{"highest temperature", "C", false, func(r Row) *float64 { return r.MaxTempC }, nil, func(base float64) float64 { return 100 * tempNoiseC / math.Abs(base) }},
		{"lowest Arm clock", "MHz", true, func(r Row) *float64 { return r.MinArmMHz }, nil, func(float64) float64 { return clockNoisePct }},
	}
	for _, m := range metrics {
		mt := Metric{Name: m.name, Unit: m.unit, Higher: m.higher}
		for _, row := range c.Runs {
			mt.Values = append(mt.Values, m.value(row))
		}
		for i := 1; i < len(rs); i++ {
			ch := Change{}
			if a, b := mt.Values[0], mt.Values[i]; a != nil && b != nil && *a != 0 {
				ch.Known = true
				ch.Pct, ch.Delta = pct(*a, *b), *b-*a
				noise := 0.0
				if m.series != nil {
					noise = math.Max(seriesNoise(base, m.series), seriesNoise(rs[i], m.series))
				} else {
					noise = m.noisePct(*a)
				}
				ch.NoisePct = math.Max(noise, minNoisePct)
				ch.Significant = math.Abs(ch.Pct) > ch.NoisePct
				ch.Better = ch.Significant && (ch.Pct > 0) == m.higher
			}
			base0 := 0.0
			if mt.Values[0] != nil {
				base0 = *mt.Values[0]
			}
			ch.Text = changeText(ch, m.unit, base0)
			mt.Changes = append(mt.Changes, ch)
		}
		c.Metrics = append(c.Metrics, mt)
	}
	c.Settings = settingDiffs(rs)
	lr := make([]labelled, len(rs))
	for i, r := range rs {
		lr[i] = labelled{run: r, label: c.Labels[i], colour: i}
	}
	c.Figures = []*Figure{throughputFigure("compare-throughput", "Throughput per interval, overlaid", lr), windowFigure("compare-window", lr)}
	if f := temperatureFigure("compare-temperature", "Temperature, overlaid", lr); f != nil {
		c.Figures = append(c.Figures, f)
	}
	return c, nil
}

// changeText says a change from base as people read it: "+76%", or that
// it is none; a temperature's noise in degrees, as its change is.
func changeText(ch Change, unit string, base float64) string {
	if !ch.Known {
		return "not known"
	}
	sign := func(x float64) string {
		if x >= 0 {
			return "+"
		}
		return ""
	}
	text := fmt.Sprintf("%s%.1f%%", sign(ch.Pct), ch.Pct)
	if unit == "C" {
		text = fmt.Sprintf("%s%.1f C (%s)", sign(ch.Delta), ch.Delta, text)
	}
	if !ch.Significant {
		if unit == "C" {
			return fmt.Sprintf("no change: %s is within the runs' own noise (±%.1f C)", text, ch.NoisePct*math.Abs(base)/100)
		}
		return fmt.Sprintf("no change: %s is within the runs' own noise (±%.1f%%)", text, ch.NoisePct)
	}
	return text
}

// seriesNoise is how much a run's figure moves by itself, in percent of its
// mean. It is read from the means of its 10-second windows of the
// measured time (windowMeans, as the window chart has them; intervals
// without a transaction left out), from how far each window's mean is
// from the next one's: the median of those steps, scaled to a standard
// deviation (divided by 0.6745·√2, as for steps between draws of one
// normal spread). A trend or one step, such as a Pi throttling a minute
// in, moves a few windows far but leaves the median of the steps where
// the jitter has it: what the comparison is about is not counted as
// noise. Under two windows it tells nothing: 0.
func seriesNoise(r results.Run, v func(results.Interval) float64) float64 {
	windows := windowMeans(r, noiseWindowSec, func(iv results.Interval) (float64, bool) { return v(iv), iv.Transactions > 0 })
	if len(windows) < 2 {
		return 0
	}
	var mean float64
	steps := make([]float64, 0, len(windows)-1)
	for i, m := range windows {
		mean += m.mean
		if i > 0 {
			steps = append(steps, math.Abs(m.mean-windows[i-1].mean))
		}
	}
	mean /= float64(len(windows))
	if mean == 0 {
		return 0
	}
	sort.Float64s(steps)
	median := steps[len(steps)/2]
	if len(steps)%2 == 0 {
		median = (steps[len(steps)/2-1] + median) / 2
	}
	return 100 * median / (0.6744897501960817 * math.Sqrt2) / math.Abs(mean)
}

// labels name each run: its host where the hosts differ, else the host
// and the run's start.
func labels(rs []results.Run) []string {
	hosts := map[string]int{}
	for _, r := range rs {
		hosts[r.Host]++
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Host
		if hosts[r.Host] > 1 {
			out[i] = r.Host + " " + r.ID + differs(r, rs)
		}
	}
	return out
}

// differs names what sets a host's run apart from its other runs in rs:
// its preset, storage or board speed, " (preset fast, storage usb)"; ""
// when nothing of these does.
func differs(r results.Run, rs []results.Run) string {
	var parts []string
	for _, k := range []struct {
		what string
		of   func(results.Run) string
	}{
		{"preset", func(x results.Run) string { return x.Preset }},
		{"storage", func(x results.Run) string {
			if x.Facts == nil {
				return ""
			}
			return x.Facts.Storage
		}},
		{"speed", func(x results.Run) string {
			if x.Facts == nil {
				return ""
			}
			return x.Facts.Simulated
		}},
	} {
		for _, o := range rs {
			if o.Host == r.Host && k.of(o) != k.of(r) && k.of(r) != "" {
				parts = append(parts, k.what+" "+k.of(r))
				break
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// cautions are what makes the runs not alike.
func cautions(rs []results.Run) []string {
	var out []string
	base := rs[0]
	for i, r := range rs[1:] {
		if r.Host == base.Host && r.ID == base.ID {
			out = append(out, fmt.Sprintf("Run %d is the base itself (%s/%s): every change is none by construction, not a measurement.", i+2, r.Host, r.ID))
			continue
		}
		var diffs []string
		a, b := base.Workload, r.Workload
		if a.Name != b.Name {
			diffs = append(diffs, fmt.Sprintf("workload %s against %s", a.Name, b.Name))
		}
		if a.Engine != b.Engine {
			diffs = append(diffs, fmt.Sprintf("engine %s against %s", a.Engine, b.Engine))
		}
		if da, db := dataOf(a), dataOf(b); da != db {
			diffs = append(diffs, fmt.Sprintf("the data (%s) against (%s)", da, db))
		}
		if a.Clients != b.Clients {
			diffs = append(diffs, fmt.Sprintf("%d clients against %d", a.Clients, b.Clients))
		}
		if a.Protocol != b.Protocol && a.Protocol != "" && b.Protocol != "" {
			diffs = append(diffs, fmt.Sprintf("the %s protocol against the %s", a.Protocol, b.Protocol))
		}
		if a.Mix != b.Mix {
			diffs = append(diffs, fmt.Sprintf("the mix %s against %s", orStandard(a.Mix), orStandard(b.Mix)))
		}
		if !sameFile(a.Script, b.Script) || !sameFile(a.Setup, b.Setup) {
			diffs = append(diffs, fmt.Sprintf("the script %s against %s", fileOf(a), fileOf(b)))
		}
		if a.Queries != b.Queries {
			diffs = append(diffs, fmt.Sprintf("%s against %s", work(a), work(b)))
		}
		if a.DurationS != b.DurationS {
			diffs = append(diffs, fmt.Sprintf("a %s run against %s", seconds(a.DurationS), seconds(b.DurationS)))
		}
		if base.Host != r.Host {
			diffs = append(diffs, fmt.Sprintf("host %s against %s", base.Host, r.Host))
		}
		if a.TLS != b.TLS {
			diffs = append(diffs, fmt.Sprintf("logins %s against %s", withTLS(a.TLS), withTLS(b.TLS)))
		}
		if base.Alongside != nil && r.Alongside != nil && *base.Alongside != *r.Alongside {
			diffs = append(diffs, fmt.Sprintf("%s against %s", alongside(*base.Alongside), alongside(*r.Alongside)))
		}
		if len(diffs) > 0 {
			out = append(out, fmt.Sprintf("Run %d is not like the base: %s; the changes below are not the settings' or the cooling's alone.", i+2, strings.Join(diffs, ", ")))
		}
	}
	return out
}

// dataOf describes a run's data as its workload sizes it: pgbench's
// scale, sysbench's tables of rows, TPC-C's warehouses, the quiz's users.
func dataOf(w results.Workload) string {
	plural := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch w.Name {
	case "tpcb":
		return fmt.Sprintf("tpcb at scale %d", w.Scale)
	case "tpcc":
		return fmt.Sprintf("tpcc: %s, %s of its tables", plural(w.Scale, "warehouse"), plural(max(w.Tables, 1), "copy"))
	case "oltp-read-only":
		return fmt.Sprintf("oltp-read-only: %s of %d rows", plural(w.Tables, "table"), w.TableSize)
	case "quiz":
		return fmt.Sprintf("quiz: %d users", w.Scale)
	case "sql":
		return fmt.Sprintf("sql at :scale %d", w.Scale)
	}
	return fmt.Sprintf("%s: scale %d, %d tables of %d rows", w.Name, w.Scale, w.Tables, w.TableSize)
}

// sameFile says two runs ran the same text (or neither ran one).
func sameFile(a, b *results.File) bool {
	return a == nil && b == nil || a != nil && b != nil && a.SHA256 == b.SHA256
}

// fileOf names a run's scripts with the start of their digests, which
// tell two texts of one name apart.
func fileOf(w results.Workload) string {
	var parts []string
	for _, f := range []*results.File{w.Script, w.Setup} {
		if f != nil {
			parts = append(parts, fmt.Sprintf("%s (%.8s)", f.Name, f.SHA256))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " with ")
}

// alongside says how many other hosts a run's controller ran beside it.
func alongside(n int) string {
	switch n {
	case 0:
		return "run alone"
	case 1:
		return "run beside 1 other host"
	}
	return fmt.Sprintf("run beside up to %d other hosts", n)
}

// work is a run's amount of work: a number of queries per client, or
// timed.
func work(w results.Workload) string {
	if w.Queries > 0 {
		return fmt.Sprintf("%d queries per client", w.Queries)
	}
	return "a timed run"
}

func withTLS(on bool) string {
	if on {
		return "with TLS"
	}
	return "without TLS"
}

// settingDiffs are the live settings whose values differ between runs.
func settingDiffs(rs []results.Run) []SettingDiff {
	values := map[string][]string{}
	for i, r := range rs {
		for _, s := range r.Settings {
			if values[s.Name] == nil {
				values[s.Name] = make([]string, len(rs))
			}
			values[s.Name][i] = s.Value
		}
	}
	var out []SettingDiff
	for name, v := range values {
		// a setting only some runs have (another engine's, another
		// version's) is no change of a setting: compared where all have it
		if slices.Contains(v, "") && !everyEmpty(rs, name) {
			continue
		}
		for _, x := range v[1:] {
			if x != v[0] {
				out = append(out, SettingDiff{Name: name, Values: v})
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// everyEmpty says every run has the setting name, each with "" as its
// value (then it is no setting one of them lacks).
func everyEmpty(rs []results.Run, name string) bool {
	for _, r := range rs {
		if !slices.ContainsFunc(r.Settings, func(s results.Setting) bool { return s.Name == name }) {
			return false
		}
	}
	return true
}

// Table is the comparison as rows for the terminal: each metric's value
// per run and each run's change from the base, then the settings that
// differ.
func (c *Comparison) Table() (header []string, rows [][]string) {
	header = []string{"METRIC", c.Labels[0] + " (base)"}
	for _, l := range c.Labels[1:] {
		header = append(header, l, "CHANGE")
	}
	for _, m := range c.Metrics {
		row := []string{m.Name, value(m.Values[0], m.Unit)}
		for i, ch := range m.Changes {
			row = append(row, value(m.Values[i+1], m.Unit), ch.Text)
		}
		rows = append(rows, row)
	}
	for _, s := range c.Settings {
		row := []string{"setting " + s.Name, or(s.Values[0], "-")}
		for _, v := range s.Values[1:] {
			row = append(row, or(v, "-"), "changed")
		}
		rows = append(rows, row)
	}
	return header, rows
}

func value(v *float64, unit string) string {
	if v == nil {
		return "-"
	}
	s := fmt.Sprintf("%.1f", *v)
	if unit == "ms" {
		s = fmt.Sprintf("%.2f", *v)
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// orStandard is a tpcc mix as a caution names it.
func orStandard(mix string) string {
	if mix == "" {
		return "none"
	}
	return mix
}
