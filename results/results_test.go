package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)
	r := Run{ID: NewID(start, "tpcb"), Kind: "bench", Host: "pi4", Started: start, Finished: start.Add(20 * time.Second),
		Facts:    map[string]any{"model": "Raspberry Pi 4 Model B Rev 1.4", "ram_bytes": float64(4 << 30)},
		Settings: []Setting{{"shared_buffers", "1GB"}},
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
	if got.Schema != Schema || got.Summary.TPS != 50 || got.Facts["model"] != "Raspberry Pi 4 Model B Rev 1.4" || len(got.Series) != 2 || got.Series[1].P95Ms != 13.25 {
		t.Errorf("loaded %+v", got)
	}
	csv, _ := os.ReadFile(filepath.Join(runDir, "series.csv"))
	if want := "t_s,transactions,tps,qps,p95_ms,errors\n1,50,50,0,12,0\n2,48,48,0,13.25,0\n"; string(csv) != want {
		t.Errorf("series.csv:\n%s\nwant:\n%s", csv, want)
	}
	// a newer schema is refused, not misread
	os.WriteFile(filepath.Join(dir, "future.json"), []byte(`{"schema": 99}`), 0o644)
	if _, err := Load(filepath.Join(dir, "future.json")); err == nil || !strings.Contains(err.Error(), "schema 99") {
		t.Errorf("future schema: %v", err)
	}
}
