package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"pidb/internal/labtest"
	"pidb/thermal"
)

// thermalOf runs `pidb thermal --json` with args and returns its hosts by name.
func thermalOf(t *testing.T, args ...string) map[string]thermal.Summary {
	t.Helper()
	code, stdout, errOut := runPidb(t, append(append([]string{"thermal"}, args...), "--json")...)
	var res []thermal.Summary
	if err := json.Unmarshal([]byte(stdout), &res); code != 0 || err != nil {
		t.Fatalf("thermal: exit %d %v\n%s\n%s", code, err, stdout, errOut)
	}
	m := map[string]thermal.Summary{}
	for _, r := range res {
		m[r.Host] = r
	}
	return m
}

// labUp runs `pidb lab up` on the lab in dir with args, and ends the test
// when it fails.
func labUp(t *testing.T, dir string, args ...string) {
	t.Helper()
	if code, _, errOut := runPidb(t, append([]string{"lab", "up", "--dir", dir}, args...)...); code != 0 {
		t.Fatalf("lab up %v: exit %d\n%s", args, code, errOut)
	}
}

// needSimulator ends the test when the lab's thermal simulator is not
// running: a Go test binary cannot start it (see lab.Lab.SimulatorCommand).
func needSimulator(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "thermal-sim.pid")); err != nil {
		t.Fatalf("no thermal simulator: bring the lab up with the pidb binary (bin/pidb lab up), not from a test: %v", err)
	}
}

// TestThermalOnTheLab reads the lab hosts' thermal state as pidb sees it
// and checks it against the files the lab writes, with and without
// vcgencmd, and in the write-up's CSV format. It sets the simulator's
// speed, so it leases the simulator with the lab's three.
func TestThermalOnTheLab(t *testing.T) {
	t.Parallel()
	inv := labtest.Lease(t, "pi4", "pi3", "zero", labtest.Simulator)
	dir := filepath.Dir(labtest.Inventory(t).Path) // the lab's own folder
	labUp(t, dir)                                  // every host with vcgencmd, fan-cooled, real time
	zoneTemp := func(name string) float64 {
		data, err := os.ReadFile(filepath.Join(dir, "hosts", name, "rootfs/etc/pisim/thermal/thermal_zone0/temp"))
		if err != nil {
			t.Fatal(err)
		}
		mc, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		return float64(mc) / 1000
	}

	got := thermalOf(t, "-i", inv.Path)
	for _, name := range []string{"pi4", "pi3", "zero"} {
		r := got[name]
		if r.Samples != 1 || r.MaxTempC == nil || math.Abs(*r.MaxTempC-zoneTemp(name)) > 5 || r.MinArmMHz == nil || r.Throttled == nil {
			t.Errorf("%s: %+v (its thermal zone says %.1f C)", name, r, zoneTemp(name))
		}
	}
	if z, p := got["zero"].UnderVoltageKnown, got["pi4"].UnderVoltageKnown; z == nil || *z || p == nil || !*p {
		t.Errorf("under-voltage: zero known %v, pi4 known %v; a Zero cannot detect it", z, p)
	}
	if mhz := *got["pi4"].MinArmMHz; mhz != 1500 {
		t.Errorf("pi4 idle at %.0f MHz, want 1500", mhz)
	}

	t.Run("csv", func(t *testing.T) {
		csv := filepath.Join(t.TempDir(), "temps.csv")
		thermalOf(t, "-i", inv.Path, "--limit", "pi4", "--duration", "1200ms", "--interval", "500ms", "--csv", csv)
		data, err := os.ReadFile(csv)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		line := regexp.MustCompile(`^pi4, \d{8}-\d\d:\d\d:\d\d, \d{4,6}, \d+, 0x[0-9a-f]+$`)
		for _, l := range lines {
			if !line.MatchString(l) {
				t.Errorf("not the write-up's format: %q", l)
			}
		}
		// the first reading always (one may take longer than the watch on
		// a busy machine), at most one each 0.5 s after it
		if len(lines) < 1 || len(lines) > 4 {
			t.Errorf("%d readings in 1.2 s at 0.5 s:\n%s", len(lines), data)
		}
	})

	t.Run("without vcgencmd", func(t *testing.T) {
		labUp(t, dir, "--without-vcgencmd", "zero")
		defer labUp(t, dir)
		r := thermalOf(t, "-i", inv.Path, "--limit", "zero")["zero"]
		if r.MaxTempC == nil || r.Throttled != nil || len(r.Flags) != 0 {
			t.Errorf("zero without vcgencmd: %+v; want its temperature and unknown flags", r)
		}
	})
}

// TestLabHeatsUp puts a Pi 4 of its own (fresh, numbered) in a case at
// its board's speed with simulated time running fast, loads its CPU, and
// checks that it heats past 80 C, throttles (clock, flags, and its CPU
// quota below its board's: the clock's share of it), and that a fan
// brings it back below 80, at its board's quota, while the since-boot
// flags stay. The load runs until
// the simulator has said all of that (three minutes of real time at
// most: a starved host heats only as fast as the machine lets it run): a
// fixed 10 s of it once began late on a busy machine (its ssh connection)
// and ended before the Pi had warmed through.
func TestLabHeatsUp(t *testing.T) {
	t.Parallel()
	inv := labtest.Fresh(t, "pi4")
	pi4 := inv.Hosts[0]
	root := pi4
	root.User = "root"
	labtest.Lease(t, labtest.Simulator) // its speed, which is the whole lab's
	dir := filepath.Dir(labtest.Inventory(t).Path)
	needSimulator(t, dir)
	labUp(t, dir, "--hosts", pi4.Name, "--thermal-speed", "60", "--cooling", "case", "--cpu", pi4.Name+"=board")
	defer labUp(t, dir, "--hosts", pi4.Name, "--thermal-speed", "1") // real time, as the other tests expect
	quota := func() string {
		data, _ := os.ReadFile("/sys/fs/cgroup/cpu/pidblab-" + pi4.Name + "/cpu.cfs_quota_us")
		return strings.TrimSpace(string(data))
	}
	// cool, at its board's full clock; the simulator may have begun a
	// round with the lab's speed from before lab up and write that once
	// more: its next round (a second later, more on a busy machine) reads
	// the new one
	board, err := strconv.Atoi(quota())
	for start := time.Now(); (err != nil || board <= 0) && time.Since(start) < 30*time.Second; time.Sleep(500 * time.Millisecond) {
		board, err = strconv.Atoi(quota())
	}
	if err != nil || board <= 0 {
		t.Fatalf("at board speed the Pi 4's quota is %q 30 s on, want its board's", quota())
	}
	// two busy loops on the Pi 4, in the background there, for as long as
	// it takes; its CPU quota read meanwhile (a throttled Pi hovers about
	// 80 C, so the limit comes and goes): the limits seen
	const load = `sh -c ': pidb-heat; while :; do :; done'`
	labtest.MustSSH(t, root, "for i in 1 2; do nohup timeout 300 "+load+" >/dev/null 2>&1 </dev/null & done")
	unload := func() { labtest.MustSSH(t, root, "pkill -f ': pidb-hea[t]' || true") }
	defer unload()
	quotas := make(chan map[string]bool)
	stop := make(chan struct{})
	go func() {
		seen := map[string]bool{}
		for {
			seen[quota()] = true
			select {
			case <-stop:
				quotas <- seen
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	var hot thermal.Summary // the hottest reading, and the lowest clock and the flags seen
	flags := map[string]bool{}
	for deadline := time.Now().Add(3 * time.Minute); ; {
		r := thermalOf(t, "-i", inv.Path, "--duration", "3s", "--interval", "1s")[pi4.Name]
		if r.MaxTempC != nil && (hot.MaxTempC == nil || *r.MaxTempC > *hot.MaxTempC) {
			hot.MaxTempC = r.MaxTempC
		}
		if r.MinArmMHz != nil && (hot.MinArmMHz == nil || *r.MinArmMHz < *hot.MinArmMHz) {
			hot.MinArmMHz = r.MinArmMHz
		}
		for _, f := range r.Flags {
			flags[f] = true
		}
		heated := hot.MaxTempC != nil && *hot.MaxTempC >= 80 && hot.MinArmMHz != nil && *hot.MinArmMHz < 1500 && flags["throttled"] && flags["throttled_since_boot"]
		if heated || time.Now().After(deadline) {
			break
		}
	}
	close(stop)
	unload()
	var limits []string
	for q := range <-quotas {
		if q == strconv.Itoa(board) {
			continue
		}
		limits = append(limits, q)
		if n, err := strconv.Atoi(q); err != nil || n <= 0 || n >= board {
			t.Errorf("throttled, the host's CPU quota was %s, want less than its board's %d (the clock's share of it)", q, board)
		}
	}
	if hot.MaxTempC == nil || *hot.MaxTempC < 80 || hot.MinArmMHz == nil || *hot.MinArmMHz >= 1500 || !flags["throttled"] || !flags["throttled_since_boot"] {
		t.Errorf("in a case under load for three minutes: at most %s C, the clock down to %s MHz, flags %v", ptrString(hot.MaxTempC), ptrString(hot.MinArmMHz), flags)
	}
	t.Logf("its quotas while throttled: %v, its board's %d", limits, board)
	if len(limits) == 0 {
		t.Errorf("throttled, the host's CPU quota was never limited")
	}

	labUp(t, dir, "--hosts", pi4.Name, "--thermal-speed", "60", "--cooling", "fan")
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := thermalOf(t, "-i", inv.Path)[pi4.Name]
		if r.MaxTempC != nil && *r.MaxTempC < 75 {
			if contains(r.Flags, "throttled") || !contains(r.Flags, "throttled_since_boot") || *r.MinArmMHz != 1500 || quota() != strconv.Itoa(board) {
				t.Errorf("cooled by a fan: %+v, quota %s; want full clock, its board's quota %d, and the since-boot flag kept", r, quota(), board)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a fan did not cool %s below 75 C in 30 s: %+v", pi4.Name, r)
		}
		time.Sleep(time.Second)
	}
}

// ptrString prints a value the host may not have told.
func ptrString(p *float64) string {
	if p == nil {
		return "unknown"
	}
	return strconv.FormatFloat(*p, 'f', 1, 64)
}
