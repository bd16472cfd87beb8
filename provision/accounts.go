package provision

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"

	"pidb/engine"
	"pidb/secrets"
)

// accountsStep makes the pidb benchmark account (never a superuser; rights
// on its own database "pidb" only) and the inventory's application
// databases, each owned by its own user with rights on it alone. Passwords
// are generated, kept on the controller (package secrets) and handed to the
// server on standard input, never in a command line or a log.
type accountsStep struct{}

func (accountsStep) Name() string { return "accounts" }

// pidb marks the database it makes for itself, so that it never takes over
// or drops one of the same name that someone else made: on PostgreSQL with
// the database's comment, which starts with ownerMark; on MySQL and MariaDB
// (MySQL has no database comments) with a table named ownerTable in it.
const (
	ownerMark  = "created by pidb"
	ownerTable = "pidb_owner"
)

// ForeignDatabaseError is a database named like pidb's own that pidb did
// not make. The fleet's errors name the host already.
type ForeignDatabaseError struct {
	Database string
}

func (e *ForeignDatabaseError) Error() string {
	return fmt.Sprintf("database %q was not made by pidb (it has no %q mark), so pidb leaves it alone: pidb keeps its benchmark data in a database of that name; rename this one, or drop it if nobody needs it", e.Database, ownerMark)
}

// benchDatabaseState reads have: whether pidb's database is there and is pidb's.
func benchDatabaseState(have map[string]string) (exists bool, err error) {
	mark, ok := have["db:"+engine.BenchDatabase]
	if !ok {
		return false, nil
	}
	if !strings.HasPrefix(mark, ownerMark) {
		return true, &ForeignDatabaseError{Database: engine.BenchDatabase}
	}
	return true, nil
}

// account is one user and the database it may use.
type account struct {
	user, database string
}

func accountsOf(t *Target) []account {
	out := []account{{engine.BenchUser, engine.BenchDatabase}}
	for _, d := range t.Host.Databases {
		out = append(out, account{d.Owner, d.Name})
	}
	return out
}

// mysqlHosts are the host parts of a MySQL account: localhost, and each
// allowed IPv4 CIDR in the netmask form both MySQL and MariaDB read.
func mysqlHosts(allow []netip.Prefix) ([]string, error) {
	hosts := []string{"localhost"}
	for _, p := range allow {
		if !p.Addr().Is4() {
			return nil, fmt.Errorf("allow_from %s: MySQL and MariaDB accounts take IPv4 networks only", p)
		}
		mask := net.CIDRMask(p.Bits(), 32)
		hosts = append(hosts, p.Addr().String()+"/"+net.IP(mask).String())
	}
	return hosts, nil
}

// existing lists the accounts and databases that are there, with each
// account's stored password hash: keys "user" (PostgreSQL) or "user@host",
// "ssl:user@host" with what the account requires of TLS (MySQL's ssl_type:
// "ANY" for REQUIRE SSL, "" for none), and "db:NAME" with pidb's mark
// (ownerMark) when pidb made the database.
func existing(ctx context.Context, t *Target, e engine.Engine) (map[string]string, error) {
	sql := "SELECT rolname || '|' || coalesce(rolpassword, '') FROM pg_authid UNION ALL SELECT 'db:' || datname || '|' || coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database"
	if e.Flavor != "postgres" {
		sql = "SELECT CONCAT(user, '@', host, '|', authentication_string) FROM mysql.user UNION ALL SELECT CONCAT('ssl:', user, '@', host, '|', ssl_type) FROM mysql.user UNION ALL SELECT CONCAT('db:', s.schema_name, '|', IF(t.table_name IS NULL, '', '" + ownerMark + "')) FROM information_schema.schemata s LEFT JOIN information_schema.tables t ON t.table_schema = s.schema_name AND t.table_name = '" + ownerTable + "'"
	}
	out, err := t.run(ctx, e.Client(sql))
	if err != nil {
		return nil, err
	}
	have := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(l), "|")
		have[k] = v
	}
	return have, nil
}

// stale reports whether the server holds another password for an account
// than the one kept on the controller (one pidb cannot check counts as kept).
func stale(stored, kept string) bool {
	match, ok := matchesStored(stored, kept)
	return ok && !match
}

// plan returns what is missing or stale, for Check's note.
func plan(ctx context.Context, t *Target, e engine.Engine, sec secrets.Host) ([]string, error) {
	have, err := existing(ctx, t, e)
	if err != nil {
		return nil, err
	}
	if _, err := benchDatabaseState(have); err != nil {
		return nil, err
	}
	hosts, err := mysqlHosts(t.Host.AllowFrom)
	if e.Flavor != "postgres" && err != nil {
		return nil, err
	}
	var todo []string
	for _, a := range accountsOf(t) {
		pw := password(sec, a)
		if pw == "" {
			todo = append(todo, "password for "+a.user)
		}
		if _, ok := have["db:"+a.database]; !ok {
			todo = append(todo, "database "+a.database)
		}
		if e.Flavor == "postgres" {
			if stored, ok := have[a.user]; !ok {
				todo = append(todo, "user "+a.user)
			} else if pw != "" && stale(stored, pw) {
				todo = append(todo, "password of "+a.user+" (not the one kept)")
			}
			continue
		}
		want := map[string]bool{}
		for _, h := range hosts {
			want[a.user+"@"+h] = true
			if stored, ok := have[a.user+"@"+h]; !ok {
				todo = append(todo, "user "+a.user+"@"+h)
			} else if pw != "" && stale(stored, pw) {
				todo = append(todo, "password of "+a.user+"@"+h+" (not the one kept)")
			} else if req := requireTLS(t, h); have["ssl:"+a.user+"@"+h] != req {
				todo = append(todo, map[bool]string{true: "TLS required of ", false: "TLS no longer required of "}[req != ""]+a.user+"@"+h)
			}
		}
		for k := range have {
			if strings.HasPrefix(k, a.user+"@") && !want[k] {
				todo = append(todo, "drop "+k)
			}
		}
	}
	sort.Strings(todo)
	return todo, nil
}

func password(sec secrets.Host, a account) string {
	if a.user == engine.BenchUser && a.database == engine.BenchDatabase {
		return sec.Pidb
	}
	if d, ok := sec.Databases[a.database]; ok && d.Owner == a.user {
		return d.Password
	}
	return ""
}

func (accountsStep) Check(ctx context.Context, t *Target) (Change, error) {
	e, err := engine.Of(t.Facts)
	if err != nil {
		return Change{Needed: true, Note: "after the install: the pidb account and the application databases"}, nil
	}
	sec, err := secrets.Load(t.Inventory, t.Host.Name)
	if err != nil {
		return Change{}, err
	}
	todo, err := plan(ctx, t, e, sec)
	if err != nil || len(todo) == 0 {
		return Change{}, err
	}
	return Change{Needed: true, Note: strings.Join(todo, ", ")}, nil
}

func (accountsStep) Apply(ctx context.Context, t *Target) error {
	e, err := engine.Of(t.Facts)
	if err != nil {
		return err
	}
	sec, err := secrets.Load(t.Inventory, t.Host.Name)
	if err != nil {
		return err
	}
	have, err := existing(ctx, t, e)
	if err != nil {
		return err
	}
	if _, err := benchDatabaseState(have); err != nil {
		return err
	}
	// new passwords are saved before the server gets them: a failure between
	// the two leaves a password that the next run sets again
	fresh := map[string]bool{} // users whose password the server must be given
	for _, a := range accountsOf(t) {
		if pw := password(sec, a); pw != "" {
			for k, stored := range have {
				if (k == a.user || strings.HasPrefix(k, a.user+"@")) && stale(stored, pw) {
					fresh[a.user] = true
				}
			}
			continue
		}
		fresh[a.user] = true
		if a.user == engine.BenchUser && a.database == engine.BenchDatabase {
			sec.Pidb = secrets.Generate()
		} else {
			sec.Databases[a.database] = secrets.Database{Owner: a.user, Password: secrets.Generate()}
		}
	}
	if err := secrets.Save(t.Inventory, t.Host.Name, sec); err != nil {
		return fmt.Errorf("keep the passwords: %w", err)
	}
	var sql string
	if e.Flavor == "postgres" {
		sql = postgresAccountsSQL(t, sec, have, fresh)
	} else {
		hosts, err := mysqlHosts(t.Host.AllowFrom)
		if err != nil {
			return err
		}
		sql = mysqlAccountsSQL(t, sec, have, hosts, fresh)
	}
	cmd := "cd /tmp && runuser -u postgres -- psql -qAtX -v ON_ERROR_STOP=1 -f -"
	if e.Flavor != "postgres" {
		cmd = strings.Fields(e.Client(""))[0] + " --batch"
	}
	if _, err := t.Root.RunInput(ctx, cmd, []byte(sql)); err != nil {
		return fmt.Errorf("create the accounts: %w", err)
	}
	return nil
}

// pgIdent quotes a name for PostgreSQL's SQL, so that a name that is also
// a keyword ("order", "user") names the database or role, and for
// pg_hba.conf, where a quoted "all" is a database and not the keyword. The inventory
// allows lower case letters, digits and _ only, so nothing needs escaping.
func pgIdent(name string) string { return `"` + name + `"` }

// mysqlGrantDB quotes a database name for GRANT ... ON db.*, where _ and %
// are wildcards: escaped, my_app grants my_app and not myXapp.
func mysqlGrantDB(name string) string {
	return "`" + strings.NewReplacer("_", `\_`, "%", `\%`).Replace(name) + "`"
}

// postgresAccountsSQL creates what is missing: roles that may log in and
// nothing more, databases owned by them, closed to everyone else.
func postgresAccountsSQL(t *Target, sec secrets.Host, have map[string]string, fresh map[string]bool) string {
	var b strings.Builder
	// the passwords go as verifiers (newScramVerifier); the statements
	// are kept out of the logs all the same, for this session only
	b.WriteString(pgQuietSession)
	for _, a := range accountsOf(t) {
		_, exists := have[a.user]
		if !exists {
			fmt.Fprintf(&b, "CREATE ROLE %s LOGIN;\n", pgIdent(a.user))
		}
		fmt.Fprintf(&b, "ALTER ROLE %s WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;\n", pgIdent(a.user))
		if fresh[a.user] || !exists {
			fmt.Fprintf(&b, "ALTER ROLE %s PASSWORD '%s';\n", pgIdent(a.user), newScramVerifier(password(sec, a)))
		}
		if _, ok := have["db:"+a.database]; !ok {
			fmt.Fprintf(&b, "CREATE DATABASE %s OWNER %s;\n", pgIdent(a.database), pgIdent(a.user))
			fmt.Fprintf(&b, "COMMENT ON DATABASE %s IS '%s for %s';\n", pgIdent(a.database), ownerMark, a.user)
		}
		fmt.Fprintf(&b, "REVOKE ALL ON DATABASE %s FROM PUBLIC;\n", pgIdent(a.database))
	}
	return b.String()
}

// pgQuietSession keeps the session's statements out of PostgreSQL's logs,
// whatever the server's settings (log_statement, log_min_duration_statement,
// log_min_error_statement, which logs a failed statement's text), and makes
// any password hashed as SCRAM, as pg_hba requires (the default from 14 on).
const pgQuietSession = "SET log_statement = 'none';\nSET log_min_duration_statement = -1;\nSET log_duration = off;\n" +
	"SET log_min_error_statement = panic;\nSET password_encryption = 'scram-sha-256';\n"

// mysqlQuietSession keeps the session's statements out of the general log,
// the slow log and the binary log, whatever the server's settings.
const mysqlQuietSession = "SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\n"

// identifiedBy is how an account's password is given: to MariaDB its
// mysql_native_password hash (IDENTIFIED BY PASSWORD), so the password
// never leaves the controller; to MySQL the password itself, which MySQL
// rewrites out of every log it writes (its caching_sha2_password hash
// cannot be made here).
func identifiedBy(flavor, password string) string {
	if flavor == "mariadb" {
		return "IDENTIFIED BY PASSWORD '" + nativeHash(password) + "'"
	}
	return "IDENTIFIED BY '" + password + "'"
}

// requireTLS is what a MySQL or MariaDB account at host h must require of
// TLS, as the server's ssl_type says it: "ANY" (REQUIRE SSL) at an allowed
// network of a host whose network logins use TLS; "" at localhost, where
// the host's own clients and pidb's SSH forward arrive.
func requireTLS(t *Target, h string) string {
	if h != "localhost" && needsTLS(t) {
		return "ANY"
	}
	return ""
}

// mysqlAccountsSQL creates each user at localhost and at every allowed
// network, drops its accounts at networks no longer allowed, and grants it
// its own database only.
func mysqlAccountsSQL(t *Target, sec secrets.Host, have map[string]string, hosts []string, fresh map[string]bool) string {
	var b strings.Builder
	b.WriteString(mysqlQuietSession)
	for _, a := range accountsOf(t) {
		pw := identifiedBy(t.Facts.Engine.Flavor, password(sec, a))
		if _, ok := have["db:"+a.database]; !ok {
			fmt.Fprintf(&b, "CREATE DATABASE `%s`;\n", a.database)
			if a.database == engine.BenchDatabase {
				fmt.Fprintf(&b, "CREATE TABLE `%s`.`%s` (note VARCHAR(100) NOT NULL);\n", a.database, ownerTable)
				fmt.Fprintf(&b, "INSERT INTO `%s`.`%s` VALUES ('%s for pidb');\n", a.database, ownerTable, ownerMark)
			}
		}
		want := map[string]bool{}
		for _, h := range hosts {
			want[a.user+"@"+h] = true
			req := requireTLS(t, h)
			clause := map[bool]string{true: "REQUIRE SSL", false: "REQUIRE NONE"}[req != ""]
			if _, ok := have[a.user+"@"+h]; !ok {
				if req != "" {
					pw += " " + clause
				}
				fmt.Fprintf(&b, "CREATE USER '%s'@'%s' %s;\n", a.user, h, pw)
			} else {
				if fresh[a.user] {
					fmt.Fprintf(&b, "ALTER USER '%s'@'%s' %s;\n", a.user, h, pw)
				}
				if have["ssl:"+a.user+"@"+h] != req {
					fmt.Fprintf(&b, "ALTER USER '%s'@'%s' %s;\n", a.user, h, clause)
				}
			}
			fmt.Fprintf(&b, "GRANT ALL PRIVILEGES ON %s.* TO '%s'@'%s';\n", mysqlGrantDB(a.database), a.user, h)
		}
		var stale []string
		for k := range have {
			if strings.HasPrefix(k, a.user+"@") && !want[k] {
				stale = append(stale, strings.TrimPrefix(k, a.user+"@"))
			}
		}
		sort.Strings(stale)
		for _, h := range stale {
			fmt.Fprintf(&b, "DROP USER '%s'@'%s';\n", a.user, h)
		}
	}
	return b.String()
}
