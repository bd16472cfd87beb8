package provision

import (
	"encoding/base64"
	"strings"
	"testing"
)

// The stored hashes are the servers' own output, taken from the lab:
// PostgreSQL 15's pg_authid.rolpassword after CREATE ROLE ... PASSWORD
// 'pidb-test-password', and MariaDB 10.11's PASSWORD('pidb-test-password').
func TestMatchesStored(t *testing.T) {
	const (
		scram  = "SCRAM-SHA-256$4096:V9vj3uGxg6xLjyNSTJQCog==$sOnLdilMcotwfI5sGex5maTlDFseWMIFCvvd/cegF7A=:aFDaD9C3XL7GgMkEW3hoaD4RPJ12QIc8zdANRQYQ4u0="
		native = "*987A6C425E1465EF02F626016225CF70E250F8E1"
	)
	for _, c := range []struct {
		stored, pw  string
		match, know bool
	}{
		{scram, "pidb-test-password", true, true},
		{scram, "pidb-test-passwore", false, true},
		{native, "pidb-test-password", true, true},
		{native, "nope", false, true},
		{"*6C8989366EAF75BB670AD8EA7A7FC1176A95CEF4", "mypass", true, true}, // the MySQL manual's example
		{"$A$005$abc", "x", false, false},                                   // caching_sha2_password: not checked
		{"", "x", false, false},
		{"SCRAM-SHA-256$4096:c2FsdA==$bad:bad", "x", false, true},
	} {
		m, k := matchesStored(c.stored, c.pw)
		if m != c.match || k != c.know {
			t.Errorf("matchesStored(%.30q..., %q) = %v, %v; want %v, %v", c.stored, c.pw, m, k, c.match, c.know)
		}
	}
}

// TestHashesAsTheServersMakeThem: the verifier and the hash pidb sends are
// byte for byte what PostgreSQL 15 and MariaDB 10.11 made of the same
// password (the stored values above, from the lab), given PostgreSQL's salt.
func TestHashesAsTheServersMakeThem(t *testing.T) {
	const scram = "SCRAM-SHA-256$4096:V9vj3uGxg6xLjyNSTJQCog==$sOnLdilMcotwfI5sGex5maTlDFseWMIFCvvd/cegF7A=:aFDaD9C3XL7GgMkEW3hoaD4RPJ12QIc8zdANRQYQ4u0="
	salt, _ := base64.StdEncoding.DecodeString("V9vj3uGxg6xLjyNSTJQCog==")
	if got := scramVerifier("pidb-test-password", salt, 4096); got != scram {
		t.Errorf("scramVerifier = %s\nPostgreSQL made %s", got, scram)
	}
	if got := nativeHash("pidb-test-password"); got != "*987A6C425E1465EF02F626016225CF70E250F8E1" {
		t.Errorf("nativeHash = %s", got)
	}
	a, b := newScramVerifier("x"), newScramVerifier("x")
	if a == b || !strings.HasPrefix(a, "SCRAM-SHA-256$4096:") {
		t.Errorf("two verifiers of one password: %s, %s; want fresh salts", a, b)
	}
	if m, ok := matchesStored(a, "x"); !m || !ok {
		t.Errorf("a fresh verifier does not match its password")
	}
}
