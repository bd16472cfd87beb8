package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"pidb/dbms"
	"pidb/facts"
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
	if o.Steps == job.AllSteps {
		if err := clustersWhole(hosts); err != nil {
			return nil, err
		}
		if err := clustersAlike(ctx, o, hosts); err != nil {
			return nil, err
		}
	}
	env := job.Env{Inventory: inv, Secrets: &sync.Mutex{}}
	res, err := each(ctx, o.Fleet, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (provision.Report, error) {
		return env.Provision(ctx, h, c, o.ProvisionOptions, r)
	})
	if err != nil {
		return nil, err
	}
	if o.Steps == job.AllSteps {
		if res, err = seedReplicas(ctx, o, env, res); err != nil {
			return nil, err
		}
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

// clustersWhole refuses, before any host is touched, a selection with a
// cluster's replica but not its primary (the replica is seeded from it).
func clustersWhole(hosts []inventory.Host) error {
	selected := map[string]bool{}
	for _, h := range hosts {
		selected[h.Name] = true
	}
	for _, h := range hosts {
		c := h.Cluster
		if c == nil {
			continue
		}
		if !selected[c.Primary] {
			return usage.Wrap(fmt.Errorf("--limit selects %s, a replica in cluster %q, without its primary %s, which it is seeded from: select %s too", h.Name, c.Name, c.Primary, c.Primary))
		}
	}
	return nil
}

// clustersAlike refuses, before any host is changed, a cluster whose
// selected hosts would run different major versions of its server, or
// PostgreSQL of different word sizes (provision.ClusterAlike): it reads
// their facts first, quietly. A host that cannot be reached is left to
// its own run, which says so.
func clustersAlike(ctx context.Context, o ProvisionOptions, hosts []inventory.Host) error {
	var members []inventory.Host
	for _, h := range hosts {
		if h.Cluster != nil {
			members = append(members, h)
		}
	}
	if len(members) < 2 {
		return nil
	}
	quiet := o.Fleet
	quiet.View = nil
	res, err := each(ctx, quiet, members, func(ctx context.Context, h inventory.Host, c job.Conn, _ progress.Reporter) (facts.Facts, error) {
		return facts.Collect(ctx, c.User, h)
	})
	if err != nil {
		return err
	}
	got := map[string]facts.Facts{}
	for _, r := range res {
		if r.Err == nil {
			got[r.Host.Name] = r.Value
		}
	}
	done := map[string]bool{}
	for _, h := range members {
		c := h.Cluster
		if done[c.Name] {
			continue
		}
		done[c.Name] = true
		var ms []provision.Member
		for _, name := range c.Members() {
			if f, ok := got[name]; ok {
				ms = append(ms, provision.Member{Name: name, Facts: f})
			}
		}
		if err := provision.ClusterAlike(c.Name, c.Engine, ms); err != nil {
			return err
		}
	}
	return nil
}

// seedReplicas is provisioning's second pass: each selected replica whose
// primary came through the first is seeded from it where it does not
// follow it yet; a replica whose primary failed fails, saying so. What the
// pass did joins each replica's first.
func seedReplicas(ctx context.Context, o ProvisionOptions, env job.Env, res []Result[provision.Report]) ([]Result[provision.Report], error) {
	byName := map[string]int{}
	for i, r := range res {
		byName[r.Host.Name] = i
	}
	var replicas []inventory.Host
	for i, r := range res {
		c := r.Host.Cluster
		if c == nil || c.Primary == r.Host.Name || r.Err != nil {
			continue
		}
		if p := res[byName[c.Primary]]; p.Err != nil {
			res[i].Err = fmt.Errorf("%s: replica: not seeded: its primary %s failed", r.Host.Name, c.Primary)
			continue
		}
		replicas = append(replicas, r.Host)
	}
	if len(replicas) == 0 {
		return res, nil
	}
	// a MariaDB replica's copy is its primary's dump, piped through the
	// controller: the primary lends its connection
	var lenders []inventory.Host
	for _, h := range replicas {
		p := res[byName[h.Cluster.Primary]].Host
		if h.Cluster.Engine != dbms.PostgresFamily && !slices.ContainsFunc(lenders, func(l inventory.Host) bool { return l.Name == p.Name }) {
			lenders = append(lenders, p)
		}
	}
	second, err := withLent(ctx, o.Fleet, lenders, replicas, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter, lent Lent) (provision.Report, error) {
		po := o.ProvisionOptions
		po.Steps, po.PrimaryCert = job.Seed, res[byName[h.Cluster.Primary]].Value.Cert
		if h.Cluster.Engine != dbms.PostgresFamily {
			if po.PrimaryRoot = lent[h.Cluster.Primary]; po.PrimaryRoot == nil {
				return provision.Report{}, fmt.Errorf("%s: replica: not seeded: its primary %s could not be reached again", h.Name, h.Cluster.Primary)
			}
		}
		return env.Provision(ctx, h, c, po, r)
	})
	if err != nil {
		return nil, err
	}
	for _, s := range second {
		first := &res[byName[s.Host.Name]]
		first.Err = s.Err
		first.Duration += s.Duration
		first.Value.Changed = append(first.Value.Changed, s.Value.Changed...)
		first.Value.Notes = append(first.Value.Notes, s.Value.Notes...)
		first.Value.Plan = append(first.Value.Plan, s.Value.Plan...)
	}
	return res, nil
}
