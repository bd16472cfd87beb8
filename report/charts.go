package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"pidb/results"
	"pidb/thermal"
)

// labelled is a run as the charts name and colour it.
type labelled struct {
	run    results.Run
	label  string
	colour int
}

const timeAxis = "seconds from the start of the measured run"

// throughputFigure is TPS per interval, one line per run, on one time axis
// (the warm-up before 0).
func throughputFigure(id, title string, runs []labelled) *Figure {
	pn := panel{title: title, x: timeAxis, y: "transactions per second", yFromZero: true}
	f := &Figure{ID: id, Title: title, Caption: "Each point is one interval of the driver (" + intervalOf(runs) + "); the points before 0 are the warm-up, which the totals leave out."}
	for _, r := range runs {
		xy := make(plotter.XYs, 0, len(r.run.Series))
		for _, iv := range whole(r.run.Series) {
			xy = append(xy, plotter.XY{X: iv.T, Y: iv.TPS})
		}
		pn.lines = append(pn.lines, line{name: r.label, xy: xy, color: colour(r.colour)})
		f.Series = append(f.Series, r.label)
	}
	f.panels = []panel{pn}
	return f
}

func intervalOf(runs []labelled) string {
	for _, r := range runs {
		if s := r.run.Series; len(s) > 2 {
			return seconds(s[1].T-s[0].T) + " each"
		}
	}
	return "one a second"
}

// whole is the series without its last point when that covers less than
// half an interval: the moment between the last full interval and the end
// of the run, whose rate is mostly chance.
func whole(s []results.Interval) []results.Interval {
	if n := len(s); n > 2 && s[n-1].T-s[n-2].T < (s[1].T-s[0].T)/2 {
		return s[:n-1]
	}
	return s
}

// window is how long the coarse throughput chart's points are: a minute,
// as in the write-up, unless the runs are too short to have several.
func window(runs []labelled) float64 {
	longest := 0.0
	for _, r := range runs {
		longest = math.Max(longest, r.run.Workload.DurationS)
	}
	if longest >= 300 {
		return 60
	}
	return 10
}

// windowFigure is the mean TPS per minute (or per 10 s for short runs) of
// the measured time, one line per run.
func windowFigure(id string, runs []labelled) *Figure {
	w := window(runs)
	what := "minute"
	if w != 60 {
		what = "10 seconds (the runs are shorter than 5 minutes)"
	}
	title := "Throughput per " + map[bool]string{true: "minute", false: "10 seconds"}[w == 60]
	pn := panel{title: title, x: timeAxis, y: "transactions per second", yFromZero: true}
	f := &Figure{ID: id, Title: title, Caption: "The mean TPS of each " + what + " of the measured run, drawn at the window's end."}
	for _, r := range runs {
		var xy plotter.XYs
		for _, m := range windowMeans(r.run, w, func(iv results.Interval) (float64, bool) { return iv.TPS, true }) {
			xy = append(xy, plotter.XY{X: m.end, Y: m.mean})
		}
		pn.lines = append(pn.lines, line{name: r.label, xy: xy, color: colour(r.colour)})
		f.Series = append(f.Series, r.label)
	}
	f.panels = []panel{pn}
	return f
}

// windowMean is the mean of one window of a run's measured time.
type windowMean struct{ end, mean float64 }

// windowMeans are the means of v over the measured time's windows of w
// seconds, in order: window k holds the points with T in ((k-1)w, kw];
// the last point, which ends a moment after the duration, joins the last
// window. A point for which v says false is left out; a window with no
// point has no mean.
func windowMeans(r results.Run, w float64, v func(results.Interval) (float64, bool)) []windowMean {
	sums, counts := map[int]float64{}, map[int]int{}
	last, end := 0, max(1, int(math.Ceil(r.Workload.DurationS/w-1e-9)))
	for _, iv := range r.Series {
		x, ok := v(iv)
		if iv.T <= 0 || !ok {
			continue
		}
		k := min(int(math.Ceil(iv.T/w-1e-9)), end)
		sums[k] += x
		counts[k]++
		last = max(last, k)
	}
	var out []windowMean
	for k := 1; k <= last; k++ {
		if counts[k] > 0 {
			out = append(out, windowMean{end: float64(k) * w, mean: sums[k] / float64(counts[k])})
		}
	}
	return out
}

// temperatureFigure is every run's temperature on one time axis, with the
// limit and the first run's idle time around the load.
func temperatureFigure(id, title string, runs []labelled) *Figure {
	pn := panel{title: title, x: timeAxis, y: "CPU temperature (C)", limit: ptr(float64(limitC)), limitLabel: fmt.Sprintf("%d C: the firmware throttles", limitC)}
	f := &Figure{ID: id, Title: title, Caption: "One reading per thermal interval, from the idle time before the load (grey) to the cool-down after it (grey)."}
	for _, r := range runs {
		var xy plotter.XYs
		for _, rd := range r.run.Thermal {
			if rd.TempC != nil {
				xy = append(xy, plotter.XY{X: rd.T, Y: *rd.TempC})
			}
		}
		if len(xy) == 0 {
			continue
		}
		pn.lines = append(pn.lines, line{name: r.label, xy: xy, color: colour(r.colour)})
		f.Series = append(f.Series, r.label)
	}
	if len(f.Series) == 0 {
		return nil
	}
	if len(runs) > 0 {
		pn.bands = idleBands(runs[0].run)
	}
	f.panels = []panel{pn}
	return f
}

// idleBands are the idle time before the load and the cool-down after it.
func idleBands(r results.Run) []band {
	if len(r.Thermal) == 0 {
		return nil
	}
	first, last := r.Thermal[0].T, r.Thermal[len(r.Thermal)-1].T
	start := -r.Workload.WarmupS
	end := measuredEnd(r)
	var out []band
	if first < start {
		out = append(out, band{from: first, to: start, color: idleColour, label: "idle before and after the load"})
	}
	if last > end {
		out = append(out, band{from: end, to: last, color: idleColour, label: "idle before and after the load"})
	}
	return out
}

// throttledBands are the spans in which get_throttled said the cores were
// throttled or capped now: from such a reading to the next.
func throttledBands(r results.Run) []band {
	var out []band
	for i, rd := range r.Thermal {
		if rd.Throttled == nil || thermal.Flags(*rd.Throttled)&(thermal.Throttled|thermal.FreqCapped) == 0 {
			continue
		}
		to := rd.T
		if i+1 < len(r.Thermal) {
			to = r.Thermal[i+1].T
		}
		if n := len(out); n > 0 && out[n-1].to == rd.T {
			out[n-1].to = to
			continue
		}
		out = append(out, band{from: rd.T, to: to, color: throttledColour, label: "throttled"})
	}
	return out
}

// thermalFigure is one run's temperature over its clock, on one time axis:
// the idle time and the throttled spans shaded, the limit drawn.
func thermalFigure(r labelled) *Figure {
	var temp, clock plotter.XYs
	for _, rd := range r.run.Thermal {
		if rd.TempC != nil {
			temp = append(temp, plotter.XY{X: rd.T, Y: *rd.TempC})
		}
		if rd.ArmHz != nil {
			clock = append(clock, plotter.XY{X: rd.T, Y: float64(*rd.ArmHz) / 1e6})
		}
	}
	if len(temp) == 0 && len(clock) == 0 {
		return nil
	}
	bands := append(idleBands(r.run), throttledBands(r.run)...)
	f := &Figure{ID: "thermal-" + r.run.Host, Title: r.label + ": temperature and Arm clock", height: 6 * vg.Centimeter,
		Caption: "Grey: the idle time before and after the load. Red: get_throttled said the cores were throttled or capped."}
	if len(temp) > 0 {
		f.panels = append(f.panels, panel{title: f.Title, y: "CPU temperature (C)", lines: []line{{name: "temperature", xy: temp, color: colour(r.colour)}},
			bands: bands, limit: ptr(float64(limitC)), limitLabel: fmt.Sprintf("%d C", limitC)})
		f.Series = append(f.Series, "temperature")
	}
	if len(clock) > 0 {
		f.panels = append(f.panels, panel{x: timeAxis, y: "Arm clock (MHz)", lines: []line{{name: "Arm clock", xy: clock, color: colour(r.colour), steps: true}},
			bands: bands, yFromZero: true})
		f.Series = append(f.Series, "Arm clock")
	} else {
		f.panels[0].x = timeAxis
		f.Caption += " The host's clock is not known (no vcgencmd)."
	}
	return f
}

// opsFigure is one run's throughput by kind of transaction per interval
// (tpcc's five types), the most frequent first; nil for a run of one kind.
func opsFigure(r labelled) *Figure {
	total := map[string]float64{}
	for _, iv := range r.run.Series {
		for op, tps := range iv.Ops {
			total[op] += tps
		}
	}
	if len(total) < 2 {
		return nil
	}
	ops := make([]string, 0, len(total))
	for op := range total {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool {
		if total[ops[i]] != total[ops[j]] {
			return total[ops[i]] > total[ops[j]]
		}
		return ops[i] < ops[j]
	})
	f := &Figure{ID: "ops-" + r.run.Host, Title: r.label + ": throughput by transaction type", Caption: "Each interval's transactions per second of each type, as they ended in it."}
	pn := panel{title: f.Title, x: timeAxis, y: "transactions per second", yFromZero: true}
	for i, op := range ops {
		var xy plotter.XYs
		for _, iv := range whole(r.run.Series) {
			if iv.Ops != nil {
				xy = append(xy, plotter.XY{X: iv.T, Y: iv.Ops[op]})
			}
		}
		pn.lines = append(pn.lines, line{name: op, xy: xy, color: colour(i)})
		f.Series = append(f.Series, op)
	}
	f.panels = []panel{pn}
	return f
}

// lagFigure is, for a cluster's primary measured under writes (bench
// --cluster), how far behind it each replica was through the run: seconds
// above, kilobytes below, a line per replica; nil for any other run.
func lagFigure(r labelled) *Figure {
	if len(r.run.Replication) == 0 {
		return nil
	}
	var hosts []string
	secs, kb := map[string]plotter.XYs{}, map[string]plotter.XYs{}
	behind, caption := "kB behind", "How far behind this primary each replica was at each reading, by the primary's pg_stat_replication: its replay_lag, and the WAL it had not replayed. A replica missing at a reading was not connected then."
	for _, l := range r.run.Replication {
		if l.Transactions != nil {
			behind, caption = "transactions behind", "How far behind this primary each replica was at each reading, by the replica's SHOW SLAVE STATUS and GTID position: its Seconds_Behind_Master, and the primary's transactions it had not applied. A replica missing at a reading was not replicating then."
		}
	}
	for _, l := range r.run.Replication {
		if _, ok := secs[l.Host]; !ok {
			hosts = append(hosts, l.Host)
			secs[l.Host], kb[l.Host] = nil, nil
		}
		if l.Seconds != nil {
			secs[l.Host] = append(secs[l.Host], plotter.XY{X: l.AtS, Y: *l.Seconds})
		}
		if l.Bytes != nil {
			kb[l.Host] = append(kb[l.Host], plotter.XY{X: l.AtS, Y: float64(*l.Bytes) / 1024})
		}
		if l.Transactions != nil {
			kb[l.Host] = append(kb[l.Host], plotter.XY{X: l.AtS, Y: float64(*l.Transactions)})
		}
	}
	f := &Figure{ID: "lag-" + r.run.Host, Title: r.label + ": the replicas' lag", height: 6 * vg.Centimeter,
		Caption: caption}
	top := panel{title: f.Title, y: "seconds behind", yFromZero: true}
	bottom := panel{x: timeAxis, y: behind, yFromZero: true}
	for i, h := range hosts {
		top.lines = append(top.lines, line{name: h, xy: secs[h], color: colour(i)})
		bottom.lines = append(bottom.lines, line{name: h + " ", xy: kb[h], color: colour(i)})
		f.Series = append(f.Series, h)
	}
	f.panels = []panel{top, bottom}
	return f
}

// latencyFigure is one run's p50, p95 and p99 per interval.
func latencyFigure(r labelled) *Figure {
	var p50, p95, p99 plotter.XYs
	for _, iv := range whole(r.run.Series) {
		if iv.Transactions == 0 {
			continue
		}
		p95 = append(p95, plotter.XY{X: iv.T, Y: iv.P95Ms})
		if iv.P50Ms > 0 {
			p50 = append(p50, plotter.XY{X: iv.T, Y: iv.P50Ms})
			p99 = append(p99, plotter.XY{X: iv.T, Y: iv.P99Ms})
		}
	}
	if len(p95) == 0 {
		return nil
	}
	f := &Figure{ID: "latency-" + r.run.Host, Title: r.label + ": latency over time", Caption: "Each interval's percentiles of the transactions that ended in it."}
	pn := panel{title: f.Title, x: timeAxis, y: "milliseconds", yFromZero: true}
	for i, l := range []struct {
		name string
		xy   plotter.XYs
	}{{"p50", p50}, {"p95", p95}, {"p99", p99}} {
		if len(l.xy) > 0 {
			pn.lines = append(pn.lines, line{name: l.name, xy: l.xy, color: colour(i), dashed: i == 1})
			f.Series = append(f.Series, l.name)
		}
	}
	if len(p50) == 0 {
		f.Caption += " This run was saved by a pidb that kept only the p95 per interval."
	}
	f.panels = []panel{pn}
	return f
}

// histogramFigure is the latency distribution of the whole measured run,
// from its saved histogram, on a log scale.
func histogramFigure(r labelled) *Figure {
	h := r.run.Summary.Histogram
	if len(h) == 0 {
		return nil
	}
	f := &Figure{ID: "histogram-" + r.run.Host, Title: r.label + ": latency distribution", Series: []string{"transactions"},
		Caption: fmt.Sprintf("How many transactions took each latency, in buckets ten to a decade; p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, max %.2f ms.",
			r.run.Summary.Latency.P50, r.run.Summary.Latency.P95, r.run.Summary.Latency.P99, r.run.Summary.Latency.Max)}
	// each bucket as a step from the bound before it to its own, the
	// empty ones (left out of the saved run) as zero
	bucket := func(ms float64) int { return int(math.Round(10 * math.Log10(ms))) }
	counts := map[int]int64{}
	for _, b := range h {
		counts[bucket(b.UpToMs)] += b.Count
	}
	lo, hi := bucket(h[0].UpToMs), bucket(h[len(h)-1].UpToMs)
	xy := plotter.XYs{{X: math.Pow(10, float64(lo-1)/10), Y: 0}}
	for k := lo; k <= hi; k++ {
		xy = append(xy, plotter.XY{X: math.Pow(10, float64(k)/10), Y: float64(counts[k])})
	}
	f.panels = []panel{{title: f.Title, x: "latency (ms, log scale)", y: "transactions", logX: true, yFromZero: true,
		lines: []line{{name: "transactions", xy: xy, color: colour(r.colour), steps: true}}}}
	return f
}

func ptr[T any](v T) *T { return &v }

// clusterFigures are, for each cluster measured as one (bench --cluster:
// runs of one workload on its hosts, started within a minute), its hosts'
// queries per second per interval, stacked: each host's layer over the
// one before, the top line the cluster's. None where no two runs were.
func clusterFigures(runs []labelled) []*Figure {
	type key struct{ cluster, workload string }
	var order []key
	groups := map[key][]labelled{}
	for _, r := range runs {
		if r.run.Cluster == "" {
			continue
		}
		k := key{r.run.Cluster, r.run.Workload.Name}
		if g := groups[k]; len(g) > 0 && r.run.Started.Sub(g[0].run.Started).Abs() > time.Minute {
			continue // another time's run of the cluster
		}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []*Figure
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		// the intervals every host has, each at its place on the
		// interval's grid (the runs' clocks start a moment apart)
		step := 1.0
		if sr := g[0].run.Series; len(sr) > 1 && sr[1].T > sr[0].T {
			step = sr[1].T - sr[0].T
		}
		qps := make([]map[float64]float64, len(g))
		common := map[float64]int{}
		for i, r := range g {
			qps[i] = map[float64]float64{}
			for _, iv := range r.run.Series {
				t := math.Round(iv.T/step) * step
				qps[i][t] = iv.QPS
				common[t]++
			}
		}
		var ts []float64
		for t, n := range common {
			if n == len(g) {
				ts = append(ts, t)
			}
		}
		slices.Sort(ts)
		if len(ts) == 0 {
			continue
		}
		title := "Cluster " + k.cluster + ": " + k.workload + " queries per second, stacked by host"
		f := &Figure{ID: "cluster-" + k.cluster, Title: title,
			Caption: "Each host's queries per second in each interval (" + intervalOf(g) + "), stacked: each layer is a host's, the top line the cluster's in all. They ran at once, each with its own clients from this machine; the points before 0 are the warm-up."}
		pn := panel{title: title, x: timeAxis, y: "queries per second", yFromZero: true}
		below := make(plotter.XYs, len(ts))
		for j, t := range ts {
			below[j] = plotter.XY{X: t}
		}
		for i, r := range g {
			xy := make(plotter.XYs, len(ts))
			for j, t := range ts {
				xy[j] = plotter.XY{X: t, Y: below[j].Y + qps[i][t]}
			}
			pn.lines = append(pn.lines, line{name: r.run.Host, xy: xy, below: below, color: colour(r.colour)})
			f.Series = append(f.Series, r.run.Host)
			below = xy
		}
		f.panels = []panel{pn}
		out = append(out, f)
	}
	return out
}
