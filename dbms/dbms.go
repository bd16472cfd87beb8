// Package dbms names the database servers pidb runs, once: the server a
// host runs (its flavour: PostgreSQL, MySQL or MariaDB), and the engine
// family the inventory names (PostgreSQL, or MySQL for MySQL and MariaDB).
package dbms

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

// Family is the family of a flavour.
func (f Flavor) Family() Family {
	if f == Postgres {
		return PostgresFamily
	}
	return MySQLFamily
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
