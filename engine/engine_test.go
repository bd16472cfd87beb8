package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/facts"
	"pidb/internal/shtest"
	"pidb/inventory"
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
	if ms.ConfPath != "/etc/mysql/mysql.conf.d/zz-pidb.cnf" || ms.TuneAs != "8.0.39" || ms.CheckCmd() != "cd /tmp && mysqld --validate-config" {
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

// TestMariaDBProgramNames: MariaDB's programs answer to MariaDB's names
// from 10.5 (10.4.6 added them as links); a 10.3, as Debian 10 and Ubuntu
// 20.04 ship, has only MySQL's, and pidb calls those there.
func TestMariaDBProgramNames(t *testing.T) {
	for _, c := range []struct {
		flavor  dbms.Flavor
		version string
		client  string // the SQL client, the admin client, the dump, the server
		admin   string
		dump    string
		daemon  string
	}{
		{dbms.MariaDB, "10.3.39", "mysql", "mysqladmin", "mysqldump", "mysqld"},
		{dbms.MariaDB, "10.4.34", "mysql", "mysqladmin", "mysqldump", "mysqld"},
		{dbms.MariaDB, "10.5.29", "mariadb", "mariadb-admin", "mariadb-dump", "mariadbd"},
		{dbms.MariaDB, "11.8.3", "mariadb", "mariadb-admin", "mariadb-dump", "mariadbd"},
		{dbms.MariaDB, "", "mariadb", "mariadb-admin", "mariadb-dump", "mariadbd"}, // a cluster's engine, of no version
		{dbms.MySQL, "9.7.4", "mysql", "mysqladmin", "mysqldump", "mysqld"},
	} {
		e := Engine{Flavor: c.flavor, Version: c.version}
		if c.version != "" {
			var err error
			if e, err = New(c.flavor, c.version); err != nil {
				t.Fatal(err)
			}
		}
		name := string(c.flavor) + " " + c.version
		if got := e.Script(); got != c.client+" --batch --skip-column-names --default-character-set=utf8mb4" {
			t.Errorf("%s: script %q", name, got)
		}
		if got := e.Client("SELECT 1"); got != c.client+" -NB -e 'SELECT 1'" {
			t.Errorf("%s: client %q", name, got)
		}
		if got := e.Query("SELECT 1"); !strings.HasPrefix(got, c.client+" --batch ") {
			t.Errorf("%s: query %q", name, got)
		}
		if got := e.ReadyCmd(); got != c.admin+" ping --silent" {
			t.Errorf("%s: ready %q", name, got)
		}
		if got := e.DumpClient(); got != c.dump {
			t.Errorf("%s: dump %q", name, got)
		}
		if got := e.Daemon(); got != c.daemon {
			t.Errorf("%s: server %q", name, got)
		}
		if c.flavor == dbms.MariaDB && !strings.Contains(e.CheckCmd(), "&& "+c.daemon+" --user=mysql --verbose --help") {
			t.Errorf("%s: check %q", name, e.CheckCmd())
		}
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
	live := "shared_buffers\x00131072\x008kB\x00work_mem\x0010240\x00kB\x00jit\x00off\x00\x00random_page_cost\x001.5\x00\x00synchronous_commit\x00off\x00\x00max_connections\x00100\x00\x00"
	if bad, err := pg.CompareLive(s, live); len(bad) != 0 || err != nil {
		t.Errorf("equal values reported as different: %v, %v", bad, err)
	}
	live = "shared_buffers\x0016384\x008kB\x00work_mem\x0010240\x00kB\x00jit\x00on\x00\x00random_page_cost\x004\x00\x00synchronous_commit\x00off\x00\x00"
	bad, _ := pg.CompareLive(s, live)
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
	if bad, err := my.CompareLive(ms, "268435456\t0\t1\tO_DIRECT\n"); len(bad) != 0 || err != nil {
		t.Errorf("mariadb equal values: %v, %v", bad, err)
	}
	if bad, _ := my.CompareLive(ms, "134217728\t1\t1\tfsync\n"); len(bad) != 3 {
		t.Errorf("mariadb mismatches: %v", bad)
	}
	if _, err := my.CompareLive(ms, "134217728\t1\n"); err == nil {
		t.Errorf("mariadb: two values for four settings read as live values")
	}
}

// psqlRows is what psql -A -t -z -0 prints: a NUL byte after each value
// and after each row.
func psqlRows(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, "\x00") + "\x00")
	}
	return b.String()
}

// TestRowsCannotBeForged: a value holding the separators of the old
// output (a newline, a "|") or the client's own (a tab, a backslash) is
// one value of its row, whatever it says; output that is not whole rows is
// an error. The live settings read the same way: a setting's value cannot
// report another setting.
func TestRowsCannotBeForged(t *testing.T) {
	pg := Engine{Flavor: "postgres"}
	if got, want := pg.Query("SELECT 1"), "cd /tmp && runuser -u postgres -- psql -X -A -t -q -z -0 -c 'SELECT 1'"; got != want {
		t.Errorf("query = %q\nwant    %q", got, want)
	}
	hostile := "ours\ndb:pidb|created by pidb for pidb"
	rows, err := pg.Rows(psqlRows([][]string{{"db", "app", hostile}, {"db", "pidb", ""}}), 3)
	if err != nil || len(rows) != 2 || rows[0][2] != hostile || rows[1][1] != "pidb" || rows[1][2] != "" {
		t.Errorf("postgres rows = %q, %v", rows, err)
	}
	for _, out := range []string{"db\x00app\x00", "db\x00app\x00x", "db|app|x\n"} {
		if rows, err := pg.Rows(out, 3); err == nil {
			t.Errorf("postgres: %q read as rows %q", out, rows)
		}
	}
	if rows, err := pg.Rows("", 3); err != nil || len(rows) != 0 {
		t.Errorf("postgres, no rows: %q, %v", rows, err)
	}

	my := Engine{Flavor: "mariadb"}
	if got, want := my.Query("SELECT 1"), "mariadb --batch --skip-column-names --default-character-set=utf8mb4 -e 'SELECT 1'"; got != want {
		t.Errorf("query = %q\nwant    %q", got, want)
	}
	// the client escapes a tab, a newline, a NUL and a backslash in a value
	rows, err = my.Rows("user\tapp\tx\\ny\\tz\\\\|w\\0\n"+"db\tpidb\t\n", 3)
	if err != nil || len(rows) != 2 || rows[0][2] != "x\ny\tz\\|w\x00" || rows[1][1] != "pidb" {
		t.Errorf("mariadb rows = %q, %v", rows, err)
	}
	for _, out := range []string{"user\tapp\n", "user\tapp\tx", "user\tapp\tx\\q\n", "user\tapp\tx\\\n"} {
		if rows, err := my.Rows(out, 3); err == nil {
			t.Errorf("mariadb: %q read as rows %q", out, rows)
		}
	}

	// the live settings, read through Query (psql -z -0): a value with a
	// "|" or a newline is one value, and a row that is not one setting
	// asked for, once, is an error, not another setting
	s := tune.Settings{{Name: "work_mem", Value: tune.Size(10 << 20)}, {Name: "jit", Value: tune.Switch(false)}}
	if bad, err := pg.CompareLive(s, "work_mem\x0010240\njit|on|\x00kB\x00jit\x00off\x00\x00"); err != nil || len(bad) != 1 || bad[0].Name != "work_mem" || !strings.HasPrefix(bad[0].Live, "10240\njit|on|") {
		t.Errorf("a value with a newline and a |: %v, %v; want work_mem's whole value, and jit as it is", bad, err)
	}
	for _, live := range []string{
		"work_mem\x0010240\x00kB\x00x\x00jit\x00off\x00\x00", // four values in a row
		"work_mem\x0010240\x00kB\x00max_connections\x005\x00\x00",
		"work_mem\x0010240\x00kB\x00work_mem\x005\x00\x00",
		"work_mem|10240|kB\n", // not Query's output
	} {
		if bad, err := pg.CompareLive(s, live); err == nil {
			t.Errorf("%q read as live settings: mismatches %v", live, bad)
		}
	}
	if bad, err := pg.CompareLive(s, "jit\x00off\x00\x00"); err != nil || len(bad) != 1 || bad[0].Live != "(not reported)" {
		t.Errorf("work_mem left out: %v, %v; want it not reported", bad, err)
	}
	if bad, err := pg.CompareLive(s, ""); err != nil || len(bad) != 2 {
		t.Errorf("nothing reported: %v, %v", bad, err)
	}
}

// TestCommandsQuoteValues: every value that reaches a command is one word
// for the shell, whatever it holds; and New refuses a version that is not
// one before it names a path or a unit after it.
func TestCommandsQuoteValues(t *testing.T) {
	for _, v := range []string{"15;reboot", "15.8 $(id)", "15`id`", "15\nid", "1234.1", "15.8-beta", ""} {
		if e, err := New("postgres", v); err == nil {
			t.Errorf("postgres %q: %+v, no error", v, e)
		} else if !strings.Contains(err.Error(), strconv.Quote(v)) {
			t.Errorf("postgres %q: the error does not name the value: %v", v, err)
		}
		if _, err := New("mariadb", v); err == nil && v != "1234.1" {
			t.Errorf("mariadb %q: no error", v)
		}
	}
	e := Engine{Flavor: "postgres", Major: "15; reboot", Service: "postgresql@15; reboot"}
	if got, want := e.CheckCmd(), `cd /tmp && runuser -u postgres -- '/usr/lib/postgresql/15; reboot/bin/postgres' -C data_directory -D '/etc/postgresql/15; reboot/main' >/dev/null`; got != want {
		t.Errorf("check = %q\nwant   %q", got, want)
	}
	if got, want := e.RestartCmd(), `systemctl reset-failed 'postgresql@15; reboot' 2>/dev/null; systemctl restart 'postgresql@15; reboot'`; got != want {
		t.Errorf("restart = %q\nwant     %q", got, want)
	}
}

// TestDesiredPlansConnections: the inventory's max_connections beside the
// host's keys is the connections the tuner plans for, as --max-connections
// is in tune show: max_connections is that number and work_mem shrinks for
// it; a [host.settings] max_connections that disagrees is refused at its
// line.
func TestDesiredPlansConnections(t *testing.T) {
	f := facts.Facts{RAMBytes: 4 << 30, CPUs: 4, Storage: "sd", Engine: facts.EngineState{Flavor: "postgres", Version: "15.18"}}
	e, _ := Of(f)
	_, byRAM, err := Desired(e, f, inventory.Host{Name: "pi4"}, "pis.toml", "balanced")
	if err != nil {
		t.Fatal(err)
	}
	_, planned, err := Desired(e, f, inventory.Host{Name: "pi4", Connections: 300}, "pis.toml", "balanced")
	if err != nil {
		t.Fatal(err)
	}
	conns, _ := planned.Get("max_connections")
	if conns.Value.Int != 300 || conns.Override {
		t.Errorf("max_connections planned for 300: %+v, want 300, the tuner's own", conns)
	}
	a, _ := byRAM.Get("work_mem")
	b, _ := planned.Get("work_mem")
	if b.Value.Bytes >= a.Value.Bytes {
		t.Errorf("work_mem for 300 connections %s, by RAM %s; want it smaller", b.Value.Render("postgres"), a.Value.Render("postgres"))
	}

	clash := inventory.Host{Name: "pi4", Connections: 300, Settings: inventory.Section{"max_connections": {Raw: int64(100), Line: 17}}}
	_, _, err = Desired(e, f, clash, "pis.toml", "balanced")
	var ie *inventory.Error
	if !errors.As(err, &ie) || ie.Line != 17 || !strings.Contains(err.Error(), "planned for are 300") {
		t.Errorf("max_connections 300 planned, 100 set: %v; want an inventory error at line 17 naming the 300", err)
	}
	agree := inventory.Host{Name: "pi4", Connections: 300, Settings: inventory.Section{"max_connections": {Raw: int64(300), Line: 17}}}
	if _, _, err := Desired(e, f, agree, "pis.toml", "balanced"); err != nil {
		t.Errorf("max_connections 300 planned and set: %v", err)
	}
}

// TestSettle: before a measured run PostgreSQL checkpoints, as its
// administrator over the local socket, and then the kernel writes back;
// MySQL and MariaDB only write back.
func TestSettle(t *testing.T) {
	for flavor, want := range map[string]string{
		"postgres": `cd /tmp && runuser -u postgres -- psql -AtqX -F '|' -c CHECKPOINT && sync`,
		"mariadb":  "sync",
		"mysql":    "sync",
	} {
		v := "15.8"
		if flavor != "postgres" {
			v = "10.11.6"
		}
		e, err := New(dbms.Flavor(flavor), v)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Settle(); got != want {
			t.Errorf("%s: %q, want %q", flavor, got, want)
		}
	}
}

// TestDesiredInACluster: a host of a [[cluster]] takes its part's
// settings, its server_id its IPv4 address as a number.
func TestDesiredInACluster(t *testing.T) {
	c := &inventory.Cluster{Name: "shop", Primary: "pi4", Replicas: []string{"pi3"}}
	f := facts.Facts{RAMBytes: 1 << 30, CPUs: 4, Storage: "sd", Engine: facts.EngineState{Flavor: "mariadb", Version: "10.11.6"}}
	e, _ := Of(f)
	for _, x := range []struct {
		host, address, serverID, binlog string // binlog: its read_only line
	}{
		{"pi4", "10.213.41.40", "181741864", ""}, // 10<<24 | 213<<16 | 41<<8 | 40
		{"pi3", "10.213.41.30", "181741854", "read_only = ON"},
	} {
		_, s, err := Desired(e, f, inventory.Host{Name: x.host, Address: x.address, Cluster: c}, "pis.toml", "balanced")
		if err != nil {
			t.Fatal(err)
		}
		id, _ := s.Get("server_id")
		ro := ""
		if r, ok := s.Get("read_only"); ok {
			ro = tune.Line("mariadb", r)
		}
		bin, _ := s.Get("log_bin")
		if id.Value.Render("mariadb") != x.serverID || ro != x.binlog || tune.Line("mariadb", bin) != "log_bin = pidb-bin" {
			t.Errorf("%s: server_id %s, %q, %s; want %s, %q, a binary log", x.host, id.Value.Render("mariadb"), ro, tune.Line("mariadb", bin), x.serverID, x.binlog)
		}
	}
	// PostgreSQL: every host of a cluster plans the server's default
	// connections, a 1 GB replica of a 4 GB primary as well
	pgf := facts.Facts{RAMBytes: 1 << 30, CPUs: 4, Storage: "sd", Engine: facts.EngineState{Flavor: "postgres", Version: "15.8"}}
	pge, _ := Of(pgf)
	pgc := &inventory.Cluster{Name: "quiz", Engine: "postgres", Primary: "pi4", Replicas: []string{"pi3"}}
	_, s, err := Desired(pge, pgf, inventory.Host{Name: "pi3", Address: "10.213.41.30", Cluster: pgc}, "pis.toml", "balanced")
	if conns, _ := s.Get("max_connections"); err != nil || conns.Value.Int != 100 || !strings.Contains(conns.Why, `as cluster "quiz" (100`) {
		t.Errorf("a PostgreSQL replica's max_connections: %+v, %v", conns, err)
	}
	_, s, _ = Desired(pge, pgf, inventory.Host{Name: "pi3", Address: "10.213.41.30"}, "pis.toml", "balanced")
	if conns, _ := s.Get("max_connections"); conns.Value.Int != 40 {
		t.Errorf("on its own, 1 GB: max_connections %d, want 40", conns.Value.Int)
	}
	// on its own: no cluster's settings
	_, s, _ = Desired(e, f, inventory.Host{Name: "pi4", Address: "10.213.41.40"}, "pis.toml", "balanced")
	if x, ok := s.Get("server_id"); ok {
		t.Errorf("a host on its own has server_id %+v", x)
	}
}

// TestCompareLiveQuoted: a quoted value is the same as the server's
// exactly, as pg_settings shows it without the file's quotes.
func TestCompareLiveQuoted(t *testing.T) {
	pg := Engine{Flavor: "postgres"}
	s := tune.Settings{{Name: "synchronous_standby_names", Value: tune.Text(`ANY 1 ("pi3", "pi5")`)}}
	if bad, err := pg.CompareLive(s, "synchronous_standby_names\x00ANY 1 (\"pi3\", \"pi5\")\x00\x00"); len(bad) != 0 || err != nil {
		t.Errorf("equal: %v, %v", bad, err)
	}
	if bad, _ := pg.CompareLive(s, "synchronous_standby_names\x00\x00\x00"); len(bad) != 1 {
		t.Errorf("empty live value: %v", bad)
	}
}

// PostgreSQL's quoting: no value ends its literal or identifier, whatever
// standard_conforming_strings says; a configuration value with a line's
// end is refused. The expected texts are written by hand.
func TestPostgresQuoting(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                       `'plain'`,
		"it's":                        `'it''s'`,
		`a\';COPY x TO PROGRAM 'id';`: `E'a\\'';COPY x TO PROGRAM ''id'';'`,
		"":                            `''`,
	} {
		if got := PostgresString(in); got != want {
			t.Errorf("PostgresString(%q) = %s, want %s", in, got, want)
		}
	}
	if got := PostgresIdent(`a"b`); got != `"a""b"` {
		t.Errorf("PostgresIdent: %s", got)
	}
	for in, want := range map[string]string{
		"host=10.0.0.1 sslmode='verify-ca'": `'host=10.0.0.1 sslmode=\'verify-ca\''`,
		`a\b`:                               `'a\\b'`,
	} {
		if got, err := PostgresConfString(in); got != want || err != nil {
			t.Errorf("PostgresConfString(%q) = %s %v, want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"x'\narchive_command = 'id'", "a\rb", "a\x00"} {
		if got, err := PostgresConfString(bad); err == nil {
			t.Errorf("PostgresConfString(%q) = %s", bad, got)
		}
	}
}

// TestScriptsTakeValuesAsData: the administrator's client commands,
// under sh with their commands stubbed, hand any SQL text to the client
// as it is, and run none of it.
func TestScriptsTakeValuesAsData(t *testing.T) {
	sb := shtest.New(t)
	for _, flavor := range []dbms.Flavor{dbms.Postgres, dbms.MariaDB, dbms.MySQL} {
		e, err := New(flavor, "15.8")
		if flavor != dbms.Postgres {
			e, err = New(flavor, "10.11.6")
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, sql := range shtest.Hostile("SELECT 1; -- ") {
			for _, cmd := range []string{e.Client(sql), e.Query(sql)} {
				r := sb.Run(cmd, "")
				r.Check(t, fmt.Sprintf("%s: %s", flavor, cmd), "", sql)
				if last := r.Calls[len(r.Calls)-1]; last.Args[len(last.Args)-1] != sql {
					t.Errorf("%s: the client's last word is %q, not the SQL", flavor, last.Args[len(last.Args)-1])
				}
			}
		}
	}
}

// TestDesired32Bit: a host whose packages are 32-bit (dpkg says armhf,
// whatever its kernel) is tuned within what a 32-bit process addresses;
// arm64 packages on the same board use all of its RAM.
func TestDesired32Bit(t *testing.T) {
	for userland, want := range map[string]uint64{"armhf": 3 << 30, "arm64": 8 << 30} {
		f := facts.Facts{RAMBytes: 8 << 30, CPUs: 4, Storage: "sd", Arch: "aarch64", Userland: userland, Engine: facts.EngineState{Flavor: "mariadb", Version: "11.8.3"}}
		e, _ := Of(f)
		in, _, err := Desired(e, f, inventory.Host{Name: "pi5"}, "pis.toml", "balanced")
		if in, _ = tune.Normalize(in); err != nil || in.RAMBytes != want {
			t.Errorf("%s on 8 GB: sized for %d MiB, %v; want %d MiB", userland, in.RAMBytes>>20, err, want>>20)
		}
	}
}
