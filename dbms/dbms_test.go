package dbms

import "testing"

// TestFlavorOn: the server a distribution ships for each family.
func TestFlavorOn(t *testing.T) {
	for _, c := range []struct {
		family Family
		os     string
		want   Flavor
	}{
		{"postgres", "debian", "postgres"}, {"postgres", "ubuntu", "postgres"}, {"postgres", "raspbian", "postgres"},
		{"mysql", "debian", "mariadb"}, {"mysql", "raspbian", "mariadb"}, {"mysql", "ubuntu", "mysql"},
	} {
		if got := FlavorOn(c.family, c.os); got != c.want {
			t.Errorf("FlavorOn(%s, %s) = %s, want %s", c.family, c.os, got, c.want)
		}
	}
}

// TestFamily: MySQL and MariaDB are the MySQL family.
func TestFamily(t *testing.T) {
	for f, want := range map[Flavor]Family{"postgres": "postgres", "mysql": "mysql", "mariadb": "mysql"} {
		if got := f.Family(); got != want {
			t.Errorf("%s's family = %s, want %s", f, got, want)
		}
	}
}

// TestParseFlavor: an engine's name as people write it, in any case; a
// name that is none (once "postgresql" was read as the MySQL family) is
// refused, and its family is none.
func TestParseFlavor(t *testing.T) {
	for s, want := range map[string]Flavor{"postgres": Postgres, "postgresql": Postgres, "PostgreSQL": Postgres, " Postgres ": Postgres,
		"mysql": MySQL, "MySQL": MySQL, "mariadb": MariaDB, "MariaDB": MariaDB} {
		if got, ok := ParseFlavor(s); !ok || got != want {
			t.Errorf("ParseFlavor(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "pg", "oracle", "postgres-15", "sqlite"} {
		if got, ok := ParseFlavor(s); ok {
			t.Errorf("ParseFlavor(%q) = %q, want refused", s, got)
		}
		if f, ok := ParseFamily(s); ok || f != "" {
			t.Errorf("ParseFamily(%q) = %q, %v; want none", s, f, ok)
		}
	}
	if got := Flavor("postgresql").Family(); got != "" {
		t.Errorf("the family of a name that is no flavour: %q, want none", got)
	}
	if f, _ := ParseFamily("MariaDB"); f != MySQLFamily {
		t.Errorf("MariaDB's family: %q", f)
	}
}

// TestMajor: the part of a version a replica shares with its primary.
func TestMajor(t *testing.T) {
	for _, c := range []struct {
		f       Flavor
		v, want string
	}{
		{Postgres, "17.12", "17"}, {Postgres, "9.6.24", "9"}, {MariaDB, "11.8.9", "11.8"}, {MariaDB, "10.11.6", "10.11"}, {MySQL, "9.7.4", "9.7"}, {MySQL, "8", "8"},
	} {
		if got := c.f.Major(c.v); got != c.want {
			t.Errorf("%s %s: major %q, want %q", c.f, c.v, got, c.want)
		}
	}
	if Shipped("raspbian", "13", Postgres) != "17" || Shipped("debian", "12", MariaDB) != "10.11" || Shipped("ubuntu", "26.04", MySQL) != "8.4" || Shipped("ubuntu", "24.04", MySQL) != "8.0.39" || MySQL.Major(Shipped("ubuntu", "24.04", MySQL)) != "8.0" || Shipped("debian", "13", MySQL) != "" || Shipped("arch", "", Postgres) != "" {
		t.Error("Shipped")
	}
}
