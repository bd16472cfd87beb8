package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"pidb/bench/workloads"
	"pidb/cluster"
	"pidb/config"
	"pidb/dbms"
	"pidb/engine"
	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
	"pidb/results"
	"pidb/usage"
)

// Workload is what bench and validate run on each host: the inventory's
// [bench] and [thermal], with these overrides by key (the flags given).
type Workload struct {
	Bench   config.Values // over each host's [bench]
	Thermal config.Values // over the inventory's [thermal]
}

// plans resolves every host's plan before anything runs: a workload that
// does not fit a host is a usage error. A workload named here (tpcc's
// check) replaces the one configured. It gives the Go runtime a processor
// for each of the clients' threads, and one more. What is allowed but
// likely a mistake (a run longer than a day, an interval longer than
// the run) is said once to warn (nil: not said).
func (w Workload) plans(inv *inventory.Inventory, hosts []inventory.Host, kind config.Kind, workload string, warn io.Writer) (map[string]job.Plan, error) {
	therm, err := config.ThermalFor(inv, kind, w.Thermal)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	out := map[string]job.Plan{}
	var all []job.Plan
	for _, h := range hosts {
		b, err := config.BenchFor(h, w.Bench)
		if err != nil {
			return nil, usage.Wrap(err)
		}
		if workload != "" {
			b.Workload = workload
		}
		p, err := job.Resolve(h, b, therm)
		if err != nil {
			return nil, atItsLine(err, inv, h, w.Bench)
		}
		out[h.Name] = p
		all = append(all, p)
	}
	if warn != nil {
		said := map[string]bool{}
		for _, h := range hosts {
			for _, m := range timeWarnings(out[h.Name].Bench) {
				if !said[m] {
					said[m] = true
					fmt.Fprintf(warn, "warning: %s\n", m)
				}
			}
		}
	}
	// the hosts' multiplexing threads wait in epoll without giving up their
	// P (see package bench): leave one P for everything else
	if n := job.Threads(all) + 1; runtime.GOMAXPROCS(0) < n {
		runtime.GOMAXPROCS(n)
	}
	return out, nil
}

// timeWarnings are what a run's times allow but likely do not mean: a
// run longer than a day (1000h for 1000s?), an interval longer than the
// run (a series of one point).
func timeWarnings(b config.Bench) []string {
	var out []string
	if b.Duration > 24*time.Hour {
		out = append(out, fmt.Sprintf("--duration %s is a run of %.1f days: the write-ups' longest was an hour (did you mean seconds or minutes?)", b.Duration, b.Duration.Hours()/24))
	}
	if b.Queries == 0 && b.Duration > 0 && b.Interval > b.Duration {
		out = append(out, fmt.Sprintf("--interval %s is longer than the run (--duration %s): its series has one point", b.Interval, b.Duration))
	}
	return out
}

// Names are the names of what: "workloads" (those bench and validate
// can run) or "hosts" (the inventory's), for the shells' completion.
func Names(what, inventory string) ([]string, error) {
	switch what {
	case "workloads":
		return workloads.Names(), nil
	case "hosts":
		checked, err := InventoryCheck(Fleet{Inventory: inventory})
		names := make([]string, 0, len(checked))
		for _, h := range checked {
			names = append(names, h.Host.Name)
		}
		return names, err
	}
	return nil, usage.Errorf("names of %q: want workloads or hosts", what)
}

// BenchOptions are `pidb bench`'s.
type BenchOptions struct {
	Fleet
	Workload
	Out     string // runs are saved under it
	Version string // pidb's, in each run
	// Cluster, when set, is the [[cluster]] whose hosts are measured
	// together, instead of --limit's (a read-only workload: its data
	// loaded on the primary, read on every host)
	Cluster string
}

// Bench runs each host's workload from this machine and saves the run.
// With Cluster, the workload's data is made on the cluster's primary
// first, every replica waited for until it has replayed it, and then
// every host of the cluster measured at once.
func Bench(ctx context.Context, o BenchOptions) ([]job.BenchResult, error) {
	inv, hosts, err := o.load()
	if err != nil {
		return nil, err
	}
	var c *inventory.Cluster
	if o.Cluster != "" {
		if hosts, c, err = clusterHosts(inv, o.Cluster, o.Limit); err != nil {
			return nil, err
		}
	}
	plans, err := o.plans(inv, hosts, config.ForBench, "", o.Warnings)
	if err != nil {
		return nil, err
	}
	if c == nil {
		if err := replicasWrite(hosts, plans); err != nil {
			return nil, err
		}
	}
	env := job.Env{Inventory: inv, Out: o.Out, Version: o.Version, Alongside: o.alongside(hosts)}
	if c != nil {
		for name, p := range plans {
			p.Cluster = c.Name
			plans[name] = p
		}
	}
	switch {
	case c == nil:
	case plans[c.Primary].Spec.ReadOnly:
		if err := onTheCopy(ctx, o.Fleet, env, hosts, plans); err != nil {
			return nil, err
		}
	default:
		// a workload that writes: on the primary, the replicas' lag read
		// beside it
		p := plans[c.Primary]
		p.Replicas = c.Replicas
		plans[c.Primary] = p
		hosts = hosts[:1]
	}
	// a MariaDB replica's lag is read on it: the replicas lend their
	// connections to the primary's run
	var lenders []inventory.Host
	if c != nil && c.Engine != dbms.PostgresFamily && len(plans[c.Primary].Replicas) > 0 {
		lenders = inv.HostsOf(*c)[1:]
	}
	res, err := withLent(ctx, o.Fleet, lenders, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter, lent Lent) (job.BenchResult, error) {
		p := plans[h.Name]
		if len(lenders) > 0 {
			p.ReplicaRoots = lent
		}
		return env.Bench(ctx, h, c, p, r)
	})
	if err != nil {
		return nil, err
	}
	return values(res, func(b *job.BenchResult, h inventory.Host, e string) {
		b.Host, b.Error = h.Name, e
		if b.Workload == "" {
			b.Workload = plans[b.Host].Spec.Name
		}
		if b.Clients == 0 {
			b.Clients = plans[b.Host].Bench.Clients // what was asked, where it never ran
		}
	}), Err(res)
}

// CheckOptions are `pidb bench tpcc check`'s and `pidb bench tpcb check`'s.
type CheckOptions struct {
	Fleet
	Workload
	Name string // the workload whose data to check: tpcc or tpcb
}

// Check tests a workload's data on each host: TPC-C's consistency
// conditions on every warehouse of tpcc's tables, or every tpcb balance
// against its history.
func Check(ctx context.Context, o CheckOptions) ([]job.CheckResult, error) {
	inv, hosts, err := o.load()
	if err != nil {
		return nil, err
	}
	plans, err := o.plans(inv, hosts, config.ForBench, o.Name, nil)
	if err != nil {
		return nil, err
	}
	env := job.Env{Inventory: inv}
	return over(ctx, o.Fleet, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (job.CheckResult, error) {
		return env.Check(ctx, h, c, plans[h.Name], r)
	}, func(j *job.CheckResult, h inventory.Host, e string) {
		j.Host, j.Workload, j.Error = h.Name, o.Name, e
	})
}

// CleanupOptions are `pidb bench cleanup`'s.
type CleanupOptions struct {
	Fleet
}

// Cleanup drops pidb's benchmark database on each host where pidb made it.
func Cleanup(ctx context.Context, o CleanupOptions) ([]job.CleanupResult, error) {
	inv, hosts, err := o.load()
	if err != nil {
		return nil, err
	}
	env := job.Env{Inventory: inv}
	return over(ctx, o.Fleet, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (job.CleanupResult, error) {
		return env.Cleanup(ctx, h, c, r)
	}, func(j *job.CleanupResult, h inventory.Host, e string) {
		j.Host, j.Database, j.Error = h.Name, engine.BenchDatabase, e
	})
}

// ValidateOptions are `pidb validate`'s.
type ValidateOptions struct {
	Fleet
	Workload
	// Validate overrides the inventory's [validate] (strict), by key.
	Validate config.Values
	Out      string
	Version  string
}

// Validate checks each host and runs its baseline workload with the
// temperature read around it: PASS, WARN or FAIL with reasons. Beside the
// hosts that failed to run, a host that FAILs (or WARNs, when strict)
// makes the error: exit code 1.
func Validate(ctx context.Context, o ValidateOptions) ([]job.ValidateResult, error) {
	inv, hosts, err := o.load()
	if err != nil {
		return nil, err
	}
	plans, err := o.plans(inv, hosts, config.ForValidate, "", o.Warnings)
	if err != nil {
		return nil, err
	}
	vc, err := config.ValidateFor(inv, o.Validate)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	env := job.Env{Inventory: inv, Out: o.Out, Version: o.Version, Alongside: o.alongside(hosts)}
	failed := 0
	out, err := over(ctx, o.Fleet, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (job.ValidateResult, error) {
		return env.Validate(ctx, h, c, plans[h.Name], vc, r)
	}, func(j *job.ValidateResult, h inventory.Host, e string) {
		j.Host, j.Error = h.Name, e
		if j.Reasons == nil {
			j.Reasons = []results.Reason{}
		}
		if e != "" {
			j.Verdict = results.Error
		}
		if j.Failed(vc.Strict) {
			failed++
		}
	})
	if err != nil {
		return out, err
	}
	if failed > 0 {
		return out, &Verdicts{Failed: failed, Total: len(out), Strict: vc.Strict}
	}
	return out, nil
}

// Verdicts is Validate's error when every host ran and some failed their
// validation: FAIL, or WARN when strict. Exit code 1.
type Verdicts struct {
	Failed, Total int
	Strict        bool
}

func (v *Verdicts) Error() string {
	what := "FAIL"
	if v.Strict {
		what = "FAIL or WARN (strict)"
	}
	return fmt.Sprintf("%d of %d hosts: %s", v.Failed, v.Total, what)
}

// clusterHosts are the hosts of the cluster called name, its primary
// first, for `bench --cluster` (which --limit does not narrow).
func clusterHosts(inv *inventory.Inventory, name, limit string) ([]inventory.Host, *inventory.Cluster, error) {
	if limit != "" {
		return nil, nil, usage.Errorf("--cluster and --limit: a cluster is measured whole; give one of them")
	}
	c, err := inv.Cluster(name)
	if err != nil {
		return nil, nil, err
	}
	return inv.HostsOf(c), &c, nil
}

// replicasWrite refuses, before any host, a bench of a workload that
// writes on a cluster's replica selected on its own (--limit), which the
// server would refuse at its first write: --cluster runs it on the
// primary with the replicas' lag read beside it.
func replicasWrite(hosts []inventory.Host, plans map[string]job.Plan) error {
	for _, h := range hosts {
		c, spec := h.Cluster, plans[h.Name].Spec
		if c == nil || c.Primary == h.Name || !spec.Writes {
			continue
		}
		return usage.Errorf("%s is a replica in cluster %q, and %s writes, which a replica refuses: bench the cluster with --cluster %s (%s runs on its primary, %s, each replica's lag read beside it), or --limit %s", h.Name, c.Name, spec.Name, c.Name, spec.Name, c.Primary, c.Primary)
	}
	return nil
}

// onTheCopy makes a read-only workload's data on the cluster's primary
// (hosts[0]) and waits until every replica has replayed it, so that each
// host reads the same rows.
func onTheCopy(ctx context.Context, f Fleet, env job.Env, hosts []inventory.Host, plans map[string]job.Plan) error {
	primary := hosts[0]
	pg := job.ClusterEngine(*primary.Cluster)
	res, err := each(ctx, f, []inventory.Host{primary}, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (uint64, error) {
		if err := env.Prepare(ctx, h, c, plans[h.Name], r); err != nil {
			return 0, err
		}
		st, err := cluster.Read(ctx, c.Root, pg)
		if err != nil {
			return 0, err
		}
		if st.InRecovery {
			return 0, fmt.Errorf("%s is a standby, not the primary the inventory says: run pidb cluster status", h.Name)
		}
		return st.WAL, nil
	})
	if err != nil {
		return err
	}
	if err := Err(res); err != nil {
		return err
	}
	wal := res[0].Value
	caught, err := each(ctx, f, hosts[1:], func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (struct{}, error) {
		r.Step(fmt.Sprintf("waiting until it has replayed %s's data", primary.Name))
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
			st, err := cluster.Read(ctx, c.Root, pg)
			if err == nil && st.InRecovery && st.Replayed >= wal {
				return struct{}{}, nil
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				if err == nil {
					unit := map[bool]string{true: "bytes", false: "transactions"}[pg.Flavor == dbms.Postgres]
					err = fmt.Errorf("it has replayed %d %s less than %s wrote after 2 minutes (pidb cluster status says why)", wal-min(wal, st.Replayed), unit, primary.Name)
				}
				return struct{}{}, err
			}
		}
	})
	if err != nil {
		return err
	}
	return Err(caught)
}

// atItsLine is err where it is a workload's refusal of a setting
// (workloads.KeyError) that came from the inventory, not from a flag
// (flags): said at the setting's line, as the inventory writes it, with
// the workload that takes it; else err as it is.
func atItsLine(err error, inv *inventory.Inventory, h inventory.Host, flags config.Values) error {
	var ke *workloads.KeyError
	if !errors.As(err, &ke) {
		return err
	}
	v, ok := h.Bench[ke.Key]
	if _, flagged := flags[ke.Key]; flagged || !ok {
		return err
	}
	msg := fmt.Sprintf("host %q: %s is for %s; %s", h.Name, ke.Key, ke.For, ke.Why)
	if !strings.ContainsAny(ke.For, ", ") {
		msg += fmt.Sprintf(": set workload = %q, or pass --workload %s", ke.For, ke.For)
	}
	return &usage.Error{File: inv.Path, Line: v.Line, Msg: msg}
}
