// Package dbms names the database servers pidb runs, once: the server a
// host runs (its flavour: PostgreSQL, MySQL or MariaDB), and the engine
// family the inventory names (PostgreSQL, or MySQL for MySQL and MariaDB).
package dbms

import "strings"

// Flavor is the server a host runs.
type Flavor string

// The flavours.
const (
	Postgres Flavor = "postgres"
	MySQL    Flavor = "mysql" // Oracle's
	MariaDB  Flavor = "mariadb"
)

// Family is an engine family as the inventory names it: the flavours
// that speak one protocol and one SQL.
type Family string

// The families. Each has the name of its first flavour.
const (
	PostgresFamily Family = "postgres" // PostgreSQL
	MySQLFamily    Family = "mysql"    // MySQL and MariaDB
)

// Families are the families, in the order help lists them.
func Families() []Family { return []Family{PostgresFamily, MySQLFamily} }

// Family is the family of a flavour; "" for a name that is none of the
// flavours (ParseFlavor reads what people write).
func (f Flavor) Family() Family {
	switch f {
	case Postgres:
		return PostgresFamily
	case MySQL, MariaDB:
		return MySQLFamily
	}
	return ""
}

// ParseFlavor reads an engine's name as people write it, in any case:
// postgres or postgresql, mysql, mariadb. It is the one reading of an
// engine's name: the inventory's engine (a family: ParseFamily), the
// tuner's --engine, and every flag that names one go through it.
func ParseFlavor(s string) (Flavor, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "postgres", "postgresql":
		return Postgres, true
	case "mysql":
		return MySQL, true
	case "mariadb":
		return MariaDB, true
	}
	return "", false
}

// ParseFamily reads the family an engine's name belongs to, as
// ParseFlavor reads the name: mariadb is of the MySQL family.
func ParseFamily(s string) (Family, bool) {
	f, ok := ParseFlavor(s)
	return f.Family(), ok
}

// FlavorOn is the flavour of a family that a distribution ships (its
// /etc/os-release ID): PostgreSQL for its family; for MySQL, MySQL on
// Ubuntu and MariaDB on Debian and Raspberry Pi OS, which ship it instead.
func FlavorOn(family Family, osID string) Flavor {
	switch {
	case family == PostgresFamily:
		return Postgres
	case osID == "ubuntu":
		return MySQL
	}
	return MariaDB
}

// Major is the part of a version a flavour's releases are named by, the
// one a replica must share with its primary: PostgreSQL's first number
// ("17" of 17.12), MySQL's and MariaDB's first two ("11.8" of 11.8.9).
func (f Flavor) Major(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if f == Postgres {
		return parts[0]
	}
	return strings.Join(parts[:min(2, len(parts))], ".")
}

// shipped is the server each distribution release installs for
// "postgresql", "mariadb-server" and "mysql-server", by its os-release
// ID and VERSION_ID: its major version, or, for MySQL 8.0, a version of
// it past 8.0.30 (which changed how the redo log is sized), as the
// releases' updates are.
var shipped = map[string]map[Flavor]string{
	"debian 10":    {Postgres: "11", MariaDB: "10.3"},
	"debian 11":    {Postgres: "13", MariaDB: "10.5"},
	"debian 12":    {Postgres: "15", MariaDB: "10.11"},
	"debian 13":    {Postgres: "17", MariaDB: "11.8"},
	"raspbian 10":  {Postgres: "11", MariaDB: "10.3"},
	"raspbian 11":  {Postgres: "13", MariaDB: "10.5"},
	"raspbian 12":  {Postgres: "15", MariaDB: "10.11"},
	"raspbian 13":  {Postgres: "17", MariaDB: "11.8"},
	"ubuntu 22.04": {Postgres: "14", MySQL: "8.0.39"},
	"ubuntu 24.04": {Postgres: "16", MySQL: "8.0.39"},
	"ubuntu 26.04": {Postgres: "18", MySQL: "8.4"},
}

// Shipped is the version of flavor that the distribution release
// (os-release's ID and VERSION_ID) installs, as shipped has it (Major
// gives its major); "" where pidb does not know.
func Shipped(osID, versionID string, flavor Flavor) string {
	return shipped[osID+" "+versionID][flavor]
}
