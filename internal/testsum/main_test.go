package main

import (
	"bytes"
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
