package inventory

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pidb/usage"
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
		{"postgres", "pidb", false}, {"postgres", "pidb_replication", false},
		{"mysql", "root", true}, {"mysql", "mysql", true}, {"mysql", "information_schema", true},
		{"mysql", "performance_schema", true}, {"mysql", "sys", true}, {"mysql", "public", false},
		{"mysql", "none", false}, {"mysql", "pidb", false}, {"mysql", "pidb_replication", false},
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
			if err == nil || !strings.Contains(err.Error(), "inv.toml:"+line+":") || !strings.Contains(err.Error(), fmt.Sprintf("%s %q", key, c.name)) || !usage.Is(err) {
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

// TestAllowFromPublic: an allow_from prefix that reaches beyond loopback
// and the private ranges (IPv4 10/8, 172.16/12, 192.168/16, 100.64/10,
// 169.254/16, 127/8; IPv6 fc00::/7, fe80::/10, ::1), however narrow, needs
// allow_public on the host, and the error says which addresses it would
// open the port to, at the line of allow_from.
func TestAllowFromPublic(t *testing.T) {
	for _, c := range []struct {
		allow, public string
		want          string // "" = accepted
	}{
		{`["0.0.0.0/0"]`, "", "0.0.0.0/0 opens the database port to every IPv4 address"},
		{`["::/0"]`, "", "::/0 opens the database port to every IPv6 address"},
		{`["192.168.1.0/24", "0.0.0.0/0"]`, "", "0.0.0.0/0"},
		// public, whatever the width: the old rule (shorter than /8) let these through
		{`["3.0.0.0/8"]`, "", "3.0.0.0/8 opens the database port to 16777216 public IPv4 addresses"},
		{`["2000::/8"]`, "", "2000::/8 opens the database port to 2^120 public IPv6 addresses"},
		{`["2001::/16"]`, "", "2001::/16 opens the database port to 2^112 public IPv6 addresses"},
		{`["203.0.113.0/24"]`, "", "203.0.113.0/24 opens the database port to 256 public IPv4 addresses"},
		{`["8.8.8.8"]`, "", "8.8.8.8/32 opens the database port to 1 public IPv4 address"},
		{`["2001:db8::1"]`, "", "2001:db8::1/128 opens the database port to 1 public IPv6 address"},
		{`["0.0.0.0/8"]`, "", "0.0.0.0/8 opens the database port to 16777216 public IPv4 addresses"},
		// wider than a private range: only the public part is counted
		{`["10.0.0.0/7"]`, "", "10.0.0.0/7 opens the database port to 16777216 public IPv4 addresses"},
		{`["172.0.0.0/8"]`, "", "172.0.0.0/8 opens the database port to 15728640 public IPv4 addresses"},
		{`["100.0.0.0/8"]`, "", "100.0.0.0/8 opens the database port to 12582912 public IPv4 addresses"},
		{`["192.168.0.0/15"]`, "", "192.168.0.0/15 opens the database port to 65536 public IPv4 addresses"},
		{`["fc00::/6"]`, "", "fc00::/6 opens the database port to more than 2^120 public IPv6 addresses"},
		{`["::/1"]`, "", "::/1 opens the database port to more than 2^126 public IPv6 addresses"},
		{`["::/127"]`, "", "::/127 opens the database port to 1 public IPv6 address"},
		// just outside a private range
		{`["172.32.0.0/16"]`, "", "172.32.0.0/16 opens the database port to 65536 public IPv4 addresses"},
		{`["172.15.255.0/24"]`, "", "172.15.255.0/24"},
		{`["192.169.0.0/16"]`, "", "192.169.0.0/16"},
		{`["100.128.0.0/10"]`, "", "100.128.0.0/10"},
		{`["169.255.0.0/16"]`, "", "169.255.0.0/16"},
		{`["128.0.0.0/8"]`, "", "128.0.0.0/8"},
		{`["fe00::/9"]`, "", "fe00::/9"},
		{`["fec0::/10"]`, "", "fec0::/10"},
		{`["::2"]`, "", "::2/128"},
		{`["10.0.0.0/8", "8.8.0.0/16"]`, "", "8.8.0.0/16"},
		// inside loopback and the private ranges: no allow_public needed
		{`["10.0.0.0/8"]`, "", ""},
		{`["10.1.2.0/24", "10.1.2.3"]`, "", ""},
		{`["172.16.0.0/12"]`, "", ""},
		{`["172.31.255.0/24"]`, "", ""},
		{`["192.168.0.0/16"]`, "", ""},
		{`["192.168.1.7"]`, "", ""},
		{`["100.64.0.0/10"]`, "", ""},
		{`["100.127.0.0/16"]`, "", ""},
		{`["169.254.0.0/16"]`, "", ""},
		{`["127.0.0.0/8"]`, "", ""},
		{`["127.0.0.1"]`, "", ""},
		{`["fc00::/7"]`, "", ""},
		{`["fd12:3456::/32"]`, "", ""},
		{`["fe80::/10"]`, "", ""},
		{`["fe80::1"]`, "", ""},
		{`["::1"]`, "", ""},
		{`["::1/128"]`, "", ""},
		// allow_public says it is meant
		{`["0.0.0.0/0"]`, "allow_public = true\n", ""},
		{`["::/0"]`, "allow_public = true\n", ""},
		{`["3.0.0.0/8"]`, "allow_public = true\n", ""},
		{`["2001::/16", "8.8.8.8"]`, "allow_public = true\n", ""},
		{`["0.0.0.0/0"]`, "allow_public = false\n", "set allow_public = true on the host if that is meant"},
		{`["3.0.0.0/8"]`, "allow_public = false\n", "set allow_public = true on the host if that is meant"},
	} {
		src := "[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\n" + c.public + "allow_from = " + c.allow + "\n"
		line := 4 + strings.Count(c.public, "\n")
		_, err := Parse("inv.toml", "/tmp", src)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: %v", c.allow, c.public, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !usage.Is(err) ||
			!strings.Contains(err.Error(), fmt.Sprintf("inv.toml:%d: host \"pi\": allow_from ", line)) ||
			!strings.Contains(err.Error(), "; set allow_public = true on the host if that is meant")):
			t.Errorf("%s %s: %v; want an input error at inv.toml:%d with %q", c.allow, c.public, err, line, c.want)
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

// TestTLSFalsePublicWarns: tls = false with an allow_from that reaches
// beyond loopback and the private ranges (possible only with allow_public)
// loads, and leaves a warning at the line of tls = false (the host's own,
// or [defaults]') that names the host and the public prefixes; with
// private networks only, or TLS on, or no network at all, nothing.
func TestTLSFalsePublicWarns(t *testing.T) {
	for _, c := range []struct {
		name, src string
		n         int      // warnings
		want      []string // in them
	}{
		{"host's own tls = false, a public network",
			"[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nallow_public = true\ntls = false\nallow_from = [\"192.168.1.0/24\", \"203.0.113.0/24\", \"2001:db8::/32\"]\n",
			1, []string{`inv.toml:5: host "pi": tls = false`, "203.0.113.0/24, 2001:db8::/32", "without TLS"}},
		{"the whole internet",
			"[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nallow_public = true\nallow_from = [\"0.0.0.0/0\"]\ntls = false\n",
			1, []string{`inv.toml:6: host "pi": tls = false`, "0.0.0.0/0", "without TLS"}},
		{"tls = false from [defaults], one host public",
			"[defaults]\ntls = false\nallow_from = [\"10.0.0.0/8\"]\n\n[[host]]\nname = \"a\"\naddress = \"10.1.2.3\"\n\n[[host]]\nname = \"b\"\naddress = \"10.1.2.4\"\nallow_public = true\nallow_from = [\"8.8.8.0/24\"]\n",
			1, []string{`inv.toml:2: host "b": tls = false`, "8.8.8.0/24"}},
		{"tls = false from [defaults], two hosts public",
			"[defaults]\ntls = false\nallow_public = true\nallow_from = [\"3.0.0.0/8\"]\n\n[[host]]\nname = \"a\"\naddress = \"10.1.2.3\"\n\n[[host]]\nname = \"b\"\naddress = \"10.1.2.4\"\n",
			2, []string{`inv.toml:2: host "a": tls = false`, `inv.toml:2: host "b": tls = false`}},
		{"private networks only",
			"[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\ntls = false\nallow_from = [\"10.0.0.0/8\", \"172.16.0.0/12\", \"192.168.0.0/16\", \"100.64.0.0/10\", \"169.254.0.0/16\", \"127.0.0.1\", \"fd00::/8\", \"fe80::/10\", \"::1\"]\n",
			0, nil},
		{"TLS on, public network",
			"[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nallow_public = true\nallow_from = [\"0.0.0.0/0\"]\n",
			0, nil},
		{"tls = false, no network",
			"[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nallow_public = true\ntls = false\n",
			0, nil},
		{"the host's tls = true over [defaults]' false",
			"[defaults]\ntls = false\n[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nallow_public = true\nallow_from = [\"3.0.0.0/8\"]\ntls = true\n",
			0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv, err := Parse("inv.toml", "/tmp", c.src)
			if err != nil {
				t.Fatalf("a warning is not an error: %v", err)
			}
			if len(inv.Warnings) != c.n {
				t.Errorf("warnings %q, want %d", inv.Warnings, c.n)
			}
			all := strings.Join(inv.Warnings, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("warnings:\n%s\nwant them to contain %q", all, w)
				}
			}
		})
	}
	// Load keeps them, with the file's name
	p := filepath.Join(t.TempDir(), "inv.toml")
	if err := os.WriteFile(p, []byte("[[host]]\nname = \"pi\"\naddress = \"10.1.2.3\"\nallow_public = true\ntls = false\nallow_from = [\"0.0.0.0/0\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := Load(p)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(inv.Warnings) != 1 || !strings.HasPrefix(inv.Warnings[0], p+":5: host \"pi\": tls = false") {
		t.Errorf("Load: warnings %q, want one at %s:5", inv.Warnings, p)
	}
}
