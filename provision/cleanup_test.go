package provision

import (
	"context"
	"errors"
	"strings"
	"testing"

	"pidb/engine"
	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/secrets"
)

func TestBenchDatabaseMark(t *testing.T) {
	for _, tc := range []struct {
		name    string
		have    map[string]string
		exists  bool
		foreign bool
	}{
		{"absent", map[string]string{"db:postgres": ""}, false, false},
		{"pidb's", map[string]string{"db:pidb": "created by pidb for pidb"}, true, false},
		{"someone's", map[string]string{"db:pidb": ""}, true, true},
		{"someone's, with a comment", map[string]string{"db:pidb": "our shop's data"}, true, true},
	} {
		exists, err := benchDatabaseState(tc.have)
		var fe *ForeignDatabaseError
		if exists != tc.exists || errors.As(err, &fe) != tc.foreign {
			t.Errorf("%s: exists %v, err %v", tc.name, exists, err)
		}
	}
}

func TestDropBenchDatabase(t *testing.T) {
	for _, tc := range []struct {
		flavor, listing, drop string
	}{
		{"postgres", "pidb|SCRAM\ndb:pidb|created by pidb for pidb\n", "DROP DATABASE pidb WITH (FORCE)"},
		{"mariadb", "pidb@localhost|*AB\ndb:pidb|created by pidb\n", "DROP DATABASE `pidb`"},
	} {
		r := &fakerun.Runner{Files: map[string]string{}}
		tg := target(tc.flavor, facts.EngineState{Flavor: tc.flavor, Version: "15.4", Running: true}, r)
		// the listing answers the first query; the drop prints nothing
		r.Prefix(strings.Fields(tg2client(tc.flavor))[0], fakerun.Reply{Stdout: tc.listing})
		dropped, err := DropBenchDatabase(context.Background(), tg)
		if err != nil || !dropped || len(r.Ran()) != 2 || !strings.Contains(r.Ran()[1], tc.drop) {
			t.Errorf("%s: dropped %v, err %v, ran %q", tc.flavor, dropped, err, r.Ran())
		}

		r = (&fakerun.Runner{Files: map[string]string{}}).Prefix(strings.Fields(tg2client(tc.flavor))[0], fakerun.Reply{Stdout: "db:pidb|\n"})
		tg = target(tc.flavor, facts.EngineState{Flavor: tc.flavor, Version: "15.4", Running: true}, r)
		var fe *ForeignDatabaseError
		if dropped, err := DropBenchDatabase(context.Background(), tg); dropped || !errors.As(err, &fe) || len(r.Ran()) != 1 {
			t.Errorf("%s: someone else's database: dropped %v, err %v, ran %q", tc.flavor, dropped, err, r.Ran())
		}
	}
}

func tg2client(flavor string) string { return engine.Engine{Flavor: flavor}.Client("") }

func TestMySQLBenchDatabaseIsMarked(t *testing.T) {
	tg := target("mysql", facts.EngineState{Flavor: "mariadb", Version: "10.11.4", Running: true}, &fakerun.Runner{})
	sql := mysqlAccountsSQL(tg, secretsFor("pw"), map[string]string{}, []string{"localhost"}, map[string]bool{})
	if !strings.Contains(sql, "CREATE TABLE `pidb`.`pidb_owner`") || !strings.Contains(sql, "'created by pidb for pidb'") {
		t.Errorf("a new pidb database gets no mark:\n%s", sql)
	}
	sql = mysqlAccountsSQL(tg, secretsFor("pw"), map[string]string{"db:pidb": "created by pidb"}, []string{"localhost"}, map[string]bool{})
	if strings.Contains(sql, "CREATE DATABASE") || strings.Contains(sql, "pidb_owner") {
		t.Errorf("an existing pidb database is made again:\n%s", sql)
	}
}

func secretsFor(pw string) secrets.Host { return secrets.Host{Pidb: pw} }
