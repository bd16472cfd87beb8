package job

import (
	"context"
	"fmt"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/inventory"
	"pidb/progress"
	"pidb/provision"
	"pidb/remote"
)

// Steps is which of provisioning's steps Provision runs.
type Steps int

// What Provision can run.
const (
	AllSteps  Steps = iota // pidb provision
	Configure              // pidb tune apply: the os and configure steps
	Rollback               // pidb tune rollback: the previous drop-in back
	Seed                   // pidb provision's second pass: a cluster's replica seeded from its primary
	Role                   // after a switchover: a member's drop-in for its new part, taken live
)

// ProvisionOptions are a provisioning run's choices.
type ProvisionOptions struct {
	Steps  Steps
	Preset string // overrides the host's preset when set
	Now    bool   // stop the display manager now, not only at the next boot
	DryRun bool   // check every step and change nothing
	// AptLockWait is how long the install waits for another apt's lock
	// (0: provision.DefaultAptLockWait)
	AptLockWait time.Duration
	// PrimaryCert is, for Seed, the certificate the replica's primary
	// presents (PEM), read after the primary's first pass
	PrimaryCert string
	// PrimaryRoot is, for Seed on MariaDB, root on the replica's primary,
	// whose dump the replica's copy is
	PrimaryRoot remote.Runner
}

// ClusterOf is the [[cluster]] the host is in, with its hosts, as
// provisioning takes it; nil for a host on its own.
func ClusterOf(inv *inventory.Inventory, h inventory.Host) *provision.Cluster {
	if h.Cluster == nil {
		return nil
	}
	hosts := inv.HostsOf(*h.Cluster)
	return &provision.Cluster{Name: h.Cluster.Name, Primary: hosts[0], Replicas: hosts[1:]}
}

// ClusterEngine is the server a cluster's replication is read from, by
// the engine its inventory names: PostgreSQL, or the MySQL family
// (cluster.Read asks each host which flavour it runs, MariaDB or
// Oracle MySQL).
func ClusterEngine(c inventory.Cluster) engine.Engine {
	if c.Engine == dbms.PostgresFamily {
		return engine.For(dbms.Postgres)
	}
	return engine.For(dbms.MariaDB)
}

// PresetFor is the preset a host is provisioned with.
func (o ProvisionOptions) PresetFor(h inventory.Host) string {
	if o.Preset != "" {
		return o.Preset
	}
	return h.Preset
}

// Provision gathers a host's facts and runs provisioning's steps on it.
func (e Env) Provision(ctx context.Context, h inventory.Host, c Conn, o ProvisionOptions, r progress.Reporter) (provision.Report, error) {
	r.Step("gathering facts")
	f, err := facts.Collect(ctx, c.User, h)
	if err != nil {
		return provision.Report{}, err
	}
	t := provision.NewTarget(h, e.Inventory.Path, c.Root, f, o.PresetFor(h), r.Step)
	t.Now = o.Now
	t.AptLockWait = o.AptLockWait
	t.Cluster = ClusterOf(e.Inventory, h)
	if t.Cluster != nil && e.Secrets != nil {
		t.Cluster.Secrets = e.Secrets
	}
	var rep provision.Report
	switch o.Steps {
	case Rollback:
		rep, err = provision.Rollback(ctx, t, o.DryRun)
	case Configure:
		rep, err = provision.Run(ctx, t, provision.TuneSteps(), o.DryRun)
	case Role:
		rep, err = provision.Run(ctx, t, provision.RoleSteps(), o.DryRun)
	case Seed:
		t.Cluster.PrimaryCert, t.Cluster.PrimaryRoot = o.PrimaryCert, o.PrimaryRoot
		rep, err = provision.Run(ctx, t, provision.SeedSteps(), o.DryRun)
	default:
		rep, err = provision.Run(ctx, t, provision.Steps(), o.DryRun)
		if err == nil && !o.DryRun && t.Cluster != nil && t.Cluster.Primary.Name == h.Name {
			// what its replicas verify it by, in the second pass
			r.Step("reading the certificate its replicas verify it by")
			var e engine.Engine
			if e, err = engine.Of(t.Facts); err == nil {
				rep.Cert, err = provision.ServedCert(ctx, c.Root, e)
			}
		}
	}
	switch {
	case err != nil:
	case o.DryRun && len(rep.Plan) > 0:
		r.Step(fmt.Sprintf("would change %d steps", len(rep.Plan)))
	case len(rep.Changed) > 0:
		r.Step("changed " + strings.Join(rep.Changed, ", "))
	default:
		r.Step("nothing to change")
	}
	return rep, err
}
