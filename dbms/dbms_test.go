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
