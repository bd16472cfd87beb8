package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"pidb/dbms"
	"pidb/engine"
	"pidb/internal/fakerun"
)

// slaveColumns are SHOW SLAVE STATUS's columns as MariaDB 10.11 names
// them, in its order.
var slaveColumns = []string{"Slave_IO_State", "Master_Host", "Master_User", "Master_Port", "Connect_Retry",
	"Master_Log_File", "Read_Master_Log_Pos", "Relay_Log_File", "Relay_Log_Pos", "Relay_Master_Log_File",
	"Slave_IO_Running", "Slave_SQL_Running", "Replicate_Rewrite_DB", "Replicate_Do_DB", "Replicate_Ignore_DB",
	"Replicate_Do_Table", "Replicate_Ignore_Table", "Replicate_Wild_Do_Table", "Replicate_Wild_Ignore_Table",
	"Last_Errno", "Last_Error", "Skip_Counter", "Exec_Master_Log_Pos", "Relay_Log_Space", "Until_Condition",
	"Until_Log_File", "Until_Log_Pos", "Master_SSL_Allowed", "Master_SSL_CA_File", "Master_SSL_CA_Path",
	"Master_SSL_Cert", "Master_SSL_Cipher", "Master_SSL_Key", "Seconds_Behind_Master",
	"Master_SSL_Verify_Server_Cert", "Last_IO_Errno", "Last_IO_Error", "Last_SQL_Errno", "Last_SQL_Error",
	"Replicate_Ignore_Server_Ids", "Master_Server_Id", "Master_SSL_Crl", "Master_SSL_Crlpath", "Using_Gtid",
	"Gtid_IO_Pos", "Replicate_Do_Domain_Ids", "Replicate_Ignore_Domain_Ids", "Parallel_Mode", "SQL_Delay",
	"SQL_Remaining_Delay", "Slave_SQL_Running_State", "Slave_DDL_Groups", "Slave_Non_Transactional_Groups",
	"Slave_Transactional_Groups"}

// slaveStatus is what `mariadb --batch -e 'SHOW SLAVE STATUS'` prints: the
// header, then the row, a tab between values. The values are given as
// the client prints them (escaped already); a column not given is empty.
func slaveStatus(values map[string]string) string {
	row := make([]string, len(slaveColumns))
	for i, c := range slaveColumns {
		row[i] = values[c]
	}
	return strings.Join(slaveColumns, "\t") + "\n" + strings.Join(row, "\t") + "\n"
}

// streamingFrom40 is a replica's SHOW SLAVE STATUS, both threads running
// from 10.0.0.40 by GTID, 3 s behind.
var streamingFrom40 = map[string]string{
	"Slave_IO_State": "Waiting for master to send event", "Master_Host": "10.0.0.40", "Master_User": "pidb_replication",
	"Master_Port": "3306", "Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes", "Seconds_Behind_Master": "3",
	"Using_Gtid": "Slave_Pos", "Gtid_IO_Pos": "0-1-108",
}

// with is m with the values changed.
func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestSlaveStatus: SHOW SLAVE STATUS's row by its columns' names, the
// client's escapes (\t, \n, \\, \0) undone and nothing else; no output
// (a server that replicates from nobody) is nil; any other shape than a
// header and one row of as many values is an error.
func TestSlaveStatus(t *testing.T) {
	out := slaveStatus(with(streamingFrom40, "Last_SQL_Error", `Error 'dup\tkey' on query.\nDefault database: 'C:\\new'`, "Slave_SQL_Running_State", `a\0b`))
	m, err := SlaveStatus(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 54 || m["Master_Host"] != "10.0.0.40" || m["Slave_IO_Running"] != "Yes" || m["Seconds_Behind_Master"] != "3" || m["Last_IO_Error"] != "" {
		t.Errorf("SlaveStatus = %q", m)
	}
	// an escaped backslash before an n is a backslash and an n, not a newline
	if got := m["Last_SQL_Error"]; got != "Error 'dup\tkey' on query.\nDefault database: 'C:\\new'" {
		t.Errorf("Last_SQL_Error unescaped to %q", got)
	}
	if got := m["Slave_SQL_Running_State"]; got != "a\x00b" {
		t.Errorf("a NUL: %q", got)
	}
	// without the last newline all the same
	if m, err := SlaveStatus(strings.TrimSuffix(out, "\n")); err != nil || m["Master_User"] != "pidb_replication" {
		t.Errorf("without the last newline: %q, %v", m, err)
	}
	if m, err := SlaveStatus(""); m != nil || err != nil {
		t.Errorf("no output: %q, %v", m, err)
	}
	header, row, _ := strings.Cut(out, "\n")
	for what, bad := range map[string]string{
		"a header alone":         header + "\n",
		"two rows":               out + row,
		"a value too few":        header + "\n" + row[:strings.LastIndex(row, "\t")] + "\n",
		"a value too many":       header + "\n" + strings.TrimSuffix(row, "\n") + "\textra\n",
		"short rows":             "Slave_IO_State\tMaster_Host\nx\t10.0.0.40\n",
		"another command's rows": strings.Replace(out, "Slave_IO_State", "Variable_name", 1),
		"a blank line":           "\n",
	} {
		if m, err := SlaveStatus(bad); err == nil {
			t.Errorf("%s read: %q", what, m)
		}
	}
	if _, err := SlaveStatus(out + row); err == nil || err.Error() != "the replication status printed 3 lines, not a header and one row (pidb works with one replication source)" {
		t.Errorf("two sources: %v", err)
	}
}

// TestTransactions: a GTID position's transactions are its domains'
// sequence numbers added up; an empty position has none; what is not a
// GTID is an error.
func TestTransactions(t *testing.T) {
	for in, want := range map[string]uint64{"0-1-42,1-2-7": 49, "": 0, "0-1-42": 42, "0-1-42, 1-2-7\n": 49, "0-1-0": 0, "0-3-18446744073709551615": 18446744073709551615} {
		if got, err := Transactions(in); err != nil || got != want {
			t.Errorf("Transactions(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"0-1", "0-1-x", "0-1-2-3", "0-1--5", "0-1-42,junk", "42", "0-1-18446744073709551616"} {
		if n, err := Transactions(bad); err == nil {
			t.Errorf("Transactions(%q) = %d, not an error", bad, n)
		}
	}
}

// myOutput is mariadbRead's output: the server's rows, the mark, then
// SHOW SLAVE STATUS's.
func myOutput(rows, status string) string { return rows + "pidb-slave-status\n" + status }

// TestParseMariaDB: a primary's report (writable, its binary log's
// transactions, a sender for each replica it sends to, replicating from
// nobody), and replicas': streaming only where both threads run, stopped
// where neither does, else each thread's state; the last errors;
// Seconds_Behind_Master, nil where NULL.
func TestParseMariaDB(t *testing.T) {
	p, err := parseMariaDB(engine.For(dbms.MariaDB), myOutput("self\t0\t0-1-120\t0-1-100\n"+
		"sender\t10.0.0.30\tMaster has sent all binlog to slave; waiting for more updates\t\n"+
		"sender\t10.0.0.50\tMaster has sent all binlog to slave; waiting for more updates\t\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	if p.Flavor != dbms.MariaDB || p.InRecovery || p.ReadOnly || p.WAL != 120 || p.Replayed != 100 ||
		len(p.Senders) != 2 || p.Senders[0] != (Sender{Name: "10.0.0.30", State: "streaming"}) || p.Senders[1] != (Sender{Name: "10.0.0.50", State: "streaming"}) ||
		p.Receiver != "" || p.ReceiveFrom != "" || p.ReplayDelay != nil || p.LastError != "" {
		t.Errorf("primary: %+v", p)
	}

	self := "self\t1\t0-1-108\t0-1-108\n"
	r, err := parseMariaDB(engine.For(dbms.MariaDB), myOutput(self, slaveStatus(streamingFrom40)))
	if err != nil {
		t.Fatal(err)
	}
	if !r.InRecovery || !r.ReadOnly || r.Receiver != "streaming" || r.ReceiveFrom != "10.0.0.40" || r.SourceUser != "pidb_replication" ||
		r.UsingGTID != "Slave_Pos" || r.WAL != 108 || r.Replayed != 108 || r.ReplayDelay == nil || *r.ReplayDelay != 3 ||
		r.LastError != "" || len(r.Senders) != 0 {
		t.Errorf("streaming replica: %+v", r)
	}

	// both threads stopped, the IO thread's last error kept, no lag known
	stopped := with(streamingFrom40, "Slave_IO_Running", "No", "Slave_SQL_Running", "No", "Seconds_Behind_Master", "NULL",
		"Last_IO_Errno", "1045", "Last_IO_Error", "error connecting to master 'pidb_replication@10.0.0.40:3306' - retry-time: 10  maximum-retries: 100000  message: Access denied")
	r, err = parseMariaDB(engine.For(dbms.MariaDB), myOutput(self, slaveStatus(stopped)))
	if err != nil || !r.InRecovery || r.Receiver != "stopped" || r.ReplayDelay != nil ||
		r.LastError != "error connecting to master 'pidb_replication@10.0.0.40:3306' - retry-time: 10  maximum-retries: 100000  message: Access denied" {
		t.Errorf("stopped replica: %+v, %v", r, err)
	}

	// one thread alone is neither; both errors, unescaped, in one
	half := with(streamingFrom40, "Slave_IO_Running", "Connecting", "Seconds_Behind_Master", "NULL",
		"Last_IO_Error", "error reconnecting", "Last_SQL_Error", `Could not execute\tWrite_rows`)
	r, err = parseMariaDB(engine.For(dbms.MariaDB), myOutput(self, slaveStatus(half)))
	if err != nil || r.Receiver != "receiving connecting, applying yes" || r.LastError != "error reconnecting Could not execute\tWrite_rows" || r.ReplayDelay != nil {
		t.Errorf("connecting replica: %+v, %v", r, err)
	}
	r, err = parseMariaDB(engine.For(dbms.MariaDB), myOutput(self, slaveStatus(with(streamingFrom40, "Slave_SQL_Running", "No", "Last_SQL_Error", "Duplicate entry"))))
	if err != nil || r.Receiver != "receiving yes, applying no" || r.LastError != "Duplicate entry" {
		t.Errorf("applying stopped: %+v, %v", r, err)
	}
	// caught up: 0 s, not nil
	r, err = parseMariaDB(engine.For(dbms.MariaDB), myOutput(self, slaveStatus(with(streamingFrom40, "Seconds_Behind_Master", "0"))))
	if err != nil || r.ReplayDelay == nil || *r.ReplayDelay != 0 {
		t.Errorf("caught up: %+v, %v", r, err)
	}
	// a status row without a source (RESET SLAVE without ALL) replicates from nobody
	r, err = parseMariaDB(engine.For(dbms.MariaDB), myOutput("self\t0\t0-1-5\t\n", slaveStatus(with(streamingFrom40, "Master_Host", "", "Slave_IO_Running", "No", "Slave_SQL_Running", "No"))))
	if err != nil || r.InRecovery || r.Receiver != "" || r.ReceiveFrom != "" || r.WAL != 5 || r.Replayed != 0 {
		t.Errorf("no source: %+v, %v", r, err)
	}

	for what, bad := range map[string]string{
		"no mark":                     self,
		"rows of three":               myOutput("self\t0\t0-1-5\n", ""),
		"a row of another kind":       myOutput(self+"slot\tx\ty\tz\n", ""),
		"nothing of itself":           myOutput("sender\t10.0.0.30\tx\t\n", ""),
		"no output of its own":        myOutput("", ""),
		"a bad binlog position":       myOutput("self\t0\tjunk\t\n", ""),
		"a bad slave position":        myOutput("self\t1\t0-1-5\t0-1\n", ""),
		"a bad Seconds_Behind_Master": myOutput(self, slaveStatus(with(streamingFrom40, "Seconds_Behind_Master", "soon"))),
		"a bad SHOW SLAVE STATUS":     myOutput(self, "Slave_IO_State\tMaster_Host\n\t10.0.0.40\n"),
	} {
		if r, err := parseMariaDB(engine.For(dbms.MariaDB), bad); err == nil {
			t.Errorf("%s read: %+v", what, r)
		}
	}
	if _, err := parseMariaDB(engine.For(dbms.MariaDB), myOutput("self\t0\tjunk\t\n", "")); err == nil || err.Error() != `read the replication state: gtid_binlog_pos: GTID "junk"` {
		t.Errorf("a bad binlog position: %v", err)
	}
}

// TestReadMariaDB: Read on MariaDB runs one command, the server's rows
// and SHOW SLAVE STATUS's parted by the mark, and reads its output; a
// failed command is an error.
func TestReadMariaDB(t *testing.T) {
	const cmd = `mariadb --batch --skip-column-names --default-character-set=utf8mb4 -e 'SELECT '\''self'\'', @@read_only, @@gtid_binlog_pos, @@gtid_slave_pos UNION ALL SELECT '\''sender'\'', SUBSTRING_INDEX(host, '\'':'\'', 1), state, '\'''\'' FROM information_schema.processlist WHERE command = '\''Binlog Dump'\''' && echo pidb-slave-status && mariadb --batch --default-character-set=utf8mb4 -e 'SHOW SLAVE STATUS'`
	r := (&fakerun.Runner{Strict: true}).Contains(cmd, fakerun.Reply{Stdout: "pidb-flavor mariadb\n" + myOutput("self\t1\t0-1-108\t0-1-108\n", slaveStatus(streamingFrom40))})
	got, err := Read(context.Background(), r, engine.For(dbms.MariaDB))
	if err != nil || got.Flavor != dbms.MariaDB || got.Receiver != "streaming" || got.ReceiveFrom != "10.0.0.40" || got.Replayed != 108 {
		t.Errorf("Read = %+v, %v", got, err)
	}
	down := (&fakerun.Runner{}).Contains(cmd, fakerun.Reply{Code: 1, Stderr: "ERROR 2002 (HY000): Can't connect to local server through socket"})
	if _, err := Read(context.Background(), down, engine.For(dbms.MariaDB)); err == nil || !strings.HasPrefix(err.Error(), "read the replication state: ") {
		t.Errorf("a server down: %v", err)
	}
}

// TestReplicaOf: Standby on MariaDB's reports says, in its own words,
// why a replica is not streaming from the primary: a server of its own,
// replicating from another, its replication stopped (with its last
// error) or half running; an unreachable one is unreachable.
func TestReplicaOf(t *testing.T) {
	primary := Member{Name: "pi4", Address: "10.0.0.40"}
	rep := func(r Report) Member {
		r.Flavor = dbms.MariaDB
		return Member{Name: "pi3", Address: "10.0.0.30", Report: r}
	}
	for _, c := range []struct {
		m          Member
		state, why string
	}{
		{rep(Report{InRecovery: true, Receiver: Streaming, ReceiveFrom: "10.0.0.40"}), Streaming, ""},
		{rep(Report{}), NotAStandby, "pi3 is a server of its own, not a replica of pi4"},
		{rep(Report{InRecovery: true, Receiver: Streaming, ReceiveFrom: "10.0.0.99"}), NotStreaming, "it replicates from 10.0.0.99, not from pi4 (10.0.0.40)"},
		{rep(Report{InRecovery: true, Receiver: "stopped", ReceiveFrom: "10.0.0.40", LastError: "Access denied for user 'pidb_replication'"}), NotStreaming, "its replication is stopped: Access denied for user 'pidb_replication'"},
		{rep(Report{InRecovery: true, Receiver: "receiving connecting, applying yes", ReceiveFrom: "10.0.0.40"}), NotStreaming, "its replication is receiving connecting, applying yes"},
		{Member{Name: "pi3", Report: Report{Flavor: dbms.MariaDB}, Err: errors.New("pi3: connect: no route to host")}, Unreachable, "pi3: connect: no route to host"},
	} {
		if state, why := Standby(c.m, primary); state != c.state || why != c.why {
			t.Errorf("%+v: %q, %q; want %q, %q", c.m.Report, state, why, c.state, c.why)
		}
	}
}

// TestJudgeMariaDB: on MariaDB a streaming replica is behind by the
// primary's transactions it has not applied and its
// Seconds_Behind_Master, with no slot and nothing in bytes; a read_only
// primary takes no writes and one that replicates from another is no
// primary: neither is OK.
func TestJudgeMariaDB(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	primary := Member{Name: "pi4", Address: "10.0.0.40", Report: Report{Flavor: dbms.MariaDB, WAL: 120, Replayed: 100,
		Senders: []Sender{{Name: "10.0.0.30", State: Streaming}}}}
	streaming := Member{Name: "pi3", Address: "10.0.0.30", Report: Report{Flavor: dbms.MariaDB, InRecovery: true, ReadOnly: true,
		Receiver: Streaming, ReceiveFrom: "10.0.0.40", WAL: 108, Replayed: 108, ReplayDelay: f(2.5)}}
	stopped := Member{Name: "pi5", Address: "10.0.0.50", Report: Report{Flavor: dbms.MariaDB, InRecovery: true, ReadOnly: true,
		Receiver: "stopped", ReceiveFrom: "10.0.0.40", Replayed: 90, LastError: "Access denied"}}
	st := Judge("quiz", dbms.MySQLFamily, primary, []Member{streaming, stopped})
	if st.OK || st.Primary != (PrimaryStatus{Host: "pi4", State: "primary"}) || len(st.Replicas) != 2 {
		t.Fatalf("status: %+v", st)
	}
	pi3, pi5 := st.Replicas[0], st.Replicas[1]
	if pi3.State != Streaming || pi3.LagTransactions == nil || *pi3.LagTransactions != 12 || pi3.LagS == nil || *pi3.LagS != 2.5 ||
		pi3.LagBytes != nil || pi3.Slot != nil || pi3.Sync != nil || pi3.RetainedBytes != nil || pi3.Error != "" {
		t.Errorf("pi3: %+v", pi3)
	}
	if pi5.State != NotStreaming || pi5.LagTransactions != nil || pi5.LagS != nil || pi5.Slot != nil || pi5.Error != "its replication is stopped: Access denied" {
		t.Errorf("pi5: %+v", pi5)
	}
	if st := Judge("quiz", dbms.MySQLFamily, primary, []Member{streaming}); !st.OK {
		t.Errorf("one replica streaming: %+v", st)
	}
	// read a moment after the primary's position: it has all of it
	ahead := streaming
	ahead.Report.Replayed = 125
	if st := Judge("quiz", dbms.MySQLFamily, primary, []Member{ahead}); *st.Replicas[0].LagTransactions != 0 {
		t.Errorf("past the position read: %+v", st.Replicas[0])
	}

	ro := primary
	ro.Report.ReadOnly = true
	st = Judge("quiz", dbms.MySQLFamily, ro, []Member{streaming})
	if st.OK || st.Primary != (PrimaryStatus{Host: "pi4", State: "read-only", Error: "pi4 is read_only: it takes no writes"}) {
		t.Errorf("a read_only primary: %+v", st)
	}

	replica := primary
	replica.Report.InRecovery, replica.Report.ReceiveFrom = true, "10.0.0.30"
	st = Judge("quiz", dbms.MySQLFamily, replica, []Member{streaming})
	if st.OK || st.Primary != (PrimaryStatus{Host: "pi4", State: "not a primary", Error: "pi4 replicates from 10.0.0.30: it is a replica, not the primary"}) {
		t.Errorf("a replica as the primary: %+v", st.Primary)
	}
	// nothing of lag measured against a primary that is not one
	if r := st.Replicas[0]; r.LagTransactions != nil || r.LagS != nil || r.Slot != nil {
		t.Errorf("lag against a replica: %+v", r)
	}
}

// TestJudgeMariaDBPrimaryUnreachable: with the primary silent, a MariaDB
// replica still has no slot, and one unreachable too (the cluster's
// engine says so, not a report); what is unknown is null in the JSON,
// never left out or "".
func TestJudgeMariaDBPrimaryUnreachable(t *testing.T) {
	replica := Member{Name: "pi3", Address: "10.0.0.30", Report: Report{Flavor: dbms.MariaDB, InRecovery: true, Receiver: Streaming, ReceiveFrom: "10.0.0.40"}}
	gone := Member{Name: "pi5", Err: errors.New("pi5: connect: no route to host")}
	st := Judge("quiz", dbms.MySQLFamily, Member{Name: "pi4", Address: "10.0.0.40", Err: errors.New("pi4: connect: refused")}, []Member{replica, gone})
	if st.Replicas[0].Slot != nil || st.Replicas[1].Slot != nil || st.OK || st.Primary.State != Unreachable {
		t.Errorf("judged: %+v", st)
	}
	out, err := json.Marshal(st.Replicas[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"lag_bytes":null`, `"lag_transactions":null`, `"lag_s":null`, `"sync":null`, `"slot":null`, `"retained_bytes":null`} {
		if !strings.Contains(string(out), key) {
			t.Errorf("an unreachable MariaDB replica as JSON: %s; want %s", out, key)
		}
	}
}

// TestAwait: a replica that replicates at the second look is waited
// for; one that never does is an error with how it stood at the last
// look; a replica of another primary is not the primary's.
func TestAwait(t *testing.T) {
	ctx := context.Background()
	pi4 := Member{Name: "pi4", Address: "10.0.0.40"}
	self := "self\t1\t0-1-108\t0-1-108\n"
	stopped := slaveStatus(with(streamingFrom40, "Slave_IO_Running", "No", "Slave_SQL_Running", "No", "Last_IO_Error", "Access denied"))
	r := (&fakerun.Runner{}).Contains(myReadCmd, fakerun.Reply{Stdout: "pidb-flavor mariadb\n" + myOutput(self, stopped), Times: 1}).
		Contains(myReadCmd, fakerun.Reply{Stdout: "pidb-flavor mariadb\n" + myOutput(self, slaveStatus(streamingFrom40))})
	if err := Await(ctx, r, engine.For(dbms.MariaDB), "pi3", pi4, 10*time.Second); err != nil || len(r.Ran()) != 2 {
		t.Errorf("replicating at the second look: %v, after %d reads", err, len(r.Ran()))
	}
	r = (&fakerun.Runner{}).Contains(myReadCmd, fakerun.Reply{Stdout: "pidb-flavor mariadb\n" + myOutput(self, stopped)})
	if err := Await(ctx, r, engine.For(dbms.MariaDB), "pi3", pi4, time.Second); err == nil || err.Error() != "pi3 does not replicate from pi4 after 1s: its replication is stopped: Access denied" {
		t.Errorf("never replicating: %v", err)
	}
	r = (&fakerun.Runner{}).Contains(myReadCmd, fakerun.Reply{Stdout: "pidb-flavor mariadb\n" + myOutput(self, slaveStatus(streamingFrom40))})
	if err := Await(ctx, r, engine.For(dbms.MariaDB), "pi3", Member{Name: "pi5", Address: "10.0.0.50"}, time.Second); err == nil || err.Error() != "pi3 does not replicate from pi5 after 1s: it replicates from 10.0.0.40, not from pi5 (10.0.0.50)" {
		t.Errorf("a replica of another: %v", err)
	}
}
