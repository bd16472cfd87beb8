package cluster

import (
	"context"
	"os"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/engine"
	"pidb/internal/shtest"
	"pidb/internal/shtest/shrun"
)

// TestScriptsTakeValuesAsData: the switchover's script that makes the old
// primary a standby, run under sh with its commands stubbed, takes its
// data directory (the server's word) as data whatever it holds, and its
// new lines (the conninfo, with the new primary's address and the
// password) on stdin, each quoted for postgresql.auto.conf: no value ends
// its line.
func TestScriptsTakeValuesAsData(t *testing.T) {
	pg, _ := engine.New(dbms.Postgres, "15.8")
	// folders that are there: the script writes the file's new text
	// beside it
	for _, dir := range shtest.Hostile(t.TempDir() + "/m") {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		r := &shrun.Runner{S: shtest.New(t)}
		s := Switchover{Old: Node{Name: "pi4", Root: r}, New: Node{Name: "pi3", Address: "10.0.0.30"}, Password: `pw' x\`}
		if err := s.demote(context.Background(), pg, dir); err != nil {
			t.Fatalf("demote with the data directory %q: %v", dir, err)
		}
		runs, ins := r.Runs()
		runs[0].Check(t, "demote", "", dir+"/postgresql.auto.conf", dir+"/standby.signal")
		want := `primary_conninfo = 'host=10.0.0.30 port=5432 user=pidb_replication password=\'pw\\\' x\\\\\' sslmode=\'verify-ca\' sslrootcert=\'/etc/postgresql/15/main/pidb-primary.crt\' application_name=pi4'` + "\nprimary_slot_name = 'pidb_pi4'\n"
		if ins[0] != want {
			t.Errorf("the lines for postgresql.auto.conf:\n%s\nwant\n%s", ins[0], want)
		}
	}
	// a line's end in the conninfo is refused, nothing run
	r := &shrun.Runner{S: shtest.New(t)}
	s := Switchover{Old: Node{Name: "pi4", Root: r}, New: Node{Name: "pi3", Address: "10.0.0.30"}, Password: "pw\narchive_command = 'id'"}
	if err := s.demote(context.Background(), pg, "/var/lib/postgresql/15/main"); err == nil || !strings.Contains(err.Error(), "control character") {
		t.Errorf("a password with a line's end: %v", err)
	}
	if runs, _ := r.Runs(); len(runs) != 0 {
		t.Errorf("ran %d commands", len(runs))
	}
}
