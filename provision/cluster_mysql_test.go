package provision

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pidb/cluster"
	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/internal/shtest"
)

// myMember is member on MariaDB 10.11.
func myMember(name string, r *fakerun.Runner) *Target {
	tg := member(name, r)
	tg.Host.Engine = dbms.MySQLFamily
	tg.Facts.Engine = facts.EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true}
	return tg
}

func mariaEngine(t *testing.T) engine.Engine {
	t.Helper()
	e, err := engine.Of(facts.Facts{Engine: facts.EngineState{Flavor: "mariadb", Version: "10.11.6"}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The mysql_native_password hashes of "s3cret" and "another", as
// MariaDB's PASSWORD() gives them.
const (
	s3cretHash  = "*B865CAE8F340F6CE1485A06F4492BB49718DF1EC"
	anotherHash = "*CB3326D5279DE7915FE5D743232165EE887883CA"
)

// TestMyReplicationPlan: on a MariaDB member the replication account is
// at each other host's address, in the addresses' order, made with the
// password's hash, REQUIRE SSL and REPLICATION SLAVE alone; a stale hash,
// TLS not required or more privileges are put right, an account at a
// host of no peer's is dropped; all right, nothing to do.
func TestMyReplicationPlan(t *testing.T) {
	tg := myMember("pi5-b", &fakerun.Runner{})
	todo, sql := myReplicationPlan(tg, map[string]myReplicationAccount{}, "s3cret")
	if want := []string{"the replication account at 10.0.0.30", "the replication account at 10.0.0.40"}; !reflect.DeepEqual(todo, want) {
		t.Errorf("fresh: %q", todo)
	}
	if want := "SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\n" +
		"CREATE USER 'pidb_replication'@'10.0.0.30' IDENTIFIED BY PASSWORD '*B865CAE8F340F6CE1485A06F4492BB49718DF1EC' REQUIRE SSL;\n" +
		"GRANT REPLICATION SLAVE ON *.* TO 'pidb_replication'@'10.0.0.30';\n" +
		"CREATE USER 'pidb_replication'@'10.0.0.40' IDENTIFIED BY PASSWORD '*B865CAE8F340F6CE1485A06F4492BB49718DF1EC' REQUIRE SSL;\n" +
		"GRANT REPLICATION SLAVE ON *.* TO 'pidb_replication'@'10.0.0.40';\n"; sql != want {
		t.Errorf("fresh SQL:\n%s\nwant\n%s", sql, want)
	}
	if strings.Contains(sql, "s3cret") {
		t.Error("the password itself is in the SQL")
	}

	// all there and right (the server may print the hash in lower case)
	done := map[string]myReplicationAccount{
		"10.0.0.30": {hash: s3cretHash, ssl: "ANY", okay: true},
		"10.0.0.40": {hash: strings.ToLower(s3cretHash), ssl: "ANY", okay: true},
	}
	if todo, sql := myReplicationPlan(tg, done, "s3cret"); todo != nil || sql != "" {
		t.Errorf("done: %q\n%s", todo, sql)
	}
	// the primary's account alone on a replica: any member may become the primary
	if todo, _ := myReplicationPlan(myMember("pi3", &fakerun.Runner{}), map[string]myReplicationAccount{}, "s3cret"); !reflect.DeepEqual(todo, []string{"the replication account at 10.0.0.40", "the replication account at 10.0.0.50"}) {
		t.Errorf("pi3: %q", todo)
	}

	// TLS not required at one, another password and more privileges at
	// the other, two accounts at hosts of no peer's
	wrong := map[string]myReplicationAccount{
		"10.0.0.30": {hash: s3cretHash, ssl: "", okay: true},
		"10.0.0.40": {hash: anotherHash, ssl: "ANY", okay: false},
		"10.0.0.99": {hash: s3cretHash, ssl: "ANY", okay: true},
		"%":         {hash: s3cretHash, ssl: "ANY", okay: true},
	}
	todo, sql = myReplicationPlan(tg, wrong, "s3cret")
	if want := []string{"pidb_replication@10.0.0.30 to require TLS", "set pidb_replication@10.0.0.40's password",
		"give pidb_replication@10.0.0.40 replication and nothing more", "drop pidb_replication@%, no host of the cluster's",
		"drop pidb_replication@10.0.0.99, no host of the cluster's"}; !reflect.DeepEqual(todo, want) {
		t.Errorf("wrong: %q", todo)
	}
	if want := "SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\n" +
		"ALTER USER 'pidb_replication'@'10.0.0.30' REQUIRE SSL;\n" +
		"ALTER USER 'pidb_replication'@'10.0.0.40' IDENTIFIED BY PASSWORD '*B865CAE8F340F6CE1485A06F4492BB49718DF1EC';\n" +
		"REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'pidb_replication'@'10.0.0.40';\n" +
		"GRANT REPLICATION SLAVE ON *.* TO 'pidb_replication'@'10.0.0.40';\n" +
		"DROP USER 'pidb_replication'@'%';\n" +
		"DROP USER 'pidb_replication'@'10.0.0.99';\n"; sql != want {
		t.Errorf("wrong SQL:\n%s\nwant\n%s", sql, want)
	}
	// the hash of the password kept, "another": the account at 10.0.0.30 is stale
	todo, sql = myReplicationPlan(tg, done, "another")
	if want := []string{"set pidb_replication@10.0.0.30's password", "set pidb_replication@10.0.0.40's password"}; !reflect.DeepEqual(todo, want) ||
		!strings.Contains(sql, "ALTER USER 'pidb_replication'@'10.0.0.30' IDENTIFIED BY PASSWORD '*CB3326D5279DE7915FE5D743232165EE887883CA';\n") {
		t.Errorf("another password: %q\n%s", todo, sql)
	}
}

// TestMyReplicaFollows: a replica follows its primary where it replicates
// from the primary's address as pidb_replication by GTID (Slave_Pos),
// running or not, and no seed of it was cut short.
func TestMyReplicaFollows(t *testing.T) {
	following := cluster.Report{InRecovery: true, ReceiveFrom: "10.0.0.40", SourceUser: "pidb_replication", UsingGTID: "Slave_Pos", Receiver: "streaming"}
	change := func(f func(*myReplica)) myReplica {
		st := myReplica{report: following}
		f(&st)
		return st
	}
	for _, c := range []struct {
		what string
		st   myReplica
		want bool
	}{
		{"streaming", myReplica{report: following}, true},
		{"stopped", change(func(st *myReplica) { st.report.Receiver = "stopped" }), true},
		{"a seed cut short", change(func(st *myReplica) { st.seeding = true }), false},
		{"on its own", change(func(st *myReplica) { st.report.InRecovery = false }), false},
		{"from another", change(func(st *myReplica) { st.report.ReceiveFrom = "10.0.0.99" }), false},
		{"as another account", change(func(st *myReplica) { st.report.SourceUser = "repl" }), false},
		{"by file positions", change(func(st *myReplica) { st.report.UsingGTID = "No" }), false},
		{"by Current_Pos", change(func(st *myReplica) { st.report.UsingGTID = "Current_Pos" }), false},
	} {
		if got := c.st.follows("10.0.0.40"); got != c.want {
			t.Errorf("%s: follows = %v, want %v", c.what, got, c.want)
		}
	}
}

// TestMyReplicaOwn: a server's own databases are those with tables,
// pidb's aside, in their names' order; a replica's and a seed cut short
// hold copies, none of their own.
func TestMyReplicaOwn(t *testing.T) {
	tables := map[string]int{"shop": 3, "pidb": 5, "empty": 0, "crm": 1}
	for _, c := range []struct {
		what string
		st   myReplica
		want []string
	}{
		{"on its own", myReplica{tables: tables}, []string{"crm", "shop"}},
		{"a replica", myReplica{tables: tables, report: cluster.Report{InRecovery: true}}, nil},
		{"a seed cut short", myReplica{tables: tables, seeding: true}, nil},
		{"pidb's alone", myReplica{tables: map[string]int{"pidb": 5, "empty": 0}}, nil},
	} {
		if got := c.st.own(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: own = %q, want %q", c.what, got, c.want)
		}
	}
}

// myStatus is SHOW SLAVE STATUS as mariadb --batch prints it, its columns
// cut to those pidb reads: a replica of 10.0.0.40 with its threads as
// given.
func myStatus(host, io, sql string) string {
	return "Slave_IO_State\tMaster_Host\tMaster_User\tMaster_Port\tSlave_IO_Running\tSlave_SQL_Running\tLast_IO_Error\tLast_SQL_Error\tSeconds_Behind_Master\tUsing_Gtid\tGtid_IO_Pos\n" +
		"Waiting for master to send event\t" + host + "\tpidb_replication\t3306\t" + io + "\t" + sql + "\t\t\t0\tSlave_Pos\t0-1-108\n"
}

// The commands that read a MariaDB replica's state.
const (
	myReadCmd      = `if command -v mariadb >/dev/null 2>&1; then echo pidb-flavor mariadb && mariadb --batch --skip-column-names --default-character-set=utf8mb4 -e 'SELECT '\''self'\'', @@read_only, @@gtid_binlog_pos, @@gtid_slave_pos UNION ALL SELECT '\''sender'\'', SUBSTRING_INDEX(host, '\'':'\'', 1), state, '\'''\'' FROM information_schema.processlist WHERE command = '\''Binlog Dump'\''' && echo pidb-slave-status && mariadb --batch --default-character-set=utf8mb4 -e 'SHOW SLAVE STATUS'; else echo pidb-flavor mysql && mysql --batch --skip-column-names --default-character-set=utf8mb4 -e 'SELECT '\''self'\'', @@read_only, REPLACE(@@GLOBAL.gtid_executed, '\''\n'\'', '\'''\''), '\'''\'' UNION ALL SELECT '\''sender'\'', SUBSTRING_INDEX(host, '\'':'\'', 1), state, '\'''\'' FROM information_schema.processlist WHERE command LIKE '\''Binlog Dump%'\''' && echo pidb-slave-status && mysql --batch --default-character-set=utf8mb4 -e 'SHOW REPLICA STATUS'; fi`
	myDatabasesCmd = `mariadb --batch --skip-column-names --default-character-set=utf8mb4 -e 'SELECT s.schema_name, COUNT(t.table_name) FROM information_schema.schemata s LEFT JOIN information_schema.tables t ON t.table_schema = s.schema_name GROUP BY s.schema_name'`
	mySeedingCmd   = "if test -e /etc/mysql/pidb-seeding; then echo yes; fi"
)

// TestMySeedCheck: a MariaDB replica that follows its primary is left
// alone, stopped or not; one on its own with tables of its own is
// refused, naming them; any other is seeded, the note saying what its
// copy replaces: a seed cut short, a copy of another, or its databases.
func TestMySeedCheck(t *testing.T) {
	ctx := context.Background()
	system := [][]string{{"information_schema", "79"}, {"mysql", "31"}, {"performance_schema", "81"}, {"sys", "101"}, {"pidb-accounts", "1"}, {"pidb", "2"}}
	replica := func(self, status string, dbs [][]string, seeding bool) *Target {
		mark := ""
		if seeding {
			mark = "yes\n"
		}
		r := (&fakerun.Runner{Name: "pi3", Strict: true}).
			Exact(myReadCmd, fakerun.Reply{Stdout: "pidb-flavor mariadb\n" + self + "pidb-slave-status\n" + status}).
			Exact(myDatabasesCmd, fakerun.Reply{Stdout: batchRows(append(append([][]string{}, system...), dbs...))}).
			Exact(mySeedingCmd, fakerun.Reply{Stdout: mark})
		return myMember("pi3", r)
	}
	alone, replicating := "self\t0\t0-3-9\t\n", "self\t1\t0-1-108\t0-1-108\n"
	shop := [][]string{{"shop", "4"}}

	// on its own with a database of its own: refused
	tg := replica(alone, "", shop, false)
	_, err := (seedStep{}).Check(ctx, tg)
	if err == nil || err.Error() != `pi3 holds the databases shop, which a copy of pi4 would replace: move them off it, or leave it out of cluster "quiz"` {
		t.Errorf("own databases: %v", err)
	}
	if want := []string{myReadCmd, myDatabasesCmd, mySeedingCmd}; !reflect.DeepEqual(tg.Root.(*fakerun.Runner).Ran(), want) {
		t.Errorf("ran %q", tg.Root.(*fakerun.Runner).Ran())
	}

	for _, c := range []struct {
		what   string
		tg     *Target
		needed bool
		note   string
	}{
		{"following", replica(replicating, myStatus("10.0.0.40", "Yes", "Yes"), shop, false), false, ""},
		{"following, its primary away", replica(replicating, myStatus("10.0.0.40", "Connecting", "Yes"), shop, false), false, ""},
		{"a seed cut short", replica(replicating, myStatus("10.0.0.40", "Yes", "Yes"), shop, true), true,
			"seeded from pi4 (a consistent mariadb-dump, then replication by GTID over TLS): the copy an earlier seed cut short is replaced by a copy of pi4's"},
		{"a seed cut short before it replicated", replica(alone, "", shop, true), true,
			"seeded from pi4 (a consistent mariadb-dump, then replication by GTID over TLS): the copy an earlier seed cut short is replaced by a copy of pi4's"},
		{"a replica of another", replica(replicating, myStatus("10.0.0.99", "Yes", "Yes"), shop, false), true,
			"seeded from pi4 (a consistent mariadb-dump, then replication by GTID over TLS): its copy of 10.0.0.99 is replaced by a copy of pi4's"},
		{"fresh", replica(alone, "", [][]string{{"empty", "0"}}, false), true,
			"seeded from pi4 (a consistent mariadb-dump, then replication by GTID over TLS): its databases are replaced by a copy of pi4's"},
	} {
		ch, err := myCheckSeed(ctx, c.tg, mariaEngine(t))
		if err != nil || ch.Needed != c.needed || ch.Note != c.note || ch.Commands != nil {
			t.Errorf("%s: %+v, %v", c.what, ch, err)
		}
	}

	// the server unreadable: an error, nothing planned
	down := myMember("pi3", (&fakerun.Runner{}).Exact(myReadCmd, fakerun.Reply{Code: 1, Stderr: "ERROR 2002 (HY000): Can't connect"}))
	if ch, err := myCheckSeed(ctx, down, mariaEngine(t)); err == nil || ch.Needed {
		t.Errorf("a server down: %+v, %v", ch, err)
	}
	// a count of tables that is not one
	bad := myMember("pi3", (&fakerun.Runner{}).Exact(myReadCmd, fakerun.Reply{Stdout: "pidb-flavor mariadb\n" + alone + "pidb-slave-status\n"}).
		Exact(myDatabasesCmd, fakerun.Reply{Stdout: "shop\tmany\n"}))
	if _, err := myCheckSeed(ctx, bad, mariaEngine(t)); err == nil || err.Error() != `read the databases: "many" tables` {
		t.Errorf("a bad count: %v", err)
	}
	lost := errors.New("pi3: connection lost")
	gone := myMember("pi3", (&fakerun.Runner{}).Exact(myReadCmd, fakerun.Reply{Stdout: "pidb-flavor mariadb\n" + alone + "pidb-slave-status\n"}).
		Exact(myDatabasesCmd, fakerun.Reply{Stdout: batchRows(shop)}).Exact(mySeedingCmd, fakerun.Reply{Err: lost}))
	if _, err := myCheckSeed(ctx, gone, mariaEngine(t)); !errors.Is(err, lost) {
		t.Errorf("the mark unreadable: %v", err)
	}
}

// TestClearSQL: a replica made ready for its copy: replication stopped
// and forgotten, each database it holds dropped (its name quoted), in
// their names' order, its binary log emptied; out of the binary log.
func TestClearSQL(t *testing.T) {
	got := clearSQL(mariaEngine(t), myReplica{tables: map[string]int{"shop": 3, "pidb": 2, "a`b": 0}})
	want := "SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\n" +
		"STOP SLAVE;\nRESET SLAVE ALL;\n" +
		"DROP DATABASE `a``b`;\nDROP DATABASE `pidb`;\nDROP DATABASE `shop`;\n" +
		"RESET MASTER;\n"
	if got != want {
		t.Errorf("clearSQL:\n%s\nwant\n%s", got, want)
	}
	if got := clearSQL(mariaEngine(t), myReplica{}); got != "SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\nSTOP SLAVE;\nRESET SLAVE ALL;\nRESET MASTER;\n" {
		t.Errorf("clearSQL of nothing:\n%s", got)
	}
}

// TestFollowSQL: a seeded replica's binary log starts where its copy was
// taken (gtid_slave_pos, which the dump set), then it replicates from
// its primary by GTID over TLS, the primary's certificate verified.
func TestFollowSQL(t *testing.T) {
	got := followSQL(myMember("pi3", &fakerun.Runner{}), mariaEngine(t), `pw'\`)
	want := "SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\n" +
		"RESET MASTER;\nSET @pos = @@GLOBAL.gtid_slave_pos;\n" +
		"SET @sql = IF(@pos = '', 'DO 0', CONCAT('SET GLOBAL gtid_binlog_state = ', QUOTE(@pos)));\n" +
		"PREPARE s FROM @sql;\nEXECUTE s;\nDEALLOCATE PREPARE s;\n" +
		`CHANGE MASTER TO MASTER_HOST = '10.0.0.40', MASTER_PORT = 3306, MASTER_USER = 'pidb_replication', MASTER_PASSWORD = 'pw''\\', MASTER_SSL = 1, MASTER_SSL_CA = '/etc/mysql/pidb-primary.crt', MASTER_SSL_VERIFY_SERVER_CERT = 1, MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 10;` + "\n" +
		"START SLAVE;\n"
	if got != want {
		t.Errorf("followSQL:\n%s\nwant\n%s", got, want)
	}
}

// TestMySQLSeedSQL: Oracle MySQL's replica is made ready in MySQL's
// words, its binary log and GTIDs emptied by 8.4's statement (RESET
// MASTER before it), so that the dump's GTID_PURGED can be set; it then
// follows its primary by auto-position; its primary's dump carries its
// GTIDs.
func TestMySQLSeedSQL(t *testing.T) {
	quiet := "SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\n"
	my97, _ := engine.New(dbms.MySQL, "9.7.4")
	my80, _ := engine.New(dbms.MySQL, "8.0.39")
	if got, want := clearSQL(my97, myReplica{tables: map[string]int{"pidb": 2}}), quiet+"STOP REPLICA;\nRESET REPLICA ALL;\nDROP DATABASE `pidb`;\nRESET BINARY LOGS AND GTIDS;\n"; got != want {
		t.Errorf("clearSQL on 9.7:\n%s\nwant\n%s", got, want)
	}
	if got := clearSQL(my80, myReplica{}); !strings.HasSuffix(got, "RESET REPLICA ALL;\nRESET MASTER;\n") {
		t.Errorf("clearSQL on 8.0:\n%s", got)
	}
	got := followSQL(myMember("pi3", &fakerun.Runner{}), my97, "pw")
	if want := quiet + cluster.ChangeSource("10.0.0.40", 3306, "pw") + "START REPLICA;\n"; got != want {
		t.Errorf("followSQL on MySQL:\n%s\nwant\n%s", got, want)
	}
	sb := shtest.New(t)
	r := sb.Run(dumpCmd(my97, []string{"pidb", "shop"}), "")
	if len(r.Calls) != 1 || r.Calls[0].Name != "mysqldump" || !slices.Equal(r.Calls[0].Args, []string{"--single-transaction", "--set-gtid-purged=ON", "--routines", "--events", "--triggers", "--hex-blob", "--default-character-set=utf8mb4", "--databases", "--", "pidb", "shop"}) {
		t.Errorf("dumpCmd on MySQL: %+v", r.Calls)
	}
}

// TestDumpCmd: the primary's dump is one transaction with its GTID
// position, routines, events and triggers, blobs in hex, in utf8mb4, of
// the databases named, each reaching mariadb-dump as a name whatever it
// holds (the names are the primary's: its administrator makes them); the
// replica loads it with client commands off.
func TestDumpCmd(t *testing.T) {
	sb := shtest.New(t)
	names := append([]string{"pidb", "shop", shtest.Option, "--result-file=/etc/x"}, shtest.Hostile("db")...)
	r := sb.Run(dumpCmd(mariaEngine(t), names), "")
	r.Check(t, "dumpCmd", "", names...)
	if len(r.Calls) != 1 || !slices.Equal(r.Calls[0].Args, append([]string{"--single-transaction", "--master-data=1", "--gtid", "--routines", "--events", "--triggers", "--hex-blob", "--default-character-set=utf8mb4", "--databases", "--"}, names...)) {
		t.Errorf("dumpCmd: %v", r.Calls)
	}
	maria, _ := engine.New(dbms.MariaDB, "10.11.6")
	for _, sandbox := range []bool{false, true} {
		sb.Fail()
		if !sandbox {
			sb.Fail("grep") // mariadb --help names no --sandbox
		}
		r = sb.Run(seedLoad(maria), "")
		load := r.Calls[len(r.Calls)-1]
		want := []string{"--binary-mode", "--batch", "--skip-column-names", "--default-character-set=utf8mb4"}
		if sandbox {
			want = slices.Insert(want, 1, "--sandbox")
		}
		if load.Name != "mariadb" || !slices.Equal(load.Args, want) {
			t.Errorf("the load, --sandbox known %v: %v", sandbox, r.Calls)
		}
	}
}
