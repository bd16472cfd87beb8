package inventory_test

import (
	"strings"
	"testing"

	"pidb/bench/workloads"
	"pidb/inventory"
	"pidb/tune"
)

// TestPresetNames: with the tuner's names, a host's preset is checked at its line.
func TestPresetNames(t *testing.T) {
	src := "[[host]]\nname = \"a\"\naddress = \"x\"\npreset = \"turbo\"\n"
	_, err := inventory.Parse("inv.toml", "/tmp", src, inventory.Presets(tune.PresetNames()...))
	if err == nil || !strings.Contains(err.Error(), `4: host.preset: unknown value "turbo": want one of "seed", "balanced", "fast"`) {
		t.Errorf("bad preset: %v", err)
	}
	def := "[defaults]\npreset = \"turbo\"\n[[host]]\nname = \"a\"\naddress = \"x\"\n"
	if _, err := inventory.Parse("inv.toml", "/tmp", def, inventory.Presets(tune.PresetNames()...)); err == nil || !strings.Contains(err.Error(), `2: defaults.preset: unknown value "turbo"`) {
		t.Errorf("bad default preset: %v", err)
	}
}

// TestWorkloadNames: with the registry's names, [bench] and [host.bench]
// refuse a workload pidb does not have, at its line; without them any name
// passes here (the pipeline refuses it).
func TestWorkloadNames(t *testing.T) {
	names := inventory.Workloads(workloads.Names()...)
	src := "[[host]]\nname = \"a\"\naddress = \"x\"\n[bench]\nworkload = \"tpcc\"\n"
	if _, err := inventory.Parse("inv.toml", "/tmp", src, names); err == nil || !strings.Contains(err.Error(), `5: bench.workload: unknown value "tpcc"`) {
		t.Errorf("bad workload: %v", err)
	}
	host := "[[host]]\nname = \"a\"\naddress = \"x\"\n[host.bench]\nworkload = \"tpcc\"\n"
	if _, err := inventory.Parse("inv.toml", "/tmp", host, names); err == nil || !strings.Contains(err.Error(), `5: host.bench.workload: unknown value "tpcc"`) {
		t.Errorf("bad host workload: %v", err)
	}
	for _, w := range workloads.Names() {
		if _, err := inventory.Parse("inv.toml", "/tmp", strings.Replace(src, "tpcc", w, 1), names); err != nil {
			t.Errorf("%s: %v", w, err)
		}
	}
}
