package provision

import (
	"context"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"pidb/cluster"
	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/internal/shtest"
	"pidb/inventory"
)

// quiz is a cluster of three: pi4 the primary, pi3 and pi5-b its replicas.
func quiz() *Cluster {
	return &Cluster{Name: "quiz",
		Primary:  inventory.Host{Name: "pi4", Address: "10.0.0.40"},
		Replicas: []inventory.Host{{Name: "pi3", Address: "10.0.0.30"}, {Name: "pi5-b", Address: "10.0.0.50"}},
	}
}

func member(name string, r *fakerun.Runner) *Target {
	tg := target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.8", Running: true}, r)
	tg.Cluster = quiz()
	for _, h := range append([]inventory.Host{tg.Cluster.Primary}, tg.Cluster.Replicas...) {
		if h.Name == name {
			tg.Host.Name, tg.Host.Address = h.Name, h.Address
		}
	}
	return tg
}

func TestClusterRoles(t *testing.T) {
	p, r := member("pi4", &fakerun.Runner{}), member("pi5-b", &fakerun.Runner{})
	if p.role() != inventory.Primary || r.role() != inventory.Replica || target("postgres", facts.EngineState{}, &fakerun.Runner{}).role() != "" {
		t.Errorf("roles: %q %q", p.role(), r.role())
	}
	if got := prefixes(r.peers()); got != "10.0.0.30/32, 10.0.0.40/32" {
		t.Errorf("pi5-b's peers: %s, want them in the addresses' order", got)
	}
	r.Host.AllowFrom = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("10.0.0.30/32")}
	if got := prefixes(r.network()); got != "10.0.0.0/24, 10.0.0.30/32, 10.0.0.40/32" {
		t.Errorf("pi5-b's network: %s", got)
	}
	// a member listens and asks for TLS without allow_from; one on its own does not
	if !p.listens() || !needsTLS(p) {
		t.Errorf("a member without allow_from: listens %v, TLS %v", p.listens(), needsTLS(p))
	}
	if alone := target("postgres", facts.EngineState{}, &fakerun.Runner{}); alone.listens() || needsTLS(alone) {
		t.Error("a host on its own without allow_from listens")
	}
}

func TestPrimaryPlan(t *testing.T) {
	tg := member("pi4", &fakerun.Runner{})
	// fresh: the account and both slots
	todo, sql := primaryPlan(tg, primaryState{slots: map[string]bool{}}, "s3cret")
	if strings.Join(todo, "; ") != "make the replication account pidb_replication; a replication slot for pi3 (pidb_pi3); a replication slot for pi5-b (pidb_pi5_b)" {
		t.Errorf("fresh: %q", todo)
	}
	for _, want := range []string{pgQuietSession, `CREATE ROLE "pidb_replication";`,
		`ALTER ROLE "pidb_replication" WITH LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;`,
		`ALTER ROLE "pidb_replication" PASSWORD 'SCRAM-SHA-256$4096:`,
		"SELECT pg_create_physical_replication_slot('pidb_pi3', true);", "SELECT pg_create_physical_replication_slot('pidb_pi5_b', true);"} {
		if !strings.Contains(sql, want) {
			t.Errorf("fresh SQL lacks %q:\n%s", want, sql)
		}
	}
	if strings.Contains(sql, "s3cret") {
		t.Error("the password itself is in the SQL")
	}
	// all there, the password the server's: nothing
	hash := newScramVerifier("s3cret")
	done := primaryState{found: true, okay: true, hash: hash, slots: map[string]bool{"pidb_pi3": true, "pidb_pi5_b": false}}
	if todo, sql := primaryPlan(tg, done, "s3cret"); len(todo) != 0 || sql != "" {
		t.Errorf("done: %q\n%s", todo, sql)
	}
	// another password kept, a superuser made by hand, a slot of a host
	// that left (dropped), one still in use (kept)
	left := primaryState{found: true, okay: false, hash: hash, slots: map[string]bool{"pidb_pi3": true, "pidb_pi5_b": false, "pidb_old": false, "pidb_busy": true}}
	todo, sql = primaryPlan(tg, left, "another")
	if strings.Join(todo, "; ") != "give pidb_replication replication and nothing more; set pidb_replication's password; drop the slot pidb_old, whose host is no replica of the cluster now (it kept WAL for nobody)" {
		t.Errorf("left: %q", todo)
	}
	if !strings.Contains(sql, "SELECT pg_drop_replication_slot('pidb_old');") || strings.Contains(sql, "pidb_busy") || strings.Contains(sql, "CREATE ROLE") {
		t.Errorf("left SQL:\n%s", sql)
	}
}

func TestReplicationStepReads(t *testing.T) {
	ctx := context.Background()
	r := (&fakerun.Runner{}).Contains("FROM pg_authid", fakerun.Reply{Stdout: psqlRows([][]string{
		{"role", "pidb_replication", "SCRAM-SHA-256$x", "ok"}, {"slot", "pidb_pi3", "", "active"}, {"slot", "pidb_gone", "", ""}})})
	st, err := readPrimary(ctx, member("pi4", r), mustEngine(t))
	if err != nil || !st.found || !st.okay || st.hash != "SCRAM-SHA-256$x" || !st.slots["pidb_pi3"] || st.slots["pidb_gone"] || len(st.slots) != 2 {
		t.Errorf("primary state %+v, %v", st, err)
	}
	// not the primary: nothing to do, nothing asked
	r2 := &fakerun.Runner{Strict: true}
	if ch, err := (replicationStep{}).Check(ctx, member("pi3", r2)); ch.Needed || err != nil || len(r2.Ran()) != 0 {
		t.Errorf("a replica's replication step: %+v %v, ran %v", ch, err, r2.Ran())
	}
}

func TestSeedCheck(t *testing.T) {
	ctx := context.Background()
	replica := func(rows [][]string) *Target {
		return member("pi3", (&fakerun.Runner{}).Contains("pg_is_in_recovery()", fakerun.Reply{Stdout: psqlRows(rows)}))
	}
	following := []string{"state", "true", "streaming", "10.0.0.40", "user=pidb_replication passfile=/x host=10.0.0.40 port=5432 application_name=pi3", "pidb_pi3", "/var/lib/postgresql/15/main"}
	if ch, err := (seedStep{}).Check(ctx, replica([][]string{following})); ch.Needed || err != nil {
		t.Errorf("a replica that follows: %+v %v", ch, err)
	}
	// following, not streaming now (its primary restarting): left alone
	waiting := append([]string{}, following...)
	waiting[2], waiting[3] = "", ""
	if ch, err := (seedStep{}).Check(ctx, replica([][]string{waiting})); ch.Needed || err != nil {
		t.Errorf("a replica that waits for its primary: %+v %v", ch, err)
	}
	// a standby of another primary, or through another slot: seeded again
	other := append([]string{}, following...)
	other[4] = "host=10.0.0.99 port=5432"
	ch, err := (seedStep{}).Check(ctx, replica([][]string{other}))
	if err != nil || !ch.Needed || !strings.Contains(ch.Note, "its copy of another primary is replaced by a copy of pi4's") {
		t.Errorf("a standby of another: %+v %v", ch, err)
	}
	// on its own, fresh: seeded, with the script
	fresh := []string{"state", "false", "", "", "", "", "/var/lib/postgresql/15/main"}
	ch, err = (seedStep{}).Check(ctx, replica([][]string{fresh}))
	if err != nil || !ch.Needed || ch.Note != "seeded from pi4 (pg_basebackup over TLS, slot pidb_pi3): its data is replaced by a copy of pi4's" || len(ch.Commands) != 1 {
		t.Fatalf("fresh: %+v %v", ch, err)
	}
	// the script, run under sh with its commands stubbed: the password
	// from stdin reaches pg_basebackup in its environment and no command
	// line; the copy fails, and the old data goes back
	script := ch.Commands[0]
	sb := shtest.New(t)
	sb.Env("PGPASSWORD")
	const pw = "Secret'$(pidb_injected)"
	res := sb.Run(script, pw+"\n")
	var base *shtest.Call
	for i, c := range res.Calls {
		if strings.Contains(c.String(), "Secret") {
			t.Errorf("the password is on a command line: %s", c)
		}
		if c.Name == "pg_basebackup" {
			base = &res.Calls[i]
		}
	}
	if res.Code != 0 || base == nil || base.As != "postgres" || base.Env["PGPASSWORD"] != pw {
		t.Fatalf("the seed: %d %s %v\n%s", res.Code, res.Stderr, base, script)
	}
	d := slices.Index(base.Args, "-d")
	if ci, err := cluster.ParseConnInfo(base.Args[d+1]); err != nil || !maps.Equal(ci, map[string]string{"host": "10.0.0.40", "port": "5432", "user": "pidb_replication",
		"sslmode": "verify-ca", "sslrootcert": "/etc/postgresql/15/main/pidb-primary.crt", "application_name": "pi3"}) ||
		!slices.Equal(base.Args[d+2:], []string{"-D", "/var/lib/postgresql/15/main", "-X", "stream", "-S", "pidb_pi3", "-R", "-c", "fast"}) {
		t.Errorf("pg_basebackup %q: %v", base.Args, err)
	}
	sb.Fail("pg_basebackup")
	res = sb.Run(script, pw+"\n")
	var tail []string
	for _, c := range res.Calls[slices.IndexFunc(res.Calls, func(c shtest.Call) bool { return c.Name == "pg_basebackup" })+1:] {
		if c.Name != "runuser" {
			tail = append(tail, c.As+": "+c.String())
		}
	}
	if res.Code != 1 || !slices.Equal(tail, []string{"postgres: rm -rf -- /var/lib/postgresql/15/main", "postgres: mv -- /var/lib/postgresql/15/main.pidb-seed /var/lib/postgresql/15/main",
		"root: systemctl reset-failed postgresql@15-main", "root: systemctl start postgresql@15-main"}) {
		t.Errorf("a failed copy: %d, then %q", res.Code, tail)
	}
	// on its own with databases of its own: refused, naming them
	_, err = (seedStep{}).Check(ctx, replica([][]string{fresh, {"db", "shop", "", "", "", "", ""}}))
	if err == nil || err.Error() != `pi3 holds the databases shop, which a copy of pi4 would replace: move them off it, or leave it out of cluster "quiz"` {
		t.Errorf("own databases: %v", err)
	}
	// the primary has no seed step
	if ch, err := (seedStep{}).Check(ctx, member("pi4", &fakerun.Runner{Strict: true})); ch.Needed || err != nil {
		t.Errorf("the primary: %+v %v", ch, err)
	}
}

// A replica makes no accounts: they are the primary's, replayed.
func TestReplicaMakesNoAccounts(t *testing.T) {
	r := &fakerun.Runner{Strict: true}
	if ch, err := (accountsStep{}).Check(context.Background(), member("pi3", r)); ch.Needed || err != nil || len(r.Ran()) != 0 {
		t.Errorf("a replica's accounts: %+v %v, ran %v", ch, err, r.Ran())
	}
}

func TestServedCert(t *testing.T) {
	pem := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
	r := (&fakerun.Runner{}).Contains("openssl s_client -connect 127.0.0.1:5432 -starttls postgres", fakerun.Reply{Stdout: pem + "\n"})
	f := mustEngine(t)
	if got, err := ServedCert(context.Background(), r, f); err != nil || got != pem+"\n" {
		t.Errorf("ServedCert = %q, %v", got, err)
	}
	if _, err := ServedCert(context.Background(), &fakerun.Runner{}, f); err == nil {
		t.Error("no certificate read as one")
	}
}

func mustEngine(t *testing.T) engine.Engine {
	t.Helper()
	e, err := engine.Of(facts.Facts{Engine: facts.EngineState{Flavor: "postgres", Version: "15.8"}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestClusterAlike: a cluster's hosts run one major version (installed,
// or what their distribution ships) and, on PostgreSQL, one word size;
// the error names both hosts and what each runs.
func TestClusterAlike(t *testing.T) {
	on := func(name, id, ver, userland string, e facts.EngineState) Member {
		return Member{Name: name, Facts: facts.Facts{OS: facts.OSRelease{ID: id, VersionID: ver}, Arch: "aarch64", Userland: userland, Engine: e}}
	}
	pg17 := facts.EngineState{Flavor: dbms.Postgres, Version: "17.12", Running: true}
	maria118 := facts.EngineState{Flavor: dbms.MariaDB, Version: "11.8.9", Running: true}
	for _, c := range []struct {
		what    string
		family  dbms.Family
		members []Member
		want    string // "" for none
	}{
		{"an installed 17 and a bookworm", dbms.PostgresFamily, []Member{on("pi4", "debian", "13", "arm64", pg17), on("pi3", "raspbian", "12", "arm64", facts.EngineState{})},
			`cluster "c": pi4 would run PostgreSQL 17 (installed) and pi3 PostgreSQL 15 (what raspbian 12 ships)`},
		{"two fresh trixies", dbms.PostgresFamily, []Member{on("pi4", "debian", "13", "arm64", facts.EngineState{}), on("pi5", "raspbian", "13", "arm64", facts.EngineState{})}, ""},
		{"an installed 17 and a fresh trixie", dbms.PostgresFamily, []Member{on("pi4", "debian", "13", "arm64", pg17), on("pi5", "debian", "13", "arm64", facts.EngineState{})}, ""},
		{"32-bit beside 64-bit", dbms.PostgresFamily, []Member{on("pi4", "debian", "13", "arm64", pg17), on("zero", "raspbian", "13", "armhf", facts.EngineState{})},
			`cluster "c": pi4 runs 64-bit packages (arm64) and zero 32-bit ones (armhf)`},
		{"MariaDB keeps its binary log across word sizes", dbms.MySQLFamily, []Member{on("pi4", "debian", "13", "arm64", maria118), on("zero", "raspbian", "13", "armhf", facts.EngineState{})}, ""},
		{"MariaDB 11.8 and a bookworm", dbms.MySQLFamily, []Member{on("pi4", "debian", "13", "arm64", maria118), on("pi3", "debian", "12", "arm64", facts.EngineState{})},
			`pi4 would run MariaDB 11.8 (installed) and pi3 MariaDB 10.11 (what debian 12 ships)`},
		{"one unknown distribution twice", dbms.PostgresFamily, []Member{on("a", "arch", "", "", facts.EngineState{}), on("b", "arch", "", "", facts.EngineState{})}, ""},
		{"an unknown distribution beside a known one", dbms.PostgresFamily, []Member{on("a", "debian", "13", "arm64", facts.EngineState{}), on("b", "fedora", "41", "", facts.EngineState{})},
			`a would run PostgreSQL 17 (what debian 13 ships) and b PostgreSQL (what fedora 41 ships, which pidb does not know)`},
		{"MariaDB 10.3 (Debian 10)", dbms.MySQLFamily, []Member{on("pi4", "debian", "13", "arm64", maria118), on("pi3", "raspbian", "10", "armhf", facts.EngineState{})},
			`cluster "c": pi3 would run MariaDB 10.3 (what raspbian 10 ships): pidb's clusters need MariaDB 10.5 or later`},
		{"an installed MariaDB 10.4", dbms.MySQLFamily, []Member{on("pi4", "debian", "11", "arm64", facts.EngineState{Flavor: dbms.MariaDB, Version: "10.4.34"}), on("pi3", "debian", "11", "arm64", facts.EngineState{})},
			`cluster "c": pi4 would run MariaDB 10.4 (installed): pidb's clusters need MariaDB 10.5 or later`},
		{"two Debian 11s", dbms.MySQLFamily, []Member{on("pi4", "debian", "11", "arm64", facts.EngineState{}), on("pi3", "raspbian", "11", "armhf", facts.EngineState{})}, ""},
		{"one host", dbms.PostgresFamily, []Member{on("pi4", "debian", "13", "arm64", pg17)}, ""},
	} {
		err := ClusterAlike("c", c.family, c.members)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.what, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasSuffix(err.Error(), "nothing was changed")):
			t.Errorf("%s: %v; want %q", c.what, err, c.want)
		}
	}
}
