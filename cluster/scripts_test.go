package cluster

import (
	"context"
	"os"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/engine"
	"pidb/internal/fakerun"
	"pidb/internal/shtest"
	"pidb/internal/shtest/shrun"
	"pidb/remote"
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

// inputs keeps what each command got on stdin.
type inputs struct {
	*fakerun.Runner
	got []string
}

func (r *inputs) RunInput(ctx context.Context, cmd string, in []byte) (remote.Result, error) {
	r.got = append(r.got, string(in))
	return r.Runner.RunInput(ctx, cmd, in)
}

// The switchover points a running standby at the new primary with one
// statement whatever the conninfo holds: a quote and a backslash in the
// password (written by hand below, as PostgreSQL reads it) end no literal.
func TestRepointSQL(t *testing.T) {
	r := &inputs{Runner: (&fakerun.Runner{}).Contains("server_version_num", fakerun.Reply{Stdout: "150008\x00/var/lib/postgresql/15/main\x00"})}
	s := Switchover{New: Node{Name: "pi3", Address: "10.0.0.30"}, Password: `pw' x\`}
	if err := s.repoint(context.Background(), Node{Name: "pi5", Root: r}); err != nil {
		t.Fatal(err)
	}
	want := engine.PostgresQuiet + `ALTER SYSTEM SET primary_conninfo = E'host=10.0.0.30 port=5432 user=pidb_replication password=''pw\\'' x\\\\'' sslmode=''verify-ca'' sslrootcert=''/etc/postgresql/15/main/pidb-primary.crt'' application_name=pi5';` + "\nSELECT pg_reload_conf();\n"
	if len(r.got) != 1 || r.got[0] != want {
		t.Errorf("the statements:\n%q\nwant\n%q", r.got, want)
	}
}
