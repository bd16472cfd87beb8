package provision

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/inventory"
	"pidb/remote"
	"pidb/secrets"
	"pidb/usage"
)

// TestAccountSQLHoldsNoPassword: the statements that make the accounts
// carry verifiers and hashes, never a password (but to MySQL, which
// rewrites it out of its logs), begin by turning the session's logging
// off, and quote the names that mean something.
func TestAccountSQLHoldsNoPassword(t *testing.T) {
	const pw, appPw = "Pidb3cretPassw0rdXXXXXXXXXXXXXXX", "App3cretPassw0rdYYYYYYYYYYYYYYYY"
	sec := secrets.Host{Pidb: pw, Databases: map[string]secrets.Database{"quiz_db": {Owner: "quizapp", Password: appPw}}}
	db := []inventory.Database{{Name: "quiz_db", Owner: "quizapp"}}

	tg := target("postgres", facts.EngineState{Flavor: "postgres", Version: "13.4", Running: true}, &fakerun.Runner{})
	tg.Host.Databases = db
	sql := postgresAccountsSQL(tg, sec, newState(), map[string]bool{}, nil)
	for _, want := range []string{"SET log_statement = 'none';", "SET log_min_duration_statement = -1;", "SET log_min_error_statement = panic;",
		"SET password_encryption = 'scram-sha-256';", `ALTER ROLE "pidb" PASSWORD 'SCRAM-SHA-256$4096:`, `ALTER ROLE "quizapp" PASSWORD 'SCRAM-SHA-256$4096:`,
		`CREATE DATABASE "quiz_db" OWNER "quizapp";`} {
		if !strings.Contains(sql, want) {
			t.Errorf("PostgreSQL's account SQL has no %q:\n%s", want, sql)
		}
	}
	if strings.Index(sql, "SET log_statement") != 0 {
		t.Errorf("the session's logging is not turned off first:\n%s", sql)
	}

	tg = target("mysql", facts.EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true}, &fakerun.Runner{})
	tg.Host.Databases = db
	sql = mysqlAccountsSQL(tg, sec, newState(), []string{"localhost"}, map[string]bool{}, nil)
	for _, want := range []string{"SET SESSION sql_log_off = ON;", "SET SESSION long_query_time = 31536000;", "SET SESSION sql_log_bin = OFF;",
		"CREATE USER 'pidb'@'localhost' IDENTIFIED BY PASSWORD '" + nativeHash(pw) + "';", "GRANT ALL PRIVILEGES ON `quiz\\_db`.* TO 'quizapp'@'localhost';"} {
		if !strings.Contains(sql, want) {
			t.Errorf("MariaDB's account SQL has no %q:\n%s", want, sql)
		}
	}
	for _, flavor := range []string{"postgres", "mariadb"} {
		s := sql
		if flavor == "postgres" {
			s = postgresAccountsSQL(target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.4"}, &fakerun.Runner{}), sec, newState(), map[string]bool{}, nil)
		}
		if strings.Contains(s, pw) || strings.Contains(s, appPw) {
			t.Errorf("%s: a password in the account SQL:\n%s", flavor, s)
		}
	}
}

// TestAccountsRequireTLS: a MySQL or MariaDB account at an allowed network
// requires TLS when the host's network logins use it, and not at
// localhost; an account made before without it is altered, and after
// tls = false it no longer requires it.
func TestAccountsRequireTLS(t *testing.T) {
	sec := secrets.Host{Pidb: "Pidb3cretPassw0rdXXXXXXXXXXXXXXX"}
	tg := target("mysql", facts.EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true}, &fakerun.Runner{})
	tg.Host.AllowFrom, tg.Host.TLS = []netip.Prefix{netip.MustParsePrefix("10.213.41.0/24")}, true
	hosts, _ := mysqlHosts(tg.Host.AllowFrom)
	sql := mysqlAccountsSQL(tg, sec, newState(), hosts, map[string]bool{}, nil)
	if !strings.Contains(sql, "CREATE USER 'pidb'@'10.213.41.0/255.255.255.0' IDENTIFIED BY PASSWORD '"+nativeHash(sec.Pidb)+"' REQUIRE SSL;") ||
		strings.Contains(sql, "'pidb'@'localhost' IDENTIFIED BY PASSWORD '"+nativeHash(sec.Pidb)+"' REQUIRE") {
		t.Errorf("new accounts:\n%s", sql)
	}
	have := newState()
	have.databases["pidb"] = ownerMark
	have.accounts[login{"pidb", "localhost"}] = stored{hash: nativeHash(sec.Pidb)}
	have.accounts[login{"pidb", "10.213.41.0/255.255.255.0"}] = stored{hash: nativeHash(sec.Pidb)}
	if sql := mysqlAccountsSQL(tg, sec, have, hosts, map[string]bool{}, nil); !strings.Contains(sql, "ALTER USER 'pidb'@'10.213.41.0/255.255.255.0' REQUIRE SSL;") ||
		strings.Contains(sql, "'pidb'@'localhost' REQUIRE") {
		t.Errorf("accounts made without TLS:\n%s", sql)
	}
	have.accounts[login{"pidb", "10.213.41.0/255.255.255.0"}] = stored{hash: nativeHash(sec.Pidb), ssl: "ANY"}
	if sql := mysqlAccountsSQL(tg, sec, have, hosts, map[string]bool{}, nil); strings.Contains(sql, "REQUIRE") {
		t.Errorf("accounts that require TLS already:\n%s", sql)
	}
	tg.Host.TLS = false
	if sql := mysqlAccountsSQL(tg, sec, have, hosts, map[string]bool{}, nil); !strings.Contains(sql, "ALTER USER 'pidb'@'10.213.41.0/255.255.255.0' REQUIRE NONE;") {
		t.Errorf("tls = false:\n%s", sql)
	}
}

// TestRequireSSLOncePerNetwork: with TLS and two or three allowed networks,
// each new account at a network requires TLS once. Before, the clause was
// added to the password for each network in turn (pw += ...), and the
// second network's CREATE USER read "... REQUIRE SSL REQUIRE SSL", which
// MariaDB refuses: no account was made.
func TestRequireSSLOncePerNetwork(t *testing.T) {
	sec := secrets.Host{Pidb: "Pidb3cretPassw0rdXXXXXXXXXXXXXXX", Databases: map[string]secrets.Database{"inv": {Owner: "app", Password: "App3cretPassw0rdYYYYYYYYYYYYYYYY"}}}
	for _, nets := range [][]string{{"10.0.1.0/24", "10.0.2.0/24"}, {"10.0.1.0/24", "10.0.2.0/24", "192.168.7.0/24"}} {
		tg := target("mysql", facts.EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true}, &fakerun.Runner{})
		tg.Host.TLS, tg.Host.Databases = true, []inventory.Database{{Name: "inv", Owner: "app"}}
		for _, n := range nets {
			tg.Host.AllowFrom = append(tg.Host.AllowFrom, netip.MustParsePrefix(n))
		}
		hosts, _ := mysqlHosts(tg.Host.AllowFrom)
		sql := mysqlAccountsSQL(tg, sec, newState(), hosts, map[string]bool{}, nil)
		for _, a := range []struct{ user, pw string }{{"pidb", sec.Pidb}, {"app", sec.Databases["inv"].Password}} {
			for _, h := range hosts[2:] { // the networks'; not localhost's and 127.0.0.1's
				want := "CREATE USER '" + a.user + "'@'" + h + "' IDENTIFIED BY PASSWORD '" + nativeHash(a.pw) + "' REQUIRE SSL;\n"
				if !strings.Contains(sql, want) {
					t.Errorf("%d networks: no %q in\n%s", len(nets), want, sql)
				}
			}
			for _, h := range []string{"localhost", "127.0.0.1"} { // the socket, and pidb's SSH forward: no TLS
				if want := "CREATE USER '" + a.user + "'@'" + h + "' IDENTIFIED BY PASSWORD '" + nativeHash(a.pw) + "';\n"; !strings.Contains(sql, want) {
					t.Errorf("%d networks: no %q in\n%s", len(nets), want, sql)
				}
			}
		}
		if n := strings.Count(sql, "REQUIRE SSL"); n != 2*len(nets) || strings.Contains(sql, "REQUIRE SSL REQUIRE") {
			t.Errorf("%d networks: REQUIRE SSL %d times, want %d:\n%s", len(nets), n, 2*len(nets), sql)
		}
	}
}

// TestDropUserQuotesWhatTheServerSays: the hosts of an account's stale
// entries come from mysql.user and go back into DROP USER as MySQL string
// literals, a quote doubled and a backslash escaped. Before, a host
// holding a quote ended the literal and the rest ran as SQL, as root.
func TestDropUserQuotesWhatTheServerSays(t *testing.T) {
	for in, want := range map[string]string{"localhost": "'localhost'", "a'b": "'a''b'", `a\'b`: `'a\\''b'`, `x\`: `'x\\'`, "n\x00l": `'n\0l'`} {
		if got := engine.MySQLString(in); got != want {
			t.Errorf("engine.MySQLString(%q) = %s, want %s", in, got, want)
		}
	}
	sec := secrets.Host{Pidb: "Pidb3cretPassw0rdXXXXXXXXXXXXXXX"}
	tg := target("mysql", facts.EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true}, &fakerun.Runner{})
	st := newState()
	st.databases["pidb"] = ownerMark
	st.marked["pidb"] = true
	for _, h := range []string{"localhost", "%'; DROP DATABASE mysql; -- ", `x\'; GRANT ALL ON *.* TO 'pidb'@'%'; -- `} {
		st.accounts[login{"pidb", h}] = stored{hash: nativeHash(sec.Pidb)}
	}
	sql := mysqlAccountsSQL(tg, sec, st, []string{"localhost"}, map[string]bool{}, map[string]ownership{"pidb": marked})
	for _, want := range []string{"DROP USER 'pidb'@'%''; DROP DATABASE mysql; -- ';\n", `DROP USER 'pidb'@'x\\''; GRANT ALL ON *.* TO ''pidb''@''%''; -- ';` + "\n"} {
		if !strings.Contains(sql, want) {
			t.Errorf("no %q in\n%s", want, sql)
		}
	}
	if strings.Contains(sql, "DROP USER 'pidb'@'localhost'") {
		t.Errorf("an account still wanted is dropped:\n%s", sql)
	}
}

// recorder keeps what a command got on its standard input (fakerun drops
// it): the SQL the accounts step sends.
type recorder struct {
	*fakerun.Runner
	inputs []string
}

func (r *recorder) RunInput(ctx context.Context, cmd string, in []byte) (remote.Result, error) {
	r.inputs = append(r.inputs, string(in))
	return r.Runner.RunInput(ctx, cmd, in)
}

// TestForeignOwnerRefused: an application's owner that is on the server
// already, that pidb did not make (no mark) and for which this controller
// keeps no password is refused, by Check (the dry run) and by Apply,
// before anything changes, with an error naming the host, the owner, the
// database and adopt = true; before, pidb took it over (NOSUPERUSER, a new
// password, its other hosts' accounts dropped). With adopt = true it is
// taken over and marked as adopted; one pidb made before it marked
// accounts (its password kept here) is marked and managed; a marked one
// is pidb's. A new owner is marked when it is made.
func TestForeignOwnerRefused(t *testing.T) {
	ctx := context.Background()
	const appPw = "App3cretPassw0rdYYYYYYYYYYYYYYYY"
	for _, flavor := range []string{"postgres", "mariadb"} {
		// the server: pidb's own account and database, marked; role or user app, someone else's
		appHash := "" // the password the server holds for app
		listing := func(appMarked bool) string {
			if flavor == "postgres" {
				mark := ""
				if appMarked {
					mark = accountMark
				}
				return psqlRows([][]string{{"role", "pidb", "", accountMark}, {"db", "pidb", "", "created by pidb for pidb"}, {"role", "app", appHash, mark}})
			}
			return batchRows([][]string{{"user", "pidb", "localhost", "", ""}, {"user", "app", "%", strings.ToUpper(hex.EncodeToString([]byte(appHash))), ""}, {"db", "pidb", ownerMark, "", ""}, {"marks", "1", "", "", ""}})
		}
		marks := func(appMarked bool) string {
			rows := [][]string{{"pidb", accountMark}}
			if appMarked {
				rows = append(rows, []string{"app", accountMark})
			}
			return batchRows(rows)
		}
		setup := func(appMarked, adopt bool) (*Target, *recorder) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			fr := (&fakerun.Runner{}).Contains("SELECT name, note FROM", fakerun.Reply{Stdout: marks(appMarked)}).
				Contains("pg_authid", fakerun.Reply{Stdout: listing(appMarked)}).
				Contains("FROM mysql.user", fakerun.Reply{Stdout: listing(appMarked)})
			r := &recorder{Runner: fr}
			tg := target(dbms.Flavor(flavor).Family(), facts.EngineState{Flavor: dbms.Flavor(flavor), Version: "15.4", Running: true}, nil)
			tg.Root, tg.Inventory = r, filepath.Join(t.TempDir(), "inv.toml")
			tg.Host.Databases = []inventory.Database{{Name: "inventory", Owner: "app", Adopt: adopt}}
			if err := secrets.Save(tg.Inventory, "pi4", secrets.Host{Pidb: "Pidb3cretPassw0rdXXXXXXXXXXXXXXX"}); err != nil {
				t.Fatal(err)
			}
			return tg, r
		}

		tg, r := setup(false, false)
		var fe *ForeignAccountError
		_, err := accountsStep{}.Check(ctx, tg)
		if !errors.As(err, &fe) {
			t.Fatalf("%s: check: %v; want a *ForeignAccountError", flavor, err)
		}
		for _, want := range []string{`host "pi4"`, `owner "app"`, `database "inventory"`, "set adopt = true in this [[host.database]] if pidb should take it over"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal does not say %q: %v", flavor, want, err)
			}
		}
		// the dry run shows it: Run stops at the check, the host's name first
		if _, err := Run(ctx, tg, []Step{accountsStep{}}, true); !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "pi4: accounts: ") {
			t.Errorf("%s: dry run: %v", flavor, err)
		}
		if err := (accountsStep{}).Apply(ctx, tg); !errors.As(err, &fe) || len(r.inputs) != 0 {
			t.Errorf("%s: apply: %v, sent %q; want the refusal and nothing sent", flavor, err, r.inputs)
		}
		if sec, _ := secrets.Load(tg.Inventory, "pi4"); sec.Databases["inventory"].Password != "" {
			t.Errorf("%s: a password kept for someone else's owner", flavor)
		}

		// adopt = true: taken over, and marked as adopted
		tg, r = setup(false, true)
		if ch, err := (accountsStep{}).Check(ctx, tg); err != nil || !strings.Contains(ch.Note, "take over app (adopt = true)") {
			t.Errorf("%s: adopt: check %+v, %v", flavor, ch, err)
		}
		if err := (accountsStep{}).Apply(ctx, tg); err != nil || len(r.inputs) != 1 {
			t.Fatalf("%s: adopt: apply %v, sent %d", flavor, err, len(r.inputs))
		}
		wants := map[string][]string{
			"postgres": {`ALTER ROLE "app" WITH LOGIN NOSUPERUSER`, `COMMENT ON ROLE "app" IS 'adopted by pidb';`},
			"mariadb":  {"DROP USER 'app'@'%';", "REPLACE INTO `pidb-accounts`.`accounts` (name, note) VALUES ('app', 'adopted by pidb');"},
		}
		for _, want := range wants[flavor] {
			if !strings.Contains(r.inputs[0], want) {
				t.Errorf("%s: adopt: no %q in\n%s", flavor, want, r.inputs[0])
			}
		}

		// a password kept here (a cluster's replicas share their primary's
		// store), but the server holds another: someone else's, refused
		keep := func(tg *Target) {
			if err := secrets.Save(tg.Inventory, "pi4", secrets.Host{Pidb: "Pidb3cretPassw0rdXXXXXXXXXXXXXXX",
				Databases: map[string]secrets.Database{"inventory": {Owner: "app", Password: appPw}}}); err != nil {
				t.Fatal(err)
			}
		}
		appHash = map[string]string{"postgres": newScramVerifier("their own password"), "mariadb": nativeHash("their own password")}[flavor]
		tg, r = setup(false, false)
		keep(tg)
		if _, err := (accountsStep{}).Check(ctx, tg); !errors.As(err, &fe) {
			t.Errorf("%s: a kept password the server does not hold: %v; want a *ForeignAccountError", flavor, err)
		}
		if err := (accountsStep{}).Apply(ctx, tg); !errors.As(err, &fe) || len(r.inputs) != 0 {
			t.Errorf("%s: a kept password the server does not hold: apply %v, sent %q", flavor, err, r.inputs)
		}

		// made by pidb before the marks: the server holds the password
		// kept here
		appHash = map[string]string{"postgres": newScramVerifier(appPw), "mariadb": nativeHash(appPw)}[flavor]
		tg, r = setup(false, false)
		keep(tg)
		if ch, err := (accountsStep{}).Check(ctx, tg); err != nil || !strings.Contains(ch.Note, "pidb's mark on app") {
			t.Errorf("%s: kept: check %+v, %v", flavor, ch, err)
		}
		if err := (accountsStep{}).Apply(ctx, tg); err != nil || len(r.inputs) != 1 ||
			!strings.Contains(r.inputs[0], map[string]string{"postgres": `COMMENT ON ROLE "app" IS 'created by pidb';`, "mariadb": "('app', 'created by pidb')"}[flavor]) {
			t.Errorf("%s: kept: apply %v, sent %q", flavor, err, r.inputs)
		}

		appHash = ""
		// pidb's, but this controller keeps no password for it (another
		// controller's, another user's store): the plan says where it looked
		tg, _ = setup(true, false)
		where, _ := secrets.Path(tg.Inventory, "pi4")
		if ch, err := (accountsStep{}).Check(ctx, tg); err != nil || !strings.Contains(ch.Note, "a new password for app, which the server has already: none is kept in "+where+" (") {
			t.Errorf("%s: no password kept for an account of pidb's: check %+v, %v", flavor, ch, err)
		}

		// marked: pidb's, nothing to mark
		tg, r = setup(true, false)
		if err := (accountsStep{}).Apply(ctx, tg); err != nil || len(r.inputs) != 1 || strings.Contains(r.inputs[0], "COMMENT ON ROLE") || strings.Contains(r.inputs[0], "REPLACE INTO") {
			t.Errorf("%s: marked: apply %v, sent %q", flavor, err, r.inputs)
		}
	}

	// a new owner is marked as it is made
	sec := secrets.Host{Pidb: "p", Databases: map[string]secrets.Database{"inventory": {Owner: "app", Password: appPw}}}
	tg := target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.4", Running: true}, &fakerun.Runner{})
	tg.Host.Databases = []inventory.Database{{Name: "inventory", Owner: "app"}}
	if sql := postgresAccountsSQL(tg, sec, newState(), map[string]bool{}, map[string]ownership{"pidb": made, "app": made}); !strings.Contains(sql, `CREATE ROLE "app" LOGIN;`) ||
		!strings.Contains(sql, `COMMENT ON ROLE "app" IS 'created by pidb';`) {
		t.Errorf("a new owner:\n%s", sql)
	}
}

// TestAdoptKey: adopt in a [[host.database]] is a bool, read into
// inventory.Database.Adopt; anything else is refused at its line.
func TestAdoptKey(t *testing.T) {
	src := "[[host]]\nname = \"a\"\naddress = \"x\"\n[[host.database]]\nname = \"inv\"\nowner = \"app\"\nadopt = %s\n"
	inv, err := inventory.Parse("inv.toml", t.TempDir(), fmt.Sprintf(src, "true"))
	if err != nil || len(inv.Hosts) != 1 || len(inv.Hosts[0].Databases) != 1 || !inv.Hosts[0].Databases[0].Adopt {
		t.Fatalf("adopt = true: %+v, %v", inv, err)
	}
	if inv, _ := inventory.Parse("inv.toml", t.TempDir(), strings.Replace(src, "adopt = %s\n", "", 1)); inv.Hosts[0].Databases[0].Adopt {
		t.Errorf("no adopt: adopted")
	}
	_, err = inventory.Parse("inv.toml", t.TempDir(), fmt.Sprintf(src, `"yes"`))
	if err == nil || !strings.Contains(err.Error(), "inv.toml:7: host.database.adopt: want true or false, not a string") || !usage.Is(err) {
		t.Errorf("adopt = \"yes\": %v", err)
	}
}
