package results

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"pidb/facts"
)

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)
	r := Run{ID: NewID(start, "tpcb"), Kind: "bench", Host: "pi4", Started: start, Finished: start.Add(20 * time.Second),
		Facts:    &facts.Facts{Model: "Raspberry Pi 4 Model B Rev 1.4", RAMBytes: 4 << 30},
		Settings: []Setting{{Name: "shared_buffers", Value: "1GB"}},
		Workload: Workload{Name: "tpcb", Engine: "postgres", Clients: 8, DurationS: 20, Scale: 10},
		Summary:  Summary{Transactions: 1000, TPS: 50, Latency: Latency{P95: 12.5}, Errors: map[string]int64{}},
		Series:   []Interval{{T: 1, Transactions: 50, TPS: 50, P95Ms: 12}, {T: 2, Transactions: 48, TPS: 48, P95Ms: 13.25}},
	}
	runDir, err := Save(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if runDir != filepath.Join(dir, "pi4", "20261130T010203Z-tpcb") {
		t.Errorf("run dir %s", runDir)
	}
	got, err := Load(filepath.Join(runDir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != Schema || got.Summary.TPS != 50 || got.Facts == nil || got.Facts.Model != "Raspberry Pi 4 Model B Rev 1.4" || len(got.Series) != 2 || got.Series[1].P95Ms != 13.25 {
		t.Errorf("loaded %+v", got)
	}
	csv, _ := os.ReadFile(filepath.Join(runDir, "series.csv"))
	if want := "t_s,transactions,tps,qps,p50_ms,p95_ms,p99_ms,errors\n1,50,50,0,0,12,0,0\n2,48,48,0,0,13.25,0,0\n"; string(csv) != want {
		t.Errorf("series.csv:\n%s\nwant:\n%s", csv, want)
	}
	// a newer schema is refused, not misread
	os.WriteFile(filepath.Join(dir, "future.json"), []byte(`{"schema": 99}`), 0o644)
	if _, err := Load(filepath.Join(dir, "future.json")); err == nil || !strings.Contains(err.Error(), "schema 99") {
		t.Errorf("future schema: %v", err)
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenRun is a validate run with every part of the format filled in.
func goldenRun() Run {
	start := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	temp, hot, hz, zero, capped := 52.5, 81.2, int64(1_500_000_000), uint32(0), uint32(0x20002)
	return Run{ID: NewID(start, string(KindValidate)), Kind: KindValidate, Host: "pi4", PidbVersion: "v0.9.0", Preset: "balanced",
		Started: start, Finished: start.Add(95 * time.Second),
		Facts: &facts.Facts{Host: "pi4", Address: "10.213.41.40", Model: "Raspberry Pi 4 Model B Rev 1.4", Revision: "c03114", Arch: "aarch64",
			OS: facts.OSRelease{ID: "debian", VersionID: "12", Codename: "bookworm"}, MemBytes: 3977601024, RAMBytes: 4 << 30, CPUs: 4,
			Storage: "sd", BootTarget: "multi-user.target", Thermal: true, Vcgencmd: true,
			Engine: facts.EngineState{Flavor: "postgres", Version: "15.18", Running: true}},
		Settings: []Setting{{Name: "shared_buffers", Value: "1GB", Tuned: "1GB", Why: "25% of RAM"}, {Name: "max_parallel_workers_per_gather", Value: "0"}},
		Workload: Workload{Name: "tpcb", Engine: "postgres", Clients: 8, DurationS: 60, WarmupS: 10, Scale: 10, Protocol: "simple", Via: "direct"},
		Summary: Summary{Transactions: 120000, Queries: 840000, TPS: 2000, QPS: 14000,
			Latency: Latency{Avg: 4, Stddev: 1.5, P50: 3.75, P95: 6.5, P99: 9.25, Max: 31, Count: 120000},
			Ops:     map[string]Latency{"tpcb": {Avg: 4, P50: 3.75, P95: 6.5, P99: 9.25, Max: 31, Count: 120000}},
			Errors:  map[string]int64{"serialization": 3}, Retries: 3, Reconnects: 1, ConnectMs: Latency{Avg: 2, Max: 3, Count: 9}, MeasuredS: 60,
			Histogram: []Bucket{{UpToMs: 3.981, Count: 70000}, {UpToMs: 6.31, Count: 44000}, {UpToMs: 10, Count: 5990}, {UpToMs: 31.623, Count: 10}}},
		Series: []Interval{{T: -1, Transactions: 1900, TPS: 1900, QPS: 13300, P50Ms: 4, P95Ms: 7, P99Ms: 9.5},
			{T: 1, Transactions: 2000, TPS: 2000, QPS: 14000, P50Ms: 3.75, P95Ms: 6.5, P99Ms: 9.25, Errors: 1}},
		Thermal: []Reading{{T: -5, At: start.Add(5 * time.Second), TempC: &temp, ArmHz: &hz, Throttled: &zero},
			{T: 30, At: start.Add(40 * time.Second), TempC: &hot, Throttled: &capped}, {T: 31, At: start.Add(41 * time.Second)}},
		Verdict: &Verdict{Verdict: Fail, Reasons: []Reason{{Code: "max_temp", Message: "the CPU reached 81.2 C", Fail: true}},
			MaxTempC: &hot, Throttled: true, TPSFirstQuarter: 2000, TPSLastQuarter: 1500},
	}
}

// TestGolden holds the saved files of a run to testdata/golden/ byte for
// byte: a change to the format shows in review. Refresh with -update.
func TestGolden(t *testing.T) {
	dir, err := Save(t.TempDir(), goldenRun())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"run.json", "series.csv", "thermal.csv"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "golden", name)
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run the test with -update to write it)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from %s (-update to accept):\n%s", name, golden, got)
		}
	}
}

func TestThermalCSVHasAHeader(t *testing.T) {
	dir, err := Save(t.TempDir(), goldenRun())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "thermal.csv"))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	want := []string{
		"hostname, time_utc, millidegrees, arm_hz, throttled",
		"pi4, 20261201-09:30:05, 52500, 1500000000, 0x0",
		"pi4, 20261201-09:30:40, 81200, , 0x20002",
		"pi4, 20261201-09:30:41, , , ",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("thermal.csv:\n%s\nwant:\n%s", data, strings.Join(want, "\n"))
	}
}

// TestLoadSchema1 reads a run that pidb saved before the run format had
// typed facts, pidb's version and the preset.
func TestLoadSchema1(t *testing.T) {
	r, err := Load(filepath.Join("testdata", "schema1-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindValidate || r.Facts == nil || r.Facts.Model != "Raspberry Pi 4 Model B Rev 1.4" || r.Facts.RAMBytes != 4<<30 ||
		r.Facts.Engine.Flavor != "postgres" || !r.Facts.Engine.Running || r.Facts.OS.Codename != "bookworm" ||
		r.Verdict == nil || r.Verdict.Verdict != Pass || r.Summary.TPS != 2000 || len(r.Thermal) != 1 || *r.Thermal[0].TempC != 61.3 ||
		r.PidbVersion != "" || r.Preset != "" {
		t.Errorf("loaded %+v", r)
	}
}

func TestSaveModesAndTwoRunsInASecond(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pidb-results")
	r := goldenRun()
	runDir, err := Save(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, "pi4"), runDir} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o755 {
			t.Errorf("%s: %v %v, want a folder 0755", p, st.Mode(), err)
		}
	}
	for _, name := range []string{"run.json", "series.csv", "thermal.csv"} {
		if st, err := os.Stat(filepath.Join(runDir, name)); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v %v, want 0644", name, st.Mode(), err)
		}
	}
	// a second run that began in the same second: saved beside the first,
	// its id and its folder "-2", the first untouched
	second, err := Save(dir, r)
	if err != nil || second != runDir+"-2" {
		t.Fatalf("second save of one run id: %s, %v; want %s-2", second, err, runDir)
	}
	back, err := Load(filepath.Join(second, "run.json"))
	if err != nil || back.ID != r.ID+"-2" {
		t.Errorf("the second run's id: %q, %v; want %s-2", back.ID, err, r.ID)
	}
	if first, err := Load(filepath.Join(runDir, "run.json")); err != nil || first.ID != r.ID {
		t.Errorf("the first run's id: %q, %v", first.ID, err)
	}
	left, _ := os.ReadDir(filepath.Join(dir, "pi4"))
	if len(left) != 2 {
		t.Errorf("host folder holds %d entries, want the two runs (no half-saved folder)", len(left))
	}
}

// TestSaveUnderSudo: run as root with SUDO_UID and SUDO_GID set, what Save
// makes belongs to that user; a folder that was there already is left alone.
func TestSaveUnderSudo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: Save changes owners only when it runs as root under sudo")
	}
	base := t.TempDir()
	t.Setenv("SUDO_UID", "4321")
	t.Setenv("SUDO_GID", "4322")
	runDir, err := Save(filepath.Join(base, "out"), goldenRun())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(base, "out"), filepath.Join(base, "out", "pi4"), runDir, filepath.Join(runDir, "run.json"), filepath.Join(runDir, "thermal.csv")} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 4321 || sys.Gid != 4322 {
			t.Errorf("%s: owner %d:%d, want 4321:4322", p, sys.Uid, sys.Gid)
		}
	}
	if st, _ := os.Stat(base); st.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("the folder that was there already changed owner")
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	old := goldenRun()
	newer := goldenRun()
	newer.Started = old.Started.Add(time.Hour)
	newer.ID, newer.Kind, newer.Verdict = NewID(newer.Started, "tpcb"), KindBench, nil
	other := goldenRun()
	other.Host = "pi3"
	other.Started = old.Started.Add(30 * time.Minute)
	other.ID = NewID(other.Started, "validate")
	for _, r := range []Run{old, newer, other} {
		if _, err := Save(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	// a broken run, a run from a newer pidb, a folder being saved, a stray file
	os.MkdirAll(filepath.Join(dir, "pi4", "20261201T120000Z-broken"), 0o755)
	os.WriteFile(filepath.Join(dir, "pi4", "20261201T120000Z-broken", "run.json"), []byte("{"), 0o644)
	os.MkdirAll(filepath.Join(dir, "zero", "20261201T110000Z-future"), 0o755)
	os.WriteFile(filepath.Join(dir, "zero", "20261201T110000Z-future", "run.json"), []byte(`{"schema": 7}`), 0o644)
	os.MkdirAll(filepath.Join(dir, "pi4", ".saving-x"), 0o755)
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)

	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, l := range got {
		what := filepath.Base(l.Dir)
		if l.Err != nil {
			what += "!"
		}
		order = append(order, what)
	}
	want := "20261201T120000Z-broken!,20261201T110000Z-future!,20261201T103000Z-tpcb,20261201T100000Z-validate,20261201T093000Z-validate"
	if strings.Join(order, ",") != want {
		t.Errorf("listed %s\nwant   %s", strings.Join(order, ","), want)
	}
	if got[3].Run.Host != "pi3" || got[2].Run.Kind != KindBench {
		t.Errorf("runs: %+v", got)
	}
	if l, err := List(filepath.Join(dir, "missing")); err != nil || len(l) != 0 {
		t.Errorf("a missing folder: %v, %v", l, err)
	}
}

func TestOutageString(t *testing.T) {
	for _, tc := range []struct {
		o    Outage
		gone bool
		want string
	}{
		{Outage{FromS: 10, ToS: 30, FailedConnects: 392, Kind: ServerGone}, true, "the server went away 10.0 s into the measured time, for 20.0 s (392 failed connections)"},
		{Outage{FromS: 10, ToS: 30, FailedConnects: 392}, true, "the server went away 10.0 s into the measured time, for 20.0 s (392 failed connections)"}, // saved before kinds
		{Outage{FromS: 11.5, ToS: 40, Kind: NoAnswer}, false, "the host stopped answering 11.5 s into the measured time, for 28.5 s (no transaction and no error came back: the network, or the host, was down)"},
	} {
		if tc.o.Gone() != tc.gone || tc.o.String() != tc.want {
			t.Errorf("%+v: gone %v, %q", tc.o, tc.o.Gone(), tc.o.String())
		}
	}
}

// TestEarlierQuiz: a quiz run saved before the write-up's quiz (no
// revision) loads as quiz-v1, other work; one of the write-up's quiz
// (revision 2) loads as quiz.
func TestEarlierQuiz(t *testing.T) {
	r, err := Load(filepath.Join("testdata", "quiz-v1-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Workload.Name != EarlierQuiz || r.Workload.Revision != 1 {
		t.Errorf("an earlier quiz run loads as %q revision %d, want %q", r.Workload.Name, r.Workload.Revision, EarlierQuiz)
	}
	r.Workload.Name, r.Workload.Revision, r.Workload.Queries = "quiz", 2, 1000
	r.ID = "20261201T120000Z-quiz"
	dir, err := Save(t.TempDir(), r)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Load(filepath.Join(dir, "run.json"))
	if err != nil || again.Workload.Name != "quiz" || again.Workload.Revision != 2 || again.Workload.Queries != 1000 {
		t.Errorf("the write-up's quiz loads as %+v, %v", again.Workload, err)
	}
}

// TestErrorShare: the failures over everything tried, every kind
// counted but failed connections (no transaction was tried); a run over
// a hundredth is lossy, one at it is not.
func TestErrorShare(t *testing.T) {
	for _, c := range []struct {
		s     Summary
		share float64
		lossy bool
	}{
		{Summary{Transactions: 9493, Errors: map[string]int64{"new_order: mysql 1020": 1647, "payment: mysql 1020": 1197}}, 2844.0 / 12337, true},
		{Summary{Transactions: 99, Errors: map[string]int64{"mysql 1062": 1}}, 0.01, false},
		{Summary{Transactions: 98, Errors: map[string]int64{"a": 1, "b": 1}}, 0.02, true},
		{Summary{Transactions: 500}, 0, false},
		{Summary{}, 0, false},
		{Summary{Errors: map[string]int64{"pg 57P01": 3}}, 1, true},
		{Summary{Transactions: 100, Errors: map[string]int64{"connect: sqlstate 57P03": 40}}, 0, false},
	} {
		if got := c.s.ErrorShare(); math.Abs(got-c.share) > 1e-12 || c.s.Lossy() != c.lossy {
			t.Errorf("%+v: share %v lossy %v, want %v %v", c.s, got, c.s.Lossy(), c.share, c.lossy)
		}
	}
}
