package inventory

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/usage"
)

func TestLoadFull(t *testing.T) {
	inv, err := Load("testdata/full.toml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	dir, _ := filepath.Abs("testdata")
	home, _ := os.UserHomeDir()
	if inv.Path != filepath.Join(dir, "full.toml") {
		t.Errorf("Path = %q", inv.Path)
	}
	if len(inv.Hosts) != 3 {
		t.Fatalf("got %d hosts, want 3", len(inv.Hosts))
	}
	pi4, pi3, zero := inv.Hosts[0], inv.Hosts[1], inv.Hosts[2]

	// pi4 inherits every default.
	if pi4.Name != "pi4" || pi4.Address != "192.168.1.40" || pi4.Port != 22 || pi4.User != "pi" {
		t.Errorf("pi4 = %+v", pi4)
	}
	if pi4.IdentityFile != filepath.Join(dir, "keys/id_ed25519") {
		t.Errorf("pi4 identity_file = %q, want it relative to the inventory's folder", pi4.IdentityFile)
	}
	if pi4.KnownHosts != filepath.Join(home, ".ssh/known_hosts") {
		t.Errorf("pi4 known_hosts = %q, want ~ expanded", pi4.KnownHosts)
	}
	if pi4.Engine != "postgres" || pi4.Preset != "balanced" || pi4.Storage != "sd" {
		t.Errorf("pi4 engine/preset/storage = %q/%q/%q", pi4.Engine, pi4.Preset, pi4.Storage)
	}
	wantAllow := []netip.Prefix{netip.MustParsePrefix("192.168.1.0/24"), netip.MustParsePrefix("10.0.0.7/32")}
	if len(pi4.AllowFrom) != 2 || pi4.AllowFrom[0] != wantAllow[0] || pi4.AllowFrom[1] != wantAllow[1] {
		t.Errorf("pi4 allow_from = %v, want %v", pi4.AllowFrom, wantAllow)
	}
	if pi4.Line != 11 {
		t.Errorf("pi4 line = %d, want 11", pi4.Line)
	}
	if got := pi4.Bench["clients"].Raw; got != int64(8) {
		t.Errorf("pi4 bench clients = %d, want 8 from [bench]", got)
	}
	if got := pi4.Bench["duration"].Raw; got != "5m" {
		t.Errorf("pi4 bench duration = %v", got)
	}

	// pi3 overrides port, engine (mariadb is the mysql family), preset, bench.
	if pi3.Port != 2222 || pi3.Engine != "mysql" || pi3.Preset != "seed" {
		t.Errorf("pi3 = port %d engine %q preset %q", pi3.Port, pi3.Engine, pi3.Preset)
	}
	if v := pi3.Settings["innodb_buffer_pool_size"]; v.Raw != "512MB" || v.Line != 22 {
		t.Errorf("pi3 innodb_buffer_pool_size = %+v, want 512MB on line 22", v)
	}
	if v, ok := pi3.Settings["skip_log_bin"]; !ok || v.Raw != true {
		t.Errorf("pi3 skip-log-bin not read as skip_log_bin: %+v", pi3.Settings)
	}
	if pi3.Settings["max_connections"].Raw != int64(40) {
		t.Errorf("pi3 max_connections = %v", pi3.Settings["max_connections"])
	}
	if len(pi3.Databases) != 2 || pi3.Databases[1] != (Database{Name: "quiz", Owner: "quiz_owner", Line: 28}) {
		t.Errorf("pi3 databases = %+v", pi3.Databases)
	}
	if pi3.Bench["workload"].Raw != "oltp-read-only" || pi3.Bench["clients"].Raw != int64(16) || pi3.Bench["duration"].Raw != "5m" {
		t.Errorf("pi3 bench = %+v, want its own workload and clients over [bench]", pi3.Bench)
	}

	// zero: absolute identity file, empty allow_from means localhost only.
	if zero.User != "admin" || zero.IdentityFile != "/etc/pidb/zero_key" || len(zero.AllowFrom) != 0 {
		t.Errorf("zero = %+v", zero)
	}
	// the connections to plan for: zero's own key; the others scale to RAM
	if zero.Connections != 30 || pi4.Connections != 0 || pi3.Connections != 0 {
		t.Errorf("max_connections to plan for: zero %d, pi4 %d, pi3 %d; want 30, 0, 0", zero.Connections, pi4.Connections, pi3.Connections)
	}
	if len(pi4.Settings) != 0 || len(pi4.Databases) != 0 {
		t.Errorf("pi4 picked up pi3's settings or databases")
	}

	if inv.Thermal["max_temp_c"].Raw != int64(80) || inv.Thermal["idle_after"].Raw != "0" {
		t.Errorf("thermal = %+v", inv.Thermal)
	}
	if inv.Validate["strict"].Raw != false {
		t.Errorf("validate = %+v", inv.Validate)
	}
}

// TestEngineNames: the engine as people write it, in any case; postgresql
// is postgres (once read as the MySQL family, and MariaDB installed), and
// mariadb is the mysql family.
func TestEngineNames(t *testing.T) {
	for name, want := range map[string]dbms.Family{"postgres": "postgres", "postgresql": "postgres", "PostgreSQL": "postgres", "Postgres": "postgres",
		"mysql": "mysql", "MySQL": "mysql", "mariadb": "mysql", "MariaDB": "mysql"} {
		inv, err := Parse("inv.toml", "/tmp", "[[host]]\nname = \"a\"\naddress = \"10.1.2.3\"\nengine = \""+name+"\"\n"+
			"[[host]]\nname = \"b\"\naddress = \"10.1.2.4\"\nengine = \""+name+"\"\n[[host]]\nname = \"c\"\naddress = \"10.1.2.5\"\nengine = \""+name+"\"\n"+
			"[[cluster]]\nname = \"k\"\nprimary = \"a\"\nreplicas = [\"b\"]\nengine = \""+name+"\"\n")
		if err != nil {
			t.Errorf("engine %q: %v", name, err)
			continue
		}
		if got := inv.Hosts[0].Engine; got != want {
			t.Errorf("engine %q: the host's family %q, want %q", name, got, want)
		}
		if got := inv.Clusters[0].Engine; got != want {
			t.Errorf("engine %q: the cluster's family %q, want %q", name, got, want)
		}
	}
}

func TestMinimalDefaults(t *testing.T) {
	inv, err := Parse("inv.toml", "/srv/pidb", "[[host]]\nname = \"a\"\naddress = \"10.1.2.3\"\n", Presets("steady", "steady", "quick"))
	if err != nil {
		t.Fatal(err)
	}
	h := inv.Hosts[0]
	if h.User != "pi" || h.Port != 22 || h.Engine != "postgres" || h.Preset != "steady" || h.Storage != "" || h.IdentityFile != "" {
		t.Errorf("defaults not applied: %+v", h)
	}
	if len(h.AllowFrom) != 0 {
		t.Errorf("allow_from = %v, want none (localhost only)", h.AllowFrom)
	}
}

// TestErrors checks each kind of bad input: the message and the line it names.
func TestErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      string // "LINE: substring"
	}{
		{"unknown top-level key", "[defualts]\nuser = \"pi\"\n[[host]]\nname=\"a\"\naddress=\"x\"\n",
			`1: unknown key "defualts" at the top level (did you mean "defaults"?)`},
		{"another word for a section", "[benchmark]\nclients = 2\n[[host]]\nname=\"a\"\naddress=\"x\"\n",
			`1: unknown key "benchmark" at the top level (did you mean "bench"?)`},
		{"an address in defaults", "[defaults]\naddress = \"10.0.0.1\"\n[[host]]\nname = \"a\"\n",
			`2: address in [defaults]: each host has its own, in its [[host]] table`},
		{"a user name with a space", "[[host]]\nname = \"a\"\naddress = \"x\"\nuser = \"Pi User\"\n",
			`4: host.user: bad user name "Pi User": want a Linux login: lower-case letters`},
		{"unknown host key", "[[host]]\nname = \"a\"\naddres = \"1.2.3.4\"\n",
			`3: unknown key "addres" in [host] (did you mean "address"?)`},
		{"unknown default key", "[defaults]\n\nidentity = \"k\"\n[[host]]\nname=\"a\"\naddress=\"x\"\n",
			`3: unknown key "identity" in [defaults]`},
		{"unknown database key", "[[host]]\nname=\"a\"\naddress=\"x\"\n[[host.database]]\nname=\"d\"\nowner=\"o\"\nonwer=\"o\"\n",
			`7: unknown key "onwer" in [host.database]`},
		{"wrong type", "[[host]]\nname = \"a\"\naddress = \"x\"\nport = \"22\"\n",
			`4: host.port: want an integer, not a string`},
		{"no connections to plan for", "[defaults]\nmax_connections = 0\n[[host]]\nname = \"a\"\naddress = \"x\"\n",
			`2: defaults.max_connections: 0 is out of range 1-100000`},
		{"wrong type for a table", "defaults = 3\n[[host]]\nname = \"a\"\naddress = \"x\"\n",
			`1: defaults: want a table, not an integer`},
		{"duplicate host", "[[host]]\nname = \"a\"\naddress = \"x\"\n\n[[host]]\nname = \"a\"\naddress = \"y\"\n",
			`6: duplicate host name "a" (first defined on line 1)`},
		{"missing address", "[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\naddress = \"y\"\n",
			`1: host "a" has no address`},
		{"missing name", "[[host]]\naddress = \"1.2.3.4\"\n",
			`1: host has no name`},
		// netip takes any text after the %: a newline, a quote, a comma
		{"a zoned address", "[[host]]\nname = \"a\"\naddress = \"2001:db8::5%x';COPY (SELECT 1) TO PROGRAM 'id>/tmp/p';--\"\n",
			`3: host.address: address "2001:db8::5%x';COPY (SELECT 1) TO PROGRAM 'id>/tmp/p';--" names an IPv6 zone`},
		{"a zoned IPv4-mapped address", "[[host]]\nname = \"a\"\naddress = \"::ffff:10.0.0.1%eth0\"\n",
			`3: host.address: address "::ffff:10.0.0.1%eth0" names an IPv6 zone (%eth0)`},
		{"an address with its port", "[[host]]\nname = \"a\"\naddress = \"127.0.0.1:2222\"\n",
			`3: host.address: address "127.0.0.1:2222" has a port: put "127.0.0.1" in address and the port in port = 2222`},
		{"an IPv6 address with its port", "[[host]]\nname = \"a\"\naddress = \"[2001:db8::5]:22\"\n",
			`3: host.address: address "[2001:db8::5]:22" has a port: put "2001:db8::5" in address and the port in port = 22`},
		{"a name with a port", "[[host]]\nname = \"a\"\naddress = \"pi4.local:22\"\n",
			`3: host.address: address "pi4.local:22" has a port: put "pi4.local" in address and the port in port = 22`},
		{"a colon in a name", "[[host]]\nname = \"a\"\naddress = \"pi4:local\"\n",
			`3: host.address: bad address "pi4:local": not an IP address, and a DNS name has no ':'`},
		{"an IPv4 address out of range", "[[host]]\nname = \"a\"\naddress = \"192.168.1.400\"\n",
			`3: host.address: bad address "192.168.1.400": not an IPv4 address (four numbers 0-255, with no leading zeros), and not a DNS name`},
		{"an IPv4 address with leading zeros", "[[host]]\nname = \"a\"\naddress = \"192.168.001.040\"\n",
			`3: host.address: bad address "192.168.001.040": not an IPv4 address`},
		{"three numbers", "[[host]]\nname = \"a\"\naddress = \"10.0.1\"\n",
			`3: host.address: bad address "10.0.1": not an IPv4 address`},
		{"bad engine", "[[host]]\nname = \"a\"\naddress = \"x\"\nengine = \"oracle\"\n",
			`4: host.engine: unknown engine "oracle"`},
		{"bad engine in defaults", "[defaults]\nengine = \"sqlite\"\n[[host]]\nname = \"a\"\naddress = \"x\"\n",
			`2: defaults.engine: unknown engine "sqlite"`},
		{"bad size unit", "[[host]]\nname = \"a\"\naddress = \"x\"\n[host.settings]\nshared_buffers = \"512MX\"\n",
			`5: host.settings.shared_buffers: bad size "512MX": unknown unit "MX"`},
		{"fractional size", "[[host]]\nname = \"a\"\naddress = \"x\"\n[host.settings]\nwork_mem = \"1.5GB\"\n",
			`5: host.settings.work_mem: bad size "1.5GB": want a whole number of GB`},
		{"bad CIDR", "[defaults]\nallow_from = [\"192.168.1.0/33\"]\n[[host]]\nname = \"a\"\naddress = \"x\"\n",
			`2: defaults.allow_from: bad CIDR "192.168.1.0/33"`},
		{"CIDR with host bits", "[[host]]\nname = \"a\"\naddress = \"x\"\nallow_from = [\"192.168.1.5/24\"]\n",
			`4: host.allow_from: bad CIDR "192.168.1.5/24": host bits are set (did you mean "192.168.1.0/24"?)`},
		{"CIDR not a string", "[[host]]\nname = \"a\"\naddress = \"x\"\nallow_from = \"10.0.0.0/8\"\n",
			`4: host.allow_from: want an array of addresses or CIDRs`},
		{"port out of range", "[[host]]\nname = \"a\"\naddress = \"x\"\nport = 70000\n",
			`4: host.port: 70000 is out of range 1-65535`},
		{"port zero in defaults", "[defaults]\nport = 0\n[[host]]\nname = \"a\"\naddress = \"x\"\n",
			`2: defaults.port: 0 is out of range 1-65535`},
		{"empty host list", "[defaults]\nuser = \"pi\"\n",
			`no hosts: add at least one [[host]]`},
		{"bad storage", "[[host]]\nname = \"a\"\naddress = \"x\"\nstorage = \"ssd\"\n",
			`4: host.storage: unknown value "ssd"`},
		{"data device a partition", "[[host]]\nname = \"a\"\naddress = \"x\"\ndata_device = \"/dev/sda1\"\n",
			`4: host.data_device: bad data device "/dev/sda1": want "auto" or a whole USB or NVMe disk`},
		{"data device a partition by its stable name", "[[host]]\nname = \"a\"\naddress = \"x\"\ndata_device = \"/dev/disk/by-id/usb-Samsung_PSSD_T7-0:0-part1\"\n",
			`4: host.data_device: bad data device "/dev/disk/by-id/usb-Samsung_PSSD_T7-0:0-part1": that names a partition: name the whole disk (/dev/disk/by-id/usb-Samsung_PSSD_T7-0:0)`},
		{"data device by uuid", "[[host]]\nname = \"a\"\naddress = \"x\"\ndata_device = \"/dev/disk/by-uuid/0a1b-2c3d\"\n",
			`4: host.data_device: bad data device "/dev/disk/by-uuid/0a1b-2c3d"`},
		{"data device the SD card", "[[host]]\nname = \"a\"\naddress = \"x\"\ndata_device = \"/dev/mmcblk0\"\n",
			`4: host.data_device: bad data device "/dev/mmcblk0"`},
		{"wipe without a data device", "[defaults]\ndata_device_wipe = true\n[[host]]\nname = \"a\"\naddress = \"x\"\n",
			`2: host "a": data_device_wipe without data_device: name the drive it may erase`},
		{"bad host name", "[[host]]\nname = \"my pi\"\naddress = \"x\"\n",
			`2: host.name: bad host name "my pi"`},
		{"bad address", "[[host]]\nname = \"a\"\naddress = \"x; rm -rf /\"\n",
			`3: host.address: bad address`},
		{"bad database name", "[[host]]\nname=\"a\"\naddress=\"x\"\n[[host.database]]\nname = \"Inv-DB\"\nowner = \"app\"\n",
			`5: host.database.name: bad database name "Inv-DB"`},
		{"database without owner", "[[host]]\nname=\"a\"\naddress=\"x\"\n[[host.database]]\nname = \"inv\"\n",
			`4: host "a": database has no owner`},
		{"duplicate database", "[[host]]\nname=\"a\"\naddress=\"x\"\n[[host.database]]\nname = \"inv\"\nowner = \"o\"\n[[host.database]]\nname = \"inv\"\nowner = \"p\"\n",
			`8: host "a": duplicate database "inv"`},
		{"one owner for two databases", "[[host]]\nname=\"a\"\naddress=\"x\"\n[[host.database]]\nname = \"inv\"\nowner = \"o\"\n[[host.database]]\nname = \"quiz\"\nowner = \"o\"\n",
			`9: host "a": owner "o" owns database "inv" already (line 4): give each database an owner of its own`},
		{"syntax error", "[[host]]\nname = \"a\"\naddress = \"x\n",
			`3: `},
		{"setting of a wrong type", "[[host]]\nname=\"a\"\naddress=\"x\"\n[host.settings]\nwork_mem = [1, 2]\n",
			`5: host.settings.work_mem: want a string, number or boolean, not an array`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("inv.toml", "/tmp", c.src)
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !usage.Is(err) {
				t.Errorf("error %v is not an input error", err)
			}
			want := "inv.toml:" + c.want
			if !strings.Contains(c.want, ":") || strings.HasPrefix(c.want, "no hosts") {
				want = "inv.toml: " + c.want
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error:\n  %v\nwant it to contain:\n  %s", err, want)
			}
		})
	}
}

// TestErrorLinesInLaterHosts makes sure lines are found in the right [[host]]
// element, not the first one with the same key.
// TestOnlyTheCause: an address in [defaults] is its one error; a host
// without its own is not also said to have none.
func TestOnlyTheCause(t *testing.T) {
	_, err := Parse("inv.toml", "/tmp", "[defaults]\naddress = \"10.0.0.1\"\n[[host]]\nname = \"a\"\n")
	if err == nil || strings.Contains(err.Error(), "has no address") || strings.Count(err.Error(), "inv.toml:") != 1 {
		t.Errorf("got %v, want the one cause", err)
	}
}

// TestNotTOML: a YAML or JSON inventory (Ansible's are YAML) is told what
// pidb reads; a TOML file named .yaml is read as the TOML it is.
func TestNotTOML(t *testing.T) {
	yaml := "hosts:\n  - name: pi4\n    address: 10.0.0.1\n"
	for name, want := range map[string]string{"pis.yaml": "not YAML", "pis.yml": "not YAML", "pis.json": "not JSON"} {
		src := yaml
		if strings.HasSuffix(name, ".json") {
			src = `{"host": [{"name": "pi4", "address": "10.0.0.1"}]}`
		}
		if _, err := Parse(name, "/tmp", src); err == nil || !strings.Contains(err.Error(), "pidb's inventory is TOML") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Parse("pis.toml", "/tmp", yaml); err == nil || strings.Contains(err.Error(), "not YAML") {
		t.Errorf("a .toml file: %v, want TOML's own error only", err)
	}
	if _, err := Parse("pis.yaml", "/tmp", "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\n"); err != nil {
		t.Errorf("TOML in a .yaml: %v", err)
	}
}

func TestErrorLinesInLaterHosts(t *testing.T) {
	src := `[[host]]
name = "a"
address = "x"
[host.settings]
work_mem = "4MB"

[[host]]
name = "b"
address = "y"
[host.settings]
work_mem = "4QB"
`
	_, err := Parse("inv.toml", "/tmp", src)
	if err == nil || !strings.Contains(err.Error(), "inv.toml:11: host.settings.work_mem") {
		t.Fatalf("error = %v, want it on line 11", err)
	}
}

func TestAllErrorsReported(t *testing.T) {
	src := "[[host]]\nname = \"a\"\naddress = \"x\"\nport = 0\nengine = \"db2\"\n"
	_, err := Parse("inv.toml", "/tmp", src)
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "inv.toml:4:") || !strings.HasPrefix(lines[1], "inv.toml:5:") {
		t.Errorf("want two errors, lines 4 then 5; got:\n%v", err)
	}
}

func TestMultilineValuesKeepLines(t *testing.T) {
	src := `[defaults]
allow_from = [
  "10.0.0.0/8",
  "192.168.0.0/16",
]
note = """
a [fake] header
x = 1
"""
[[host]]
name = "a"
address = "x"
`
	_, err := Parse("inv.toml", "/tmp", src)
	if err == nil || !strings.Contains(err.Error(), `inv.toml:6: unknown key "note" in [defaults]`) {
		t.Fatalf("error = %v", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/nope.toml")
	if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), "testdata/nope.toml: cannot read inventory") {
		t.Fatalf("error = %v", err)
	}
	var ie *Error
	if !errors.As(err, &ie) {
		t.Fatal("not an *Error")
	}
}

func TestSelect(t *testing.T) {
	inv, err := Load("testdata/full.toml")
	if err != nil {
		t.Fatal(err)
	}
	names := func(hs []Host) string {
		var n []string
		for _, h := range hs {
			n = append(n, h.Name)
		}
		return strings.Join(n, ",")
	}
	for limit, want := range map[string]string{
		"":           "pi4,pi3,zero",
		"all":        "pi4,pi3,zero",
		"zero":       "zero",
		"zero,pi4":   "pi4,zero", // inventory order
		" pi3 , pi3": "pi3",
		"pi*":        "pi4,pi3",
		"pi[34]":     "pi4,pi3",
		"!pi3":       "pi4,zero",
		"pi*,!pi3":   "pi4",
		"*, !zero":   "pi4,pi3",
	} {
		hs, err := inv.Select(limit)
		if err != nil {
			t.Errorf("Select(%q): %v", limit, err)
			continue
		}
		if got := names(hs); got != want {
			t.Errorf("Select(%q) = %s, want %s", limit, got, want)
		}
	}
	_, err = inv.Select("pi4,pi44")
	if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), `no host named "pi44"`) || !strings.Contains(err.Error(), `did you mean "pi4"?`) {
		t.Errorf("Select(pi4,pi44) error = %v", err)
	}
	for limit, want := range map[string]string{
		",":        `--limit "," names no host`,
		"pi*,!pi*": `--limit "pi*,!pi*" selects no host`,
		"!pi33":    `no host named "pi33"`, // a typo would select the host meant to be left out
		"pi9*":     `no host matches "pi9*"`,
		"pi[":      `bad pattern "pi["`,
		// a shell's words for a list
		"pi4 pi3": `no host named "pi4 pi3" in the inventory (hosts: pi4, pi3, zero) (a list of hosts takes commas: --limit pi4,pi3)`,
	} {
		if _, err := inv.Select(limit); err == nil || !usage.Is(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("Select(%q): %v, want a usage error with %q", limit, err, want)
		}
	}
}

// TestLimitACluster: --limit with a cluster's name says --cluster names it.
func TestLimitACluster(t *testing.T) {
	inv, err := Parse("inv.toml", "/tmp", "[[host]]\nname = \"pi4\"\naddress = \"10.0.0.40\"\n[[host]]\nname = \"pi3\"\naddress = \"10.0.0.30\"\n"+
		"[[cluster]]\nname = \"shop\"\nprimary = \"pi4\"\nreplicas = [\"pi3\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Select("shop"); err == nil || !strings.Contains(err.Error(), `("shop" is a cluster: --cluster shop names it, --limit takes hosts)`) {
		t.Errorf("--limit shop: %v", err)
	}
}

// TestPreflight: what would fail later is refused now, at its line: one
// machine under two names (an address and port twice, an IP address in
// either of its forms, a DNS name in any case), two names that a disk
// ignoring case would make one; and only the cause is named, not what
// follows from it.
func TestPreflight(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"an address twice", "[[host]]\nname = \"a\"\naddress = \"192.168.1.40\"\n\n[[host]]\nname = \"b\"\naddress = \"192.168.1.40\"\n",
			`inv.toml:7: host "b" is at 192.168.1.40:22, as host "a" (line 1) is: one machine would be worked on twice under two names`},
		{"an address in another form", "[[host]]\nname = \"a\"\naddress = \"::ffff:10.0.0.4\"\nport = 2222\n[[host]]\nname = \"b\"\naddress = \"10.0.0.4\"\nport = 2222\n",
			`inv.toml:7: host "b" is at 10.0.0.4:2222, as host "a" (line 1) is`},
		{"a name in another case", "[[host]]\nname = \"pi.lan\"\naddress = \"PI.lan.\"\n[[host]]\nname = \"x\"\naddress = \"pi.lan\"\n",
			`inv.toml:6: host "x" is at pi.lan:22, as host "pi.lan" (line 1) is`},
		{"names in two cases", "[[host]]\nname = \"pi4\"\naddress = \"10.0.0.4\"\n[[host]]\nname = \"PI4\"\naddress = \"10.0.0.5\"\n",
			`inv.toml:5: host name "PI4" differs from "pi4" (line 1) only in case`},
		{"a misspelt address", "[[host]]\nname = \"pi4\"\naddres = \"10.0.0.4\"\nport = 70000\n",
			"inv.toml:3: unknown key \"addres\" in [host] (did you mean \"address\"?)\ninv.toml:4: host.port: 70000 is out of range 1-65535"},
		{"a misspelt [[host]]", "[[hosts]]\nname = \"pi4\"\naddress = \"10.0.0.4\"\n",
			`inv.toml:1: unknown key "hosts" at the top level (did you mean "host"?)`},
	} {
		_, err := Parse("inv.toml", "/tmp", c.src)
		if err == nil || !usage.Is(err) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant it to begin %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "no address") || err != nil && strings.Contains(err.Error(), "no hosts") {
			t.Errorf("%s: %v names what follows from the cause", c.name, err)
		}
	}
	if _, err := Parse("inv.toml", "/tmp", "[[host]]\nname = \"a\"\naddress = \"10.0.0.4\"\n[[host]]\nname = \"b\"\naddress = \"10.0.0.4\"\nport = 2222\n"); err != nil {
		t.Errorf("one address, two ports (two SSH servers, or a port forward each): %v", err)
	}
}

// TestKeys: with Keys, an identity_file that is not there, or that the
// check refuses, is refused at the line that names it: once at
// [defaults]'s for every host that takes it, and at a host's own; a key
// the check takes passes. (remote's TestCheckKey: the check itself, on
// real keys.)
func TestKeys(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"id_pi", "id_pi.pub"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("key"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	check := func(file string) error {
		if _, err := os.Stat(file); err != nil {
			return err
		}
		if strings.HasSuffix(file, ".pub") {
			return fmt.Errorf("%s is the public key", file)
		}
		return nil
	}
	src := "[defaults]\nidentity_file = \"gone\"\n[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\n[[host]]\nname = \"b\"\naddress = \"10.0.0.2\"\n" +
		"[[host]]\nname = \"c\"\naddress = \"10.0.0.3\"\nidentity_file = \"id_pi\"\n[[host]]\nname = \"d\"\naddress = \"10.0.0.4\"\nidentity_file = \"/nonexistent/key\"\n" +
		"[[host]]\nname = \"e\"\naddress = \"10.0.0.5\"\nidentity_file = \"id_pi.pub\"\n"
	_, err := Parse("inv.toml", dir, src, Keys(check))
	want := "inv.toml:2: identity_file " + filepath.Join(dir, "gone") + " does not exist: name the private key pidb logs in with, or make one with ssh-keygen -t ed25519\n" +
		"inv.toml:16: host \"d\": identity_file /nonexistent/key does not exist: name the private key pidb logs in with, or make one with ssh-keygen -t ed25519\n" +
		"inv.toml:20: host \"e\": identity_file: " + filepath.Join(dir, "id_pi.pub") + " is the public key"
	if err == nil || err.Error() != want || !usage.Is(err) {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
	if _, err := Parse("inv.toml", dir, src); err != nil {
		t.Errorf("without Keys the files are not looked at: %v", err)
	}
}

// TestDataDevice: a fleet's drive in [defaults], one host's own, and the
// leave to erase it.
func TestDataDevice(t *testing.T) {
	inv, err := Parse("d.toml", t.TempDir(), "[defaults]\ndata_device = \"auto\"\n[[host]]\nname = \"a\"\naddress = \"x\"\n"+
		"[[host]]\nname = \"b\"\naddress = \"y\"\ndata_device = \"/dev/nvme0n1\"\ndata_device_wipe = true\n")
	if err != nil {
		t.Fatal(err)
	}
	a, b := inv.Hosts[0], inv.Hosts[1]
	if a.DataDevice != "auto" || a.DataDeviceWipe || b.DataDevice != "/dev/nvme0n1" || !b.DataDeviceWipe || a.Lines["data_device"] != 2 || b.Lines["data_device"] != 9 {
		t.Errorf("a %q %v, b %q %v, lines %v %v", a.DataDevice, a.DataDeviceWipe, b.DataDevice, b.DataDeviceWipe, a.Lines, b.Lines)
	}
	// the stable names people copy from ls /dev/disk/by-id
	for _, dev := range []string{"/dev/disk/by-id/usb-Samsung_PSSD_T7_S6XBNS0W123456-0:0", "/dev/disk/by-id/nvme-WD_Blue_SN580_1TB_23456789",
		"/dev/disk/by-path/platform-fd500000.pcie-pci-0000:01:00.0-usb-0:1:1.0-scsi-0:0:0:0"} {
		inv, err := Parse("d.toml", t.TempDir(), "[[host]]\nname = \"a\"\naddress = \"x\"\ndata_device = \""+dev+"\"\n")
		if err != nil || inv.Hosts[0].DataDevice != dev {
			t.Errorf("%s: %v", dev, err)
		}
	}
}

// TestStorageBesideDataDevice: storage = "sd" beside data_device is a
// warning at storage's line (the tuner would tune the drive's I/O for a
// card); "usb", or no storage, is not.
func TestStorageBesideDataDevice(t *testing.T) {
	inv, err := Parse("inv.toml", "/tmp", "[defaults]\nstorage = \"sd\"\n[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\ndata_device = \"auto\"\n"+
		"[[host]]\nname = \"b\"\naddress = \"10.0.0.2\"\ndata_device = \"auto\"\nstorage = \"usb\"\n[[host]]\nname = \"c\"\naddress = \"10.0.0.3\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Warnings) != 1 || !strings.HasPrefix(inv.Warnings[0], `inv.toml:2: host "a": storage = "sd" beside data_device`) {
		t.Errorf("warnings: %q", inv.Warnings)
	}
}

// TestDurabilityWarned: with Durability, a [host.settings] value the
// check says trades durability is a warning at its line (not an error:
// the inventory loads), with what it says.
func TestDurabilityWarned(t *testing.T) {
	warn := func(engine dbms.Family, name, value string) string {
		if engine == dbms.PostgresFamily && name == "fsync" && value == "off" {
			return "a power cut can corrupt it"
		}
		return ""
	}
	src := "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\n[host.settings]\nfsync = \"off\"\nwork_mem = \"8MB\"\n" +
		"[[host]]\nname = \"b\"\naddress = \"10.0.0.2\"\nengine = \"mysql\"\n[host.settings]\nfsync = \"off\"\n"
	inv, err := Parse("inv.toml", "/tmp", src, Durability(warn))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"inv.toml:5: host.settings.fsync: a power cut can corrupt it"}
	if !slices.Equal(inv.Warnings, want) {
		t.Errorf("warnings %q, want %q", inv.Warnings, want)
	}
}
