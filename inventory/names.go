package inventory

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// Pidb is the name of pidb's own account and benchmark database on every
// host (engine.BenchUser, engine.BenchDatabase): no application may have it.
const Pidb = "pidb"

// reserved are the names the servers reserve or give a meaning to, by
// engine family and by what they would name, each with why. An
// application's database or owner with one of them would be quoted
// correctly and still do harm: a pg_hba line whose database is "all"
// matches every database, an owner called "postgres" is the superuser.
//
// PostgreSQL (the CREATE ROLE, pg_hba.conf and "Template Databases"
// chapters of its documentation): role names starting with pg_ are
// reserved for system roles; public and none are reserved role names;
// current_user, current_role and session_user cannot name a role; postgres
// is the bootstrap superuser and the maintenance database; template0 and
// template1 are the template databases; in pg_hba.conf all, sameuser,
// samerole, samegroup and replication are keywords in the database field,
// and all in the user field.
//
// MySQL and MariaDB (their "Grant Tables", "The sys Schema", "Reserved
// Accounts" and "Roles" pages): root is the administrator; mysql holds
// the grant tables, information_schema, performance_schema and sys are
// system schemas; mysql.sys, mysql.session, mysql.infoschema and
// mariadb.sys are system accounts, as is Debian's debian-sys-maint (their
// dots and dashes already keep them out of an inventory's names); public is MariaDB's role of every user (10.11 and later); none names no
// role in SET ROLE.
var reserved = map[string]map[string]string{
	"postgres": {
		"postgres":     "is PostgreSQL's superuser and its maintenance database",
		"template0":    "is a template database of PostgreSQL",
		"template1":    "is the template database every new database is copied from",
		"all":          "is a keyword of pg_hba.conf that matches every database and every user",
		"sameuser":     "is a keyword of pg_hba.conf (the database named like the user)",
		"samerole":     "is a keyword of pg_hba.conf (databases of the user's roles)",
		"samegroup":    "is a keyword of pg_hba.conf (an old name of samerole)",
		"replication":  "is a keyword of pg_hba.conf that matches replication connections",
		"public":       "is PostgreSQL's reserved role of every user",
		"none":         "is a reserved role name of PostgreSQL",
		"current_user": "names the session's role in PostgreSQL, not a role",
		"current_role": "names the session's role in PostgreSQL, not a role",
		"session_user": "names the session's user in PostgreSQL, not a role",
	},
	"mysql": {
		"root":               "is the server's administrator",
		"mysql":              "is the system schema that holds the grant tables",
		"information_schema": "is a system schema",
		"performance_schema": "is a system schema",
		"sys":                "is a system schema",
		"public":             "is MariaDB's role of every user",
		"none":               "names no role in SET ROLE",
	},
}

// reservedName says why an application's database or owner may not be
// called name on the engine family, or "" when it may.
func reservedName(engine, name string) string {
	if name == Pidb {
		return "is pidb's own account and benchmark database"
	}
	if engine == "postgres" && strings.HasPrefix(name, "pg_") {
		return "starts with pg_, which PostgreSQL reserves for its system roles"
	}
	return reserved[engine][name]
}

// ReservedNames lists the names an application may not use on the engine
// family (beside PostgreSQL's pg_ prefix), for the README and the tests.
func ReservedNames(engine string) []string {
	out := []string{Pidb}
	for n := range reserved[engine] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// publicPrefixBits: an allow_from prefix shorter than this opens the port
// to a sixteenth of the internet's addresses or more.
const publicPrefixBits = 8

// wideOpen says what an allow_from prefix would open when it is wide
// enough to need allow_public, or "".
func wideOpen(p netip.Prefix) string {
	if p.Bits() >= publicPrefixBits {
		return ""
	}
	if p.Bits() == 0 {
		v := "IPv4"
		if p.Addr().Is6() {
			v = "IPv6"
		}
		return fmt.Sprintf("%s opens the database port to every %s address: the whole internet, wherever the Pi can be reached from it", p, v)
	}
	if p.Addr().Is4() {
		return fmt.Sprintf("%s opens the database port to %d addresses (1/%d of all IPv4 addresses)", p, uint64(1)<<(32-p.Bits()), 1<<p.Bits())
	}
	return fmt.Sprintf("%s opens the database port to 1/%d of all IPv6 addresses", p, 1<<p.Bits())
}
