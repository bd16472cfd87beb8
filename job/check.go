package job

import (
	"context"
	"fmt"

	"pidb/engine"
	"pidb/facts"
	"pidb/inventory"
	"pidb/progress"
	"pidb/provision"
	"pidb/results"
)

// Check is one consistency condition on one warehouse, as a run keeps it.
type Check = results.Check

// CheckResult is one host as `pidb bench tpcc check --json` and `pidb
// bench tpcb check --json` print it.
type CheckResult struct {
	Host     string          `json:"host"`
	Workload string          `json:"workload"`
	Pass     bool            `json:"pass"`
	Checks   []results.Check `json:"checks"`
	Error    string          `json:"error,omitempty"`
}

// Check tests the plan's workload's data on one host (tpcc: the
// standard's consistency conditions; tpcb: balances against history); a condition that fails is an error.
func (e Env) Check(ctx context.Context, h inventory.Host, c Conn, p Plan, r progress.Reporter) (CheckResult, error) {
	res := CheckResult{Host: h.Name, Workload: p.Spec.Name}
	if p.Spec.Check == nil {
		return res, fmt.Errorf("%s: %s has no consistency check", h.Name, p.Spec.Name)
	}
	r.Step("gathering facts")
	f, err := facts.Collect(ctx, c.User, h)
	if err != nil {
		return res, err
	}
	db, closeDB, err := e.connect(ctx, h, c, f, p)
	if err != nil {
		return res, err
	}
	defer closeDB()
	r.Step("checking " + p.Spec.Name + "'s data")
	if res.Checks, err = p.Spec.Check(ctx, db, p.Params); err != nil {
		return res, fmt.Errorf("%s: check: %w%s", h.Name, err, e.hint(h, err))
	}
	passed := 0
	for _, c := range res.Checks {
		if c.Pass {
			passed++
		}
	}
	res.Pass = passed == len(res.Checks)
	r.Step(fmt.Sprintf("%d of %d checks passed", passed, len(res.Checks)))
	if bad := failedChecks(res.Checks); bad != "" {
		return res, fmt.Errorf("%s: the data is not consistent: %s", h.Name, bad)
	}
	return res, nil
}

// CleanupResult is one host as `pidb bench cleanup --json` prints it.
type CleanupResult struct {
	Host     string `json:"host"`
	Database string `json:"database"`
	Dropped  bool   `json:"dropped"`
	Error    string `json:"error,omitempty"`
}

// Cleanup drops pidb's benchmark database on one host where pidb made it,
// and leaves any other database of that name alone, with an error.
func (e Env) Cleanup(ctx context.Context, h inventory.Host, c Conn, r progress.Reporter) (CleanupResult, error) {
	res := CleanupResult{Host: h.Name, Database: engine.BenchDatabase}
	r.Step("gathering facts")
	f, err := facts.Collect(ctx, c.User, h)
	if err != nil || f.Engine.Flavor == "" {
		return res, err // no server, so no database
	}
	r.Step("dropping database " + engine.BenchDatabase)
	res.Dropped, err = provision.DropBenchDatabase(ctx, provision.NewTarget(h, e.Inventory.Path, c.Root, f, h.Preset, r.Step))
	return res, err
}
