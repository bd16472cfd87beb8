package workloads

import (
	"strings"
	"testing"

	"pidb/bench/sqldb"
)

func TestRegistry(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "tpcb,oltp-read-only,quiz" {
		t.Errorf("names %s", got)
	}
	if Default("postgres").Name != "tpcb" || Default("mysql").Name != "oltp-read-only" {
		t.Errorf("defaults: %s, %s", Default("postgres").Name, Default("mysql").Name)
	}
	tpcb, _ := Get("tpcb")
	if tpcb.Fits("mysql") || !tpcb.Fits("postgres") {
		t.Errorf("tpcb fits %v", tpcb.Engines)
	}
	if _, err := Get("tpcc"); err == nil || !strings.Contains(err.Error(), `unknown workload "tpcc": want one of tpcb, oltp-read-only, quiz`) {
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
	tpcb, _ := Get("tpcb")
	if p, err := tpcb.Resolve(Params{Protocol: "prepared"}); err != nil || p.Scale != 10 || p.Protocol != "prepared" {
		t.Errorf("tpcb: %+v %v", p, err)
	}
}

func TestHelp(t *testing.T) {
	if got, want := ParamHelp("scale"), "tpcb: pgbench's scale (default 10); quiz: users (default 1000)"; got != want {
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
