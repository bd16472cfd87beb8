package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
		rep.Rows = append(rep.Rows, Overview(l))
		rep.Simulated = rep.Simulated || rep.Rows[len(rep.Rows)-1].Simulated != ""
	}
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
	}
	for i, r := range lr {
		h := Host{Row: rep.Rows[i], Label: r.label, Reading: Reading(r.run), Settings: r.run.Settings, Facts: r.run.Facts}
		for _, f := range []*Figure{thermalFigure(r), opsFigure(r), latencyFigure(r), histogramFigure(r)} {
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
