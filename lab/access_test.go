package lab

import (
	"strings"
	"testing"

	"pidb/tune"
)

// TestInventoryPreset: the lab's inventory asks for the tuner's balanced
// preset, by the name the tuner knows it by.
func TestInventoryPreset(t *testing.T) {
	if preset != string(tune.Balanced) {
		t.Errorf("the lab's preset %q is not the tuner's %q", preset, tune.Balanced)
	}
	if inv := Inventory(nil, "/k", "/kh"); !strings.Contains(inv, "preset = \"balanced\"\n") {
		t.Errorf("inventory:\n%s", inv)
	}
}
