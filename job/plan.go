package job

import (
	"fmt"
	"strings"

	"pidb/bench/workloads"
	"pidb/config"
	"pidb/dbms"
	"pidb/inventory"
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
}

// Resolve checks a host's configuration and makes its plan; what it refuses
// is a usage error naming the host.
func Resolve(h inventory.Host, b config.Bench, t config.Thermal) (Plan, error) {
	p := Plan{Bench: b, Thermal: t, Preset: h.Preset}
	var err error
	if b.Workload == "" {
		p.Spec = workloads.Default(h.Engine)
	} else if p.Spec, err = workloads.Get(b.Workload); err != nil {
		return p, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
	}
	switch {
	case !p.Spec.Fits(h.Engine):
		return p, usagef("%s: workload %s needs %s; the host's engine is %s", h.Name, p.Spec.Name, engineNames(p.Spec.Engines), h.Engine)
	case b.Threads < 0:
		return p, usagef("--threads %d: want 0 or more", b.Threads)
	case t.Interval <= 0 || t.IdleBefore < 0 || t.IdleAfter < 0:
		return p, usagef("[thermal] interval %s (want more than zero), idle_before %s and idle_after %s (want zero or more)", t.Interval, t.IdleBefore, t.IdleAfter)
	case b.Clients < 1 || b.Scale < 0 || b.Tables < 0 || b.TableSize < 0 || b.Duration <= 0 || b.Warmup < 0 || b.Interval <= 0:
		return p, usagef("%s: %s", h.Name, badBench(b))
	case b.Protocol != "" && b.Protocol != "simple" && b.Protocol != "prepared":
		return p, usagef("--protocol %q: want simple or prepared", b.Protocol)
	case b.Queries < 0:
		return p, usagef("--queries %d: want 1 or more", b.Queries)
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
			return p, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
		}
	}
	if p.Params, err = p.Spec.Resolve(params); err != nil {
		return p, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
	}
	switch b.Via {
	case "auto":
		p.Bench.Via = "ssh"
		if len(h.AllowFrom) > 0 {
			p.Bench.Via = "direct"
		}
	case "direct", "ssh":
	default:
		return p, usagef("--via %q: want auto, direct or ssh", b.Via)
	}
	switch b.TLS {
	case "", "auto":
		// the SSH forward arrives at localhost, encrypted by SSH already
		p.Bench.TLS = "off"
		if p.Bench.Via == "direct" && h.NetworkTLS() {
			p.Bench.TLS = "on"
		}
	case "on", "off":
	default:
		return p, usagef("--tls %q: want auto, on or off", b.TLS)
	}
	return p, nil
}

// badBench names the bench values out of range, with what each wants.
func badBench(b config.Bench) string {
	var bad []string
	for _, c := range []struct {
		wrong bool
		what  string
	}{
		{b.Clients < 1, fmt.Sprintf("--clients %d: want 1 or more", b.Clients)},
		{b.Scale < 0, fmt.Sprintf("--scale %d: want 1 or more", b.Scale)},
		{b.Tables < 0, fmt.Sprintf("--tables %d: want 1 or more", b.Tables)},
		{b.TableSize < 0, fmt.Sprintf("--table-size %d: want 1 or more", b.TableSize)},
		{b.Duration <= 0, fmt.Sprintf("--duration %s: want more than zero", b.Duration)},
		{b.Warmup < 0, fmt.Sprintf("--warmup %s: want zero or more", b.Warmup)},
		{b.Interval <= 0, fmt.Sprintf("--interval %s: want more than zero", b.Interval)},
	} {
		if c.wrong {
			bad = append(bad, c.what)
		}
	}
	return strings.Join(bad, "; ")
}

func engineNames(families []string) string {
	names := map[string]string{dbms.Postgres: "PostgreSQL", "mysql": "MySQL/MariaDB"}
	out := ""
	for i, f := range families {
		if i > 0 {
			out += " or "
		}
		out += names[f]
	}
	return out
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
