package action

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"pidb/report"
	"pidb/results"
	"pidb/usage"
)

// RunsOptions are `pidb runs`'s.
type RunsOptions struct {
	Dir    string // a results folder, a host's folder in one, or a run's folder
	Filter report.Filter
}

// Runs lists the saved runs in Dir, a row each, newest first, as the
// filter selects them, and how many runs Dir holds before the filter; a
// run that cannot be read is a row with its error. Dir may be a results
// folder (--out), one host's folder in it, or one run's; a folder that is
// not there is a usage error.
func Runs(o RunsOptions) ([]report.Row, int, error) {
	listed, err := listRuns(o.Dir)
	if err != nil {
		return nil, 0, err
	}
	all := make([]report.Row, 0, len(listed))
	for _, l := range listed {
		all = append(all, report.Overview(l))
	}
	return report.Select(all, o.Filter), len(all), nil
}

// listRuns reads the runs in dir: a run's folder (its run.json), a host's
// (runs in it), or a results folder (hosts in it).
func listRuns(dir string) ([]results.Listed, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, usage.Errorf("%s: no such folder: pidb bench and pidb validate save their runs under --out (default pidb-results)", dir)
	case err != nil:
		return nil, err
	case !st.IsDir():
		return nil, usage.Errorf("%s: not a folder: give a results folder, a host's folder in one, or a run's", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
		l := results.Listed{Dir: dir}
		l.Run, l.Err = results.Load(filepath.Join(dir, "run.json"))
		return []results.Listed{l}, nil
	}
	if runs, _ := filepath.Glob(filepath.Join(dir, "*", "run.json")); len(runs) > 0 {
		return results.ListHost(dir) // a host's folder: each folder in it a run, a broken one too
	}
	return results.List(dir)
}
