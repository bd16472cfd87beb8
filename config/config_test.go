package config

import (
	"strings"
	"testing"
	"time"

	"pidb/inventory"
)

// TestLayers: the defaults, then [bench], then [host.bench], then flags.
func TestLayers(t *testing.T) {
	inv, err := inventory.Parse("inv.toml", "/tmp", `[[host]]
name = "pi4"
address = "10.0.0.4"
[host.bench]
clients = 16
[[host]]
name = "pi3"
address = "10.0.0.3"
[bench]
clients = 4
duration = "90s"
warmup = "0"
[thermal]
interval = "15s"
idle_before = "30s"
[validate]
min_tps = 500
`)
	if err != nil {
		t.Fatal(err)
	}
	pi4, err := BenchFor(inv.Hosts[0], Values{"duration": 2 * time.Minute})
	if err != nil || pi4.Clients != 16 || pi4.Duration != 2*time.Minute || pi4.Warmup != 0 || pi4.Interval != time.Second || pi4.Via != "auto" {
		t.Errorf("pi4: %+v %v", pi4, err)
	}
	pi3, _ := BenchFor(inv.Hosts[1], nil)
	if pi3.Clients != 4 || pi3.Duration != 90*time.Second || pi3.Warmup != 0 {
		t.Errorf("pi3: %+v", pi3)
	}
	b, _ := ThermalFor(inv, ForBench, nil)
	v, _ := ThermalFor(inv, ForValidate, Values{"idle_after": 5 * time.Second})
	if b.Interval != 15*time.Second || b.IdleBefore != 30*time.Second || b.IdleAfter != 0 || b.MaxTempC != 80 {
		t.Errorf("bench thermal: %+v", b)
	}
	if v.IdleBefore != 30*time.Second || v.IdleAfter != 5*time.Second {
		t.Errorf("validate thermal: %+v", v)
	}
	empty, _ := inventory.Parse("inv.toml", "/tmp", "[[host]]\nname = \"a\"\naddress = \"x\"\n")
	if d, _ := ThermalFor(empty, ForValidate, nil); d.IdleBefore != time.Minute || d.IdleAfter != time.Minute || d.Interval != 5*time.Second {
		t.Errorf("validate's defaults: %+v", d)
	}
	if x, _ := ValidateFor(inv, Values{"strict": true}); x.MinTPS != 500 || !x.Strict {
		t.Errorf("validate: %+v", x)
	}
	if _, err := BenchFor(inv.Hosts[0], Values{"clients": "many"}); err == nil || !strings.Contains(err.Error(), "clients: want a whole number") {
		t.Errorf("a bad flag value: %v", err)
	}
}
