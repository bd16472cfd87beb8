package cluster

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"pidb/dbms"
	"pidb/internal/fakerun"
	"pidb/remote"
)

// stdinRunner is a fakerun.Runner that keeps each RunInput's standard
// input, which fakerun drops: the switchover's statements go there.
type stdinRunner struct {
	*fakerun.Runner
	stdin []string
}

func (r *stdinRunner) RunInput(ctx context.Context, cmd string, in []byte) (remote.Result, error) {
	r.stdin = append(r.stdin, string(in))
	return r.Runner.RunInput(ctx, cmd, in)
}

// myScript is the command MariaDB's statements run through, on stdin.
const myScript = "mariadb --batch --skip-column-names --default-character-set=utf8mb4"

// myReadCmd is the command that reads a MariaDB host's report.
const myReadCmd = `mariadb --batch --skip-column-names --default-character-set=utf8mb4 -e 'SELECT '\''self'\'', @@read_only, @@gtid_binlog_pos, @@gtid_slave_pos UNION ALL SELECT '\''sender'\'', SUBSTRING_INDEX(host, '\'':'\'', 1), state, '\'''\'' FROM information_schema.processlist WHERE command = '\''Binlog Dump'\''' && echo pidb-slave-status && mariadb --batch --default-character-set=utf8mb4 -e 'SHOW SLAVE STATUS'`

// TestChangeMaster: the statement that makes a server replicate from the
// primary by GTID as pidb_replication over TLS, the primary's certificate
// verified; the password's quote doubled and its backslash escaped.
func TestChangeMaster(t *testing.T) {
	got := ChangeMaster("10.0.0.30", 3306, `pa'ss\word`)
	want := `CHANGE MASTER TO MASTER_HOST = '10.0.0.30', MASTER_PORT = 3306, MASTER_USER = 'pidb_replication', MASTER_PASSWORD = 'pa''ss\\word', MASTER_SSL = 1, MASTER_SSL_CA = '/etc/mysql/pidb-primary.crt', MASTER_SSL_VERIFY_SERVER_CERT = 1, MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 10;` + "\n"
	if got != want {
		t.Errorf("ChangeMaster:\n got %s\nwant %s", got, want)
	}
}

// mariaNodes are a MariaDB cluster's switchover from pi4 to pi3, which
// streams from it, with pi5 the other replica.
func mariaNodes() (old, nw, other Node) {
	return Node{Name: "pi4", Address: "10.0.0.40", Report: Report{Flavor: dbms.MariaDB, WAL: 120}},
		Node{Name: "pi3", Address: "10.0.0.30", Report: Report{Flavor: dbms.MariaDB, InRecovery: true, ReadOnly: true, Receiver: Streaming, ReceiveFrom: "10.0.0.40"}},
		Node{Name: "pi5", Address: "10.0.0.50", Report: Report{Flavor: dbms.MariaDB, InRecovery: true, ReadOnly: true, Receiver: Streaming, ReceiveFrom: "10.0.0.40"}}
}

// TestSwitchoverCheckMariaDB: on MariaDB a switchover goes from a primary
// that replicates from nobody to a replica that replicates from it with
// both threads running; anything else is refused, saying why.
func TestSwitchoverCheckMariaDB(t *testing.T) {
	old, nw, other := mariaNodes()
	s := Switchover{Cluster: "quiz", Old: old, New: nw, Others: []Node{other}}
	if err := s.Check(); err != nil {
		t.Errorf("a streaming replica: %v", err)
	}
	if got := strings.Join(s.Plan(), "; "); got != "make pi4 read-only (its commits done, no more taken) and read its binary log's position; "+
		"wait until pi3 has applied all of it (else make pi4 writable again and stop); "+
		"promote pi3: its replication stopped and forgotten, writable; "+
		"point pi5 at pi3; make pi4 a replica of pi3; wait until every replica replicates from pi3" {
		t.Errorf("plan: %s", got)
	}
	replicating := old
	replicating.Report.InRecovery, replicating.Report.ReceiveFrom = true, "10.0.0.30"
	alone := nw
	alone.Report = Report{Flavor: dbms.MariaDB}
	stopped := nw
	stopped.Report.Receiver, stopped.Report.LastError = "stopped", "Access denied"
	elsewhere := nw
	elsewhere.Report.ReceiveFrom = "10.0.0.99"
	for _, c := range []struct {
		old, nw Node
		want    string
	}{
		{replicating, nw, `pi4 is not the primary of cluster "quiz": it replicates from 10.0.0.30`},
		{old, alone, "pi3 is not a replica: there is nothing to switch over to"},
		{old, stopped, "pi3 does not replicate from pi4 (its replication is stopped: Access denied): a switchover to it would lose what it has not applied"},
		{old, elsewhere, "pi3 does not replicate from pi4 (it replicates from 10.0.0.99, not from pi4 (10.0.0.40)): a switchover to it would lose what it has not applied"},
	} {
		s := Switchover{Cluster: "quiz", Old: c.old, New: c.nw}
		if err := s.Check(); err == nil || err.Error() != c.want {
			t.Errorf("%s to %s: %v, want %q", c.old.Name, c.nw.Name, err, c.want)
		}
	}
}

// TestSwitchoverRunMariaDBNotApplied: where the new primary has not
// applied the old one's last transaction in time (MASTER_GTID_WAIT says
// -1), nothing is promoted or re-pointed: the old primary is made
// writable again and the error says so, with how far behind the new one
// is.
func TestSwitchoverRunMariaDBNotApplied(t *testing.T) {
	old, nw, other := mariaNodes()
	oldR := &stdinRunner{Runner: (&fakerun.Runner{Name: "pi4", Strict: true}).
		Exact(myScript, fakerun.Reply{Stdout: "0-1-120\n", Times: 1}).
		Exact(myScript, fakerun.Reply{})}
	newR := &stdinRunner{Runner: (&fakerun.Runner{Name: "pi3", Strict: true}).
		Exact(myScript, fakerun.Reply{Stdout: "-1\n"}).
		Contains(myReadCmd, fakerun.Reply{Stdout: "pidb-flavor mariadb\n" + myOutput("self\t1\t0-1-100\t0-1-100\n", slaveStatus(streamingFrom40))})}
	otherR := &stdinRunner{Runner: &fakerun.Runner{Name: "pi5", Strict: true}}
	old.Root, nw.Root, other.Root = oldR, newR, otherR
	var said []string
	s := Switchover{Cluster: "quiz", Old: old, New: nw, Others: []Node{other}, Password: "pw", NewCert: "PEM",
		Say: func(m string) { said = append(said, m) }, Wait: time.Second}
	err := s.Run(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "pi3 has not applied pi4's last transaction after 1s (20 transactions behind; ") ||
		!strings.HasSuffix(err.Error(), "): no switchover (pi4 takes writes again, as the primary)") {
		t.Errorf("Run: %v", err)
	}
	if want := []string{
		"SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\nSET GLOBAL read_only = ON;\nSELECT @@GLOBAL.gtid_binlog_pos;\n",
		"SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\nSET GLOBAL read_only = OFF;\n",
	}; !reflect.DeepEqual(oldR.stdin, want) {
		t.Errorf("pi4 was sent %q, want %q", oldR.stdin, want)
	}
	// waited for, read, not promoted
	if want := []string{"SELECT MASTER_GTID_WAIT('0-1-120', 1);\n"}; !reflect.DeepEqual(newR.stdin, want) {
		t.Errorf("pi3 was sent %q, want %q", newR.stdin, want)
	}
	if ran := newR.Ran(); len(ran) != 2 || !strings.Contains(ran[1], myReadCmd) {
		t.Errorf("pi3 ran %q", ran)
	}
	if len(otherR.Ran()) != 0 || len(oldR.Files) != 0 {
		t.Errorf("pi5 ran %q, pi4 was given %q", otherR.Ran(), oldR.Files)
	}
	if want := []string{"making pi4 read-only", "waiting until pi3 has applied pi4's last transaction (0-1-120)"}; !reflect.DeepEqual(said, want) {
		t.Errorf("said %q", said)
	}
}

// TestSwitchoverRunMariaDBFailures: the new primary's wait failing and
// its state unreadable (how far behind unknown), the old primary not
// made writable again (the error says it is read-only); the old one's
// position not one value (nothing asked of the new one); a switchover
// Check refuses runs nothing.
func TestSwitchoverRunMariaDBFailures(t *testing.T) {
	ctx := context.Background()
	old, nw, _ := mariaNodes()
	oldR := &stdinRunner{Runner: (&fakerun.Runner{Name: "pi4", Strict: true}).
		Exact(myScript, fakerun.Reply{Stdout: "0-1-120\n", Times: 1}).
		Exact(myScript, fakerun.Reply{Code: 1, Stderr: "ERROR 2013 (HY000): Lost connection to server during query"})}
	newR := &stdinRunner{Runner: (&fakerun.Runner{Name: "pi3", Strict: true}).
		Exact(myScript, fakerun.Reply{Code: 1, Stderr: "ERROR 2002 (HY000): Can't connect to local server"})}
	old.Root, nw.Root = oldR, newR
	s := Switchover{Cluster: "quiz", Old: old, New: nw, Say: func(string) {}, Wait: time.Second}
	err := s.Run(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "pi3 has not applied pi4's last transaction after 1s (unknown; pi3: ") ||
		!strings.HasSuffix(err.Error(), "no switchover (pi4 is read-only and could not be made writable again: pi4: mariadb --batch --skip-column-names --default-character-set=utf8mb4: exit status 1: ERROR 2013 (HY000): Lost connection to server during query)") {
		t.Errorf("Run: %v", err)
	}
	if len(oldR.stdin) != 2 || oldR.stdin[1] != "SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\nSET GLOBAL read_only = OFF;\n" {
		t.Errorf("pi4 was sent %q", oldR.stdin)
	}

	// two values where one position was asked for
	old, nw, _ = mariaNodes()
	oldR = &stdinRunner{Runner: (&fakerun.Runner{Name: "pi4", Strict: true}).Exact(myScript, fakerun.Reply{Stdout: "0-1-120\tjunk\n"})}
	newR = &stdinRunner{Runner: &fakerun.Runner{Name: "pi3", Strict: true}}
	old.Root, nw.Root = oldR, newR
	s = Switchover{Cluster: "quiz", Old: old, New: nw, Say: func(string) {}, Wait: time.Second}
	if err := s.Run(ctx); err == nil || err.Error() != `pi4: its binary log's position: "0-1-120\tjunk"` {
		t.Errorf("a position of two values: %v", err)
	}
	if len(newR.Ran()) != 0 {
		t.Errorf("pi3 ran %q", newR.Ran())
	}

	// refused: nothing run anywhere
	old, nw, _ = mariaNodes()
	nw.Report.Receiver = "stopped"
	oldR, newR = &stdinRunner{Runner: &fakerun.Runner{Strict: true}}, &stdinRunner{Runner: &fakerun.Runner{Strict: true}}
	old.Root, nw.Root = oldR, newR
	s = Switchover{Cluster: "quiz", Old: old, New: nw, Say: func(string) {}, Wait: time.Second}
	if err := s.Run(ctx); err == nil || !strings.Contains(err.Error(), "pi3 does not replicate from pi4") || len(oldR.Ran())+len(newR.Ran()) != 0 {
		t.Errorf("a refused switchover: %v, ran %q %q", err, oldR.Ran(), newR.Ran())
	}
}

// TestNotAppliedSaysWhy: a MASTER_GTID_WAIT that times out (-1, no error)
// is said so, not as a nil error.
func TestNotAppliedSaysWhy(t *testing.T) {
	old, nw, _ := mariaNodes()
	old.Root = (&fakerun.Runner{Name: "pi4"}).Exact(myScript, fakerun.Reply{Stdout: "0-1-120\n", Times: 1})
	nw.Root = (&fakerun.Runner{Name: "pi3"}).Exact(myScript, fakerun.Reply{Stdout: "-1\n"}).
		Contains(myReadCmd, fakerun.Reply{Stdout: "pidb-flavor mariadb\n" + myOutput("self\t1\t0-1-100\t0-1-100\n", slaveStatus(streamingFrom40))})
	s := Switchover{Cluster: "quiz", Old: old, New: nw, Say: func(string) {}, Wait: time.Second}
	if err := s.Run(context.Background()); err == nil || strings.Contains(err.Error(), "<nil>") || !strings.Contains(err.Error(), "(20 transactions behind; MASTER_GTID_WAIT timed out)") {
		t.Errorf("Run: %v", err)
	}
}
