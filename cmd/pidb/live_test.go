package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pidb/internal/labtest"
)

// TestFactsOnTheLab is the "done when": the three boards' models,
// MemTotal, nominal RAM and cores, written out by hand. On a fresh Pi of
// each board, its own: the lab's own would keep it waiting while the demo
// and the thermal tests hold them.
func TestFactsOnTheLab(t *testing.T) {
	t.Parallel()
	inv := labtest.FreshAsBoard(t, "pi4", "pi3", "zero")
	code, out, errOut := runPidb(t, "facts", "-i", inv.Path, "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := map[string]struct {
		model          string
		mem, ram, cpus float64
	}{
		"pi4":  {"Raspberry Pi 4 Model B Rev 1.4", 3884376 * 1024, 4 << 30, 4},
		"pi3":  {"Raspberry Pi 3 Model B Rev 1.2", 948304 * 1024, 1 << 30, 4},
		"zero": {"Raspberry Pi Zero W Rev 1.1", 443452 * 1024, 512 << 20, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("%d hosts in the JSON, want %d", len(got), len(want))
	}
	for _, f := range got {
		w, ok := want[f["host"].(string)]
		if !ok {
			t.Errorf("unexpected host %v", f["host"])
			continue
		}
		// (the boot target and the desktop change when other tests provision
		// the hosts; TestLabLifecycle checks them on pristine hosts)
		if f["model"] != w.model || f["mem_bytes"] != w.mem || f["ram_bytes"] != w.ram || f["cpus"] != w.cpus ||
			f["thermal"] != true || f["storage"] != "sd" || f["os_id"] != "debian" {
			t.Errorf("%s: %v", f["host"], f)
		}
	}
}

// TestFactsRefusesUnknownHosts: with an empty known_hosts, facts refuses
// the three hosts and shows their keys; --accept-new-host-keys takes zero's,
// and then zero is known. On a fresh Pi 4 and Zero of its own (the
// known_hosts it writes is its own too).
func TestFactsRefusesUnknownHosts(t *testing.T) {
	t.Parallel()
	inv := labtest.FreshAsBoard(t, "pi4", "zero")
	src, err := os.ReadFile(inv.Path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	os.WriteFile(kh, nil, 0o600)
	p := filepath.Join(dir, "inv.toml")
	os.WriteFile(p, []byte(strings.Replace(string(src), inv.Hosts[0].KnownHosts, kh, 1)), 0o644)

	code, _, errOut := runPidb(t, "facts", "-i", p)
	if code != 1 || strings.Count(errOut, "SHA256:") < 2 || !strings.Contains(errOut, "--accept-new-host-keys") {
		t.Fatalf("empty known_hosts: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runPidb(t, "facts", "-i", p, "--accept-new-host-keys", "--limit", "zero")
	if code != 0 {
		t.Fatalf("--accept-new-host-keys: exit %d\n%s", code, errOut)
	}
	if code, _, errOut = runPidb(t, "facts", "-i", p, "--limit", "zero"); code != 0 {
		t.Errorf("after accepting: exit %d\n%s", code, errOut)
	}
}

// TestFactsWithAStoppedHost adds a host that is not there (an unused lab
// address): it fails, naming itself; the others succeed; exit code 1. On
// a fresh Pi 4 of its own beside it.
func TestFactsWithAStoppedHost(t *testing.T) {
	t.Parallel()
	inv := labtest.FreshAsBoard(t, "pi4")
	src, err := os.ReadFile(inv.Path)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "inv.toml")
	os.WriteFile(p, append(src, []byte("\n[[host]]\nname = \"ghost\"\naddress = \"10.213.41.99\"\n")...), 0o644)
	// the default connect timeout (10 s): the ghost fails at any, and a
	// shorter one fails the live hosts too when a busy machine slows their
	// SSH handshakes
	code, out, errOut := runPidb(t, "facts", "-i", p, "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "ghost: connect to 10.213.41.99:22") || !strings.Contains(errOut, "1 of 2 hosts failed") {
		t.Errorf("stderr does not name the stopped host:\n%s", errOut)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	ok := 0
	for _, f := range got {
		if f["host"] == "ghost" {
			if !strings.Contains(f["error"].(string), "ghost") {
				t.Errorf("ghost's error: %v", f["error"])
			}
		} else if f["model"] != nil && f["error"] == nil {
			ok++
		}
	}
	if ok != 1 {
		t.Errorf("%d hosts succeeded, want 1: %s", ok, out)
	}
}
