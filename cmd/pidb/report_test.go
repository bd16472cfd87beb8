package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunsCommand lists the recorded demo runs and a broken folder.
func TestRunsCommand(t *testing.T) {
	dir := t.TempDir()
	copyRuns(t, "../../report/testdata/demo", dir)
	os.MkdirAll(filepath.Join(dir, "pi4", "20991231T000000Z-broken"), 0o755)
	code, out, errOut := runPidb(t, "runs", dir)
	if code != 0 || !strings.HasPrefix(out, "RUN ") || strings.Count(out, "\n") != 1+7 || !strings.Contains(out, "UNREADABLE") || !strings.Contains(errOut, "cannot be read") {
		t.Errorf("runs: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runPidb(t, "runs", "--host", "pi3", "--json", dir)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 1 || rows[0]["workload"] != "oltp-read-only" || rows[0]["verdict"] != "PASS" {
		t.Errorf("runs --host pi3 --json: exit %d, %v\n%s", code, err, out)
	}
	// the unreadable run: its folder and error, null for all it has not
	// (no TPS of 0, no start in the year 1)
	code, out, _ = runPidb(t, "runs", "--host", "pi4", "--json", dir)
	rows = nil
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) < 2 {
		t.Fatalf("runs --host pi4 --json: exit %d, %v\n%s", code, err, out)
	}
	broken := rows[0] // the newest
	for _, k := range []string{"tps", "clients", "started", "workload", "p95_ms"} {
		if v, ok := broken[k]; !ok || v != nil {
			t.Errorf("the unreadable run's %s: %v (there: %v), want null", k, v, ok)
		}
	}
	if broken["error"] == nil || broken["run_id"] != "20991231T000000Z-broken" || rows[1]["tps"] == nil {
		t.Errorf("runs --json: %v, then %v", broken, rows[1])
	}
	// a filter that none match is not an empty folder
	if code, out, errOut := runPidb(t, "runs", "--host", "pi9", dir); code != 0 || out != "" || !strings.Contains(errOut, "none match --host pi9") || strings.Contains(errOut, "no runs in") {
		t.Errorf("runs --host pi9: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := runPidb(t, "runs", "--last", "-1", dir); code != 2 {
		t.Errorf("--last -1: exit %d\n%s", code, errOut)
	}
	// a flag after the folder is read as a flag
	if code, out, errOut := runPidb(t, "runs", dir, "--host", "pi3"); code != 0 || strings.Count(out, "\n") != 1+1 || !strings.Contains(out, "pi3") {
		t.Errorf("runs DIR --host pi3: exit %d\n%s\n%s", code, out, errOut)
	}
	// a host's folder, and a run's
	pi4 := filepath.Join(dir, "pi4")
	runs, _ := filepath.Glob(filepath.Join(pi4, "2026*"))
	if code, out, errOut := runPidb(t, "runs", pi4); code != 0 || strings.Count(out, "\n") != 1+len(runs)+1 || strings.Contains(out, "pi3") {
		t.Errorf("runs of pi4's folder (%d runs and a broken one): exit %d\n%s\n%s", len(runs), code, out, errOut)
	}
	if code, out, errOut := runPidb(t, "runs", runs[0]); code != 0 || strings.Count(out, "\n") != 1+1 || !strings.Contains(out, filepath.Base(runs[0])) {
		t.Errorf("runs of one run's folder: exit %d\n%s\n%s", code, out, errOut)
	}
	// a folder that is not there is not an empty one
	if code, _, errOut := runPidb(t, "runs", filepath.Join(dir, "no-such-folder")); code != 2 || !strings.Contains(errOut, "no-such-folder: no such folder") {
		t.Errorf("a folder that is not there: exit %d\n%s", code, errOut)
	}
}

// TestReportCommand writes the page of a results folder, and compares two
// runs named by id.
func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	copyRuns(t, "../../report/testdata/demo", dir)
	page := filepath.Join(t.TempDir(), "r.html")
	broken := filepath.Join(dir, "pi4", "20991231T000000Z-broken")
	os.MkdirAll(broken, 0o755)
	code, out, errOut := runPidb(t, "report", dir, "-o", page) // a flag after the folder is read as a flag
	if code != 0 || strings.TrimSpace(out) != page {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, broken+": cannot be read, left off the page") {
		t.Errorf("a broken run is left off the page in silence: %q", errOut)
	}
	os.RemoveAll(broken)
	if code, _, errOut := runPidb(t, "report", "-o", "/nonexistent/dir/r.html", dir); code != 2 || !strings.Contains(errOut, "-o /nonexistent/dir/r.html: no folder /nonexistent/dir to write it in") {
		t.Errorf("a page where no folder is: exit %d\n%s", code, errOut)
	}
	// where the page and the charts cannot go: said before any work, exit 2
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, []byte("x"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "-o", t.TempDir(), dir}, "that is a folder: name the file to write"},
		{[]string{"report", "-o", page, "--png", notDir, dir}, "--png " + notDir + ": that is a file: name a folder"},
		{[]string{"report", "-o", page, "--png", "/nonexistent/charts", dir}, "--png /nonexistent/charts: no folder /nonexistent to write it in"},
	} {
		before, _ := os.Stat(page)
		if code, _, errOut := runPidb(t, c.args...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d\n%s", c.args, code, errOut)
		}
		if after, _ := os.Stat(page); after.ModTime() != before.ModTime() {
			t.Errorf("%v: the page was written all the same", c.args)
		}
	}
	// a host's folder, as pidb runs takes it: its newest run
	hostPage := filepath.Join(t.TempDir(), "pi3.html")
	if code, _, errOut := runPidb(t, "report", "-o", hostPage, filepath.Join(dir, "pi3")); code != 0 {
		t.Errorf("report of a host's folder: exit %d\n%s", code, errOut)
	}
	if data, err := os.ReadFile(hostPage); err != nil || strings.Count(string(data), "<tr data-host=") != 1 || !strings.Contains(string(data), `<tr data-host="pi3">`) {
		t.Errorf("the page of pi3's folder: %v, %d fleet rows", err, strings.Count(string(data), "<tr data-host="))
	}
	data, err := os.ReadFile(page)
	if err != nil || strings.Count(string(data), "<tr data-host=") != 3 {
		t.Errorf("report: %v, %d fleet rows", err, strings.Count(string(data), "<tr data-host="))
	}
	ids, _ := filepath.Glob(filepath.Join(dir, "pi4", "*"))
	code, out, errOut = runPidb(t, "compare", "-o", page, "--dir", dir, filepath.Base(ids[1]), filepath.Base(ids[2]))
	if code != 0 || !strings.Contains(out, "METRIC") || !strings.Contains(out, "TPS") {
		t.Errorf("compare by id: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := runPidb(t, "report", "--compare", "-o", page, ids[0]); code != 2 || !strings.Contains(errOut, "two runs") {
		t.Errorf("compare with one run: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runPidb(t, "report", "-o", page, "--dir", dir, "no-such-run"); code != 2 || !strings.Contains(errOut, "no-such-run") {
		t.Errorf("an unknown run: exit %d\n%s", code, errOut)
	}
	// the demo validated its three hosts in the same second: the id alone is not enough
	first := filepath.Base(ids[0])
	if code, _, errOut := runPidb(t, "report", "-o", page, "--dir", dir, first); code != 2 || !strings.Contains(errOut, "name one as HOST/"+first) {
		t.Errorf("an id that three hosts share: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := runPidb(t, "compare", "-o", page, "--dir", dir, "pi4/"+first, "pi3/"+first); code != 0 || !strings.Contains(out, "not like the base") {
		t.Errorf("compare HOST/ID: exit %d\n%s\n%s", code, out, errOut)
	}
}

func copyRuns(t *testing.T, from, to string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(from, "*", "*", "run.json"))
	if len(files) == 0 {
		t.Fatalf("no runs in %s", from)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(from, f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(to, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
