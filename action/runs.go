package action

import (
	"pidb/report"
	"pidb/results"
)

// RunsOptions are `pidb runs`'s.
type RunsOptions struct {
	Dir    string // the results folder
	Filter report.Filter
}

// Runs lists the saved runs under Dir, a row each, oldest first, as the
// filter selects them; a run that cannot be read is a row with its error.
func Runs(o RunsOptions) ([]report.Row, error) {
	listed, err := results.List(o.Dir)
	if err != nil {
		return nil, err
	}
	all := make([]report.Row, 0, len(listed))
	for _, l := range listed {
		all = append(all, report.Overview(l))
	}
	return report.Select(all, o.Filter), nil
}
