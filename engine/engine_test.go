package engine

import (
	"strings"
	"testing"

	"pidb/facts"
	"pidb/tune"
)

func TestEngineCommands(t *testing.T) {
	pg, _ := Of(facts.Facts{Engine: facts.EngineState{Flavor: "postgres", Version: "15.18"}})
	if pg.ConfPath != "/etc/postgresql/15/main/conf.d/90-pidb.conf" || pg.Service != "postgresql@15-main" || pg.TuneAs != "15" {
		t.Errorf("postgres: %+v", pg)
	}
	if got, want := pg.RestartCmd(), "systemctl reset-failed postgresql@15-main 2>/dev/null; systemctl restart postgresql@15-main"; got != want {
		t.Errorf("restart = %q", got)
	}
	if got, want := pg.CheckCmd(), "cd /tmp && runuser -u postgres -- /usr/lib/postgresql/15/bin/postgres -C data_directory -D /etc/postgresql/15/main >/dev/null"; got != want {
		t.Errorf("check = %q\nwant   %q", got, want)
	}
	if got, want := pg.Client("SELECT 'x'"), `cd /tmp && runuser -u postgres -- psql -AtqX -F '|' -c 'SELECT '\''x'\'''`; got != want {
		t.Errorf("client = %q\nwant    %q", got, want)
	}
	my, _ := Of(facts.Facts{Engine: facts.EngineState{Flavor: "mariadb", Version: "10.11.6"}})
	if my.ConfPath != "/etc/mysql/mariadb.conf.d/90-pidb.cnf" || my.Service != "mariadb" || my.TuneAs != "10.11" || my.ReadyCmd() != "mariadb-admin ping --silent" {
		t.Errorf("mariadb: %+v", my)
	}
	ms, _ := Of(facts.Facts{Engine: facts.EngineState{Flavor: "mysql", Version: "8.0.39"}})
	if ms.ConfPath != "/etc/mysql/mysql.conf.d/90-pidb.cnf" || ms.TuneAs != "8.0.39" || ms.CheckCmd() != "cd /tmp && mysqld --validate-config" {
		t.Errorf("mysql: %+v", ms)
	}
	if _, err := Of(facts.Facts{}); err == nil {
		t.Errorf("no engine: no error")
	}
	s := tune.Settings{{Name: "shared_buffers", Value: tune.Size(1 << 30)}, {Name: "jit", Value: tune.Switch(false)}}
	if got, want := pg.ReadBackSQL(s), "SELECT name, setting, coalesce(unit, '') FROM pg_settings WHERE name IN ('shared_buffers', 'jit')"; got != want {
		t.Errorf("read back = %q", got)
	}
	if got, want := my.ReadBackSQL(s), "SELECT @@shared_buffers, @@jit"; got != want {
		t.Errorf("read back = %q", got)
	}
}

func TestCompareLive(t *testing.T) {
	pg := Engine{Flavor: "postgres"}
	s := tune.Settings{
		{Name: "shared_buffers", Value: tune.Size(1 << 30)},
		{Name: "work_mem", Value: tune.Size(10 << 20)},
		{Name: "jit", Value: tune.Switch(false)},
		{Name: "random_page_cost", Value: tune.Number(1.5)},
		{Name: "synchronous_commit", Value: tune.Word("off")},
		{Name: "max_connections", Value: tune.Integer(100)},
	}
	// what pg_settings says on PostgreSQL 15 for those values
	live := "shared_buffers|131072|8kB\nwork_mem|10240|kB\njit|off|\nrandom_page_cost|1.5|\nsynchronous_commit|off|\nmax_connections|100|\n"
	if bad := pg.CompareLive(s, live); len(bad) != 0 {
		t.Errorf("equal values reported as different: %v", bad)
	}
	live = "shared_buffers|16384|8kB\nwork_mem|10240|kB\njit|on|\nrandom_page_cost|4|\nsynchronous_commit|off|\n"
	bad := pg.CompareLive(s, live)
	var names []string
	for _, m := range bad {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "shared_buffers,jit,random_page_cost,max_connections" {
		t.Errorf("mismatches = %v", bad)
	}
	my := Engine{Flavor: "mariadb"}
	ms := tune.Settings{{Name: "innodb_buffer_pool_size", Value: tune.Size(256 << 20)}, {Name: "log_bin", Value: tune.Switch(false)},
		{Name: "innodb_adaptive_hash_index", Value: tune.Switch(true)}, {Name: "innodb_flush_method", Value: tune.Word("O_DIRECT")}}
	if bad := my.CompareLive(ms, "268435456\t0\t1\tO_DIRECT\n"); len(bad) != 0 {
		t.Errorf("mariadb equal values: %v", bad)
	}
	if bad := my.CompareLive(ms, "134217728\t1\t1\tfsync\n"); len(bad) != 3 {
		t.Errorf("mariadb mismatches: %v", bad)
	}
}
