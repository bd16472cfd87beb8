package provision

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"

	"pidb/dbms"
	"pidb/engine"
	"pidb/inventory"
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

// benchDatabaseState reads st: whether pidb's database is there and is pidb's.
func benchDatabaseState(st serverState) (exists bool, err error) {
	mark, ok := st.databases[engine.BenchDatabase]
	if !ok {
		return false, nil
	}
	if !strings.HasPrefix(mark, ownerMark) {
		return true, &ForeignDatabaseError{Database: engine.BenchDatabase}
	}
	return true, nil
}

// pidb marks the accounts it makes too, so that it never takes over an
// application's owner of the same name that someone else made: on
// PostgreSQL with the role's comment (accountMark, or adoptedMark for an
// owner taken over with adopt = true), which only a superuser or a role
// with CREATEROLE may set; on MySQL and MariaDB, which keep no comment on
// an account (MariaDB has no CREATE USER ... COMMENT), with a row in
// markTable in markDatabase, a database that no inventory can name (its
// "-") and on which no account is granted anything, so neither an
// application's owner nor the benchmark account can write a mark there;
// `pidb bench cleanup` leaves it.
const (
	accountMark  = ownerMark
	adoptedMark  = "adopted by pidb"
	markDatabase = "pidb-accounts"
	markTable    = "accounts"
)

// isAccountMark reports whether a role's comment or a markTable note is
// pidb's mark.
func isAccountMark(s string) bool {
	return strings.HasPrefix(s, accountMark) || strings.HasPrefix(s, adoptedMark)
}

// ForeignAccountError is an application's owner that is on the server
// already and that pidb did not make: pidb would take it over (its
// superuser bit and other rights taken away, its password replaced, its
// accounts at other hosts dropped), so it refuses unless the inventory's
// [[host.database]] says adopt = true.
type ForeignAccountError struct {
	Host, Owner, Database string
}

func (e *ForeignAccountError) Error() string {
	return fmt.Sprintf("host %q: owner %q of database %q is on the server already and pidb did not make it (it has no pidb mark, and this controller keeps no password for it); "+
		"pidb leaves it alone rather than take it over (its superuser and other rights taken away, its password replaced, its accounts at other hosts dropped): "+
		"set adopt = true in this [[host.database]] if pidb should take it over, or choose another owner", e.Host, e.Owner, e.Database)
}

// account is one user and the database it may use.
type account struct {
	user, database string
}

// bench reports whether a is pidb's own benchmark account, whose password
// is the host's (secrets.Host.Pidb) and which pidb always manages.
func (a account) bench() bool {
	return a.user == engine.BenchUser && a.database == engine.BenchDatabase
}

func accountsOf(t *Target) []account {
	out := []account{{engine.BenchUser, engine.BenchDatabase}}
	for _, d := range t.Host.Databases {
		out = append(out, account{d.Owner, d.Name})
	}
	return out
}

// mayAdopt reports whether pidb may take a's user over when it is there
// already and pidb did not make it: pidb's own benchmark account (its name
// is pidb's, which no inventory may give an application, so pidb takes it
// over as it always did; its database has a check of its own), or an
// owner whose [[host.database]] says adopt = true.
func mayAdopt(t *Target, a account) bool {
	if a.bench() {
		return true
	}
	for _, d := range t.Host.Databases {
		if d.Name == a.database && d.Owner == a.user {
			return d.Adopt
		}
	}
	return false
}

// mysqlHosts are the host parts of a MySQL account: localhost (the
// socket), 127.0.0.1 (TCP on the host itself: pidb's SSH forward, which
// with skip_name_resolve is no longer read as localhost), and each allowed
// IPv4 CIDR in the netmask form both MySQL and MariaDB read.
func mysqlHosts(allow []netip.Prefix) ([]string, error) {
	hosts := []string{"localhost", loopback}
	for _, p := range allow {
		if !p.Addr().Is4() {
			return nil, fmt.Errorf("allow_from %s: MySQL and MariaDB accounts take IPv4 networks only", p)
		}
		mask := net.CIDRMask(p.Bits(), 32)
		hosts = append(hosts, p.Addr().String()+"/"+net.IP(mask).String())
	}
	return hosts, nil
}

// login is an account on the server: a PostgreSQL role (host ""), or a
// MySQL user at a host.
type login struct{ user, host string }

// stored is what the server keeps of an account: its password hash and,
// on MySQL, what it requires of TLS (mysql.user.ssl_type: "ANY" for
// REQUIRE SSL, "" for none).
type stored struct{ hash, ssl string }

// serverState is what the server has, as existing reads it.
type serverState struct {
	accounts  map[login]stored
	databases map[string]string // each with pidb's mark (ownerMark) when pidb made it, else ""
	marked    map[string]bool   // users with pidb's mark (accountMark)
}

// hasUser reports whether the server has user u (at any host).
func (st serverState) hasUser(u string) bool {
	for l := range st.accounts {
		if l.user == u {
			return true
		}
	}
	return false
}

// holds reports whether the server holds password pw for user u, at
// some host: its stored hash says so. Only pidb, which made pw, can have
// set it.
func (st serverState) holds(u, pw string) bool {
	if pw == "" {
		return false
	}
	for l, s := range st.accounts {
		if match, ok := matchesStored(s.hash, pw); l.user == u && ok && match {
			return true
		}
	}
	return false
}

// loginsOf are user u's accounts, by host.
func (st serverState) loginsOf(u string) []login {
	var out []login
	for l := range st.accounts {
		if l.user == u {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].host < out[j].host })
	return out
}

// pgListing lists the roles and the databases: kind, name, password hash,
// comment (pidb's marks), one value each, read through engine.Rows.
const pgListing = "SELECT 'role', rolname, coalesce(rolpassword, ''), coalesce(shobj_description(oid, 'pg_authid'), '') FROM pg_authid " +
	"UNION ALL SELECT 'db', datname, '', coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database"

// mysqlListing lists the accounts (kind, user, host, hash in hex, ssl_type), the
// databases (kind, name, pidb's mark when it holds ownerTable) and whether
// markTable is there, five values in every row: three statements, as
// UNION would mix mysql.user's and information_schema's collations.
const mysqlListing = "SELECT 'user', user, host, IFNULL(HEX(authentication_string), ''), ssl_type FROM mysql.user;\n" +
	"SELECT 'db', s.schema_name, IF(t.table_name IS NULL, '', '" + ownerMark + "'), '', '' FROM information_schema.schemata s " +
	"LEFT JOIN information_schema.tables t ON t.table_schema = s.schema_name AND t.table_name = '" + ownerTable + "';\n" +
	"SELECT 'marks', COUNT(*), '', '', '' FROM information_schema.tables WHERE table_schema = '" + markDatabase + "' AND table_name = '" + markTable + "'"

// existing reads the accounts and databases that are there, each
// account's stored password hash and pidb's marks. It reads the server's
// structured output (engine.Query and engine.Rows), so no name or comment
// can pass for a row of its own, and refuses values of a shape it does not
// expect.
func existing(ctx context.Context, t *Target, e engine.Engine) (serverState, error) {
	st := serverState{accounts: map[login]stored{}, databases: map[string]string{}, marked: map[string]bool{}}
	bad := func(what string, r []string) (serverState, error) {
		return serverState{}, fmt.Errorf("read the accounts and databases: %s in a row of kind %q", what, r[0])
	}
	if e.Flavor == dbms.Postgres {
		rows, err := query(ctx, t, e, pgListing, 4)
		if err != nil {
			return serverState{}, err
		}
		for _, r := range rows {
			if r[1] == "" {
				return bad("no name", r)
			}
			switch r[0] {
			case "role":
				st.accounts[login{user: r[1]}] = stored{hash: r[2]}
				if isAccountMark(r[3]) {
					st.marked[r[1]] = true
				}
			case "db":
				st.databases[r[1]] = r[3]
			default:
				return bad("an unknown kind", r)
			}
		}
		return st, nil
	}
	rows, err := query(ctx, t, e, mysqlListing, 5)
	if err != nil {
		return serverState{}, err
	}
	marks := false
	for _, r := range rows {
		switch r[0] {
		case "user":
			switch r[4] {
			case "", "ANY", "X509", "SPECIFIED":
			default:
				return bad(fmt.Sprintf("ssl_type %q", r[4]), r)
			}
			hash, err := unhex(r[3])
			if err != nil {
				return bad("a hash not in hex", r)
			}
			st.accounts[login{r[1], r[2]}] = stored{hash: hash, ssl: r[4]}
		case "db":
			if r[1] == "" || (r[2] != "" && r[2] != ownerMark) {
				return bad("a bad database", r)
			}
			st.databases[r[1]] = r[2]
		case "marks":
			if r[1] != "0" && r[1] != "1" {
				return bad(fmt.Sprintf("a count of %q", r[1]), r)
			}
			marks = r[1] == "1"
		default:
			return bad("an unknown kind", r)
		}
	}
	if marks {
		rows, err := query(ctx, t, e, "SELECT name, note FROM `"+markDatabase+"`.`"+markTable+"`", 2)
		if err != nil {
			return serverState{}, err
		}
		for _, r := range rows {
			if isAccountMark(r[1]) {
				st.marked[r[0]] = true
			}
		}
	}
	return st, nil
}

// unhex reads a hash the MySQL family was asked for in hex: Oracle
// MySQL's caching_sha2_password hashes hold bytes of any value (a
// newline, a tab), which would not pass through the client's rows.
func unhex(s string) (string, error) {
	b, err := hex.DecodeString(s)
	return string(b), err
}

// query runs a SELECT as the server's administrator and reads its rows of
// cols values.
func query(ctx context.Context, t *Target, e engine.Engine, sql string, cols int) ([][]string, error) {
	out, err := t.run(ctx, e.Query(sql))
	if err != nil {
		return nil, err
	}
	rows, err := e.Rows(out, cols)
	if err != nil {
		return nil, fmt.Errorf("read the accounts and databases: %w", err)
	}
	return rows, nil
}

// ownership is why pidb may manage an account.
type ownership int

const (
	made    ownership = iota // not there: pidb makes it now, and marks it
	marked                   // pidb's mark is on it
	kept                     // no mark, but this controller keeps its password: pidb made it before it marked its accounts
	adopted                  // no mark, and adopt = true: pidb takes it over
)

// mark is what pidb writes on an account it may manage, "" when the
// account has pidb's mark already.
func (o ownership) mark() string {
	switch o {
	case marked:
		return ""
	case adopted:
		return adoptedMark
	}
	return accountMark
}

// owners says, for every account, why pidb may manage it. An owner that
// is there, without pidb's mark, with no password kept for it on this
// controller and without adopt = true is someone else's: a
// *ForeignAccountError, every one of them at once, before pidb changes
// anything.
//
// The server's mark says whose an account is. An account pidb made
// before it marked its accounts is known by the server's own word too:
// the password it holds is the one this controller keeps (package
// secrets), which only pidb made. A password kept is no proof by itself:
// a cluster's replicas share their primary's store, and a replica's own
// account of that name is not pidb's. A controller without the file
// (another machine, a lost state folder) needs adopt = true once for such
// an owner.
func owners(t *Target, st serverState, sec secrets.Host) (map[string]ownership, error) {
	own := map[string]ownership{}
	var errs []error
	for _, a := range accountsOf(t) {
		switch {
		case !st.hasUser(a.user):
			own[a.user] = made
		case st.marked[a.user]:
			own[a.user] = marked
		case st.holds(a.user, password(sec, a)):
			own[a.user] = kept
		case mayAdopt(t, a):
			own[a.user] = adopted
		default:
			errs = append(errs, &ForeignAccountError{Host: t.Host.Name, Owner: a.user, Database: a.database})
		}
	}
	return own, errors.Join(errs...)
}

// stale reports whether the server holds another password for an account
// than the one kept on the controller (one pidb cannot check counts as kept).
func stale(stored, kept string) bool {
	match, ok := matchesStored(stored, kept)
	return ok && !match
}

// plan returns what is missing or stale, for Check's note. Someone else's
// database of pidb's name and someone else's owners are errors, as they
// are for Apply.
func plan(ctx context.Context, t *Target, e engine.Engine, sec secrets.Host) ([]string, error) {
	st, err := existing(ctx, t, e)
	if err != nil {
		return nil, err
	}
	if _, err := benchDatabaseState(st); err != nil {
		return nil, err
	}
	own, err := owners(t, st, sec)
	if err != nil {
		return nil, err
	}
	hosts, err := mysqlHosts(t.Host.AllowFrom)
	if e.Flavor != dbms.Postgres && err != nil {
		return nil, err
	}
	var todo []string
	for _, a := range accountsOf(t) {
		pw := password(sec, a)
		switch {
		case pw == "" && st.hasUser(a.user):
			// the server has the account, this controller no password for it:
			// another controller's, another user's store, or sudo's
			where, _ := secrets.Path(t.Inventory, t.Host.Name)
			if t.Cluster != nil {
				where, _ = secrets.ClusterPath(t.Inventory, t.Cluster.Name)
			}
			todo = append(todo, "a new password for "+a.user+", which the server has already: none is kept in "+where+
				" (provisioned from another controller, as another user, or with or without sudo?); clients with its present password will be refused")
		case pw == "":
			todo = append(todo, "password for "+a.user)
		}
		if _, ok := st.databases[a.database]; !ok {
			todo = append(todo, "database "+a.database)
		}
		switch own[a.user] {
		case kept:
			todo = append(todo, "pidb's mark on "+a.user+" (made by pidb before it marked accounts)")
		case adopted:
			why := "adopt = true"
			if a.bench() {
				why = "pidb's own account"
			}
			todo = append(todo, "take over "+a.user+" ("+why+")")
		}
		if e.Flavor == dbms.Postgres {
			if s, ok := st.accounts[login{user: a.user}]; !ok {
				todo = append(todo, "user "+a.user)
			} else if pw != "" && stale(s.hash, pw) {
				todo = append(todo, "password of "+a.user+" (not the one kept)")
			}
			continue
		}
		want := map[string]bool{}
		for _, h := range hosts {
			want[h] = true
			if s, ok := st.accounts[login{a.user, h}]; !ok {
				todo = append(todo, "user "+a.user+"@"+h)
			} else if pw != "" && stale(s.hash, pw) {
				todo = append(todo, "password of "+a.user+"@"+h+" (not the one kept)")
			} else if req := requireTLS(t, h); s.ssl != req {
				todo = append(todo, map[bool]string{true: "TLS required of ", false: "TLS no longer required of "}[req != ""]+a.user+"@"+h)
			}
		}
		for _, l := range st.loginsOf(a.user) {
			if !want[l.host] {
				todo = append(todo, fmt.Sprintf("drop %s@%q", l.user, l.host))
			}
		}
	}
	sort.Strings(todo)
	return todo, nil
}

func password(sec secrets.Host, a account) string {
	if a.bench() {
		return sec.Pidb
	}
	if d, ok := sec.Databases[a.database]; ok && d.Owner == a.user {
		return d.Password
	}
	return ""
}

func (accountsStep) Check(ctx context.Context, t *Target) (Change, error) {
	if t.role() == inventory.Replica && t.Host.Engine == dbms.PostgresFamily {
		// a standby takes no writes: its accounts and databases are
		// its primary's, copied and replayed (a MariaDB replica's are its
		// own, made outside the binary log like the primary's)
		return Change{}, nil
	}
	e, err := engine.Of(t.Facts)
	if err != nil {
		return Change{Needed: true, Note: "after the install: the pidb account and the application databases"}, nil
	}
	sec, err := t.accountSecrets()
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
	// a cluster's hosts share their passwords: the first makes them
	defer t.lockSecrets()()
	sec, err := t.accountSecrets()
	if err != nil {
		return err
	}
	st, err := existing(ctx, t, e)
	if err != nil {
		return err
	}
	if _, err := benchDatabaseState(st); err != nil {
		return err
	}
	// decided on the passwords kept before this run adds any
	own, err := owners(t, st, sec)
	if err != nil {
		return err
	}
	// new passwords are saved before the server gets them: a failure between
	// the two leaves a password that the next run sets again
	fresh := map[string]bool{} // users whose password the server must be given
	for _, a := range accountsOf(t) {
		if pw := password(sec, a); pw != "" {
			for _, l := range st.loginsOf(a.user) {
				if stale(st.accounts[l].hash, pw) {
					fresh[a.user] = true
				}
			}
			continue
		}
		fresh[a.user] = true
		if a.bench() {
			sec.Pidb = secrets.Generate()
		} else {
			sec.Databases[a.database] = secrets.Database{Owner: a.user, Password: secrets.Generate()}
		}
	}
	if err := t.saveAccountSecrets(sec); err != nil {
		return fmt.Errorf("keep the passwords: %w", err)
	}
	var sql string
	if e.Flavor == dbms.Postgres {
		sql = postgresAccountsSQL(t, sec, st, fresh, own)
	} else {
		hosts, err := mysqlHosts(t.Host.AllowFrom)
		if err != nil {
			return err
		}
		sql = mysqlAccountsSQL(t, sec, st, hosts, fresh, own)
	}
	if _, err := t.Root.RunInput(ctx, e.Script(), []byte(sql)); err != nil {
		return fmt.Errorf("create the accounts: %w", err)
	}
	return nil
}

// pgIdent quotes a name for PostgreSQL's SQL, so that a name that is also
// a keyword ("order", "user") names the database or role, and for
// pg_hba.conf, where a quoted "all" is a database and not the keyword
// (engine.PostgresIdent, which doubles a double quote: the inventory
// allows lower case letters, digits and _ only, so no name holds one).
func pgIdent(name string) string { return engine.PostgresIdent(name) }

// mysqlGrantDB quotes a database name for GRANT ... ON db.*, where _ and %
// are wildcards: escaped, my_app grants my_app and not myXapp.
func mysqlGrantDB(name string) string {
	return "`" + strings.NewReplacer("_", `\_`, "%", `\%`).Replace(name) + "`"
}

// mysqlIdent quotes a name as a MySQL identifier.
func mysqlIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// postgresAccountsSQL creates what is missing: roles that may log in and
// nothing more, marked as pidb's (own), databases owned by them, closed to
// everyone else.
func postgresAccountsSQL(t *Target, sec secrets.Host, st serverState, fresh map[string]bool, own map[string]ownership) string {
	var b strings.Builder
	// the passwords go as verifiers (newScramVerifier); the statements
	// are kept out of the logs all the same, for this session only
	b.WriteString(pgQuietSession)
	for _, a := range accountsOf(t) {
		exists := st.hasUser(a.user)
		if !exists {
			fmt.Fprintf(&b, "CREATE ROLE %s LOGIN;\n", pgIdent(a.user))
		}
		fmt.Fprintf(&b, "ALTER ROLE %s WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;\n", pgIdent(a.user))
		if fresh[a.user] || !exists {
			fmt.Fprintf(&b, "ALTER ROLE %s PASSWORD %s;\n", pgIdent(a.user), engine.PostgresString(newScramVerifier(password(sec, a))))
		}
		if m := own[a.user].mark(); m != "" {
			fmt.Fprintf(&b, "COMMENT ON ROLE %s IS %s;\n", pgIdent(a.user), engine.PostgresString(m))
		}
		if _, ok := st.databases[a.database]; !ok {
			fmt.Fprintf(&b, "CREATE DATABASE %s OWNER %s;\n", pgIdent(a.database), pgIdent(a.user))
			fmt.Fprintf(&b, "COMMENT ON DATABASE %s IS %s;\n", pgIdent(a.database), engine.PostgresString(ownerMark+" for "+a.user))
		}
		fmt.Fprintf(&b, "REVOKE ALL ON DATABASE %s FROM PUBLIC;\n", pgIdent(a.database))
	}
	return b.String()
}

// pgQuietSession keeps the session's statements out of PostgreSQL's logs
// (engine.PostgresQuiet).
const pgQuietSession = engine.PostgresQuiet

// mysqlQuietSession keeps the session's statements out of the general log,
// the slow log and the binary log (engine.MySQLQuiet).
const mysqlQuietSession = engine.MySQLQuiet

// identifiedBy is how an account's password is given: to MariaDB its
// mysql_native_password hash (IDENTIFIED BY PASSWORD), so the password
// never leaves the controller; to MySQL the password itself, which MySQL
// rewrites out of every log it writes (its caching_sha2_password hash
// cannot be made here).
func identifiedBy(flavor dbms.Flavor, password string) string {
	if flavor == dbms.MariaDB {
		return "IDENTIFIED BY PASSWORD " + engine.MySQLString(nativeHash(password))
	}
	return "IDENTIFIED BY " + engine.MySQLString(password)
}

// loopback is the host part of the MySQL account that pidb's SSH forward
// logs in as: TCP from the host itself.
const loopback = "127.0.0.1"

// requireTLS is what a MySQL or MariaDB account at host h must require of
// TLS, as the server's ssl_type says it: "ANY" (REQUIRE SSL) at an allowed
// network of a host whose network logins use TLS; "" at localhost and
// 127.0.0.1, where the host's own clients and pidb's SSH forward arrive.
func requireTLS(t *Target, h string) string {
	if h != "localhost" && h != loopback && needsTLS(t) {
		return "ANY"
	}
	return ""
}

// mysqlAccount is a MySQL account as SQL names it: 'user'@'host'.
func mysqlAccount(user, host string) string {
	return engine.MySQLString(user) + "@" + engine.MySQLString(host)
}

// mysqlAccountsSQL creates each user at localhost and at every allowed
// network, drops its accounts at networks no longer allowed, grants it
// its own database only, and records the users pidb may manage (own)
// in markTable.
func mysqlAccountsSQL(t *Target, sec secrets.Host, st serverState, hosts []string, fresh map[string]bool, own map[string]ownership) string {
	var b strings.Builder
	b.WriteString(mysqlQuietSession)
	var marks []string
	for _, a := range accountsOf(t) {
		pw := identifiedBy(t.Facts.Engine.Flavor, password(sec, a))
		if _, ok := st.databases[a.database]; !ok {
			fmt.Fprintf(&b, "CREATE DATABASE %s;\n", mysqlIdent(a.database))
			if a.database == engine.BenchDatabase {
				fmt.Fprintf(&b, "CREATE TABLE %s.%s (note VARCHAR(100) NOT NULL);\n", mysqlIdent(a.database), mysqlIdent(ownerTable))
				fmt.Fprintf(&b, "INSERT INTO %s.%s VALUES (%s);\n", mysqlIdent(a.database), mysqlIdent(ownerTable), engine.MySQLString(ownerMark+" for pidb"))
			}
		}
		want := map[string]bool{}
		for _, h := range hosts {
			want[h] = true
			acct := mysqlAccount(a.user, h)
			req := requireTLS(t, h)
			clause := map[bool]string{true: "REQUIRE SSL", false: "REQUIRE NONE"}[req != ""]
			if s, ok := st.accounts[login{a.user, h}]; !ok {
				create := pw // each account's own: one REQUIRE SSL, at each network
				if req != "" {
					create += " " + clause
				}
				fmt.Fprintf(&b, "CREATE USER %s %s;\n", acct, create)
			} else {
				if fresh[a.user] {
					fmt.Fprintf(&b, "ALTER USER %s %s;\n", acct, pw)
				}
				if s.ssl != req {
					fmt.Fprintf(&b, "ALTER USER %s %s;\n", acct, clause)
				}
			}
			fmt.Fprintf(&b, "GRANT ALL PRIVILEGES ON %s.* TO %s;\n", mysqlGrantDB(a.database), acct)
		}
		for _, l := range st.loginsOf(a.user) {
			if !want[l.host] {
				fmt.Fprintf(&b, "DROP USER %s;\n", mysqlAccount(l.user, l.host))
			}
		}
		if m := own[a.user].mark(); m != "" {
			marks = append(marks, fmt.Sprintf("(%s, %s)", engine.MySQLString(a.user), engine.MySQLString(m)))
		}
	}
	if len(marks) > 0 {
		fmt.Fprintf(&b, "CREATE DATABASE IF NOT EXISTS `%s`;\n", markDatabase)
		fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS `%s`.`%s` (name VARCHAR(128) NOT NULL PRIMARY KEY, note VARCHAR(100) NOT NULL) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;\n", markDatabase, markTable)
		fmt.Fprintf(&b, "REPLACE INTO `%s`.`%s` (name, note) VALUES %s;\n", markDatabase, markTable, strings.Join(marks, ", "))
	}
	return b.String()
}
