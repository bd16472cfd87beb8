package job

import (
	"fmt"

	"pidb/bench/workloads"
	"pidb/bench/workloads/script"
	"pidb/config"
	"pidb/inventory"
	"pidb/remote"
	"pidb/usage"
)

// Plan is one host's workload, resolved: what runs, with what, and the
// thermal readings around it.
type Plan struct {
	Spec    workloads.Spec
	Params  workloads.Params // resolved: the workload's defaults filled in
	Bench   config.Bench     // Via resolved to direct or ssh, TLS to on or off
	Thermal config.Thermal
	Preset  string // the host's preset, saved with the run
	// Replicas are, on a cluster's primary under a workload that writes,
	// the replicas whose lag is read beside the run (results.Run's
	// Replication)
	Replicas []string
	// ReplicaRoots are, on MariaDB, root on each of them: a MariaDB
	// replica's lag is read on the replica (its GTID position beside the
	// primary's)
	ReplicaRoots map[string]remote.Runner
	// Cluster is the [[cluster]] measured as one (bench --cluster),
	// saved with the run
	Cluster string
}

// Resolve checks a host's configuration against its engine and workload
// and makes its plan; what it refuses is a usage error naming the host.
// Each value is in its key's range already (package config).
func Resolve(h inventory.Host, b config.Bench, t config.Thermal) (Plan, error) {
	p := Plan{Bench: b, Thermal: t, Preset: h.Preset}
	var err error
	if b.Workload == "" {
		p.Spec = workloads.Default(h.Engine)
	} else if p.Spec, err = workloads.Get(b.Workload); err != nil {
		return p, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
	}
	if err := p.Spec.FitsOn(h.Engine); err != nil {
		return p, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
	}
	switch {
	case b.Check && p.Spec.Check == nil:
		return p, usagef("%s: --check is for %s, whose data has consistency conditions; %s has none", h.Name, workloads.NamesWhere(func(s workloads.Spec) bool { return s.Check != nil }), p.Spec.Name)
	case b.Queries > 0 && !p.Spec.FixedWork:
		return p, usagef("%s: --queries is for %s, whose transaction is one query (load.py's QUERIES); %s runs for --duration", h.Name, workloads.NamesWhere(func(s workloads.Spec) bool { return s.FixedWork }), p.Spec.Name)
	}
	if b.Queries > 0 {
		// as load.py: no warm-up, measured from the start to the last
		// client's last query; the duration is the most it may take
		p.Bench.Warmup = 0
	}
	params := workloads.Params{Scale: b.Scale, Tables: b.Tables, TableSize: b.TableSize, Protocol: b.Protocol, Reload: b.Reload, NoFK: !b.UseFK}
	if b.Mix != "" {
		if params.Mix, err = workloads.ParseMix(b.Mix); err != nil {
			return p, usage.Wrap(fmt.Errorf("%s: --mix: %w", h.Name, err))
		}
	}
	for _, f := range []struct {
		path string
		to   **script.Script
	}{{b.Script, &params.Script}, {b.SetupScript, &params.Setup}} {
		if f.path == "" {
			continue
		}
		if *f.to, err = script.Read(f.path); err != nil {
			return p, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
		}
	}
	if p.Params, err = p.Spec.Resolve(params); err != nil {
		return p, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
	}
	// the values are config's, checked against its keys' rules
	if b.Via == config.ViaAuto || b.Via == "" {
		p.Bench.Via = config.ViaSSH
		if len(h.AllowFrom) > 0 {
			p.Bench.Via = config.ViaDirect
		}
	}
	if b.TLS == config.TLSAuto || b.TLS == "" {
		// the SSH forward arrives at localhost, encrypted by SSH already
		p.Bench.TLS = config.TLSOff
		if p.Bench.Via == config.ViaDirect && h.NetworkTLS() {
			p.Bench.TLS = config.TLSOn
		}
	}
	return p, nil
}

// Threads is how many threads the plans' clients wait in together: the
// program needs one P more than that (see package bench).
func Threads(plans []Plan) int {
	n := 0
	for _, p := range plans {
		n += p.Bench.Threads
	}
	return n
}
