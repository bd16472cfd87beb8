// Package config is the typed form of the inventory's [bench], [thermal]
// and [validate] sections and of the flags that override them, with every
// default written once, here: defaults, then the inventory's section (for
// [bench], with the host's [host.bench] over it), then the flags. The
// command line shows these defaults in its help.
package config

import (
	"fmt"
	"runtime"
	"sort"
	"time"

	"pidb/bench/sqldb"
	"pidb/inventory"
	"pidb/thermal"
)

// Bench is how a workload runs from the controller.
type Bench struct {
	Workload  string         // "": the engine's default (bench/workloads)
	Clients   int            // client connections
	Duration  time.Duration  // measured time
	Warmup    time.Duration  // before measuring
	Interval  time.Duration  // one point of the series per Interval
	Scale     int            // 0: the workload's default
	Tables    int            // 0: the workload's default
	TableSize int            // 0: the workload's default
	Protocol  sqldb.Protocol // "": the workload's default
	Via       Via
	TLS       TLSMode
	Threads   int // threads the clients share (pgbench -j); 0: one per client
	// Queries, when more than zero, is a fixed amount of work (quiz):
	// each client runs that many queries, as load.py's QUERIES, and
	// Duration is then the most the run may take.
	Queries int
	Mix     string // tpcc's transaction weights; "": the standard's
	UseFK   bool   // tpcc: with the foreign keys (default true; sysbench-tpcc's --use_fk)
	Reload  bool   // the command line's --reload: load the data again
	Check   bool   // the command line's --check: test the data's consistency after the run
	// Script and SetupScript are the sql workload's files: its
	// transaction, and what runs once before (an inventory's are
	// absolute, a flag's as given)
	Script, SetupScript string
}

// DefaultBench is [bench] when the inventory says nothing.
func DefaultBench() Bench {
	return Bench{Clients: 8, Duration: 5 * time.Minute, Warmup: 10 * time.Second, Interval: time.Second, Via: ViaAuto, TLS: TLSAuto, Threads: runtime.NumCPU(), UseFK: true}
}

// Thermal is how temperature is read beside a workload (and by `pidb thermal`).
type Thermal struct {
	Interval   time.Duration // one reading per Interval
	MaxTempC   float64       // validate's limit
	IdleBefore time.Duration // readings before the load: the baseline
	IdleAfter  time.Duration // readings after it: the cool-down
}

// Kind is which command a Thermal is for: they differ only in the idle
// time around the load.
type Kind int

// The commands with thermal readings.
const (
	ForBench    Kind = iota // no idle time unless asked
	ForValidate             // a minute before and after
)

// DefaultThermal is [thermal] when the inventory says nothing.
func DefaultThermal(k Kind) Thermal {
	t := Thermal{Interval: 5 * time.Second, MaxTempC: thermal.SoftLimitC}
	if k == ForValidate {
		t.IdleBefore, t.IdleAfter = time.Minute, time.Minute
	}
	return t
}

// Validate is validate's own judgement settings.
type Validate struct {
	MinTPS float64 // 0: no floor
	Strict bool    // WARN fails too
	// MaxLag is how far a cluster's replica may be behind its primary
	// (0: DefaultMaxLag)
	MaxLag time.Duration
}

// DefaultMaxLag is how far behind its primary validate lets a replica be
// where [validate] max_lag says nothing.
const DefaultMaxLag = 30 * time.Second

// Values are settings by their inventory key ("table_size"), from the
// flags: int, float64, bool, string or time.Duration.
type Values map[string]any

// BenchFor is a host's [bench]: the defaults, the inventory's [bench] with
// its [host.bench] over it (inventory.Host.Bench), then the flags.
func BenchFor(h inventory.Host, flags Values) (Bench, error) {
	b := DefaultBench()
	return b, (&targets{bench: &b}).apply(BenchSection, h.Bench, flags)
}

// ThermalFor is the inventory's [thermal] over the defaults, then the flags.
func ThermalFor(inv *inventory.Inventory, k Kind, flags Values) (Thermal, error) {
	t := DefaultThermal(k)
	return t, (&targets{thermal: &t}).apply(ThermalSection, inv.Thermal, flags)
}

// ValidateFor is the inventory's [validate] over the defaults, then the flags.
func ValidateFor(inv *inventory.Inventory, flags Values) (Validate, error) {
	var v Validate
	err := (&targets{validate: &v}).apply(ValidateSection, inv.Validate, flags)
	if v.MaxLag == 0 {
		v.MaxLag = DefaultMaxLag // what validate takes: inventory check shows it
	}
	return v, err
}

// apply sets a section's values, then the flags', in the order of their
// keys: the first error is the same each time.
func (t *targets) apply(section Section, sec inventory.Section, flags Values) error {
	keys := map[string]Key{}
	for _, k := range Keys() {
		if k.Section == section {
			keys[k.Name] = k
		}
	}
	set := func(name string, v any) error {
		k, ok := keys[name]
		if !ok {
			return fmt.Errorf("[%s] has no setting %q", section, name)
		}
		if err := k.Check(v); err != nil {
			return fmt.Errorf("%s: %w", k.name(), err)
		}
		return assign(k.field(t), v)
	}
	for _, k := range sec.Keys() {
		if err := set(k, sec[k].Raw); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(flags))
	for k := range flags {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if err := set(k, flags[k]); err != nil {
			return err
		}
	}
	return nil
}

// name is how an error names the key: its flag where it has one.
func (k Key) name() string {
	if k.Flag != "" {
		return "--" + k.Flag
	}
	return fmt.Sprintf("[%s] %s", k.Section, k.Name)
}

// assign stores v, checked by its key's rule, in the field p points to.
func assign(p, v any) (err error) {
	switch f := p.(type) {
	case *string:
		setString(f, v)
	case *Via:
		setString(f, v)
	case *TLSMode:
		setString(f, v)
	case *sqldb.Protocol:
		setString(f, v)
	case *bool:
		*f = v.(bool)
	case *int:
		*f = asInt(v)
	case *float64:
		*f = asFloat(v)
	case *time.Duration:
		*f, err = asDuration(v)
	default:
		err = fmt.Errorf("no way to set a %T", p)
	}
	return err
}

// setString sets a field of a string type from a checked string.
func setString[T ~string](f *T, v any) {
	s, _ := v.(string)
	*f = T(s)
}

// asInt is a checked whole number: the inventory's int64 or a flag's int.
func asInt(v any) int {
	if n, ok := v.(int64); ok {
		return int(n)
	}
	n, _ := v.(int)
	return n
}

// asFloat is a checked number: a whole one too.
func asFloat(v any) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case int:
		return float64(n)
	}
	f, _ := v.(float64)
	return f
}

// asDuration reads a flag's time.Duration or the inventory's string ("0"
// and "0s" are no time, which the inventory allows where it makes sense).
func asDuration(v any) (time.Duration, error) {
	if d, ok := v.(time.Duration); ok {
		return d, nil
	}
	if s, _ := v.(string); s != "0" && s != "0s" {
		return inventory.ParseDuration(s)
	}
	return 0, nil
}
