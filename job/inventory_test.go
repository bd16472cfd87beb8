package job

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestParseInventory: an inventory pidb is about to write is checked as
// one read from its file: its errors name the file and line, its Path
// is the file's.
func TestParseInventory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pis.toml")
	inv, err := ParseInventory(path, "[[host]]\nname = \"pi4\"\naddress = \"10.0.0.4\"\nengine = \"postgres\"\n")
	if err != nil || inv.Path != path || len(inv.Hosts) != 1 || inv.Hosts[0].Name != "pi4" {
		t.Fatalf("ParseInventory: %+v %v", inv, err)
	}
	_, err = ParseInventory(path, "[[host]]\nname = \"pi4\"\naddress = \"10.0.0.4\"\nengine = \"oracle\"\n")
	if err == nil || !strings.Contains(err.Error(), "pis.toml:4") {
		t.Errorf("a bad engine: %v, want the file and line", err)
	}
}
