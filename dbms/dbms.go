// Package dbms names the database servers pidb runs, once: an engine
// family as the inventory names it (Postgres, or MySQL for MySQL and
// MariaDB), and the flavour a host runs (Postgres, MySQL or MariaDB).
package dbms

// The families and the flavours.
const (
	Postgres = "postgres" // PostgreSQL: a family, and its one flavour
	MySQL    = "mysql"    // the MySQL family (MySQL and MariaDB), and MySQL's flavour
	MariaDB  = "mariadb"  // MariaDB, of the MySQL family
)

// Family is the family of a flavour.
func Family(f string) string {
	if f == Postgres {
		return Postgres
	}
	return MySQL
}

// FlavorOn is the flavour of a family that a distribution ships (its
// /etc/os-release ID): PostgreSQL for Postgres; for MySQL, MySQL on
// Ubuntu and MariaDB on Debian and Raspberry Pi OS, which ship it instead.
func FlavorOn(family, osID string) string {
	switch {
	case family == Postgres:
		return Postgres
	case osID == "ubuntu":
		return MySQL
	}
	return MariaDB
}
