// Package workloads is the registry of pidb's benchmark workloads: each
// one's name, the engines it runs on, its defaults and its constructor. The
// inventory's schema, the command line's help and the run pipeline all read
// it, so a workload is written down once: adding one touches its own
// package and one line of All.
package workloads

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"pidb/bench"
	"pidb/bench/sqldb"
	"pidb/bench/workloads/oltp"
	"pidb/bench/workloads/quiz"
	"pidb/bench/workloads/script"
	"pidb/bench/workloads/tpcb"
	"pidb/bench/workloads/tpcc"
	"pidb/dbms"
	"pidb/results"
)

// Params are a workload's own parameters; zero values take the Spec's
// defaults (see Spec.Resolve).
type Params struct {
	Scale     int // tpcb: pgbench's scale; quiz: users
	Tables    int // oltp-read-only: sbtest tables
	TableSize int // oltp-read-only: rows per table
	Protocol  sqldb.Protocol
	Mix       tpcc.Mix // tpcc: the transactions' weights (zero before Resolve: the standard's)
	Reload    bool     // load the data even when what is there matches
	NoFK      bool     // tpcc: load without the foreign keys (sysbench-tpcc's --use_fk=0)
	// Script is the sql workload's transaction, Setup what it runs once
	// before (nil: nothing)
	Script, Setup *script.Script
	Log           func(string)
}

// Spec is one workload as pidb offers it.
type Spec struct {
	Name      string
	Engines   []dbms.Family // the engine families it runs on
	DefaultOn []dbms.Family // the families whose default workload it is
	// Protocols are the query protocols it can use, the default first.
	Protocols []sqldb.Protocol
	// FixedWork says it can run a fixed number of queries per client
	// (--queries): its transaction is one query.
	FixedWork bool
	// Revision is the workload's revision where its work changed (saved
	// with each run, so that runs of different work are not compared as
	// the same); 0: its first.
	Revision int
	// Defaults of its parameters; a zero one means it has no such parameter.
	Defaults Params
	// Means says what each of its parameters is, by inventory key (scale,
	// tables, table_size), for the help.
	Means map[string]string
	// HasMix says it runs a mix of transactions (tpcc), weighted by
	// Params.Mix.
	HasMix bool
	// Figures are the workload's own figures from a run's summary (tpcc:
	// tpmC), for Summary.Extra; nil: none.
	Figures func(results.Summary) map[string]float64
	// Check tests the loaded data's consistency (tpcc: the standard's
	// conditions 1-4; tpcb: balances against history); nil: the workload
	// has no check.
	Check func(ctx context.Context, db sqldb.DB, p Params) ([]results.Check, error)
	// Ops are the operations (transaction types) a run reports one by
	// one, in this order; none: the run's totals only.
	Ops []string
	// ForeignKeys says its tables can be loaded with foreign keys or
	// without (tpcc, as sysbench-tpcc's --use_fk).
	ForeignKeys bool
	// Scripted says it runs the user's script (Params.Script: --script).
	Scripted bool
	// ReadOnly says it only reads, once its data is there: a cluster's
	// replicas can run it (bench --cluster runs it on every host; one
	// that writes runs on the primary alone).
	ReadOnly bool
	// Writes says it always writes, its load and every transaction: a
	// replica on its own refuses it (a user's script may or may not).
	Writes bool
	New    func(db sqldb.DB, p Params) bench.Workload
}

// All are the workloads, in the order the help lists them.
func All() []Spec {
	return []Spec{
		{Name: tpcb.Name, Engines: []dbms.Family{dbms.PostgresFamily}, DefaultOn: []dbms.Family{dbms.PostgresFamily}, Protocols: []sqldb.Protocol{sqldb.Simple, sqldb.Prepared}, Writes: true,
			Defaults: Params{Scale: tpcb.DefaultScale}, Means: map[string]string{"scale": "pgbench's scale"},
			Check: func(ctx context.Context, db sqldb.DB, p Params) ([]results.Check, error) {
				return (&tpcb.Workload{DB: db}).Check(ctx)
			},
			New: func(db sqldb.DB, p Params) bench.Workload {
				return &tpcb.Workload{DB: db, Scale: p.Scale, Protocol: p.Protocol, Reload: p.Reload, Log: p.Log}
			}},
		{Name: oltp.Name, Engines: []dbms.Family{dbms.PostgresFamily, dbms.MySQLFamily}, DefaultOn: []dbms.Family{dbms.MySQLFamily}, Protocols: []sqldb.Protocol{sqldb.Prepared}, ReadOnly: true,
			Defaults: Params{Tables: oltp.DefaultTables, TableSize: oltp.DefaultTableSize}, Means: map[string]string{"tables": "sbtest tables", "table_size": "rows per table"}, New: func(db sqldb.DB, p Params) bench.Workload {
				return &oltp.Workload{DB: db, Tables: p.Tables, TableSize: p.TableSize, Reload: p.Reload, Log: p.Log}
			}},
		{Name: quiz.Name, Engines: []dbms.Family{dbms.PostgresFamily, dbms.MySQLFamily}, Protocols: []sqldb.Protocol{sqldb.Simple, sqldb.Prepared}, Revision: quiz.Revision, FixedWork: true, ReadOnly: true,
			Defaults: Params{Scale: quiz.DefaultScale}, Means: map[string]string{"scale": "users"}, New: func(db sqldb.DB, p Params) bench.Workload {
				return &quiz.Workload{DB: db, Scale: p.Scale, Protocol: p.Protocol, Reload: p.Reload, Log: p.Log}
			}},
		{Name: tpcc.Name, Engines: []dbms.Family{dbms.PostgresFamily, dbms.MySQLFamily}, Protocols: []sqldb.Protocol{sqldb.Simple},
			Defaults: Params{Scale: tpcc.DefaultScale, Tables: tpcc.DefaultTables}, Means: map[string]string{"scale": "warehouses per table copy", "tables": "copies of the nine tables, as sysbench-tpcc's --tables"},
			HasMix: true, Writes: true,
			Figures: tpcc.Figures, Ops: tpcc.Types[:], ForeignKeys: true,
			Check: func(ctx context.Context, db sqldb.DB, p Params) ([]results.Check, error) {
				return newTPCC(db, p).Check(ctx)
			},
			New: func(db sqldb.DB, p Params) bench.Workload { return newTPCC(db, p) }},
		{Name: script.Name, Engines: []dbms.Family{dbms.PostgresFamily, dbms.MySQLFamily}, Protocols: []sqldb.Protocol{sqldb.Simple, sqldb.Prepared}, Scripted: true,
			Defaults: Params{Scale: script.DefaultScale}, Means: map[string]string{"scale": "the script's :scale"}, New: func(db sqldb.DB, p Params) bench.Workload {
				return &script.Workload{DB: db, Script: p.Script, Setup: p.Setup, Scale: p.Scale, Protocol: p.Protocol, Log: p.Log}
			}},
	}
}

// newTPCC is tpcc's workload for resolved parameters.
func newTPCC(db sqldb.DB, p Params) *tpcc.Workload {
	return &tpcc.Workload{DB: db, Scale: p.Scale, Tables: p.Tables, Mix: p.Mix, Reload: p.Reload, NoFK: p.NoFK, Log: p.Log}
}

// ParseMix reads a mix of transactions as --mix and [bench] mix give it:
// five weights joined by colons ("10:10:1:1:1"); "" is the standard's.
func ParseMix(s string) (tpcc.Mix, error) { return tpcc.ParseMix(s) }

// Names are the workloads' names.
func Names() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Name)
	}
	return out
}

// Get finds a workload by name.
func Get(name string) (Spec, error) {
	for _, s := range All() {
		if s.Name == name {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("unknown workload %q: want one of %s", name, strings.Join(Names(), ", "))
}

// Default is the default workload of an engine family.
func Default(family dbms.Family) Spec {
	for _, s := range All() {
		if slices.Contains(s.DefaultOn, family) {
			return s
		}
	}
	return All()[0]
}

// Fits reports whether the workload runs on an engine family.
func (s Spec) Fits(family dbms.Family) bool { return slices.Contains(s.Engines, family) }

// FitsOn is nil when the workload runs on an engine family, else why not.
func (s Spec) FitsOn(family dbms.Family) error {
	if s.Fits(family) {
		return nil
	}
	names := map[dbms.Family]string{dbms.PostgresFamily: "PostgreSQL", dbms.MySQLFamily: "MySQL/MariaDB"}
	var need []string
	for _, f := range s.Engines {
		need = append(need, names[f])
	}
	return fmt.Errorf("workload %s needs %s; the host's engine is %s", s.Name, strings.Join(need, " or "), family)
}

// KeyError is a setting the workload does not take: Key as the inventory
// names it (mix, use_fk, script, setup_script), the workloads that take
// it (For), and why this one does not. It reads as the flag ("--script is
// for sql; tpcb runs its own transactions"); where the value came from the
// inventory, pidb names its line instead.
type KeyError struct {
	Key, For, Why string
}

func (e *KeyError) Error() string {
	flag := "--" + strings.ReplaceAll(e.Key, "_", "-")
	if e.Key == "use_fk" {
		flag = "--use-fk=false"
	}
	return fmt.Sprintf("%s is for %s; %s", flag, e.For, e.Why)
}

// Resolve fills p's zero parameters with the workload's defaults and checks
// the protocol; parameters the workload does not have are cleared, so a
// saved run records only what applied.
func (s Spec) Resolve(p Params) (Params, error) {
	pick := func(v, def int) int {
		if def == 0 {
			return 0
		}
		if v == 0 {
			return def
		}
		return v
	}
	p.Scale, p.Tables, p.TableSize = pick(p.Scale, s.Defaults.Scale), pick(p.Tables, s.Defaults.Tables), pick(p.TableSize, s.Defaults.TableSize)
	if p.Protocol == "" {
		p.Protocol = s.Protocols[0]
	}
	switch {
	case s.HasMix && p.Mix == (tpcc.Mix{}):
		p.Mix = tpcc.StandardMix
	case !s.HasMix && p.Mix != (tpcc.Mix{}):
		return p, &KeyError{Key: "mix", For: NamesWhere(func(s Spec) bool { return s.HasMix }), Why: s.Name + " runs one kind of transaction"}
	}
	if p.NoFK && !s.ForeignKeys {
		return p, &KeyError{Key: "use_fk", For: NamesWhere(func(s Spec) bool { return s.ForeignKeys }), Why: s.Name + " has no foreign keys"}
	}
	switch scripted := NamesWhere(func(s Spec) bool { return s.Scripted }); {
	case s.Scripted && p.Script == nil:
		return p, fmt.Errorf("workload %s runs your own script: name it with --script FILE.sql or [bench] script", s.Name)
	case !s.Scripted && p.Script != nil:
		return p, &KeyError{Key: "script", For: scripted, Why: s.Name + " runs its own transactions"}
	case !s.Scripted && p.Setup != nil:
		return p, &KeyError{Key: "setup_script", For: scripted, Why: s.Name + " loads its own data"}
	}
	if !slices.Contains(s.Protocols, p.Protocol) {
		if len(s.Protocols) == 1 {
			return p, fmt.Errorf("--protocol %s is not for %s, which sends %s statements, as sysbench does", p.Protocol, s.Name, s.Protocols[0])
		}
		names := make([]string, len(s.Protocols))
		for i, x := range s.Protocols {
			names[i] = string(x)
		}
		return p, fmt.Errorf("--protocol %q: want %s", p.Protocol, strings.Join(names, " or "))
	}
	return p, nil
}

// NamesWhere names the workloads for which has is true, joined by
// "and", for a message that says which workloads a flag is for.
func NamesWhere(has func(Spec) bool) string {
	var names []string
	for _, s := range All() {
		if has(s) {
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, " and ")
}

// joinFamilies writes families as help does: "postgres and mysql".
func joinFamilies(fs []dbms.Family) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return strings.Join(names, " and ")
}

// Help is one line for the command line's help: each workload and where
// it runs or is the default.
func Help() string {
	var parts []string
	for _, s := range All() {
		where := "on " + joinFamilies(s.Engines)
		if len(s.DefaultOn) > 0 {
			where = "the default on " + joinFamilies(s.DefaultOn) + ", runs " + where
		}
		parts = append(parts, s.Name+" ("+where+")")
	}
	return strings.Join(parts, ", ")
}

// ParamHelp is the help of one parameter (scale, tables, table_size):
// each workload that has it, what it means there and its default.
func ParamHelp(key string) string {
	var parts []string
	for _, s := range All() {
		def := map[string]int{"scale": s.Defaults.Scale, "tables": s.Defaults.Tables, "table_size": s.Defaults.TableSize}[key]
		if def != 0 {
			parts = append(parts, fmt.Sprintf("%s: %s (default %d)", s.Name, s.Means[key], def))
		}
	}
	return strings.Join(parts, "; ")
}
