package job

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"pidb/cluster"
	"pidb/config"
	"pidb/engine"
	"pidb/facts"
	"pidb/inventory"
	"pidb/progress"
	"pidb/provision"
	"pidb/remote"
	"pidb/results"
	"pidb/validate"
)

// ValidateResult is one host as `pidb validate --json` prints it.
type ValidateResult struct {
	Host            string           `json:"host"`
	Verdict         results.Grade    `json:"verdict"`
	Reasons         []results.Reason `json:"reasons"`
	TPS             float64          `json:"tps"`
	QPS             float64          `json:"qps"`
	P95Ms           float64          `json:"p95_ms"`
	MaxTempC        *float64         `json:"max_temp_c"`
	Throttled       bool             `json:"throttled"`
	TPSFirstQuarter float64          `json:"tps_first_quarter"`
	TPSLastQuarter  float64          `json:"tps_last_quarter"`
	RunDir          string           `json:"run_dir"`
	Error           string           `json:"error,omitempty"`
}

// Measured reports whether the host's workload ran and was saved: a host
// that could not be reached, or failed before its run, has no numbers.
func (r ValidateResult) Measured() bool { return r.RunDir != "" }

// MarshalJSON writes null, not zero, for what was never measured.
func (r ValidateResult) MarshalJSON() ([]byte, error) {
	type plain ValidateResult
	if r.Measured() {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		TPS             *float64 `json:"tps"`
		QPS             *float64 `json:"qps"`
		P95Ms           *float64 `json:"p95_ms"`
		Throttled       *bool    `json:"throttled"`
		TPSFirstQuarter *float64 `json:"tps_first_quarter"`
		TPSLastQuarter  *float64 `json:"tps_last_quarter"`
	}{plain: plain(r)})
}

// Codes are the result's reasons' codes, in order.
func (r ValidateResult) Codes() []string { return results.Codes(r.Reasons) }

// Failed reports whether the result fails the command: an error or FAIL,
// or WARN when strict.
func (r ValidateResult) Failed(strict bool) bool {
	return r.Verdict != results.Pass && (r.Verdict != results.Warn || strict)
}

// Validate checks one host (its service, boot target and live settings
// against the tuner's), runs its baseline workload with thermal readings
// around it, judges it (package validate) and saves the run. A host whose
// server is down is judged at once: nothing runs and nothing is saved.
func (e Env) Validate(ctx context.Context, h inventory.Host, c Conn, p Plan, v config.Validate, r progress.Reporter) (ValidateResult, error) {
	res := ValidateResult{Host: h.Name, Reasons: []results.Reason{}}
	r.Step("gathering facts")
	f, err := facts.Collect(ctx, c.User, h)
	if err != nil {
		return res, err
	}
	in := validate.Input{ServiceActive: f.Engine.Running, DesktopOn: f.BootTarget == "graphical.target", MaxTempC: p.Thermal.MaxTempC, MinTPS: v.MinTPS}
	if !f.Engine.Running {
		verdict := validate.Judge(in)
		res.Verdict, res.Reasons = verdict.Verdict, verdict.Reasons
		return res, nil
	}
	r.Step("reading the live settings")
	bad, err := provision.LiveMismatches(ctx, provision.NewTarget(h, e.Inventory.Path, c.Root, f, h.Preset, r.Step))
	if err != nil {
		return res, err
	}
	in.Mismatches = engine.Sentences(bad)
	if cl := h.Cluster; cl != nil && cl.Primary != h.Name {
		// a replica takes no writes, and reads what its primary has:
		// it is judged by its replication, and runs no workload
		if in.Replica, err = e.replica(ctx, h, cl, v, c.Root); err != nil {
			return res, err
		}
		in.MinTPS = 0
		verdict := validate.Judge(in)
		r.Step(string(verdict.Verdict) + " (a replica: its replication, no workload)")
		return ValidateResult{Host: h.Name, Verdict: verdict.Verdict, Reasons: verdict.Reasons}, nil
	}
	m, err := e.Measure(ctx, h, c, f, p, results.KindValidate, r)
	if err != nil {
		return res, err
	}
	in.TPS, in.Series, in.Readings, in.RunStart, in.RunEnd = m.Run.Summary.TPS, m.Run.Series, m.Readings, m.Start, m.End
	if m.Run.Client != nil {
		in.Client = *m.Run.Client
	}
	in.Outages = m.Run.Summary.Outages
	in.Transactions, in.Errors = m.Run.Summary.Transactions, m.Run.Summary.Errors
	verdict := validate.Judge(in)
	m.Run.Verdict = &verdict
	dir, err := save(e.Out, m.Run)
	if err != nil {
		return res, err
	}
	sum := m.Run.Summary
	line := fmt.Sprintf("%s  %.1f TPS", verdict.Verdict, sum.TPS)
	if verdict.MaxTempC != nil {
		line += fmt.Sprintf(", up to %.1f C", *verdict.MaxTempC)
	}
	if codes := results.Codes(verdict.Reasons); len(codes) > 0 {
		line += ": " + strings.Join(codes, ", ")
	}
	r.Step(line)
	return ValidateResult{Host: h.Name, Verdict: verdict.Verdict, Reasons: verdict.Reasons, TPS: sum.TPS, QPS: sum.QPS, P95Ms: sum.Latency.P95,
		MaxTempC: verdict.MaxTempC, Throttled: verdict.Throttled, TPSFirstQuarter: verdict.TPSFirstQuarter, TPSLastQuarter: verdict.TPSLastQuarter, RunDir: dir}, nil
}

// replica is what a cluster's replica says of its replication, for
// validate's replication rule: streaming from its primary's address, and
// how far behind by its own clock.
func (e Env) replica(ctx context.Context, h inventory.Host, c *inventory.Cluster, v config.Validate, root remote.Runner) (*validate.Replica, error) {
	primary, err := e.Inventory.Named(c.Primary)
	if err != nil {
		return nil, err
	}
	st, err := cluster.Read(ctx, root, ClusterEngine(*c))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.Name, err)
	}
	limit := v.MaxLag
	if limit <= 0 {
		limit = config.DefaultMaxLag
	}
	state, why := cluster.Standby(cluster.Member{Name: h.Name, Address: h.Address, Report: st}, cluster.Member{Name: primary.Name, Address: primary.Address})
	return &validate.Replica{Primary: primary.Name, MaxLag: limit, LagS: st.ReplayDelay, Streaming: state == cluster.Streaming, Why: why}, nil
}
