package inventory

import (
	"fmt"
	"math/big"
	"net/netip"
	"sort"
	"strings"

	"pidb/dbms"
)

// Pidb is the name of pidb's own account and benchmark database on every
// host (engine.BenchUser, engine.BenchDatabase): no application may have it.
const Pidb = "pidb"

// PidbReplication is the account a cluster's replicas log in to its
// primary with: no application may have it.
const PidbReplication = "pidb_replication"

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
var reserved = map[dbms.Family]map[string]string{
	dbms.PostgresFamily: {
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
	dbms.MySQLFamily: {
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
func reservedName(engine dbms.Family, name string) string {
	if name == Pidb {
		return "is pidb's own account and benchmark database"
	}
	if name == PidbReplication {
		return "is the account a cluster's replicas log in to its primary with"
	}
	if engine == dbms.PostgresFamily && strings.HasPrefix(name, "pg_") {
		return "starts with pg_, which PostgreSQL reserves for its system roles"
	}
	return reserved[engine][name]
}

// ReservedNames lists the names an application may not use on the engine
// family (beside PostgreSQL's pg_ prefix), for the README and the tests.
func ReservedNames(engine dbms.Family) []string {
	out := []string{Pidb, PidbReplication}
	for n := range reserved[engine] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// privateRanges are the networks an allow_from may name without
// allow_public: none of their addresses is routed on the internet. IPv4:
// the private networks of RFC 1918, the shared address space of carrier-grade
// NAT (RFC 6598), link-local and loopback; IPv6: unique local addresses
// (RFC 4193), link-local and loopback. They do not overlap one another.
var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("::1/128"),
}

// isPublic reports whether an allow_from prefix reaches beyond loopback and
// the private ranges (privateRanges): whether it holds even one address
// that is not in one of them, whatever its width. Such a prefix needs
// allow_public = true on the host.
func isPublic(p netip.Prefix) bool {
	if !p.IsValid() {
		return false // never one of a loaded inventory's: parsePrefix refuses it
	}
	p = p.Masked()
	for _, r := range privateRanges {
		if r.Bits() <= p.Bits() && r.Contains(p.Addr()) {
			return false
		}
	}
	return true
}

// publicAddresses counts the addresses of p outside privateRanges. A
// private range overlaps p only by lying inside it, unless p lies inside
// the range (and then p is not public at all).
func publicAddresses(p netip.Prefix) *big.Int {
	p = p.Masked()
	n := new(big.Int).Lsh(big.NewInt(1), uint(p.Addr().BitLen()-p.Bits()))
	for _, r := range privateRanges {
		if r.Bits() >= p.Bits() && r.Overlaps(p) {
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(r.Addr().BitLen()-r.Bits())))
		}
	}
	return n
}

// wideOpen says which addresses an allow_from prefix would open the
// database port to when it reaches beyond loopback and the private ranges
// (and so needs allow_public), or "".
func wideOpen(p netip.Prefix) string {
	if !isPublic(p) {
		return ""
	}
	v := "IPv4"
	if !p.Addr().Is4() {
		v = "IPv6"
	}
	if p.Bits() == 0 {
		return fmt.Sprintf("%s opens the database port to every %s address: the whole internet, wherever the Pi can be reached from it", p, v)
	}
	n := publicAddresses(p)
	count := n.String()
	switch {
	case v == "IPv6" && n.BitLen() > 32 && n.TrailingZeroBits() == uint(n.BitLen()-1):
		count = fmt.Sprintf("2^%d", n.BitLen()-1)
	case v == "IPv6" && n.BitLen() > 32:
		count = fmt.Sprintf("more than 2^%d", n.BitLen()-1)
	}
	what := "addresses"
	if n.Cmp(big.NewInt(1)) == 0 {
		what = "address"
	}
	beyond := "the private, CGNAT, link-local and loopback ranges"
	if v == "IPv6" {
		beyond = "unique local fc00::/7, link-local and loopback"
	}
	return fmt.Sprintf("%s opens the database port to %s public %s %s (beyond %s)", p, count, v, what, beyond)
}
