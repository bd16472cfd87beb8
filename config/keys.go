package config

import (
	"fmt"
	"reflect"
	"time"

	"pidb/bench/sqldb"
	"pidb/bench/workloads"
	"pidb/bench/workloads/script"
	"pidb/dbms"
	"pidb/inventory"
)

// Via is how a run's clients reach the server.
type Via string

// The ways a run reaches the server.
const (
	ViaAuto   Via = "auto"   // direct when allow_from lets the controller in, else ssh
	ViaDirect Via = "direct" // to the server's port
	ViaSSH    Via = "ssh"    // through the SSH connection, to the server's localhost
)

// TLSMode is whether a run's logins use TLS.
type TLSMode string

// The TLS modes.
const (
	TLSAuto TLSMode = "auto" // on for a direct run to a host whose network logins need it
	TLSOn   TLSMode = "on"
	TLSOff  TLSMode = "off" // refused by a server that requires TLS
)

// Section is a settings section of the inventory.
type Section string

// The settings sections.
const (
	BenchSection    Section = "bench" // and each host's [host.bench] over it
	ThermalSection  Section = "thermal"
	ValidateSection Section = "validate"
)

// Key is one setting of [bench], [thermal] or [validate], declared once:
// the inventory's schema (Schema), the layering (BenchFor, ThermalFor,
// ValidateFor), the command line's flags (Usage) and the range checks all
// come from it.
type Key struct {
	Section  Section
	Name     string // the inventory's key, "table_size"
	Flag     string // the flag that overrides it, "table-size"; "": none
	FlagOnly bool   // a flag the inventory has no key for (--reload)
	inventory.Rule
	Help    string // the flag's help; a name in backquotes names its value
	Default string // the default as help says it, where not the value's own

	field func(*targets) any // a pointer to the field the key sets
}

// targets are the structs a key's field may be in.
type targets struct {
	bench    *Bench
	thermal  *Thermal
	validate *Validate
}

// Keys are every setting of [bench], [thermal] and [validate], in the
// order help lists their flags.
func Keys() []Key {
	type b = Bench
	bench := func(name string, r inventory.Rule, help string, f func(*b) any) Key {
		return Key{Section: BenchSection, Name: name, Flag: flagName(name), Rule: r, Help: help, field: func(t *targets) any { return f(t.bench) }}
	}
	thermal := func(name, flag string, r inventory.Rule, help string, f func(*Thermal) any) Key {
		return Key{Section: ThermalSection, Name: name, Flag: flag, Rule: r, Help: help, field: func(t *targets) any { return f(t.thermal) }}
	}
	validate := func(name, flag string, r inventory.Rule, help string, f func(*Validate) any) Key {
		return Key{Section: ValidateSection, Name: name, Flag: flag, Rule: r, Help: help, field: func(t *targets) any { return f(t.validate) }}
	}
	flagOnly := func(k Key) Key { k.FlagOnly = true; return k }
	defaultIs := func(k Key, text string) Key { k.Default = text; return k }
	intIn := func(lo, hi float64) inventory.Rule { return inventory.Rule{Kind: inventory.Int, Min: lo, Max: hi} }
	positive := inventory.Rule{Kind: inventory.Duration}
	orZero := inventory.Rule{Kind: inventory.Duration, ZeroOK: true}
	boolean := inventory.Rule{Kind: inventory.Bool}
	oneOf := func(values ...string) inventory.Rule { return inventory.Rule{Kind: inventory.String, OneOf: values} }
	mix := inventory.Rule{Kind: inventory.String, Valid: func(s string) error { _, err := workloads.ParseMix(s); return err }}
	workload := inventory.Rule{Kind: inventory.String, Valid: func(s string) error {
		if s == "" { // the engine's default
			return nil
		}
		_, err := workloads.Get(s)
		return err
	}, Fits: func(engine dbms.Family, s string) error {
		w, err := workloads.Get(s)
		if err != nil || s == "" {
			return nil // the engine's own, or refused by Valid
		}
		return w.FitsOn(engine)
	}}
	file := inventory.Rule{Kind: inventory.String, Path: true, Valid: func(s string) error {
		_, err := script.Read(s)
		return err
	}}
	return []Key{
		defaultIs(bench("workload", workload, workloads.Help(), func(b *b) any { return &b.Workload }), "the engine's"),
		bench("clients", intIn(1, 10000), "client connections", func(b *b) any { return &b.Clients }),
		bench("duration", positive, "measured time", func(b *b) any { return &b.Duration }),
		defaultIs(bench("scale", intIn(1, 1000000), workloads.ParamHelp("scale"), func(b *b) any { return &b.Scale }), "the workload's"),
		bench("warmup", orZero, "time before measuring", func(b *b) any { return &b.Warmup }),
		defaultIs(bench("mix", mix, "tpcc: the transactions' weights, new_order:payment:order_status:delivery:stock_level (sysbench-tpcc's is 10:10:1:1:1)", func(b *b) any { return &b.Mix }), "the standard's 45:43:4:4:4"),
		defaultIs(bench("tables", intIn(1, 1000), workloads.ParamHelp("tables"), func(b *b) any { return &b.Tables }), "the workload's"),
		defaultIs(bench("table_size", intIn(1, 1000000000), workloads.ParamHelp("table_size"), func(b *b) any { return &b.TableSize }), "the workload's"),
		bench("interval", positive, "one point of the series per `D`", func(b *b) any { return &b.Interval }),
		defaultIs(bench("protocol", oneOf(string(sqldb.Simple), string(sqldb.Prepared)), "tpcb and quiz: simple (the value in the statement's text: pgbench's default, and load.py's through MySQLdb) or prepared (pgbench -M prepared); oltp-read-only always prepares, as sysbench does", func(b *b) any { return &b.Protocol }), "the workload's"),
		defaultIs(bench("queries", intIn(1, 1000000000), "quiz: a fixed amount of work instead of a time: each client runs `N` queries, as load.py's QUERIES, with no warm-up; --duration is then the most it may take", func(b *b) any { return &b.Queries }), "a timed run"),
		bench("script", file, "sql: the `FILE` of statements each client runs as one transaction, again and again, in pgbench's format (\\set name random(1, N), :name)", func(b *b) any { return &b.Script }),
		bench("setup_script", file, "sql: a `FILE` of statements run once before the run, in pidb's database, to make the tables the script reads", func(b *b) any { return &b.SetupScript }),
		flagOnly(bench("reload", boolean, "load the workload's data again, even when what is there matches", func(b *b) any { return &b.Reload })),
		bench("use_fk", boolean, "tpcc: load the tables with sysbench-tpcc's foreign keys (--use-fk=false: without, as its --use_fk=0; a load of the other kind is loaded again)", func(b *b) any { return &b.UseFK }),
		flagOnly(bench("check", boolean, "tpcc, tpcb: after the run, test the data (as pidb bench tpcc check, pidb bench tpcb check); a condition that fails is exit 1", func(b *b) any { return &b.Check })),
		defaultIs(flagOnly(bench("threads", intIn(0, 10000), "threads the clients share (every workload), each waiting on its clients' sockets at once, as pgbench -j; 0: a thread per client", func(b *b) any { return &b.Threads })), "this machine's cores"),
		bench("via", oneOf(string(ViaAuto), string(ViaDirect), string(ViaSSH)), "auto (direct when allow_from lets this machine in), direct, or ssh (through the SSH connection)", func(b *b) any { return &b.Via }),
		flagOnly(bench("tls", oneOf(string(TLSAuto), string(TLSOn), string(TLSOff)), "auto (on for a direct run to a host whose network logins need TLS, as tls = true in the inventory has it), on, or off (refused by a server that requires TLS)", func(b *b) any { return &b.TLS })),
		thermal("interval", "thermal-interval", positive, "one thermal reading per `D`", func(t *Thermal) any { return &t.Interval }),
		thermal("idle_before", "idle-before", orZero, "thermal readings for `D` before the load, as a baseline", func(t *Thermal) any { return &t.IdleBefore }),
		thermal("idle_after", "idle-after", orZero, "thermal readings for `D` after the load, the cool-down", func(t *Thermal) any { return &t.IdleAfter }),
		thermal("max_temp_c", "", inventory.Rule{Kind: inventory.Number, Min: 30, Max: 110}, "validate's limit, in degrees C", func(t *Thermal) any { return &t.MaxTempC }),
		validate("min_tps", "", inventory.Rule{Kind: inventory.Number, Min: 0, Max: 1e9}, "validate's floor; 0: none", func(v *Validate) any { return &v.MinTPS }),
		validate("strict", "strict", boolean, "WARN fails too", func(v *Validate) any { return &v.Strict }),
		defaultIs(validate("max_lag", "", positive, "how far behind its primary (replay lag) a cluster's replica may be", func(v *Validate) any { return &v.MaxLag }), "30s"),
	}
}

// flagName is a key's flag: its name with - for _.
func flagName(key string) string {
	out := []byte(key)
	for i, c := range out {
		if c == '_' {
			out[i] = '-'
		}
	}
	return string(out)
}

// KeysByFlag are the keys that have a flag, by the flag's name.
func KeysByFlag() map[string]Key {
	out := map[string]Key{}
	for _, k := range Keys() {
		if k.Flag != "" {
			out[k.Flag] = k
		}
	}
	return out
}

// Schema is the inventory's option that declares the settings sections'
// keys, from Keys.
func Schema() inventory.Option {
	m := map[string]map[string]inventory.Rule{}
	for _, k := range Keys() {
		if k.FlagOnly {
			continue
		}
		if m[string(k.Section)] == nil {
			m[string(k.Section)] = map[string]inventory.Rule{}
		}
		m[string(k.Section)][k.Name] = k.Rule
	}
	return inventory.Sections(m)
}

// Usage is the flag's help, with its default: for kind's command (the
// thermal readings' idle time differs between bench and validate).
func (k Key) Usage(kind Kind) string {
	def := k.Default
	if def == "" {
		b, t := DefaultBench(), DefaultThermal(kind)
		v := Validate{}
		def = shown(k.field(&targets{bench: &b, thermal: &t, validate: &v}))
	}
	if def == "" && k.Kind == inventory.Bool && !k.FlagOnly {
		def = "false" // the inventory may turn it on
	}
	switch {
	case def == "":
		return k.Help
	case k.FlagOnly:
		return fmt.Sprintf("%s (default: %s)", k.Help, def)
	}
	return fmt.Sprintf("%s (default: the inventory's [%s] %s, else %s)", k.Help, k.Section, k.Name, def)
}

// shown is a default as help writes it; "" for none (false, zero, "").
func shown(p any) string {
	switch v := p.(type) {
	case *bool:
		if *v {
			return "true"
		}
	case *int:
		if *v != 0 {
			return fmt.Sprint(*v)
		}
	case *float64:
		if *v != 0 {
			return fmt.Sprint(*v)
		}
	case *time.Duration:
		return v.String()
	}
	if v := reflect.ValueOf(p).Elem(); v.Kind() == reflect.String { // string, Via, TLSMode, sqldb.Protocol
		return v.String()
	}
	return ""
}
