package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pidb/facts"
	"pidb/internal/atomicfile"
	"pidb/results"
)

// Input is what a report is made of.
type Input struct {
	Runs    []results.Listed // the fleet: one run per host, as a rule the newest
	Compare []results.Listed // runs to compare, the first the base; none: no comparison
	Source  string           // where the runs came from, for the page's header
	Version string           // pidb's
	Now     time.Time
}

// Report is a page's content: the fleet table, the fleet's charts, one
// section per run and the comparison.
type Report struct {
	Count string // what the page holds: "3 hosts", "2 runs of 1 host"
	// Unlike says, beside the fleet's charts, that its runs are not alike
	// (workloads or engines): their lines side by side are not a comparison
	Unlike     string
	Source     string
	Version    string
	Generated  time.Time
	Rows       []Row
	Fleet      []*Figure
	Hosts      []Host
	Comparison *Comparison
	Simulated  bool // a row of the fleet is a board of pidb's lab
}

// Host is one run's section of the page.
type Host struct {
	Row      Row
	Label    string
	Reading  []string
	Settings []results.Setting
	Facts    *facts.Facts
	Figures  []*Figure
	Notes    []string // what the run does not have
}

// Build makes the report and draws its charts.
func Build(in Input) (*Report, error) {
	if len(in.Runs) == 0 && len(in.Compare) == 0 {
		return nil, errors.New("no runs to report")
	}
	rep := &Report{Source: in.Source, Version: in.Version, Generated: in.Now}
	rs := make([]results.Run, 0, len(in.Runs))
	for _, l := range in.Runs {
		if l.Err != nil {
			return nil, fmt.Errorf("%s: %w", l.Dir, l.Err)
		}
		rs = append(rs, l.Run)
		row := Overview(l)
		row.Anchor = "run-" + row.Host + "-" + row.RunID
		rep.Rows = append(rep.Rows, row)
		rep.Simulated = rep.Simulated || rep.Rows[len(rep.Rows)-1].Simulated != ""
	}
	rep.Count, rep.Unlike = count(rs), unlike(rs)
	names := labels(rs)
	lr := make([]labelled, len(rs))
	for i, r := range rs {
		lr[i] = labelled{run: r, label: names[i], colour: i}
	}
	if len(lr) > 0 {
		rep.Fleet = []*Figure{throughputFigure("throughput", "Throughput per interval", lr), windowFigure("throughput-window", lr)}
		if f := temperatureFigure("temperature", "Temperature", lr); f != nil {
			rep.Fleet = append(rep.Fleet, f)
		}
		rep.Fleet = append(rep.Fleet, clusterFigures(lr)...)
	}
	for i, r := range lr {
		h := Host{Row: rep.Rows[i], Label: r.label, Reading: Reading(r.run), Settings: r.run.Settings, Facts: r.run.Facts}
		for _, f := range []*Figure{thermalFigure(r), opsFigure(r), latencyFigure(r), histogramFigure(r), lagFigure(r)} {
			if f != nil {
				h.Figures = append(h.Figures, f)
			}
		}
		if len(r.run.Thermal) == 0 {
			h.Notes = append(h.Notes, "No thermal readings were saved with this run.")
		}
		if len(r.run.Summary.Histogram) == 0 {
			h.Notes = append(h.Notes, fmt.Sprintf("No latency histogram: this run was saved by an older pidb (schema %d).", r.run.Schema))
		}
		rep.Hosts = append(rep.Hosts, h)
	}
	if len(in.Compare) > 0 {
		c, err := Compare(in.Compare)
		if err != nil {
			return nil, err
		}
		rep.Comparison = c
	}
	ids := map[string]int{}
	for _, f := range rep.Figures() {
		if ids[f.ID]++; ids[f.ID] > 1 { // a host twice in the fleet
			f.ID = fmt.Sprintf("%s-%d", f.ID, ids[f.ID])
		}
		if err := f.render(); err != nil {
			return nil, fmt.Errorf("chart %s: %w", f.ID, err)
		}
	}
	return rep, nil
}

// count says what the page holds: its hosts, and its runs where a host
// has more than one.
func count(rs []results.Run) string {
	hosts := map[string]bool{}
	for _, r := range rs {
		hosts[r.Host] = true
	}
	plural := func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return fmt.Sprintf("%d %ss", n, what)
	}
	if len(hosts) == len(rs) {
		return plural(len(rs), "host")
	}
	return plural(len(rs), "run") + " of " + plural(len(hosts), "host")
}

// unlike says which runs of the fleet ran what, where they differ in
// workload or engine; "" when they are alike.
func unlike(rs []results.Run) string {
	kinds := map[string][]string{}
	var order []string
	for _, r := range rs {
		k := r.Workload.What() + " on " + string(r.Workload.Engine)
		if kinds[k] == nil {
			order = append(order, k)
		}
		kinds[k] = append(kinds[k], r.Host)
	}
	if len(order) < 2 {
		return ""
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = k + " (" + strings.Join(kinds[k], ", ") + ")"
	}
	return "These runs are not alike: " + strings.Join(parts, "; ") + ". Their lines side by side show each run, not how the boards compare: compare runs of one workload on one engine."
}

// Figures are every chart of the report, in the page's order.
func (r *Report) Figures() []*Figure {
	out := append([]*Figure{}, r.Fleet...)
	for _, h := range r.Hosts {
		out = append(out, h.Figures...)
	}
	if r.Comparison != nil {
		out = append(out, r.Comparison.Figures...)
	}
	return out
}

// WritePNGs writes each chart as DIR/ID.png and returns the files' paths.
func (r *Report) WritePNGs(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, f := range r.Figures() {
		data, err := f.PNG()
		if err != nil {
			return out, fmt.Errorf("chart %s: %w", f.ID, err)
		}
		p := filepath.Join(dir, f.ID+".png")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// WriteFile writes the page to path, whole or not at all: into a file
// beside it that is renamed into place. It is readable by everyone (a
// report holds no secret).
func (r *Report) WriteFile(path string) error {
	return atomicfile.Write(path, 0o644, func(f *os.File) error { return r.WriteHTML(f) })
}
