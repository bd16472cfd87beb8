package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"pidb/internal/labtest"
	"pidb/job"
	"pidb/results"
)

// TestValidateOnTheLab is the case on a Pi 4 (a clone of a
// provisioned one, the test's own) through the command,
// with simulated time ten times faster: in a case, under load, it heats
// past 80 C and is throttled: FAIL, exit 1 (a sag, if the throughput shows
// one, is the heat's there, never unstable_throughput), and the run is
// saved as the sudo user's. With its fan the same Pi passes: the demo's
// lab test validates it so, beside the case, and TestFleetOfTen validates
// all ten boards through this command, exit 0. tpcb runs at scale 10
// (pgbench's advice: no fewer branches than clients): at scale 1 the 8
// clients queue on one branch row, and in one CI run the throughput
// drifted down by 31% within 40 s with a fan, thermal_sag's WARN without
// any heat.
func TestValidateOnTheLab(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "pi4")
	pi4 := inv.Hosts[0].Name
	labtest.Lease(t, labtest.Simulator) // its speed, which is the whole lab's
	dir := filepath.Dir(labtest.Inventory(t).Path)
	needSimulator(t, dir)
	cooling := func(c string, speed string) {
		labUp(t, dir, "--hosts", pi4, "--cooling", c, "--thermal-speed", speed)
	}
	defer cooling("fan", "1")
	if code, _, errOut := runPidb(t, "provision", "-i", inv.Path); code != 0 {
		t.Fatalf("provision: exit %d\n%s", code, errOut)
	}
	out := t.TempDir()
	validate := func(idleBefore string) (int, job.ValidateResult, string) {
		t.Helper()
		// as `sudo pidb validate` run by the user 4321: the saved runs are theirs
		code, stdout, errOut := runPidbEnv(t, []string{"SUDO_UID=4321", "SUDO_GID=4322"}, "validate", "-i", inv.Path, "--duration", "30s", "--warmup", "2s", "--scale", "10",
			"--clients", "8", "--idle-before", idleBefore, "--idle-after", "2s", "--thermal-interval", "1s", "--out", out, "--json")
		var res []job.ValidateResult
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res) != 1 {
			t.Fatalf("validate: exit %d, not one result: %v\n%s\n%s", code, err, stdout, errOut)
		}
		return code, res[0], errOut
	}

	cooling("case", "10")
	code, hot, errOut := validate("4s")
	codes := map[string]bool{}
	for _, r := range hot.Reasons {
		codes[r.Code] = true
	}
	if code != 1 || hot.Verdict != "FAIL" || !hot.Throttled || !codes["throttled"] || !codes["max_temp"] ||
		codes["unstable_throughput"] || hot.MaxTempC == nil || *hot.MaxTempC < 80 {
		t.Errorf("in a case: exit %d, %+v\n%s", code, hot, errOut)
	}

	// the saved run: the verdict, and the readings on the workload's timeline
	run, err := results.Load(filepath.Join(hot.RunDir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var before, during int
	for _, r := range run.Thermal {
		switch {
		case r.T < 0:
			before++
		case r.T <= 30:
			during++
		}
	}
	// a reading a second over SSH, as many as a busy machine lets land (20
	// of 30 in one CI run, 3 in another): one before and one during place
	// them on the timeline; any count above that, load alone can take away
	if run.Kind != "validate" || run.Verdict == nil || run.Verdict.Verdict != "FAIL" || before < 1 || during < 1 {
		t.Errorf("saved run: kind %s, verdict %+v, %d readings before the run and %d during it", run.Kind, run.Verdict, before, during)
	}
	if run.PidbVersion == "" || run.Preset != "balanced" || run.Facts == nil || run.Facts.Host != pi4 {
		t.Errorf("saved run: pidb version %q, preset %q, facts %+v", run.PidbVersion, run.Preset, run.Facts)
	}
	for _, p := range []string{filepath.Dir(hot.RunDir), hot.RunDir, filepath.Join(hot.RunDir, "run.json"), filepath.Join(hot.RunDir, "thermal.csv")} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 4321 || sys.Gid != 4322 || st.Mode().Perm()&0o044 != 0o044 {
			t.Errorf("%s: owner %d:%d, mode %v; want the sudo user's 4321:4322, readable by all", p, sys.Uid, sys.Gid, st.Mode())
		}
	}
	// thermal.csv: a header line, then a line per reading in the write-up's format
	csv, err := os.ReadFile(filepath.Join(hot.RunDir, "thermal.csv"))
	header, rows, _ := strings.Cut(string(csv), "\n")
	if err != nil || header != "hostname, time_utc, millidegrees, arm_hz, throttled" || !strings.HasPrefix(rows, pi4+", ") || strings.Count(rows, "\n") != len(run.Thermal) {
		t.Errorf("thermal.csv: %v\n%s", err, csv)
	}
}
