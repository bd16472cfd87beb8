package action

import (
	"path/filepath"
	"time"

	"pidb/report"
	"pidb/results"
	"pidb/usage"
)

// ReportOptions are `pidb report`'s and `pidb compare`'s.
type ReportOptions struct {
	Runs    []string // runs' folders, run.json files or ids; none: the newest run of each host under Dir
	Dir     string   // the results folder that ids and no runs mean
	Compare bool     // compare Runs, the first as the base
	Output  string   // the page's file
	PNGDir  string   // also each chart as a PNG here; "": none
	Version string   // pidb's, on the page
}

// Reported is what a report wrote: the page, the charts' PNGs, and the
// comparison (nil without Compare).
type Reported struct {
	Page       string // the page's absolute path
	PNGs       []string
	Comparison *report.Comparison
	// Unreadable are the runs in the folders read that could not be
	// read (a run cut off before it was saved whole): left off the page
	Unreadable []results.Listed
}

// Report writes one self-contained HTML page of saved runs, with the
// comparison when asked.
func Report(o ReportOptions) (Reported, error) {
	if o.Compare && len(o.Runs) < 2 {
		return Reported{}, usage.Errorf("a comparison wants two runs or more (a run's folder, its run.json or its id), have %d", len(o.Runs))
	}
	// where it writes first: nothing is built for a page or charts that
	// cannot be written
	if err := outputFile("-o", o.Output); err != nil {
		return Reported{}, err
	}
	if o.PNGDir != "" {
		if err := outputDir("--png", o.PNGDir); err != nil {
			return Reported{}, err
		}
	}
	runs, unreadable, source, err := report.Gather(o.Runs, o.Dir)
	if err != nil {
		return Reported{}, usage.Wrap(err)
	}
	out := Reported{Unreadable: unreadable}
	in := report.Input{Runs: runs, Source: source, Version: o.Version, Now: time.Now()}
	if o.Compare {
		in.Compare = runs
	}
	rep, err := report.Build(in)
	if err != nil {
		return Reported{}, err
	}
	if err := rep.WriteFile(o.Output); err != nil {
		return Reported{}, err
	}
	if o.PNGDir != "" {
		if out.PNGs, err = rep.WritePNGs(o.PNGDir); err != nil {
			return out, err
		}
	}
	out.Comparison = rep.Comparison
	out.Page, _ = filepath.Abs(o.Output)
	return out, nil
}
