package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"pidb/inventory"
	"pidb/usage"
)

// TestSchemaFromKeys: the inventory's settings sections are checked by the
// keys' declaration at their FILE:LINE: unknown keys (with a suggestion),
// bad values, and the flags that have no inventory key.
func TestSchemaFromKeys(t *testing.T) {
	cases := []struct {
		name, src string
		want      string // "LINE: substring"
	}{
		{"unknown bench key", "[[host]]\nname=\"a\"\naddress=\"x\"\n[bench]\nclient = 4\n",
			`5: unknown key "client" in [bench] (did you mean "clients"?)`},
		{"unknown host.bench key", "[[host]]\nname=\"a\"\naddress=\"x\"\n[host.bench]\nworkloads = \"tpcb\"\n",
			`5: unknown key "workloads" in [host.bench] (did you mean "workload"?)`},
		{"unknown thermal key", "[[host]]\nname=\"a\"\naddress=\"x\"\n[thermal]\nmax_temp = 70\n",
			`5: unknown key "max_temp" in [thermal] (did you mean "max_temp_c"?)`},
		{"bad duration", "[[host]]\nname = \"a\"\naddress = \"x\"\n[bench]\nduration = \"5 minutes\"\n",
			`5: bench.duration: bad duration "5 minutes"`},
		{"duration as a number", "[[host]]\nname = \"a\"\naddress = \"x\"\n[thermal]\ninterval = 15\n",
			`5: thermal.interval: want a duration string like "5m", not an integer`},
		{"zero duration", "[[host]]\nname = \"a\"\naddress = \"x\"\n[bench]\nduration = \"0s\"\n",
			`5: bench.duration: bad duration "0s": must be more than zero`},
		{"bad via in host bench", "[[host]]\nname = \"a\"\naddress = \"x\"\n[host.bench]\nvia = \"carrier-pigeon\"\n",
			`5: host.bench.via: unknown value "carrier-pigeon"`},
		{"bad strict", "[[host]]\nname = \"a\"\naddress = \"x\"\n[validate]\nstrict = \"yes\"\n",
			`5: validate.strict: want true or false, not a string`},
		{"a flag only", "[[host]]\nname = \"a\"\naddress = \"x\"\n[bench]\nreload = true\n",
			`5: unknown key "reload" in [bench]`},
		{"clients out of range", "[[host]]\nname = \"a\"\naddress = \"x\"\n[bench]\nclients = 0\n",
			`5: bench.clients: 0 is out of range 1-10000`},
		{"an unknown workload", "[[host]]\nname = \"a\"\naddress = \"x\"\n[host.bench]\nworkload = \"tpc-h\"\n",
			`5: host.bench.workload: unknown workload "tpc-h"`},
		{"a mix of four", "[[host]]\nname = \"a\"\naddress = \"x\"\n[bench]\nmix = \"1:1:1:1\"\n",
			`5: bench.mix: want five weights joined by colons`},
		{"a workload its engine cannot run", "[[host]]\nname = \"pi3\"\naddress = \"x\"\nengine = \"mariadb\"\n[host.bench]\nworkload = \"tpcb\"\n",
			`6: host "pi3": bench.workload: workload tpcb needs PostgreSQL; the host's engine is mysql`},
		{"[bench]'s workload on a host that cannot run it", "[bench]\nworkload = \"tpcb\"\n[[host]]\nname = \"pi4\"\naddress = \"x\"\n[[host]]\nname = \"pi3\"\naddress = \"y\"\nengine = \"mysql\"\n",
			`2: host "pi3": bench.workload: workload tpcb needs PostgreSQL; the host's engine is mysql`},
		{"too hot a limit", "[[host]]\nname = \"a\"\naddress = \"x\"\n[thermal]\nmax_temp_c = 120\n",
			`5: thermal.max_temp_c: 120 is out of range 30-110`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := inventory.Parse("inv.toml", "/tmp", c.src, Schema())
			if !usage.Is(err) || !strings.Contains(err.Error(), "inv.toml:"+c.want) {
				t.Errorf("%v, want an input error with %q", err, c.want)
			}
		})
	}
	if _, err := inventory.Parse("inv.toml", "/tmp", "[[host]]\nname = \"a\"\naddress = \"x\"\n[bench]\nwarmup = \"0\"\nworkload = \"\"\nmix = \"10:10:1:1:1\"\n[thermal]\nidle_before = \"0s\"\n", Schema()); err != nil {
		t.Errorf("no warm-up, the engine's workload, sysbench-tpcc's mix, no idle time: %v", err)
	}
}

// TestFlagsChecked: a flag's value is checked by its key's rule, and named
// by its flag; the inventory's values by their key.
func TestFlagsChecked(t *testing.T) {
	h := inventory.Host{Name: "pi4"}
	for _, c := range []struct {
		flags Values
		want  string
	}{
		{Values{"clients": 0}, "--clients: 0 is out of range 1-10000"},
		{Values{"duration": time.Duration(0)}, "--duration: want more than zero, not 0s"},
		{Values{"warmup": -time.Second}, "--warmup: want zero or more, not -1s"},
		{Values{"via": "carrier-pigeon"}, `--via: unknown value "carrier-pigeon": want one of "auto", "direct", "ssh"`},
		{Values{"tls": "maybe"}, `--tls: unknown value "maybe": want one of "auto", "on", "off"`},
		{Values{"threads": -1}, "--threads: -1 is out of range 0-10000"},
		{Values{"queries": 0}, "--queries: 0 is out of range 1-1000000000"},
		{Values{"protocol": "fast"}, `--protocol: unknown value "fast": want one of "simple", "prepared"`},
		{Values{"workload": "tpc-h"}, `--workload: unknown workload "tpc-h"`},
		{Values{"clients": "many"}, "--clients: want a whole number, not a string"},
		{Values{"colour": "blue"}, `[bench] has no setting "colour"`},
	} {
		if _, err := BenchFor(h, c.flags); err == nil || err.Error() != c.want && !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.flags, err, c.want)
		}
	}
	if _, err := ThermalFor(&inventory.Inventory{}, ForBench, Values{"interval": time.Duration(0)}); err == nil || err.Error() != "--thermal-interval: want more than zero, not 0s" {
		t.Errorf("a thermal interval of nothing: %v", err)
	}
	if _, err := ValidateFor(&inventory.Inventory{Validate: inventory.Section{"min_tps": {Raw: int64(-1)}}}, nil); err == nil || err.Error() != "[validate] min_tps: -1 is out of range 0-1000000000" {
		t.Errorf("a floor below zero: %v", err)
	}
	b, err := BenchFor(h, Values{"threads": 0, "warmup": time.Duration(0), "via": "ssh", "tls": "on"})
	if err != nil || b.Threads != 0 || b.Warmup != 0 || b.Via != ViaSSH || b.TLS != TLSOn {
		t.Errorf("a thread per client, no warm-up, through SSH with TLS: %+v %v", b, err)
	}
}

// TestEachKeyItsOwnField: setting a key changes one field of its section,
// and no two keys share one.
func TestEachKeyItsOwnField(t *testing.T) {
	sample := map[inventory.Kind]any{inventory.Int: 7, inventory.Number: 77.0, inventory.Duration: 7 * time.Minute}
	seen := map[string]string{}
	file := filepath.Join(t.TempDir(), "q.sql")
	if err := os.WriteFile(file, []byte("SELECT 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys() {
		v, ok := sample[k.Kind]
		switch {
		case k.Kind == inventory.Bool:
			v = !reflect.ValueOf(k.field(&targets{bench: ptr(DefaultBench()), thermal: ptr(DefaultThermal(ForBench)), validate: &Validate{}})).Elem().Bool()
		case k.Name == "workload":
			v = "quiz"
		case k.Name == "mix":
			v = "1:1:1:1:1"
		case k.Path:
			v = file
		case len(k.OneOf) > 0:
			v = k.OneOf[len(k.OneOf)-1]
		case !ok:
			t.Fatalf("%s: no sample value", k.Name)
		}
		b, th, x := DefaultBench(), DefaultThermal(ForBench), Validate{}
		tg := &targets{bench: &b, thermal: &th, validate: &x}
		if err := tg.apply(k.Section, nil, Values{k.Name: v}); err != nil {
			t.Errorf("%s.%s = %v: %v", k.Section, k.Name, v, err)
			continue
		}
		changed := diff(DefaultBench(), b) + diff(DefaultThermal(ForBench), th) + diff(Validate{}, x)
		if strings.Count(changed, ",") != 1 {
			t.Errorf("%s.%s changed %q, want one field", k.Section, k.Name, changed)
		}
		if other, dup := seen[changed]; dup {
			t.Errorf("%s.%s and %s both set %s", k.Section, k.Name, other, changed)
		}
		seen[changed] = string(k.Section) + "." + k.Name
	}
}

func ptr[T any](v T) *T { return &v }

// diff names the fields of two structs of one type that differ, each with
// a comma after it.
func diff(a, b any) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	out := ""
	for i := 0; i < va.NumField(); i++ {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out += va.Type().Name() + "." + va.Type().Field(i).Name + ","
		}
	}
	return out
}

// TestUsage: a flag's help says where its default comes from, and what it
// is for the command.
func TestUsage(t *testing.T) {
	for _, c := range []struct {
		flag string
		kind Kind
		want string
	}{
		{"clients", ForBench, "client connections (default: the inventory's [bench] clients, else 8)"},
		{"idle-before", ForValidate, "thermal readings for `D` before the load, as a baseline (default: the inventory's [thermal] idle_before, else 1m0s)"},
		{"idle-before", ForBench, "thermal readings for `D` before the load, as a baseline (default: the inventory's [thermal] idle_before, else 0s)"},
		{"threads", ForBench, "threads the clients share (every workload), each waiting on its clients' sockets at once, as pgbench -j; 0: a thread per client (default: this machine's cores)"},
		{"reload", ForBench, "load the workload's data again, even when what is there matches"},
		{"strict", ForValidate, "WARN fails too (default: the inventory's [validate] strict, else false)"},
		{"use-fk", ForBench, "tpcc: load the tables with sysbench-tpcc's foreign keys (--use-fk=false: without, as its --use_fk=0; a load of the other kind is loaded again) (default: the inventory's [bench] use_fk, else true)"},
	} {
		k, ok := KeysByFlag()[c.flag]
		if !ok {
			t.Fatalf("no key has the flag --%s", c.flag)
		}
		if got := k.Usage(c.kind); got != c.want {
			t.Errorf("--%s:\n got %q\nwant %q", c.flag, got, c.want)
		}
	}
}

// TestResolve: a host's settings as a command takes them, each with where
// it came from: the host's [host.bench] over [bench], the inventory's
// [thermal] and [validate], the engine's and the workload's defaults,
// pidb's.
func TestResolve(t *testing.T) {
	inv, err := inventory.Parse("pis.toml", "/tmp", `[bench]
clients = 4
[thermal]
interval = "15s"
[validate]
min_tps = 500
[[host]]
name = "pi4"
address = "10.0.0.4"
[host.bench]
workload = "tpcc"
duration = "1m"
[[host]]
name = "pi3"
address = "10.0.0.3"
engine = "mariadb"
`, Schema())
	if err != nil {
		t.Fatal(err)
	}
	pi4, err := Resolve(inv, inv.Hosts[0], ForBench)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]struct {
		value any
		from  string
	}{
		"bench.workload":      {"tpcc", "pis.toml:11"},
		"bench.clients":       {4, "pis.toml:2"},
		"bench.duration":      {"1m0s", "pis.toml:12"},
		"bench.warmup":        {"10s", "default"},
		"bench.scale":         {1, "the workload's default"},
		"bench.mix":           {"45:43:4:4:4", "the workload's default"},
		"bench.protocol":      {"simple", "the workload's default"},
		"bench.table_size":    {nil, "tpcc has none"},
		"bench.via":           {"auto", "default"},
		"thermal.interval":    {"15s", "pis.toml:4"},
		"thermal.idle_before": {"0s", "default"},
		"validate.min_tps":    {500.0, "pis.toml:6"},
		"validate.strict":     {false, "default"},
	} {
		section, name, _ := strings.Cut(key, ".")
		got := map[string]map[string]any{"bench": pi4.Bench, "thermal": pi4.Thermal, "validate": pi4.Validate}[section][name]
		if got != want.value || pi4.From[key] != want.from {
			t.Errorf("pi4's %s = %v (%T) from %q, want %v from %q", key, got, got, pi4.From[key], want.value, want.from)
		}
	}
	pi3, _ := Resolve(inv, inv.Hosts[1], ForValidate)
	if pi3.Bench["workload"] != "oltp-read-only" || pi3.From["bench.workload"] != "the engine's default" || pi3.Bench["duration"] != "5m0s" || pi3.Thermal["idle_before"] != "1m0s" {
		t.Errorf("pi3 for validate: %v %v, from %v", pi3.Bench, pi3.Thermal, pi3.From)
	}
}
