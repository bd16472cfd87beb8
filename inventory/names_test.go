package inventory

import (
	"fmt"
	"strings"
	"testing"
)

// TestReservedNamesRefused: every name a server reserves or gives a
// meaning to is refused as an application's database and as its owner,
// on its engine, with the file and line of the key, and the same name is
// accepted on the other engine where it means nothing.
func TestReservedNamesRefused(t *testing.T) {
	cases := []struct {
		engine, name string
		elsewhere    bool // accepted on the other engine
	}{
		{"postgres", "postgres", true}, {"postgres", "template0", true}, {"postgres", "template1", true},
		{"postgres", "all", true}, {"postgres", "sameuser", true}, {"postgres", "samerole", true},
		{"postgres", "samegroup", true}, {"postgres", "replication", true}, {"postgres", "public", false},
		{"postgres", "none", false}, {"postgres", "current_user", true}, {"postgres", "current_role", true},
		{"postgres", "session_user", true}, {"postgres", "pg_monitor", true}, {"postgres", "pg_anything", true},
		{"postgres", "pidb", false},
		{"mysql", "root", true}, {"mysql", "mysql", true}, {"mysql", "information_schema", true},
		{"mysql", "performance_schema", true}, {"mysql", "sys", true}, {"mysql", "public", false},
		{"mysql", "none", false}, {"mysql", "pidb", false},
	}
	other := map[string]string{"postgres": "mysql", "mysql": "postgres"}
	for _, c := range cases {
		for _, key := range []string{"name", "owner"} {
			name, owner := "app", "app"
			if key == "name" {
				name = c.name
			} else {
				owner = c.name
			}
			src := func(engine string) string {
				return fmt.Sprintf("[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nengine = %q\n\n[[host.database]]\nname = %q\nowner = %q\n", engine, name, owner)
			}
			line := map[string]string{"name": "7", "owner": "8"}[key]
			_, err := Parse("inv.toml", "/tmp", src(c.engine))
			if err == nil || !strings.Contains(err.Error(), "inv.toml:"+line+":") || !strings.Contains(err.Error(), fmt.Sprintf("%s %q", key, c.name)) || !IsInputError(err) {
				t.Errorf("%s %s %q: %v; want an input error at inv.toml:%s", c.engine, key, c.name, err, line)
			}
			_, err = Parse("inv.toml", "/tmp", src(other[c.engine]))
			if c.elsewhere && err != nil {
				t.Errorf("%s %s %q on %s, where it means nothing: %v", c.engine, key, c.name, other[c.engine], err)
			}
		}
	}
	// the list the README gives
	if got := strings.Join(ReservedNames("postgres"), " "); !strings.Contains(got, "pidb") || !strings.Contains(got, "template1") {
		t.Errorf("ReservedNames(postgres) = %s", got)
	}
}

// TestAllowFromPublic: a prefix shorter than /8 needs allow_public on the
// host, and the error says what it would open.
func TestAllowFromPublic(t *testing.T) {
	for _, c := range []struct {
		allow, public string
		want          string // "" = accepted
	}{
		{`["0.0.0.0/0"]`, "", "0.0.0.0/0 opens the database port to every IPv4 address"},
		{`["::/0"]`, "", "::/0 opens the database port to every IPv6 address"},
		{`["10.0.0.0/7"]`, "", "10.0.0.0/7 opens the database port to 33554432 addresses (1/128 of all IPv4 addresses)"},
		{`["192.168.1.0/24", "0.0.0.0/0"]`, "", "0.0.0.0/0"},
		{`["10.0.0.0/8"]`, "", ""},
		{`["0.0.0.0/0"]`, "allow_public = true\n", ""},
		{`["0.0.0.0/0"]`, "allow_public = false\n", "set allow_public = true"},
	} {
		src := "[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\n" + c.public + "allow_from = " + c.allow + "\n"
		_, err := Parse("inv.toml", "/tmp", src)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: %v", c.allow, c.public, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "inv.toml:")):
			t.Errorf("%s %s: %v; want %q", c.allow, c.public, err, c.want)
		}
	}
	// IPv6 on MySQL/MariaDB, whose accounts cannot name it
	_, err := Parse("inv.toml", "/tmp", "[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nengine = \"mysql\"\nallow_from = [\"fd00::/64\"]\n")
	if err == nil || !strings.Contains(err.Error(), "inv.toml:5:") || !strings.Contains(err.Error(), "IPv4 networks only") {
		t.Errorf("IPv6 allow_from on mysql: %v", err)
	}
	if _, err := Parse("inv.toml", "/tmp", "[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nallow_from = [\"fd00::/64\"]\n"); err != nil {
		t.Errorf("IPv6 allow_from on postgres: %v", err)
	}
	// from [defaults]: the error points there
	_, err = Parse("inv.toml", "/tmp", "[defaults]\nallow_from = [\"0.0.0.0/0\"]\n\n[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\n")
	if err == nil || !strings.Contains(err.Error(), "inv.toml:2:") {
		t.Errorf("allow_from from [defaults]: %v; want the error at its line", err)
	}
}

// TestTLSKey: network logins need TLS unless the host (or [defaults]) says
// tls = false; the host's own key wins; anything but a boolean is refused
// at its line.
func TestTLSKey(t *testing.T) {
	for _, c := range []struct {
		defaults, host string
		want           bool
	}{
		{"", "", true},
		{"tls = false\n", "", false},
		{"tls = false\n", "tls = true\n", true},
		{"", "tls = false\n", false},
	} {
		src := "[defaults]\n" + c.defaults + "\n[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\n" + c.host
		inv, err := Parse("inv.toml", "/tmp", src)
		if err != nil {
			t.Fatalf("%q %q: %v", c.defaults, c.host, err)
		}
		if got := inv.Hosts[0].TLS; got != c.want {
			t.Errorf("defaults %q, host %q: TLS %v, want %v", c.defaults, c.host, got, c.want)
		}
	}
	_, err := Parse("inv.toml", "/tmp", "[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\ntls = \"no\"\n")
	if err == nil || !strings.Contains(err.Error(), "inv.toml:4:") || !strings.Contains(err.Error(), "tls") {
		t.Errorf("tls = \"no\": %v; want an error at inv.toml:4", err)
	}
}
