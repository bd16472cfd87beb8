// Package config is the typed form of the inventory's [bench], [thermal]
// and [validate] sections and of the flags that override them, with every
// default written once, here: defaults, then the inventory's section (for
// [bench], with the host's [host.bench] over it), then the flags. The
// command line shows these defaults in its help.
package config

import (
	"fmt"
	"runtime"
	"time"

	"pidb/inventory"
	"pidb/validate"
)

// Bench is how a workload runs from the controller.
type Bench struct {
	Workload  string        // "": the engine's default (bench/workloads)
	Clients   int           // client connections
	Duration  time.Duration // measured time
	Warmup    time.Duration // before measuring
	Interval  time.Duration // one point of the series per Interval
	Scale     int           // 0: the workload's default
	Tables    int           // 0: the workload's default
	TableSize int           // 0: the workload's default
	Protocol  string        // "": the workload's default
	Via       string        // auto (direct when allow_from lets the controller in), direct, ssh
	TLS       string        // auto (on when the host's network logins need it and the run is direct), on, off
	Threads   int           // threads the clients share (pgbench -j); 0: one per client
	// Queries, when more than zero, is a fixed amount of work (quiz):
	// each client runs that many queries, as load.py's QUERIES, and
	// Duration is then the most the run may take.
	Queries int
	Mix     string // tpcc's transaction weights; "": the standard's
	UseFK   bool   // tpcc: with the foreign keys (default true; sysbench-tpcc's --use_fk)
	Reload  bool   // the command line's --reload: load the data again
	Check   bool   // the command line's --check: test the data's consistency after the run
}

// DefaultBench is [bench] when the inventory says nothing.
func DefaultBench() Bench {
	return Bench{Clients: 8, Duration: 5 * time.Minute, Warmup: 10 * time.Second, Interval: time.Second, Via: "auto", TLS: "auto", Threads: runtime.NumCPU(), UseFK: true}
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
	t := Thermal{Interval: 5 * time.Second, MaxTempC: validate.DefaultMaxTempC}
	if k == ForValidate {
		t.IdleBefore, t.IdleAfter = time.Minute, time.Minute
	}
	return t
}

// Validate is validate's own judgement settings.
type Validate struct {
	MinTPS float64 // 0: no floor
	Strict bool    // WARN fails too
}

// Values are settings by their inventory key ("table_size"), from the
// flags: int, float64, bool, string or time.Duration.
type Values map[string]any

// BenchFor is a host's [bench]: the defaults, the inventory's [bench] with
// its [host.bench] over it (inventory.Host.Bench), then the flags.
func BenchFor(h inventory.Host, flags Values) (Bench, error) {
	b := DefaultBench()
	return b, apply(h.Bench, flags, b.set)
}

// ThermalFor is the inventory's [thermal] over the defaults, then the flags.
func ThermalFor(inv *inventory.Inventory, k Kind, flags Values) (Thermal, error) {
	t := DefaultThermal(k)
	return t, apply(inv.Thermal, flags, t.set)
}

// ValidateFor is the inventory's [validate] over the defaults, then the flags.
func ValidateFor(inv *inventory.Inventory, flags Values) (Validate, error) {
	var v Validate
	return v, apply(inv.Validate, flags, v.set)
}

// apply sets a section's values, then the flags'.
func apply(sec inventory.Section, flags Values, set func(string, any) error) error {
	for _, k := range sec.Keys() {
		if err := set(k, sec[k].Raw); err != nil {
			return err
		}
	}
	for k, v := range flags {
		if err := set(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (b *Bench) set(key string, v any) (err error) {
	switch key {
	case "workload":
		b.Workload, err = asString(key, v)
	case "protocol":
		b.Protocol, err = asString(key, v)
	case "mix":
		b.Mix, err = asString(key, v)
	case "reload", "check", "use_fk":
		x, ok := v.(bool)
		if !ok {
			return fmt.Errorf("%s: want true or false, not %v", key, v)
		}
		switch key {
		case "reload":
			b.Reload = x
		case "check":
			b.Check = x
		default:
			b.UseFK = x
		}
	case "via":
		b.Via, err = asString(key, v)
	case "tls":
		b.TLS, err = asString(key, v)
	case "clients":
		b.Clients, err = asInt(key, v)
	case "scale":
		b.Scale, err = asInt(key, v)
	case "tables":
		b.Tables, err = asInt(key, v)
	case "table_size":
		b.TableSize, err = asInt(key, v)
	case "threads":
		b.Threads, err = asInt(key, v)
	case "queries":
		b.Queries, err = asInt(key, v)
	case "duration":
		b.Duration, err = asDuration(key, v)
	case "warmup":
		b.Warmup, err = asDuration(key, v)
	case "interval":
		b.Interval, err = asDuration(key, v)
	default:
		err = fmt.Errorf("[bench] has no setting %q", key)
	}
	return err
}

func (t *Thermal) set(key string, v any) (err error) {
	switch key {
	case "interval":
		t.Interval, err = asDuration(key, v)
	case "idle_before":
		t.IdleBefore, err = asDuration(key, v)
	case "idle_after":
		t.IdleAfter, err = asDuration(key, v)
	case "max_temp_c":
		t.MaxTempC, err = asFloat(key, v)
	default:
		err = fmt.Errorf("[thermal] has no setting %q", key)
	}
	return err
}

func (x *Validate) set(key string, v any) (err error) {
	switch key {
	case "min_tps":
		x.MinTPS, err = asFloat(key, v)
	case "strict":
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("%s: want true or false, not %v", key, v)
		}
		x.Strict = b
	default:
		err = fmt.Errorf("[validate] has no setting %q", key)
	}
	return err
}

func asString(key string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: want a string, not %v", key, v)
	}
	return s, nil
}

func asInt(key string, v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	}
	return 0, fmt.Errorf("%s: want a whole number, not %v", key, v)
}

func asFloat(key string, v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case int64:
		return float64(n), nil
	case int:
		return float64(n), nil
	}
	return 0, fmt.Errorf("%s: want a number, not %v", key, v)
}

// asDuration reads a flag's time.Duration or the inventory's string ("0"
// and "0s" are no time, which the inventory allows where it makes sense).
func asDuration(key string, v any) (time.Duration, error) {
	switch d := v.(type) {
	case time.Duration:
		return d, nil
	case string:
		if d == "0" || d == "0s" {
			return 0, nil
		}
		x, err := inventory.ParseDuration(d)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", key, err)
		}
		return x, nil
	}
	return 0, fmt.Errorf("%s: want a duration, not %v", key, v)
}
