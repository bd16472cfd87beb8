package cluster

import (
	"maps"
	"strings"
	"testing"

	"pidb/engine"
	"pidb/facts"
)

// pg_controldata as PostgreSQL 15 prints it, cut.
const controlData = `pg_control version number:            1300
Catalog version number:               202209061
Database system identifier:           7312345678901234567
Database cluster state:               shut down
pg_control last modified:             Sat 05 Dec 2026 12:00:00 PM UTC
Latest checkpoint location:           0/5000028
Latest checkpoint's REDO location:    0/5000028
`

func TestStoppedAt(t *testing.T) {
	if l, err := stoppedAt(controlData); err != nil || l != 0x5000028 {
		t.Errorf("stoppedAt = %x, %v", l, err)
	}
	running := strings.Replace(controlData, "shut down", "in production", 1)
	if _, err := stoppedAt(running); err == nil || err.Error() != `its cluster state is "in production", not "shut down"` {
		t.Errorf("a server not shut down cleanly: %v", err)
	}
	if _, err := stoppedAt("nothing"); err == nil {
		t.Error("no output read as a checkpoint")
	}
}

func TestSwitchoverCheck(t *testing.T) {
	old := Node{Name: "pi4", Address: "10.0.0.40", Report: Report{}}
	streaming := Node{Name: "pi3", Address: "10.0.0.30", Report: Report{InRecovery: true, Receiver: "streaming", ReceiveFrom: "10.0.0.40"}}
	s := Switchover{Cluster: "quiz", Old: old, New: streaming, Others: []Node{{Name: "zero"}}}
	if err := s.Check(); err != nil {
		t.Errorf("a streaming replica: %v", err)
	}
	if got := strings.Join(s.Plan(), "; "); got != "stop pi4 cleanly (its last WAL sent to its replicas) and see it stopped; wait until pi3 has replayed everything pi4 wrote (else start pi4 again and stop); make a slot on pi3 for each host that will follow it; promote pi3; point zero at pi3; start pi4 as a standby of pi3; wait until every standby streams from pi3" {
		t.Errorf("plan: %s", got)
	}
	for _, c := range []struct {
		old, nw Node
		want    string
	}{
		{Node{Name: "pi4", Report: Report{InRecovery: true}}, streaming, `pi4 is not the primary of cluster "quiz": it is a standby`},
		{old, Node{Name: "pi3"}, "pi3 is not a standby: there is nothing to switch over to"},
		{old, Node{Name: "pi3", Report: Report{InRecovery: true}}, `pi3 does not stream from pi4 (in recovery, but its WAL receiver is not running: it receives nothing (is pi4 up, and does it admit it?)): a switchover to it would lose what it has not received`},
		{old, Node{Name: "pi3", Report: Report{InRecovery: true, Receiver: "streaming", ReceiveFrom: "10.0.0.99"}}, `pi3 does not stream from pi4 (it streams from 10.0.0.99, not from pi4 (10.0.0.40))`},
	} {
		s := Switchover{Cluster: "quiz", Old: c.old, New: c.nw}
		if err := s.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c, err, c.want)
		}
	}
}

// A follower's conninfo: the new primary at its address, verified by
// the certificate kept for it, the follower named as it connects.
func TestConninfo(t *testing.T) {
	s := Switchover{New: Node{Name: "pi3", Address: "10.0.0.30"}, Password: "pw"}
	e, err := engine.Of(facts.Facts{Engine: facts.EngineState{Flavor: "postgres", Version: "15"}})
	if err != nil {
		t.Fatal(err)
	}
	// quoted as libpq's appendConnStrVal (pg_basebackup -R) quotes: a
	// value of letters, digits, '_' and '.' bare
	if got := s.conninfo(Node{Name: "pi4"}, e); got != "host=10.0.0.30 port=5432 user=pidb_replication password=pw sslmode='verify-ca' sslrootcert='/etc/postgresql/15/main/pidb-primary.crt' application_name=pi4" {
		t.Errorf("conninfo: %s", got)
	}
	// no value adds a keyword: a quote and a backslash escaped
	s.New.Address, s.Password = "2001:db8::5", `p w' host=x\`
	if got := s.conninfo(Node{Name: "pi4"}, e); got != `host='2001:db8::5' port=5432 user=pidb_replication password='p w\' host=x\\' sslmode='verify-ca' sslrootcert='/etc/postgresql/15/main/pidb-primary.crt' application_name=pi4` {
		t.Errorf("conninfo: %s", got)
	}
}

// ParseConnInfo reads what pg_basebackup -R and ConnInfo write, as libpq
// reads it.
func TestParseConnInfo(t *testing.T) {
	for in, want := range map[string]map[string]string{
		`user=pidb_replication passfile='/var/lib/postgresql/.pgpass' channel_binding=prefer host=10.0.0.40 port=5432 sslmode=verify-ca`: {
			"user": "pidb_replication", "passfile": "/var/lib/postgresql/.pgpass", "channel_binding": "prefer", "host": "10.0.0.40", "port": "5432", "sslmode": "verify-ca"},
		`host = '2001:db8::5'  password='p w\' host=x\\' a=\ b`: {"host": "2001:db8::5", "password": `p w' host=x\`, "a": " b"},
		``: {},
	} {
		got, err := ParseConnInfo(in)
		if err != nil || !maps.Equal(got, want) {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"host", "host='10.0.0.1", "=x"} {
		if got, err := ParseConnInfo(bad); err == nil {
			t.Errorf("%q: %v", bad, got)
		}
	}
}

// TestControlDataCmd: pg_controldata runs as postgres in C's words, the
// data directory a word of its own.
func TestControlDataCmd(t *testing.T) {
	if got, want := controlDataCmd("17", "/srv/pidb data/17/main"), "cd /tmp && LC_ALL=C runuser -u postgres -- /usr/lib/postgresql/17/bin/pg_controldata -D '/srv/pidb data/17/main'"; got != want {
		t.Errorf("controlDataCmd = %q, want %q", got, want)
	}
}
