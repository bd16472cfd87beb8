package cluster

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"pidb/dbms"
	"pidb/engine"
	"pidb/internal/fakerun"
)

// TestGTIDCount: a MySQL GTID set's transactions, by each server's
// intervals; a tag names none; anything else is an error.
func TestGTIDCount(t *testing.T) {
	for set, want := range map[string]uint64{
		"": 0,
		"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5":                                              5,
		"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-18":                                        13,
		"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-18,4b2c7e0a-0e27-11f0-8a5e-0242ac110002:7": 14,
		"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5, 4b2c7e0a-0e27-11f0-8a5e-0242ac110002:1-2":    7,
		"3e11fa47-71ca-11e1-9e33-c80aa9429562:pidb:1-3:5":                                       4,
	} {
		if got, err := GTIDCount(set); err != nil || got != want {
			t.Errorf("GTIDCount(%q) = %d, %v; want %d", set, got, err, want)
		}
	}
	for _, bad := range []string{"3e11fa47", "3e11fa47:5-1", "3e11fa47:1-x", "3e11fa47:1-"} {
		if n, err := GTIDCount(bad); err == nil {
			t.Errorf("GTIDCount(%q) = %d, not an error", bad, n)
		}
	}
}

// replicaColumns are the first columns of MySQL 9.7's SHOW REPLICA
// STATUS, and those pidb reads.
var replicaColumns = []string{"Replica_IO_State", "Source_Host", "Source_User", "Source_Port", "Connect_Retry", "Source_Log_File",
	"Read_Source_Log_Pos", "Relay_Log_File", "Relay_Log_Pos", "Relay_Source_Log_File", "Replica_IO_Running", "Replica_SQL_Running",
	"Last_IO_Error", "Last_SQL_Error", "Seconds_Behind_Source", "Executed_Gtid_Set", "Auto_Position"}

func replicaStatus(values map[string]string) string {
	row := make([]string, len(replicaColumns))
	for i, c := range replicaColumns {
		row[i] = values[c]
	}
	return strings.Join(replicaColumns, "\t") + "\n" + strings.Join(row, "\t") + "\n"
}

const uuid40 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"

// TestParseMySQL: a MySQL primary's report (writable, gtid_executed's
// transactions, its binlog dump threads) and a replica's: streaming only
// where both threads run from its source by auto-position.
func TestParseMySQL(t *testing.T) {
	p, err := parseMySQL("self\t0\t" + uuid40 + ":1-120\t\nsender\t10.0.0.30\tSource has sent all binlog to replica; waiting for more updates\t\npidb-slave-status\n")
	if err != nil || p.Flavor != dbms.MySQL || p.InRecovery || p.ReadOnly || p.WAL != 120 || len(p.Senders) != 1 || p.Senders[0].Name != "10.0.0.30" {
		t.Errorf("primary: %+v, %v", p, err)
	}
	streaming := map[string]string{"Replica_IO_State": "Waiting for source to send event", "Source_Host": "10.0.0.40", "Source_User": "pidb_replication",
		"Replica_IO_Running": "Yes", "Replica_SQL_Running": "Yes", "Seconds_Behind_Source": "2", "Auto_Position": "1"}
	r, err := parseMySQL("self\t1\t" + uuid40 + ":1-100\t\npidb-slave-status\n" + replicaStatus(streaming))
	if err != nil || !r.InRecovery || !r.ReadOnly || r.Receiver != Streaming || r.ReceiveFrom != "10.0.0.40" || !r.ByGTID() || r.Replayed != 100 ||
		r.ReplayDelay == nil || *r.ReplayDelay != 2 {
		t.Errorf("replica: %+v, %v", r, err)
	}
	if n, _ := Behind(p, r); n == nil || *n != 20 {
		t.Errorf("Behind = %v, want 20 transactions", n)
	}
	streaming["Replica_SQL_Running"], streaming["Last_SQL_Error"], streaming["Seconds_Behind_Source"] = "No", "Error 'Duplicate entry' on query", "NULL"
	r, err = parseMySQL("self\t1\t" + uuid40 + ":1-100\t\npidb-slave-status\n" + replicaStatus(streaming))
	if err != nil || r.Receiver != "receiving yes, applying no" || r.LastError != "Error 'Duplicate entry' on query" || r.ReplayDelay != nil {
		t.Errorf("stopped applying: %+v, %v", r, err)
	}
	if state, why := Standby(Member{Name: "pi3", Report: r}, Member{Name: "pi4", Address: "10.0.0.40"}); state != NotStreaming || !strings.Contains(why, "Duplicate entry") {
		t.Errorf("Standby = %s, %s", state, why)
	}
	for what, bad := range map[string]string{
		"no mark":         "self\t0\t\t\n",
		"nothing of self": "pidb-slave-status\n",
		"bad GTIDs":       "self\t0\tjunk\t\npidb-slave-status\n",
	} {
		if r, err := parseMySQL(bad); err == nil {
			t.Errorf("%s read: %+v", what, r)
		}
	}
}

// TestReadFamily: Read on the MySQL family asks with the client the host
// has, and reads the report of the flavour that answered.
func TestReadFamily(t *testing.T) {
	r := (&fakerun.Runner{Strict: true}).Prefix("if command -v mariadb >/dev/null 2>&1; then echo pidb-flavor mariadb && mariadb ",
		fakerun.Reply{Stdout: "pidb-flavor mysql\nself\t0\t" + uuid40 + ":1-7\t\npidb-slave-status\n"})
	got, err := Read(context.Background(), r, engine.For(dbms.MariaDB))
	if err != nil || got.Flavor != dbms.MySQL || got.WAL != 7 {
		t.Errorf("Read = %+v, %v", got, err)
	}
	r = (&fakerun.Runner{}).Prefix("if command -v", fakerun.Reply{Stdout: "pidb-flavor sqlite\n"})
	if _, err := Read(context.Background(), r, engine.For(dbms.MariaDB)); err == nil {
		t.Error("an unknown flavour read")
	}
}

// TestChangeSource: MySQL's statement to follow the primary by GTID
// auto-position over TLS, the certificate and the address verified.
func TestChangeSource(t *testing.T) {
	got := ChangeSource("10.0.0.30", 3306, `pa'ss\word`)
	want := `CHANGE REPLICATION SOURCE TO SOURCE_HOST = '10.0.0.30', SOURCE_PORT = 3306, SOURCE_USER = 'pidb_replication', SOURCE_PASSWORD = 'pa''ss\\word', SOURCE_SSL = 1, SOURCE_SSL_CA = '/etc/mysql/pidb-primary.crt', SOURCE_SSL_VERIFY_SERVER_CERT = 1, SOURCE_AUTO_POSITION = 1, SOURCE_CONNECT_RETRY = 10;` + "\n"
	if got != want {
		t.Errorf("ChangeSource:\n got %s\nwant %s", got, want)
	}
}

// TestSwitchoverRunMySQL: Oracle MySQL's switchover in MySQL's words: the
// old primary read-only and its gtid_executed read, the new one waited
// for with WAIT_FOR_EXECUTED_GTID_SET, promoted, the others and the old
// primary pointed at it by auto-position, the new certificate kept.
func TestSwitchoverRunMySQL(t *testing.T) {
	const pos = uuid40 + ":1-120"
	const script = "mysql --batch --skip-column-names --default-character-set=utf8mb4"
	streamingFrom := func(addr string) string {
		return "pidb-flavor mysql\nself\t1\t" + pos + "\t\npidb-slave-status\n" + replicaStatus(map[string]string{
			"Replica_IO_State": "Waiting for source to send event", "Source_Host": addr, "Source_User": "pidb_replication",
			"Replica_IO_Running": "Yes", "Replica_SQL_Running": "Yes", "Seconds_Behind_Source": "0", "Auto_Position": "1"})
	}
	oldR := &stdinRunner{Runner: (&fakerun.Runner{Name: "pi4", Files: map[string]string{}}).
		Exact(script, fakerun.Reply{Stdout: pos + "\n", Times: 1}).
		Prefix("if command -v", fakerun.Reply{Stdout: streamingFrom("10.0.0.30")})}
	newR := &stdinRunner{Runner: (&fakerun.Runner{Name: "pi3", Files: map[string]string{}}).
		Exact(script, fakerun.Reply{Stdout: "0\n", Times: 1})}
	otherR := &stdinRunner{Runner: (&fakerun.Runner{Name: "pi5", Files: map[string]string{}}).
		Prefix("if command -v", fakerun.Reply{Stdout: streamingFrom("10.0.0.30")})}
	rep := Report{Flavor: dbms.MySQL, InRecovery: true, ReadOnly: true, Receiver: Streaming, ReceiveFrom: "10.0.0.40", UsingGTID: AutoPosition}
	s := Switchover{Cluster: "quiz", Password: "pw", NewCert: "CERT", Say: func(string) {}, Wait: time.Second,
		Old:    Node{Name: "pi4", Address: "10.0.0.40", Root: oldR, Report: Report{Flavor: dbms.MySQL, WAL: 120}},
		New:    Node{Name: "pi3", Address: "10.0.0.30", Root: newR, Report: rep},
		Others: []Node{{Name: "pi5", Address: "10.0.0.50", Root: otherR, Report: rep}}}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	quiet := "SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\n"
	follow := ChangeSource("10.0.0.30", 3306, "pw") + "START REPLICA;\n"
	if want := []string{quiet + "SET GLOBAL read_only = ON;\nSELECT REPLACE(@@GLOBAL.gtid_executed, '\\n', '');\n", quiet + follow}; !reflect.DeepEqual(oldR.stdin, want) {
		t.Errorf("pi4 was sent %q, want %q", oldR.stdin, want)
	}
	if want := []string{"SELECT WAIT_FOR_EXECUTED_GTID_SET('" + pos + "', 1);\n", quiet + "STOP REPLICA;\nRESET REPLICA ALL;\nSET GLOBAL read_only = OFF;\n"}; !reflect.DeepEqual(newR.stdin, want) {
		t.Errorf("pi3 was sent %q, want %q", newR.stdin, want)
	}
	if want := []string{quiet + "STOP REPLICA;\n" + follow}; !reflect.DeepEqual(otherR.stdin, want) {
		t.Errorf("pi5 was sent %q, want %q", otherR.stdin, want)
	}
	for _, r := range []*stdinRunner{oldR, otherR} {
		if r.Files["/etc/mysql/pidb-primary.crt"] != "CERT" {
			t.Errorf("%s keeps %q as its primary's certificate", r.Host(), r.Files["/etc/mysql/pidb-primary.crt"])
		}
	}
}
