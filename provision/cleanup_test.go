package provision

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/inventory"
	"pidb/secrets"
)

func TestBenchDatabaseMark(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dbs     map[string]string
		exists  bool
		foreign bool
	}{
		{"absent", map[string]string{"postgres": ""}, false, false},
		{"pidb's", map[string]string{"pidb": "created by pidb for pidb"}, true, false},
		{"someone's", map[string]string{"pidb": ""}, true, true},
		{"someone's, with a comment", map[string]string{"pidb": "our shop's data"}, true, true},
	} {
		st := newState()
		st.databases = tc.dbs
		exists, err := benchDatabaseState(st)
		var fe *ForeignDatabaseError
		if exists != tc.exists || errors.As(err, &fe) != tc.foreign {
			t.Errorf("%s: exists %v, err %v", tc.name, exists, err)
		}
	}
}

func TestDropBenchDatabase(t *testing.T) {
	for _, tc := range []struct {
		flavor, listing, foreign, drop string
	}{
		{"postgres", psqlRows([][]string{{"role", "pidb", "SCRAM", ownerMark}, {"db", "pidb", "", "created by pidb for pidb"}}),
			psqlRows([][]string{{"db", "pidb", "", ""}}), "DROP DATABASE pidb WITH (FORCE)"},
		{"mariadb", batchRows([][]string{{"user", "pidb", "localhost", "2A4142", ""}, {"db", "pidb", "created by pidb", "", ""}, {"marks", "0", "", "", ""}}),
			batchRows([][]string{{"db", "pidb", "", "", ""}, {"marks", "0", "", "", ""}}), "DROP DATABASE `pidb`"},
	} {
		r := &fakerun.Runner{Files: map[string]string{}}
		tg := target(dbms.Flavor(tc.flavor).Family(), facts.EngineState{Flavor: dbms.Flavor(tc.flavor), Version: "15.4", Running: true}, r)
		// the listing answers the first query; the drop prints nothing
		r.Prefix(strings.Fields(tg2client(tc.flavor))[0], fakerun.Reply{Stdout: tc.listing, Times: 1})
		dropped, err := DropBenchDatabase(context.Background(), tg)
		if err != nil || !dropped || len(r.Ran()) != 2 || !strings.Contains(r.Ran()[1], tc.drop) {
			t.Errorf("%s: dropped %v, err %v, ran %q", tc.flavor, dropped, err, r.Ran())
		}

		r = (&fakerun.Runner{Files: map[string]string{}}).Prefix(strings.Fields(tg2client(tc.flavor))[0], fakerun.Reply{Stdout: tc.foreign})
		tg = target(dbms.Flavor(tc.flavor).Family(), facts.EngineState{Flavor: dbms.Flavor(tc.flavor), Version: "15.4", Running: true}, r)
		var fe *ForeignDatabaseError
		if dropped, err := DropBenchDatabase(context.Background(), tg); dropped || !errors.As(err, &fe) || len(r.Ran()) != 1 {
			t.Errorf("%s: someone else's database: dropped %v, err %v, ran %q", tc.flavor, dropped, err, r.Ran())
		}
	}
}

// TestNoValueForgesTheMark: a name or a comment that holds the old
// listing's separators (a newline, a "|") and a forged line after them
// cannot make someone else's database "pidb" pidb's, so `bench cleanup`
// leaves it: the listing is read as rows of values (engine.Query,
// engine.Rows), each value in its own column whatever it holds. Before,
// psql -A's lines were split at "\n" and "|", and the forged line made the
// database pidb's and DROP ... WITH (FORCE) followed. Nor does a database's
// mark make the role of the same name pidb's.
func TestNoValueForgesTheMark(t *testing.T) {
	forged := "ours\ndb:pidb|created by pidb for pidb"
	for _, tc := range []struct{ flavor, listing string }{
		{"postgres", psqlRows([][]string{
			{"db", "pidb", "", ""},    // someone else's
			{"db", "app", "", forged}, // the application's owner may comment its own database
			{"role", "x\ndb:pidb|created by pidb for pidb", "", ""},
		})},
		{"mariadb", batchRows([][]string{
			{"db", "pidb", "", "", ""},
			{"user", "db:pidb|created by pidb", "x\ndb:pidb|created by pidb", "", ""},
			{"marks", "0", "", "", ""},
		})},
	} {
		r := (&fakerun.Runner{}).Prefix(strings.Fields(tg2client(tc.flavor))[0], fakerun.Reply{Stdout: tc.listing})
		tg := target(dbms.Flavor(tc.flavor).Family(), facts.EngineState{Flavor: dbms.Flavor(tc.flavor), Version: "15.4", Running: true}, r)
		var fe *ForeignDatabaseError
		if dropped, err := DropBenchDatabase(context.Background(), tg); dropped || !errors.As(err, &fe) || len(r.Ran()) != 1 {
			t.Errorf("%s: a forged mark: dropped %v, err %v, ran %q", tc.flavor, dropped, err, r.Ran())
		}
	}

	// a listing that is not whole rows is an error, not a guess
	r := (&fakerun.Runner{}).Prefix("cd /tmp", fakerun.Reply{Stdout: "db|pidb|created by pidb for pidb\n"})
	tg := target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.4", Running: true}, r)
	if dropped, err := DropBenchDatabase(context.Background(), tg); dropped || err == nil {
		t.Errorf("psql -A's old output: dropped %v, err %v", dropped, err)
	}

	// the database's mark is the database's: role app has none
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	r = (&fakerun.Runner{}).Prefix("cd /tmp", fakerun.Reply{Stdout: psqlRows([][]string{
		{"role", "app", "", ""}, {"db", "inventory", "", "created by pidb for app"}})})
	tg = target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.4", Running: true}, r)
	tg.Inventory, tg.Host.Databases = filepath.Join(t.TempDir(), "inv.toml"), []inventory.Database{{Name: "inventory", Owner: "app"}}
	var fa *ForeignAccountError
	if _, err := (accountsStep{}).Check(context.Background(), tg); !errors.As(err, &fa) {
		t.Errorf("a role named like a marked database: %v; want it refused", err)
	}
}

func tg2client(flavor string) string { return engine.Engine{Flavor: dbms.Flavor(flavor)}.Client("") }

func TestMySQLBenchDatabaseIsMarked(t *testing.T) {
	tg := target("mysql", facts.EngineState{Flavor: "mariadb", Version: "10.11.4", Running: true}, &fakerun.Runner{})
	sql := mysqlAccountsSQL(tg, secretsFor("pw"), newState(), []string{"localhost"}, map[string]bool{}, nil)
	if !strings.Contains(sql, "CREATE TABLE `pidb`.`pidb_owner`") || !strings.Contains(sql, "'created by pidb for pidb'") {
		t.Errorf("a new pidb database gets no mark:\n%s", sql)
	}
	have := newState()
	have.databases["pidb"] = "created by pidb"
	sql = mysqlAccountsSQL(tg, secretsFor("pw"), have, []string{"localhost"}, map[string]bool{}, nil)
	if strings.Contains(sql, "CREATE DATABASE `pidb`") || strings.Contains(sql, "pidb_owner") {
		t.Errorf("an existing pidb database is made again:\n%s", sql)
	}
}

func secretsFor(pw string) secrets.Host { return secrets.Host{Pidb: pw} }

// newState is a server with nothing on it.
func newState() serverState {
	return serverState{accounts: map[login]stored{}, databases: map[string]string{}, marked: map[string]bool{}}
}

// psqlRows is what psql -A -t -z -0 (engine.Query) prints: a NUL byte
// after each value and after each row.
func psqlRows(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, "\x00") + "\x00")
	}
	return b.String()
}

// batchRows is what mysql --batch --skip-column-names prints: values
// with a tab, a newline, a NUL and a backslash escaped, a tab between
// them, a newline after each row.
func batchRows(rows [][]string) string {
	esc := strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\x00", `\0`)
	var b strings.Builder
	for _, r := range rows {
		q := make([]string, len(r))
		for i, v := range r {
			q[i] = esc.Replace(v)
		}
		b.WriteString(strings.Join(q, "\t") + "\n")
	}
	return b.String()
}
