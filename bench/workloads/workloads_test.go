package workloads

import (
	"strings"
	"testing"

	"pidb/bench/sqldb"
	"pidb/bench/workloads/script"
	tpccpkg "pidb/bench/workloads/tpcc"
)

func TestRegistry(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "tpcb,oltp-read-only,quiz,tpcc,sql" {
		t.Errorf("names %s", got)
	}
	if Default("postgres").Name != "tpcb" || Default("mysql").Name != "oltp-read-only" {
		t.Errorf("defaults: %s, %s", Default("postgres").Name, Default("mysql").Name)
	}
	tpcb, _ := Get("tpcb")
	if tpcb.Fits("mysql") || !tpcb.Fits("postgres") {
		t.Errorf("tpcb fits %v", tpcb.Engines)
	}
	if _, err := Get("tpc-h"); err == nil || !strings.Contains(err.Error(), `unknown workload "tpc-h": want one of tpcb, oltp-read-only, quiz, tpcc, sql`) {
		t.Errorf("unknown: %v", err)
	}
	for _, s := range All() {
		w := s.New(sqldbFor(s), Params{})
		if w.Name() != s.Name {
			t.Errorf("%s's constructor makes %s", s.Name, w.Name())
		}
	}
}

func TestResolveParams(t *testing.T) {
	oltp, _ := Get("oltp-read-only")
	p, err := oltp.Resolve(Params{Scale: 7, TableSize: 500})
	if err != nil || p.Scale != 0 || p.Tables != 1 || p.TableSize != 500 || p.Protocol != "prepared" {
		t.Errorf("oltp: %+v %v", p, err)
	}
	if _, err := oltp.Resolve(Params{Protocol: "simple"}); err == nil {
		t.Errorf("oltp with the simple protocol")
	}
	tpcc, _ := Get("tpcc")
	if p, err := tpcc.Resolve(Params{}); err != nil || p.Scale != 1 || p.Tables != 1 || p.Mix != (tpccpkg.Mix{45, 43, 4, 4, 4}) || p.Protocol != "simple" {
		t.Errorf("tpcc: %+v %v", p, err)
	}
	if p, err := tpcc.Resolve(Params{Mix: tpccpkg.Mix{10, 10, 1, 1, 1}}); err != nil || p.Mix != (tpccpkg.Mix{10, 10, 1, 1, 1}) {
		t.Errorf("tpcc with sysbench-tpcc's mix: %+v %v", p, err)
	}
	tpcb, _ := Get("tpcb")
	if _, err := tpcb.Resolve(Params{Mix: tpccpkg.Mix{10, 10, 1, 1, 1}}); err == nil {
		t.Errorf("tpcb with a mix")
	}
	if _, err := tpcb.Resolve(Params{NoFK: true}); err == nil || !strings.Contains(err.Error(), "--use-fk=false is for tpcc") {
		t.Errorf("tpcb without foreign keys: %v", err)
	}
	if p, err := tpcc.Resolve(Params{NoFK: true}); err != nil || !p.NoFK {
		t.Errorf("tpcc without foreign keys: %+v %v", p, err)
	}
	// sql runs a script, and only sql does
	sql, _ := Get("sql")
	if _, err := sql.Resolve(Params{}); err == nil || !strings.Contains(err.Error(), "workload sql runs your own script: name it with --script FILE.sql") {
		t.Errorf("sql without a script: %v", err)
	}
	s, err := script.Parse("q.sql", "SELECT 1;\n")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := sql.Resolve(Params{Script: s}); err != nil || p.Scale != 1 || p.Protocol != "simple" || p.Script != s {
		t.Errorf("sql: %+v %v", p, err)
	}
	if _, err := tpcb.Resolve(Params{Script: s}); err == nil || err.Error() != "--script is for sql; tpcb runs its own transactions" {
		t.Errorf("tpcb with a script: %v", err)
	}
	if _, err := tpcc.Resolve(Params{Setup: s}); err == nil || err.Error() != "--setup-script is for sql; tpcc loads its own data" {
		t.Errorf("tpcc with a setup script: %v", err)
	}
	if p, err := tpcb.Resolve(Params{Protocol: "prepared"}); err != nil || p.Scale != 10 || p.Protocol != "prepared" {
		t.Errorf("tpcb: %+v %v", p, err)
	}
}

func TestHelp(t *testing.T) {
	if got, want := ParamHelp("scale"), "tpcb: pgbench's scale (default 10); quiz: users (default 1000); tpcc: warehouses per table copy (default 1); sql: the script's :scale (default 1)"; got != want {
		t.Errorf("scale help %q", got)
	}
	if got, want := ParamHelp("table_size"), "oltp-read-only: rows per table (default 10000)"; got != want {
		t.Errorf("table_size help %q", got)
	}
}

// sqldbFor is a database of the first engine the workload runs on, never opened.
func sqldbFor(s Spec) sqldb.DB {
	return sqldb.DB{Dialect: s.Engines[0]}
}

// TestReadsAndWrites: what each workload does to the data once it is
// there, which bench --cluster and a replica's refusal go by: the quiz
// and oltp-read-only only read, tpcb and tpcc always write, a user's
// script is neither known to read only nor to write.
func TestReadsAndWrites(t *testing.T) {
	want := map[string][2]bool{"quiz": {true, false}, "oltp-read-only": {true, false}, "tpcb": {false, true}, "tpcc": {false, true}, "sql": {false, false}}
	for _, s := range All() {
		w, ok := want[s.Name]
		if !ok {
			t.Errorf("%s: not known to this test", s.Name)
			continue
		}
		if s.ReadOnly != w[0] || s.Writes != w[1] {
			t.Errorf("%s: ReadOnly %v, Writes %v; want %v, %v", s.Name, s.ReadOnly, s.Writes, w[0], w[1])
		}
	}
}
