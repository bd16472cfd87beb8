package lab

import (
	"encoding/json"
	"maps"
	"os"
	"testing"
)

// TestBoardQuotas: each board's CPU quota at board speed on a machine one
// of whose cores 7-Zip rates 5,000 MIPS, and on one twice as fast, worked
// out by hand from the published ratings (Compute) and the share of them
// that is a database's work (30%): a Pi 4 is 5,750 x 0.3 / 5,000 = 0.345
// cores, a Zero W 460 x 0.3 / 5,000 = 0.0276.
func TestBoardQuotas(t *testing.T) {
	want := map[string][2]int{ // at 5,000 and at 10,000 MIPS a core
		"pi4":     {34500, 17250},
		"pi4-2gb": {34500, 17250},
		"cm4":     {34500, 17250},
		"pi3":     {17820, 8910},
		"pi3plus": {19440, 9720},
		"zero":    {2760, 1380},
		"zero2":   {18180, 9090},
		"pi5":     {65700, 32850},
		"pi5-4gb": {65700, 32850},
	}
	for _, b := range Boards() {
		w, ok := want[b.Kind]
		if !ok {
			t.Errorf("%s: no quota written out for it", b.Kind)
			continue
		}
		if got := [2]int{b.Compute.Quota(5000), b.Compute.Quota(10000)}; got != w {
			t.Errorf("%s: quotas %v, want %v", b.Kind, got, w)
		}
	}
	// a numbered host is its board
	if b, _ := BoardNamed("zero-7"); b.Compute.Quota(5000) != 2760 {
		t.Errorf("zero-7: %d", b.Compute.Quota(5000))
	}
	// the order the write-ups found: a Zero W far behind a 3B, behind a 4
	if q := func(k string) int { b, _ := BoardNamed(k); return b.Compute.Quota(5000) }; !(q("zero") < q("pi3")/5 && q("pi3") < q("pi4")) {
		t.Errorf("the boards' order: zero %d, pi3 %d, pi4 %d", q("zero"), q("pi3"), q("pi4"))
	}
	// at least 1% of a core, and none without a rating of the machine
	if got := (Compute{AllMIPS: 10}).Quota(100000); got != 1000 {
		t.Errorf("a tiny board: %d, want 1000 (1%%)", got)
	}
	if got := (Compute{AllMIPS: 5750}).Quota(0); got != -1 {
		t.Errorf("no machine rating: %d, want -1 (no quota)", got)
	}
}

// TestParseSevenZipBench reads the Tot: line of 7-Zip 26.02's `7zz b
// -mmt1` as this machine printed it (a busy machine: 3% usage).
func TestParseSevenZipBench(t *testing.T) {
	out := `
                       Compressing  |                  Decompressing
Dict     Speed Usage    R/U Rating  |      Speed Usage    R/U Rating
         KiB/s     %   MIPS   MIPS  |      KiB/s     %   MIPS   MIPS

18:         98     4   2376     88  |        889     3   2588     72
----------------------------------  | ------------------------------
Avr:        98     4   2376     88  |        889     3   2588     72
Tot:               3   2482     80
`
	r, ru, err := ParseSevenZipBench(out)
	if err != nil || r != 80 || ru != 2482 {
		t.Errorf("rating %d, per usage %d, %v; want 80 and 2482", r, ru, err)
	}
	for _, bad := range []string{"", "Avr: 1 2 3\n", "Tot: 3 x 80\n", "Tot: 3 2482 0\n"} {
		if _, _, err := ParseSevenZipBench(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestForgetThermal: a removed host's cooling and CPU speed leave the
// simulation's config, so a host booted later under its name starts at
// the defaults; the other hosts' stay.
func TestForgetThermal(t *testing.T) {
	l := New(t.TempDir(), nil)
	if err := l.forgetThermal([]string{"pi3-4"}); err != nil {
		t.Fatalf("no config yet: %v", err)
	}
	if err := writeFile(l.thermalConfigPath(), `{"speed": 2, "hosts": {"pi3-4": "case", "pi4": "fan"}, "cpu": {"pi3-4": "board", "pi4": "board"}, "core_mips": 2955}`, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.forgetThermal([]string{"pi3-4"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(l.thermalConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	var cfg ThermalConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Hosts["pi3-4"]; ok || cfg.CPU["pi3-4"] != "" || cfg.Hosts["pi4"] != "fan" || cfg.CPU["pi4"] != CPUBoard || cfg.Speed != 2 || cfg.CoreMIPS != 2955 {
		t.Errorf("after forgetting pi3-4: %s", data)
	}
}

// TestSetSpeeds: board speed is a new lab's default; a speed for all
// becomes the lab's, for the hosts up and the hosts booted later, and
// replaces what the hosts up had of their own; a host named keeps its own.
func TestSetSpeeds(t *testing.T) {
	pi4, _ := BoardNamed("pi4")
	zero, _ := BoardNamed("zero")
	pi3, _ := BoardNamed("pi3")
	cfg := map[string]string{}
	if !setSpeeds(cfg, nil, []Board{pi4}) || len(cfg) != 0 {
		t.Errorf("a new lab: %v, want board speed and nothing written", cfg)
	}
	cfg = map[string]string{"pi3": CPUBoard, "zero": CPUBoard}
	if setSpeeds(cfg, map[string]string{AllHosts: CPUFull}, []Board{pi4, zero}) {
		t.Errorf("full for all: a host at board speed")
	}
	want := map[string]string{AllHosts: CPUFull, "pi3": CPUBoard}
	if !maps.Equal(cfg, want) {
		t.Errorf("full for all, pi4 and zero up: %v, want %v", cfg, want)
	}
	c := ThermalConfig{CPU: cfg, CoreMIPS: 2955}
	if c.speed("pi4-3") != CPUFull || c.speed("pi3") != CPUBoard {
		t.Errorf("a host booted later: %s, pi3 (not up then): %s", c.speed("pi4-3"), c.speed("pi3"))
	}
	if !setSpeeds(cfg, map[string]string{"zero": CPUBoard}, []Board{zero, pi3}) || cfg["zero"] != CPUBoard || cfg[AllHosts] != CPUFull {
		t.Errorf("zero=board: %v", cfg)
	}
	if c.quota(pi4) != -1 || c.quota(zero) <= 0 {
		t.Errorf("quotas: pi4 (full) %d, zero (board) %d", c.quota(pi4), c.quota(zero))
	}
}
