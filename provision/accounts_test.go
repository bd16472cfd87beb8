package provision

import (
	"net/netip"
	"strings"
	"testing"

	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/inventory"
	"pidb/secrets"
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
	sql := postgresAccountsSQL(tg, sec, map[string]string{}, map[string]bool{})
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
	sql = mysqlAccountsSQL(tg, sec, map[string]string{}, []string{"localhost"}, map[string]bool{})
	for _, want := range []string{"SET SESSION sql_log_off = ON;", "SET SESSION long_query_time = 31536000;", "SET SESSION sql_log_bin = OFF;",
		"CREATE USER 'pidb'@'localhost' IDENTIFIED BY PASSWORD '" + nativeHash(pw) + "';", "GRANT ALL PRIVILEGES ON `quiz\\_db`.* TO 'quizapp'@'localhost';"} {
		if !strings.Contains(sql, want) {
			t.Errorf("MariaDB's account SQL has no %q:\n%s", want, sql)
		}
	}
	for _, flavor := range []string{"postgres", "mariadb"} {
		s := sql
		if flavor == "postgres" {
			s = postgresAccountsSQL(target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.4"}, &fakerun.Runner{}), sec, map[string]string{}, map[string]bool{})
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
	sql := mysqlAccountsSQL(tg, sec, map[string]string{}, hosts, map[string]bool{})
	if !strings.Contains(sql, "CREATE USER 'pidb'@'10.213.41.0/255.255.255.0' IDENTIFIED BY PASSWORD '"+nativeHash(sec.Pidb)+"' REQUIRE SSL;") ||
		strings.Contains(sql, "'pidb'@'localhost' IDENTIFIED BY PASSWORD '"+nativeHash(sec.Pidb)+"' REQUIRE") {
		t.Errorf("new accounts:\n%s", sql)
	}
	have := map[string]string{"db:pidb": ownerMark, "pidb@localhost": nativeHash(sec.Pidb), "pidb@10.213.41.0/255.255.255.0": nativeHash(sec.Pidb),
		"ssl:pidb@localhost": "", "ssl:pidb@10.213.41.0/255.255.255.0": ""}
	if sql := mysqlAccountsSQL(tg, sec, have, hosts, map[string]bool{}); !strings.Contains(sql, "ALTER USER 'pidb'@'10.213.41.0/255.255.255.0' REQUIRE SSL;") ||
		strings.Contains(sql, "'pidb'@'localhost' REQUIRE") {
		t.Errorf("accounts made without TLS:\n%s", sql)
	}
	have["ssl:pidb@10.213.41.0/255.255.255.0"] = "ANY"
	if sql := mysqlAccountsSQL(tg, sec, have, hosts, map[string]bool{}); strings.Contains(sql, "REQUIRE") {
		t.Errorf("accounts that require TLS already:\n%s", sql)
	}
	tg.Host.TLS = false
	if sql := mysqlAccountsSQL(tg, sec, have, hosts, map[string]bool{}); !strings.Contains(sql, "ALTER USER 'pidb'@'10.213.41.0/255.255.255.0' REQUIRE NONE;") {
		t.Errorf("tls = false:\n%s", sql)
	}
}
