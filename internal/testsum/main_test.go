package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	const stream = `{"Action":"start","Package":"p/a"}
{"Action":"run","Package":"p/a","Test":"TestFast"}
{"Action":"output","Package":"p/a","Test":"TestFast","Output":"quiet on pass\n"}
{"Action":"pass","Package":"p/a","Test":"TestFast","Elapsed":0.5}
{"Action":"run","Package":"p/a","Test":"TestSlow"}
{"Action":"output","Package":"p/a","Test":"TestSlow/sub","Output":"sub said so\n"}
{"Action":"fail","Package":"p/a","Test":"TestSlow/sub","Elapsed":40}
{"Action":"output","Package":"p/a","Test":"TestSlow","Output":"--- FAIL: TestSlow (41.00s)\n"}
{"Action":"fail","Package":"p/a","Test":"TestSlow","Elapsed":41}
{"Action":"skip","Package":"p/a","Test":"TestLab","Elapsed":0}
{"Action":"fail","Package":"p/a","Elapsed":42}
{"Action":"start","Package":"p/b"}
{"Action":"pass","Package":"p/b","Test":"TestB","Elapsed":3}
{"Action":"pass","Package":"p/b","Elapsed":3.2}
{"Action":"start","Package":"p/c"}
`
	var out bytes.Buffer
	if run(strings.NewReader(stream), &out, 2, true) {
		t.Errorf("a failed test and a package without an end: passed")
	}
	got := out.String()
	for _, want := range []string{"sub said so\n", "--- FAIL: TestSlow (41.00s)\n", "ok  \tp/b\t3.200s\n",
		"the 2 slowest tests:\n       41s  p/a TestSlow\n        3s  p/b TestB\n",
		"tests: 2 passed, 1 skipped, 1 failed\n", "FAIL\tp/c\t(its go test ended without a result)\n", "failed: p/a TestSlow"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet on pass") {
		t.Errorf("a passing test's output printed:\n%s", got)
	}
	out.Reset()
	if !run(strings.NewReader(`{"Action":"start","Package":"p/b"}
{"Action":"pass","Package":"p/b","Test":"TestB","Elapsed":3}
{"Action":"pass","Package":"p/b","Elapsed":3.2}
`), &out, 10, true) {
		t.Errorf("all passed, and run says not:\n%s", out.String())
	}
}

// TestSummaryOnly: -summary prints the end alone, of a record of runs.
func TestSummaryOnly(t *testing.T) {
	var out bytes.Buffer
	ok := run(strings.NewReader(`{"Action":"start","Package":"p/b"}
{"Action":"output","Package":"p/b","Test":"TestB","Output":"said\n"}
{"Action":"fail","Package":"p/b","Test":"TestB","Elapsed":3}
{"Action":"fail","Package":"p/b","Elapsed":3.2}
`), &out, 10, false)
	if got := out.String(); ok || got != "\nthe 1 slowest tests:\n        3s  p/b TestB\n\ntests: 0 passed, 0 skipped, 1 failed\nfailed: p/b TestB\n" {
		t.Errorf("summary (%v):\n%q", ok, got)
	}
}

// TestWaitsApart: a test's time waiting for the lab's hosts, which labtest
// logs (in its subtests' output too), is shown beside its time.
func TestWaitsApart(t *testing.T) {
	var out bytes.Buffer
	run(strings.NewReader(`{"Action":"start","Package":"p/b"}
{"Action":"output","Package":"p/b","Test":"TestB","Output":"    lease.go:107: waited 12.5s for the lab's hosts: pi3, pi4\n"}
{"Action":"output","Package":"p/b","Test":"TestB/sub","Output":"    lease.go:230: waited 3s for the lab's hosts: pi4-14\n"}
{"Action":"pass","Package":"p/b","Test":"TestB/sub","Elapsed":4}
{"Action":"pass","Package":"p/b","Test":"TestB","Elapsed":30}
{"Action":"output","Package":"p/b","Test":"TestC","Output":"    waited 0.4s for the lab's hosts: zero\n"}
{"Action":"pass","Package":"p/b","Test":"TestC","Elapsed":2}
{"Action":"pass","Package":"p/b","Elapsed":32}
`), &out, 10, false)
	want := "\nthe 2 slowest tests:\n       30s  p/b TestB (15.5s of it waiting for the lab's hosts)\n        2s  p/b TestC\n"
	if got := out.String(); !strings.HasPrefix(got, want) {
		t.Errorf("got:\n%q\nwant it to begin:\n%q", got, want)
	}
}

// TestWhy: the end repeats a failed test's own lines (its subtests' too),
// the last ones only, and neither a helper's lines nor a passing test's.
func TestWhy(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"Action":"start","Package":"p/a"}` + "\n")
	line := func(test, out string) {
		b.WriteString(`{"Action":"output","Package":"p/a","Test":"` + test + `","Output":"` + out + `\n"}` + "\n")
	}
	line("TestOK", "    ok_test.go:3: fine")
	b.WriteString(`{"Action":"pass","Package":"p/a","Test":"TestOK","Elapsed":1}` + "\n")
	line("TestFleet/sub", "    fleet_test.go:9: the sub's reason")
	b.WriteString(`{"Action":"fail","Package":"p/a","Test":"TestFleet/sub","Elapsed":1}` + "\n")
	line("TestFleet", "    labtest.go:185: lab: pi5: removed")
	for i := range 14 {
		line("TestFleet", fmt.Sprintf("    fleet_test.go:%d: no", 10+i))
	}
	line("TestFleet", "    fleet_test.go:95: zero2: exit 0, want 1")
	line("TestFleet", "        its stderr:")
	line("TestFleet", "        ")
	line("TestFleet", "        zero2: the cause")
	for range 5 {
		line("TestFleet", "        more")
	}
	line("TestFleet", "    labtest.go:185: lab: zero2: removed")
	line("TestFleet", "        not the test's")
	b.WriteString(`{"Action":"fail","Package":"p/a","Test":"TestFleet","Elapsed":2}` + "\n")
	b.WriteString(`{"Action":"fail","Package":"p/a","Elapsed":3}` + "\n")
	var out bytes.Buffer
	if run(strings.NewReader(b.String()), &out, 0, false) {
		t.Fatal("a failed test: passed")
	}
	got := out.String()
	want := "\np/a TestFleet, its last lines of its own:\n  (4 more above)\n"
	if !strings.Contains(got, want) || !strings.HasSuffix(got, "  fleet_test.go:95: zero2: exit 0, want 1\n    its stderr:\n    zero2: the cause\n    more\n    more\nfailed: p/a TestFleet\n") {
		t.Errorf("no %q, or not the last line before the failures, in:\n%s", want, got)
	}
	for _, not := range []string{"labtest.go", "fine", "fleet_test.go:10:", "the sub's reason", "not the test's"} {
		if strings.Contains(got, not) {
			t.Errorf("%q repeated at the end:\n%s", not, got)
		}
	}
}
