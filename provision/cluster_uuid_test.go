package provision

import (
	"context"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/engine"
	"pidb/internal/fakerun"
)

// TestOwnUUID: a MySQL replica whose server_uuid is its primary's (a
// cloned card) gets its own: auto.cnf removed by the data directory's
// owner, never root, then the server restarted and waited for; one with
// its own is left alone.
func TestOwnUUID(t *testing.T) {
	ctx := context.Background()
	my, _ := engine.New(dbms.MySQL, "9.7.4")
	const q = "SELECT @@server_uuid, @@datadir"
	replica := func(uuid string) *fakerun.Runner {
		return (&fakerun.Runner{Owners: map[string]string{"/var/lib/mysql": "mysql"}}).Contains(q, fakerun.Reply{Stdout: uuid + "\t/var/lib/mysql/\n"})
	}
	primary := (&fakerun.Runner{Name: "pi4"}).Contains(q, fakerun.Reply{Stdout: "3e11fa47-71ca-11e1-9e33-c80aa9429562\t/var/lib/mysql/\n"})

	r := replica("3e11fa47-71ca-11e1-9e33-c80aa9429562")
	if err := ownUUID(ctx, member("pi3", r), my, primary); err != nil {
		t.Fatal(err)
	}
	ran := strings.Join(r.Ran(), "\n")
	rm := strings.Index(ran, "runuser -u mysql -- sh -c 'rm -f -- /var/lib/mysql/auto.cnf'")
	restart := strings.Index(ran, "systemctl restart mysql")
	ping := strings.Index(ran, "mysqladmin ping")
	if rm < 0 || restart < rm || ping < restart {
		t.Errorf("the same UUID: want auto.cnf removed as mysql, a restart, a wait; ran:\n%s", ran)
	}
	if strings.Contains(ran, "\nrm -f") {
		t.Errorf("root removed auto.cnf:\n%s", ran)
	}
	r = replica("4b2c7e0a-0e27-11f0-8a5e-0242ac110002")
	if err := ownUUID(ctx, member("pi3", r), my, primary); err != nil || strings.Contains(strings.Join(r.Ran(), "\n"), "auto.cnf") {
		t.Errorf("a UUID of its own: %v, ran %q", err, r.Ran())
	}
}
