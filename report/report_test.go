package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"pidb/results"
)

var update = flag.Bool("update", false, "keep the browser test's screenshot as docs/report.png")

// testdata/demo holds the runs one `pidb demo --keep` saved on the lab,
// run.json only (the report reads nothing else), and one more validation
// of the Pi 4 with its fan, for the comparison of two runs of one state:
//
//	pi3, zero: validated with fans
//	pi4: validated with the fleet, then alone in a case (FAIL), then alone
//	     with its fan (PASS), twice
const demoDir = "testdata/demo"

// demoRuns are the recorded runs by what they were: "pi3", "zero", "pi4
// fleet", "pi4 case", "pi4 fan", "pi4 fan again".
func demoRuns(t *testing.T) map[string]results.Listed {
	t.Helper()
	l, err := results.List(demoDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]results.Listed{}
	var pi4 []results.Listed // newest first
	for _, x := range l {
		if x.Err != nil {
			t.Fatalf("%s: %v", x.Dir, x.Err)
		}
		if x.Run.Host == "pi4" {
			pi4 = append(pi4, x)
		} else {
			out[x.Run.Host] = x
		}
	}
	if len(pi4) != 4 || len(out) != 2 {
		t.Fatalf("testdata/demo: %d runs of pi4, %d other hosts; want 4 and 2", len(pi4), len(out))
	}
	out["pi4 fan again"], out["pi4 fan"], out["pi4 case"], out["pi4 fleet"] = pi4[0], pi4[1], pi4[2], pi4[3]
	return out
}

// demoReport is the report the demo writes: the newest run of each host,
// and the Pi 4 in its case against with its fan.
func demoReport(t *testing.T) *Report {
	t.Helper()
	d := demoRuns(t)
	rep, err := Build(Input{Runs: []results.Listed{d["pi3"], d["pi4 fan"], d["zero"]}, Compare: []results.Listed{d["pi4 case"], d["pi4 fan"]},
		Source: "testdata", Version: "test", Now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func pageOf(t *testing.T, rep *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// raw reads a run.json without package results, so the expected values do
// not pass through the code under test.
func raw(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	return v
}

// TestFleetTable: the fleet table has a row per host whose values are
// those of the host's run.json.
func TestFleetTable(t *testing.T) {
	d := demoRuns(t)
	page := pageOf(t, demoReport(t))
	for _, key := range []string{"pi3", "pi4 fan", "zero"} {
		m := raw(t, d[key].Dir)
		host := m["host"].(string)
		row := regexp.MustCompile(`(?s)<tr data-host="` + host + `">(.*?)</tr>`).FindStringSubmatch(page)
		if row == nil {
			t.Errorf("no fleet row for %s", host)
			continue
		}
		cell := func(col string) string {
			c := regexp.MustCompile(`data-col="` + col + `">([^<]*)<`).FindStringSubmatch(row[1])
			if c == nil {
				return ""
			}
			return c[1]
		}
		if want := fmt.Sprintf("%.1f", field(m, "summary", "tps").(float64)); cell("tps") != want {
			t.Errorf("%s: TPS %q, run.json says %s", host, cell("tps"), want)
		}
		if want := fmt.Sprintf("%.2f", field(m, "summary", "latency_ms", "p95").(float64)); cell("p95") != want {
			t.Errorf("%s: p95 %q, run.json says %s", host, cell("p95"), want)
		}
		if want := fmt.Sprintf("%.1f", field(m, "verdict", "max_temp_c").(float64)); cell("max_temp") != want {
			t.Errorf("%s: highest temperature %q, run.json says %s", host, cell("max_temp"), want)
		}
		if want := field(m, "verdict", "verdict").(string); cell("verdict") != want {
			t.Errorf("%s: verdict %q, run.json says %s", host, cell("verdict"), want)
		}
		if model := field(m, "facts", "model").(string); !strings.Contains(row[1], model) {
			t.Errorf("%s: the row has not the board %q", host, model)
		}
	}
}

// TestChartsHaveTheirSeries: every chart is on the page with a line per
// host (the fleet's), or its own series (a host's), drawn with paths.
func TestChartsHaveTheirSeries(t *testing.T) {
	rep := demoReport(t)
	page := pageOf(t, rep)
	hosts := []string{"pi3", "pi4", "zero"}
	want := map[string][]string{
		"throughput": hosts, "throughput-window": hosts, "temperature": hosts,
		"compare-throughput": {"pi4 20261201T", "pi4 20261201T"}, "compare-window": {"pi4 20261201T", "pi4 20261201T"}, "compare-temperature": {"pi4 20261201T", "pi4 20261201T"},
	}
	for _, h := range hosts {
		want["thermal-"+h] = []string{"temperature", "Arm clock"}
		want["latency-"+h] = []string{"p50", "p95", "p99"}
		want["histogram-"+h] = []string{"transactions"}
	}
	got := map[string]*Figure{}
	for _, f := range rep.Figures() {
		got[f.ID] = f
	}
	for id, series := range want {
		f := got[id]
		if f == nil {
			t.Errorf("no chart %s", id)
			continue
		}
		if len(f.Series) != len(series) {
			t.Errorf("chart %s: series %q, want %q", id, f.Series, series)
		}
		for i, s := range series {
			if i < len(f.Series) && !strings.HasPrefix(f.Series[i], s) {
				t.Errorf("chart %s: series %d is %q, want %q", id, i, f.Series[i], s)
			}
			if !bytes.Contains(f.SVG, []byte(">"+f.Series[min(i, len(f.Series)-1)])) {
				t.Errorf("chart %s: its legend has no %q", id, s)
			}
		}
		if n := bytes.Count(f.SVG, []byte("<path")); n < 10 {
			t.Errorf("chart %s: %d paths", id, n)
		}
		if !strings.Contains(page, `<figure id="chart-`+id+`"`) {
			t.Errorf("chart %s is not on the page", id)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d charts, want %d", len(got), len(want))
	}
	// self-contained: nothing fetched, no script
	for _, bad := range []string{"<script", "http://", "https://", "<link", "src="} {
		if strings.Contains(strings.ReplaceAll(page, "http://www.w3.org/", ""), bad) {
			t.Errorf("the page has %q", bad)
		}
	}
}

// TestThrottledSpansShaded: the Pi 4 in its case was throttled, and its
// thermal chart shades the span and says so in its legend; with its fan it
// was not.
func TestThrottledSpansShaded(t *testing.T) {
	d := demoRuns(t)
	for key, throttled := range map[string]bool{"pi4 case": true, "pi4 fan": false} {
		rep, err := Build(Input{Runs: []results.Listed{d[key]}, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		var thermal *Figure
		for _, f := range rep.Figures() {
			if f.ID == "thermal-pi4" {
				thermal = f
			}
		}
		if thermal == nil {
			t.Fatalf("%s: no thermal chart", key)
		}
		if got := bytes.Contains(thermal.SVG, []byte(">throttled<")); got != throttled {
			t.Errorf("%s: throttled span shaded %v, want %v", key, got, throttled)
		}
		if row := rep.Rows[0]; row.Throttled == nil || *row.Throttled != throttled {
			t.Errorf("%s: the row's throttled is %v, want %v", key, row.Throttled, throttled)
		}
	}
}

// TestSchema1StillReports: a run saved before schema 2 (no p50/p99 per
// interval, no histogram) reports, with what it has.
func TestSchema1StillReports(t *testing.T) {
	r, err := Open([]string{"../results/testdata/schema1-run.json"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(Input{Runs: r, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	h := rep.Hosts[0]
	if len(h.Notes) == 0 || !strings.Contains(strings.Join(h.Notes, " "), "older pidb") {
		t.Errorf("notes %q: want one that says the histogram is missing", h.Notes)
	}
	for _, f := range h.Figures {
		if strings.HasPrefix(f.ID, "histogram-") {
			t.Errorf("a histogram chart for a run without one")
		}
		if strings.HasPrefix(f.ID, "latency-") && strings.Join(f.Series, ",") != "p95" {
			t.Errorf("latency chart of a schema 1 run: %q, want p95 alone", f.Series)
		}
	}
	if !strings.Contains(pageOf(t, rep), `data-host="pi4"`) {
		t.Error("no fleet row")
	}
}

// TestCompareCaseAgainstFan: the recorded case and fan runs of the Pi 4,
// whose TPS and temperatures are in their run.json, give the change as a
// percentage, and it is far beyond the noise.
func TestCompareCaseAgainstFan(t *testing.T) {
	d := demoRuns(t)
	c, err := Compare([]results.Listed{d["pi4 case"], d["pi4 fan"]})
	if err != nil {
		t.Fatal(err)
	}
	// the runs' own figures (testdata/demo/pi4): in the case 800.28 TPS,
	// up to 82.776 C; with the fan 1,564.23 TPS, up to 59.101 C
	metric := func(name string) Change {
		for _, m := range c.Metrics {
			if m.Name == name {
				return m.Changes[0]
			}
		}
		t.Fatalf("no metric %s", name)
		return Change{}
	}
	tps := metric("TPS")
	if want := "+95.5%"; tps.Text != want || !tps.Significant || !tps.Better {
		t.Errorf("TPS 800.28 -> 1564.23: %+v, want %s, significant and better", tps, want)
	}
	temp := metric("highest temperature")
	if want := "-23.7 C"; !temp.Significant || !temp.Better || !strings.HasPrefix(temp.Text, want) {
		t.Errorf("temperature 82.776 -> 59.101: %+v, want %s..., significant and better", temp, want)
	}
	if len(c.Cautions) != 0 {
		t.Errorf("cautions %q for two runs of one workload on one host", c.Cautions)
	}
	header, rows := c.Table()
	if len(header) != 4 || rows[0][0] != "TPS" || rows[0][3] != tps.Text {
		t.Errorf("table %q %q", header, rows[0])
	}
}

// TestCompareSameState: two runs of the Pi 4 with its fan, one after the
// other, differ by less than their own noise: no change, in words.
func TestCompareSameState(t *testing.T) {
	d := demoRuns(t)
	c, err := Compare([]results.Listed{d["pi4 fan"], d["pi4 fan again"]})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Metrics {
		if m.Name != "TPS" && m.Name != "highest temperature" {
			continue
		}
		if ch := m.Changes[0]; ch.Significant || !strings.HasPrefix(ch.Text, "no change") {
			t.Errorf("%s: %+v, want no change", m.Name, ch)
		}
	}
}

// TestCompareEngines: runs of two engines compare the settings both have
// (none of the other engine's as "changed"), and describe each run's data
// as its workload sizes it, not as "scale 0, 1 tables of 10000 rows".
func TestCompareEngines(t *testing.T) {
	d := demoRuns(t)
	pg, my := d["pi4 fan"], d["pi3"] // tpcb on PostgreSQL, oltp-read-only on MariaDB
	shared := map[string]bool{}
	for _, a := range pg.Run.Settings {
		for _, b := range my.Run.Settings {
			if a.Name == b.Name {
				shared[a.Name] = true
			}
		}
	}
	c, err := Compare([]results.Listed{pg, my})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Settings) > len(shared) {
		t.Errorf("%d settings changed; the runs share %d", len(c.Settings), len(shared))
	}
	for _, s := range c.Settings {
		if !shared[s.Name] {
			t.Errorf("setting %s, which one engine has, compared as changed: %q", s.Name, s.Values)
		}
	}
	if len(c.Cautions) != 1 || !strings.Contains(c.Cautions[0], "the data (tpcb at scale "+strconv.Itoa(pg.Run.Workload.Scale)+") against (oltp-read-only: ") ||
		strings.Contains(c.Cautions[0], "scale 0") {
		t.Errorf("cautions %q", c.Cautions)
	}
}

// TestCompareWithItself: a run against itself is said to be one, not
// measured as "no change"; the temperature's noise is in degrees.
func TestCompareWithItself(t *testing.T) {
	d := demoRuns(t)
	c, err := Compare([]results.Listed{d["pi4 fan"], d["pi4 fan"]})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Cautions) != 1 || !strings.HasPrefix(c.Cautions[0], "Run 2 is the base itself (pi4/") {
		t.Errorf("cautions %q", c.Cautions)
	}
	c, _ = Compare([]results.Listed{d["pi4 fan"], d["pi4 fan again"]})
	for _, m := range c.Metrics {
		if m.Name == "highest temperature" && !regexp.MustCompile(`noise \(±[\d.]+ C\)$`).MatchString(m.Changes[0].Text) {
			t.Errorf("the temperature's noise: %q, want it in C", m.Changes[0].Text)
		}
	}
}

// TestCompareUnlike: runs of different workloads on different hosts say
// so before anything else.
func TestCompareUnlike(t *testing.T) {
	d := demoRuns(t)
	c, err := Compare([]results.Listed{d["pi4 fan"], d["pi3"]})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Cautions) != 1 || !strings.Contains(c.Cautions[0], "workload tpcb against oltp-read-only") || !strings.Contains(c.Cautions[0], "host pi4 against pi3") {
		t.Errorf("cautions %q", c.Cautions)
	}
	if _, err := Compare([]results.Listed{d["pi3"]}); err == nil {
		t.Error("a comparison of one run")
	}
	// the same host and workload, one run's logins with TLS
	tls := d["pi4 fan again"]
	tls.Run.Workload.TLS = true
	c, _ = Compare([]results.Listed{d["pi4 fan"], tls})
	if len(c.Cautions) != 1 || !strings.Contains(c.Cautions[0], "logins without TLS against with TLS") {
		t.Errorf("cautions %q for a run with TLS against one without", c.Cautions)
	}
	// tpcc in the standard mix against sysbench-tpcc's
	a, b := d["pi4 fan"], d["pi4 fan again"]
	a.Run.Workload.Name, b.Run.Workload.Name = "tpcc", "tpcc"
	a.Run.Workload.Mix, b.Run.Workload.Mix = "45:43:4:4:4", "10:10:1:1:1"
	c, _ = Compare([]results.Listed{a, b})
	if len(c.Cautions) != 1 || !strings.Contains(c.Cautions[0], "the mix 45:43:4:4:4 against 10:10:1:1:1") {
		t.Errorf("cautions %q for two mixes", c.Cautions)
	}
	// the sql workload: two texts of one script are other work, and the
	// rows and the runs table name the script
	a, b = d["pi4 fan"], d["pi4 fan again"]
	a.Run.Workload.Name, b.Run.Workload.Name = "sql", "sql"
	a.Run.Workload.Script = &results.File{Name: "app.sql", SHA256: "1111111122222222"}
	b.Run.Workload.Script = &results.File{Name: "app.sql", SHA256: "3333333344444444"}
	c, _ = Compare([]results.Listed{a, b})
	if len(c.Cautions) != 1 || !strings.Contains(c.Cautions[0], "the script app.sql (11111111) against app.sql (33333333)") {
		t.Errorf("cautions %q for two texts of a script", c.Cautions)
	}
	b.Run.Workload.Script = a.Run.Workload.Script
	if c, _ = Compare([]results.Listed{a, b}); len(c.Cautions) != 0 {
		t.Errorf("cautions %q for one script's runs", c.Cautions)
	}
	if row := Overview(a); row.Workload != "sql" || row.Script != "app.sql" || row.Cells()[3] != "sql app.sql" || len(Select([]Row{row}, Filter{Workload: "sql"})) != 1 {
		t.Errorf("a sql run's row %+v, cells %q", row, row.Cells())
	}
	// the demo's first fan run, beside the other two hosts, against one alone
	beside, alone := d["pi4 fan"], d["pi4 fan again"]
	two, none := 2, 0
	beside.Run.Alongside, alone.Run.Alongside = &two, &none
	c, _ = Compare([]results.Listed{beside, alone})
	if len(c.Cautions) != 1 || !strings.Contains(c.Cautions[0], "run beside up to 2 other hosts against run alone") {
		t.Errorf("cautions %q for a run beside others against one alone", c.Cautions)
	}
	// runs saved before pidb recorded it are not said to differ
	alone.Run.Alongside = nil
	if c, _ = Compare([]results.Listed{beside, alone}); len(c.Cautions) != 0 {
		t.Errorf("cautions %q where one run did not record it", c.Cautions)
	}
}

// TestRiseSaysNoCause: a run whose throughput rose says so, and names no
// cause it has no evidence for.
func TestRiseSaysNoCause(t *testing.T) {
	r := demoRuns(t)["pi4 fan"].Run
	for i := range r.Series {
		r.Series[i].TPS = float64(100 + 10*i) // rising all the way
	}
	words := strings.Join(Reading(r), " ")
	if !strings.Contains(words, "Throughput rose") || !strings.Contains(words, "had not reached a steady state") || strings.Contains(words, "cache") {
		t.Errorf("a rising run's reading: %s", words)
	}
}

// TestReading: the case run's reading says what its verdict and charts
// say: FAIL, the throughput fell as the CPU passed 80 C.
func TestReading(t *testing.T) {
	d := demoRuns(t)
	hot := strings.Join(Reading(d["pi4 case"].Run), " ")
	for _, want := range []string{"FAIL:", "Throughput fell", "as the CPU passed 80 C", "past the 80 C"} {
		if !strings.Contains(hot, want) {
			t.Errorf("the case run's reading has no %q:\n%s", want, hot)
		}
	}
	cool := strings.Join(Reading(d["pi4 fan"].Run), " ")
	for _, want := range []string{"PASS: every check passed.", "The CPU peaked at"} {
		if !strings.Contains(cool, want) {
			t.Errorf("the fan run's reading has no %q:\n%s", want, cool)
		}
	}
}

// TestRunsListing: `pidb runs`'s rows, newest first, with a broken folder
// and one from a newer pidb listed as such; the filters.
func TestRunsListing(t *testing.T) {
	dir := t.TempDir()
	d := demoRuns(t)
	for _, l := range d {
		to := filepath.Join(dir, l.Run.Host, filepath.Base(l.Dir))
		os.MkdirAll(to, 0o755)
		data, _ := os.ReadFile(filepath.Join(l.Dir, "run.json"))
		os.WriteFile(filepath.Join(to, "run.json"), data, 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "pi4", "20991231T000000Z-broken"), 0o755)
	os.WriteFile(filepath.Join(dir, "pi4", "20991231T000000Z-broken", "run.json"), []byte("{not json"), 0o644)
	os.MkdirAll(filepath.Join(dir, "pi3", "20991230T000000Z-future"), 0o755)
	os.WriteFile(filepath.Join(dir, "pi3", "20991230T000000Z-future", "run.json"), []byte(`{"schema": 99}`), 0o644)
	l, err := results.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	for _, x := range l {
		rows = append(rows, Overview(x))
	}
	if len(rows) != 8 || rows[0].Error == "" || rows[1].Error == "" || !strings.Contains(rows[1].Error, "schema 99") {
		t.Fatalf("%d rows; first %+v, second %+v", len(rows), rows[0], rows[1])
	}
	if c := rows[0].Cells(); len(c) != len(RowHeader) || c[len(c)-1] != "UNREADABLE" || c[1] != "pi4" {
		t.Errorf("broken run's cells %q", c)
	}
	if c := rows[2].Cells(); len(c) != len(RowHeader) || c[2] != "validate" || c[len(c)-1] != "PASS" {
		t.Errorf("newest readable run's cells %q", c)
	}
	pi4 := Select(rows, Filter{Host: "pi4"})
	if len(pi4) != 5 {
		t.Errorf("--host pi4: %d rows, want 4 runs and the broken one", len(pi4))
	}
	if got := Select(rows, Filter{Workload: "oltp-read-only"}); len(got) != 1 || got[0].Host != "pi3" {
		t.Errorf("--workload oltp-read-only: %+v", got)
	}
	if got := Select(rows, Filter{Host: "pi4", Workload: "tpcb", Last: 2}); len(got) != 2 || got[0].RunID != filepath.Base(d["pi4 fan again"].Dir) {
		t.Errorf("--host pi4 --workload tpcb --last 2: %+v", got)
	}
}

// TestPNGs: --png writes every chart as a PNG that decodes.
func TestPNGs(t *testing.T) {
	rep := demoReport(t)
	dir := t.TempDir()
	files, err := rep.WritePNGs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(rep.Figures()) {
		t.Errorf("%d PNGs for %d charts", len(files), len(rep.Figures()))
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil || img.Bounds().Dx() < 600 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestNoiseWindows: the noise is read from the steps between the 10-second
// means of the measured time, the last point (a moment past the 60 s) in
// the last window. Worked out from the run.json files apart from this
// code: the Pi 4's fleet run's six means step by 27.9, 3.9, 21.9, 16.2
// and 26.7 TPS, a median of 21.9 and 6.31% of its 363 TPS; the case run
// throttles after its first window (1300, then about 700 TPS), yet its
// steps' median is 22.7, 2.92% (their spread said 29.5%, which made a
// change of +50% none).
func TestNoiseWindows(t *testing.T) {
	d := demoRuns(t)
	tps := func(iv results.Interval) float64 { return iv.TPS }
	if got := seriesNoise(d["pi4 case"].Run, tps); got < 2.87 || got > 2.97 {
		t.Errorf("case run's noise %.2f%%, want 2.92%%", got)
	}
	got := seriesNoise(d["pi4 fleet"].Run, tps)
	if got < 6.26 || got > 6.36 {
		t.Errorf("fleet run's noise %.2f%%, want 6.31%%", got)
	}
}

// TestOpsChart: a run of several kinds of transaction (tpcc's) gets a
// chart of each kind's throughput, the most frequent first, with a line
// per kind in its legend; a run of one kind gets none.
func TestOpsChart(t *testing.T) {
	d := demoRuns(t)
	l := d["pi3"]
	run := l.Run
	run.Workload.Name = "tpcc"
	run.Series = append([]results.Interval(nil), run.Series...)
	for i := range run.Series {
		tps := run.Series[i].TPS
		run.Series[i].Ops = map[string]float64{"new_order": tps * 0.45, "payment": tps * 0.43, "order_status": tps * 0.04, "delivery": tps * 0.05, "stock_level": tps * 0.03}
	}
	run.Summary.Extra = map[string]float64{"tpmc": 3608.4}
	l.Run = run
	rep, err := Build(Input{Runs: []results.Listed{l, d["zero"]}, Source: "testdata", Version: "test", Now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var ops []*Figure
	for _, f := range rep.Figures() {
		if strings.HasPrefix(f.ID, "ops-") {
			ops = append(ops, f)
		}
	}
	if len(ops) != 1 || ops[0].ID != "ops-pi3" {
		t.Fatalf("ops charts: %d, want pi3's alone", len(ops))
	}
	if got := strings.Join(ops[0].Series, ","); got != "new_order,payment,delivery,order_status,stock_level" {
		t.Errorf("series %s, want the most frequent first", got)
	}
	for _, s := range ops[0].Series {
		if !bytes.Contains(ops[0].SVG, []byte(">"+s)) {
			t.Errorf("the legend has no %s", s)
		}
	}
	page := pageOf(t, rep)
	if !strings.Contains(page, "throughput by transaction type") {
		t.Error("the chart is not on the page")
	}
	if !strings.Contains(page, `<td data-col="workload">tpcc, 3608 tpmC</td>`) || strings.Count(page, "tpmC</td>") != 1 {
		t.Error("the fleet table does not give pi3's tpmC, or gives one to zero")
	}
	if Overview(l).TpmC != 3608.4 {
		t.Errorf("the row's tpmC: %v", Overview(l).TpmC)
	}
}

// TestLagChart: a cluster's primary measured under writes (pi3 here) has
// a chart of its replicas' lag, a line per replica; the other runs have
// none.
func TestLagChart(t *testing.T) {
	d := demoRuns(t)
	l := d["pi3"]
	run := l.Run
	u := func(x uint64) *uint64 { return &x }
	f := func(x float64) *float64 { return &x }
	run.Replication = []results.Lag{
		{AtS: 0, Host: "pi4", Bytes: u(2048), Seconds: f(0.01)}, {AtS: 0, Host: "zero"},
		{AtS: 5, Host: "pi4", Bytes: u(0), Seconds: f(0)}, {AtS: 5, Host: "zero", Bytes: u(40960), Seconds: f(0.2)},
	}
	l.Run = run
	rep, err := Build(Input{Runs: []results.Listed{l, d["zero"]}, Source: "testdata", Version: "test", Now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var lags []*Figure
	for _, fg := range rep.Figures() {
		if strings.HasPrefix(fg.ID, "lag-") {
			lags = append(lags, fg)
		}
	}
	if len(lags) != 1 || lags[0].ID != "lag-pi3" || strings.Join(lags[0].Series, ",") != "pi4,zero" {
		t.Fatalf("lag charts: %d, want pi3's alone with pi4 and zero", len(lags))
	}
	for _, s := range lags[0].Series {
		if !bytes.Contains(lags[0].SVG, []byte(">"+s)) {
			t.Errorf("the legend has no %s", s)
		}
	}
	if !strings.Contains(pageOf(t, rep), "the replicas&#39; lag") {
		t.Error("the chart is not on the page")
	}
}

// TestSimulatedBoards: a run on a board of pidb's lab is marked so in the
// fleet table, with its CPU speed, and the page says what a simulated
// board's figures are worth; runs on real boards are not marked.
func TestSimulatedBoards(t *testing.T) {
	d := demoRuns(t)
	if page := pageOf(t, demoReport(t)); strings.Contains(page, "simulated") {
		t.Errorf("runs with no simulated fact are marked simulated")
	}
	// the zero's run, as the lab at board speed records it
	m := raw(t, d["zero"].Dir)
	m["facts"].(map[string]any)["simulated"] = "board"
	dir := filepath.Join(t.TempDir(), "zero", d["zero"].Run.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "run.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := results.List(filepath.Dir(filepath.Dir(dir)))
	if err != nil || len(l) != 1 || l[0].Err != nil {
		t.Fatalf("the edited run: %v %v", l, err)
	}
	rep, err := Build(Input{Runs: []results.Listed{d["pi3"], l[0]}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	page := pageOf(t, rep)
	board := func(host string) string {
		c := regexp.MustCompile(`(?s)<tr data-host="` + host + `">.*?data-col="board">(.*?)</td>`).FindStringSubmatch(page)
		if c == nil {
			return ""
		}
		return c[1]
	}
	if b := board("zero"); !strings.Contains(b, "Raspberry Pi Zero W") || !strings.Contains(b, "(simulated, board speed)") {
		t.Errorf("zero's board cell: %q", b)
	}
	if b := board("pi3"); b == "" || strings.Contains(b, "simulated") {
		t.Errorf("pi3's board cell: %q", b)
	}
	if !strings.Contains(page, `id="simulated"`) {
		t.Errorf("the page does not say what a simulated board's figures are")
	}
	// each lab host has a card of its own, limited at board speed
	if strings.Contains(page, "not a card") || !strings.Contains(page, "Each has a card of its own") {
		t.Errorf("the note on the lab's storage says what it was before the lab's cards")
	}
}

// TestOneHostsRuns: a page of one host's two runs says so, gives each run
// its own section, reached from the navigation and the fleet table, and
// labels each by its id.
func TestOneHostsRuns(t *testing.T) {
	d := demoRuns(t)
	two := []results.Listed{d["pi4 case"], d["pi4 fan"]}
	rep, err := Build(Input{Runs: two, Compare: two, Now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	page := pageOf(t, rep)
	if !strings.Contains(page, `<p class="meta">2 runs of 1 host`) {
		t.Errorf("the page's header does not say 2 runs of 1 host")
	}
	for _, l := range two {
		id := "run-pi4-" + l.Run.ID
		if strings.Count(page, `<section id="`+id+`">`) != 1 || strings.Count(page, `href="#`+id+`"`) != 2 {
			t.Errorf("run %s: %d sections, %d links (the navigation's and the fleet row's); want 1 and 2", l.Run.ID,
				strings.Count(page, `<section id="`+id+`">`), strings.Count(page, `href="#`+id+`"`))
		}
		if !strings.Contains(page, "<h2>pi4 "+l.Run.ID) {
			t.Errorf("run %s's section is not labelled by its id", l.Run.ID)
		}
	}
	if strings.Contains(page, `id="unlike"`) {
		t.Errorf("two runs of one workload are said to be unlike")
	}
}

// TestUnlikeFleet: a fleet of unlike runs (tpcb on PostgreSQL beside
// oltp-read-only on MariaDB) says so beside its charts, and the table has
// the workload and engine before the numbers.
func TestUnlikeFleet(t *testing.T) {
	page := pageOf(t, demoReport(t))
	c := regexp.MustCompile(`<p class="caution" id="unlike">([^<]*)</p>`).FindStringSubmatch(page)
	if c == nil || !strings.Contains(c[1], "tpcb on postgres (pi4, zero)") || !strings.Contains(c[1], "oltp-read-only on mariadb (pi3)") {
		t.Errorf("the fleet's caution: %q", c)
	}
	head := regexp.MustCompile(`<thead><tr><th>host</th><th>verdict</th><th>workload</th><th>engine</th><th>TPS</th>`)
	if !head.MatchString(page) {
		t.Errorf("the fleet table does not have the workload and the engine before the numbers")
	}
}

// TestClusterChart: the runs of a cluster measured as one are stacked, a
// layer per host on the interval's grid (their clocks a moment apart), the
// top line the cluster's queries per second; a run of the cluster at
// another time, or of no cluster, is left out; one run alone draws none.
func TestClusterChart(t *testing.T) {
	at := time.Date(2026, 12, 5, 17, 38, 0, 0, time.UTC)
	run := func(host string, started time.Time, cluster string, ts []float64, qps []float64) labelled {
		r := results.Run{Host: host, Started: started, Cluster: cluster, Workload: results.Workload{Name: "quiz"}}
		for i := range ts {
			r.Series = append(r.Series, results.Interval{T: ts[i], QPS: qps[i]})
		}
		return labelled{run: r, label: host}
	}
	runs := []labelled{
		run("pi3-1", at, "shop", []float64{-0.998, 0.002, 1.002, 2.002}, []float64{100, 3800, 3900, 4000}),
		run("pi3-2", at.Add(time.Second), "shop", []float64{-0.999, 0.001, 1.001}, []float64{200, 6200, 6100}),
		run("pi3", at.Add(2*time.Hour), "shop", []float64{0, 1}, []float64{9, 9}), // another time's
		run("pi4", at, "", []float64{0, 1}, []float64{7, 7}),                      // on its own
		run("zero", at, "quiz", []float64{0, 1}, []float64{5, 5}),                 // its cluster's only run here
	}
	fs := clusterFigures(runs)
	if len(fs) != 1 || fs[0].ID != "cluster-shop" || strings.Join(fs[0].Series, ",") != "pi3-1,pi3-2" {
		t.Fatalf("cluster charts: %+v", fs)
	}
	pn := fs[0].panels[0]
	top := pn.lines[1]
	// the intervals both have: -1, 0, 1 (pi3-2 has no 2)
	want := []struct{ x, y float64 }{{-1, 300}, {0, 10000}, {1, 10000}}
	if len(top.xy) != len(want) || len(pn.lines[0].below) != len(want) {
		t.Fatalf("the top line: %v", top.xy)
	}
	for i, w := range want {
		if math.Abs(top.xy[i].X-w.x) > 1e-9 || top.xy[i].Y != w.y || top.below[i].Y != pn.lines[0].xy[i].Y {
			t.Errorf("point %d: %v over %v, want (%v, %v) over pi3-1's", i, top.xy[i], top.below[i], w.x, w.y)
		}
	}
	if pn.lines[0].xy[1].Y != 3800 || pn.lines[0].below[1].Y != 0 {
		t.Errorf("the first layer: %v over %v", pn.lines[0].xy, pn.lines[0].below)
	}
	if err := fs[0].render(); err != nil || !bytes.Contains(fs[0].SVG, []byte(">pi3-2")) {
		t.Errorf("drawn: %v", err)
	}
}
