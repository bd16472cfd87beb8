package action

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"pidb/dbms"
	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
	"pidb/provision"
	"pidb/tune"
	"pidb/usage"
)

// DefaultAptLockWait is how long provisioning waits by default for
// another apt or dpkg to let go of its lock.
const DefaultAptLockWait = provision.DefaultAptLockWait

// ProvisionOptions are `pidb provision`'s, and `pidb tune apply`'s and
// `tune rollback`'s (Steps job.Configure, job.Rollback).
type ProvisionOptions struct {
	Fleet
	job.ProvisionOptions
}

// ProvisionResult is one host as `pidb provision --json` prints it.
type ProvisionResult struct {
	Host          string              `json:"host"`
	OK            bool                `json:"ok"`
	Changed       []string            `json:"changed"`
	Error         string              `json:"error,omitempty"`
	DurationS     float64             `json:"duration_s"`
	Engine        dbms.Flavor         `json:"engine"`
	EngineVersion string              `json:"engine_version"`
	Preset        string              `json:"preset"`
	Notes         []string            `json:"notes,omitempty"`
	Plan          []provision.Planned `json:"plan,omitempty"`
}

// Provision runs provisioning's steps on each host (or the os and configure
// steps alone, or the rollback): install, tune, turn the desktop off; with
// DryRun, what would change.
func Provision(ctx context.Context, o ProvisionOptions) ([]ProvisionResult, error) {
	if o.Preset != "" && !slices.Contains(tune.PresetNames(), o.Preset) {
		return nil, usage.Wrap(fmt.Errorf("preset %q: want one of %s", o.Preset, strings.Join(tune.PresetNames(), ", ")))
	}
	inv, hosts, err := o.load()
	if err != nil {
		return nil, err
	}
	env := job.Env{Inventory: inv}
	res, err := each(ctx, o.Fleet, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (provision.Report, error) {
		return env.Provision(ctx, h, c, o.ProvisionOptions, r)
	})
	if err != nil {
		return nil, err
	}
	out := make([]ProvisionResult, 0, len(res))
	for _, r := range res {
		pr := ProvisionResult{Host: r.Host.Name, OK: r.Err == nil, Changed: r.Value.Changed, DurationS: r.Duration.Seconds(),
			Engine: r.Value.Engine, EngineVersion: r.Value.Version, Preset: o.PresetFor(r.Host), Notes: r.Value.Notes, Plan: r.Value.Plan}
		if pr.Changed == nil {
			pr.Changed = []string{}
		}
		if r.Err != nil {
			pr.Error = r.Err.Error()
		}
		out = append(out, pr)
	}
	return out, Err(res)
}
