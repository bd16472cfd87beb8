// Command testsum reads `go test -json` on its standard input and writes
// what a person running the whole suite wants to see: a line for each
// package as it ends (ok, FAIL, or no test files), the whole output of
// every test that failed and of a package that failed outside its tests,
// and at the end the counts and the slowest tests with their times. It
// exits 1 when anything failed, or when the stream ends with a package
// still running (a go test that died).
//
//	go test -json ./... | go run ./internal/testsum -slowest 10
//	go run ./internal/testsum -summary < record.json   # only the end
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// event is one line of test2json's output.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// summary is what testsum keeps of a run.
type summary struct {
	out      io.Writer
	live     io.Writer           // the packages' lines and the failures' output as they come
	output   map[string][]string // package/test -> its output, until it passes
	started  map[string]bool     // packages not ended yet
	timings  []timing
	waited   map[string]float64 // package/top test -> seconds it said it waited for the lab's hosts
	pass     int
	fail     int
	skip     int
	failures []string
	why      map[string][]string // failed top test -> its test files' own lines, for the end
}

type timing struct {
	name    string
	elapsed float64
	waited  float64 // of it, waiting for the lab's hosts
}

// waitLine is how labtest says a test waited for hosts another test had
// (a lease, a numbered host, a snapshot being taken): that time is in the
// test's own, and the slowest list shows it apart.
var waitLine = regexp.MustCompile(`waited ([0-9]+(?:\.[0-9]+)?)s for the lab's hosts`)

// ownLine is a line a test wrote from its own file (t.Errorf, t.Logf,
// t.Fatalf there): the end repeats a failed test's last ones, so that the
// tail of a long run says why, not only what, failed. A helper's lines
// (labtest.go's) are left to the whole output above.
var ownLine = regexp.MustCompile(`^\s+[A-Za-z0-9_]+_test\.go:[0-9]+: `)

// whyLines is how many of a failed test's own lines the end repeats, and
// contLines how many lines of a message of several it keeps.
const (
	whyLines  = 16
	contLines = 4
)

// top is the top-level test's key of e's test.
func top(e event) string {
	name, _, _ := strings.Cut(e.Test, "/")
	return e.Package + "\x00" + name
}

func newSummary(out io.Writer, live bool) *summary {
	s := &summary{out: out, live: io.Discard, output: map[string][]string{}, started: map[string]bool{}, waited: map[string]float64{}, why: map[string][]string{}}
	if live {
		s.live = out
	}
	return s
}

func key(e event) string { return e.Package + "\x00" + e.Test }

func (s *summary) add(e event) {
	k := key(e)
	switch e.Action {
	case "start":
		s.started[e.Package] = true
	case "output":
		s.output[k] = append(s.output[k], e.Output)
		if m := waitLine.FindStringSubmatch(e.Output); m != nil && e.Test != "" {
			secs, _ := strconv.ParseFloat(m[1], 64)
			s.waited[top(e)] += secs
		}
	case "pass", "fail", "skip":
		if e.Test == "" {
			s.endPackage(e)
			return
		}
		top := !strings.Contains(e.Test, "/")
		if top {
			s.timings = append(s.timings, timing{e.Package + " " + e.Test, e.Elapsed, s.waited[k]})
			delete(s.waited, k)
		}
		switch e.Action {
		case "pass":
			if top {
				s.pass++
			}
		case "skip":
			if top {
				s.skip++
			}
		case "fail":
			if top {
				s.fail++
				s.failures = append(s.failures, e.Package+" "+e.Test)
			}
			name := e.Package + " " + strings.SplitN(e.Test, "/", 2)[0]
			cont := -1 // the continuation lines kept of the line before, -1 after another's
			for _, l := range s.output[k] {
				switch {
				case ownLine.MatchString(l):
					s.why[name] = append(s.why[name], strings.TrimSpace(l))
					cont = 0
				case cont >= 0 && cont < contLines && strings.HasPrefix(l, "        ") && strings.TrimSpace(l) != "":
					// a message of several lines: go test indents the rest
					s.why[name] = append(s.why[name], "  "+strings.TrimSpace(l))
					cont++
				case strings.HasPrefix(l, "        "):
				default:
					cont = -1
				}
			}
			fmt.Fprint(s.live, strings.Join(s.output[k], ""))
		}
		delete(s.output, k)
	}
}

func (s *summary) endPackage(e event) {
	delete(s.started, e.Package)
	k := key(e)
	switch {
	case e.Action == "fail":
		// what the package printed outside its tests: a build error, a
		// panic, a timeout
		fmt.Fprint(s.live, strings.Join(s.output[k], ""))
		if len(s.output[k]) == 0 {
			fmt.Fprintf(s.live, "FAIL\t%s\n", e.Package)
		}
	case e.Action == "skip":
		fmt.Fprintf(s.live, "?   \t%s\t[no test files]\n", e.Package)
	default:
		fmt.Fprintf(s.live, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
	}
	if e.Action == "fail" && !contains(s.failures, e.Package) {
		s.failures = append(s.failures, e.Package)
	}
	for o := range s.output {
		if strings.HasPrefix(o, e.Package+"\x00") {
			delete(s.output, o)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x || strings.HasPrefix(y, x+" ") {
			return true
		}
	}
	return false
}

// end writes the counts and the slowest tests; false when anything failed.
func (s *summary) end(slowest int) bool {
	ok := len(s.failures) == 0 && len(s.started) == 0
	for p := range s.started {
		fmt.Fprintf(s.out, "FAIL\t%s\t(its go test ended without a result)\n", p)
	}
	sort.SliceStable(s.timings, func(i, j int) bool { return s.timings[i].elapsed > s.timings[j].elapsed })
	if n := min(slowest, len(s.timings)); n > 0 {
		fmt.Fprintf(s.out, "\nthe %d slowest tests:\n", n)
		for _, t := range s.timings[:n] {
			fmt.Fprintf(s.out, "  %8s  %s", seconds(t.elapsed), t.name)
			if t.waited >= 1 {
				fmt.Fprintf(s.out, " (%s of it waiting for the lab's hosts)", seconds(t.waited))
			}
			fmt.Fprintln(s.out)
		}
	}
	if slowest > 0 || !ok {
		fmt.Fprintf(s.out, "\ntests: %d passed, %d skipped, %d failed\n", s.pass, s.skip, s.fail)
	}
	if !ok {
		for _, f := range s.failures {
			lines := s.why[f]
			if len(lines) == 0 {
				continue
			}
			fmt.Fprintf(s.out, "\n%s, its last lines of its own:\n", f)
			if len(lines) > whyLines {
				fmt.Fprintf(s.out, "  (%d more above)\n", len(lines)-whyLines)
				lines = lines[len(lines)-whyLines:]
			}
			for _, l := range lines {
				fmt.Fprintf(s.out, "  %s\n", l)
			}
		}
		fmt.Fprintf(s.out, "failed: %s\n", strings.Join(s.failures, ", "))
	}
	return ok
}

// seconds rounds s seconds to a tenth, as a duration.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond)
}

// run reads the events from in; live writes each package's line and the
// output of what failed as they come, else only the end.
func run(in io.Reader, out io.Writer, slowest int, live bool) bool {
	s := newSummary(out, live)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// not test2json's: go's own message (a build that failed before
			// any test ran), printed as it is
			fmt.Fprintln(s.live, sc.Text())
			s.failures = append(s.failures, "(go test)")
			continue
		}
		s.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testsum: %v\n", err)
		return false
	}
	return s.end(slowest)
}

func main() {
	slowest := flag.Int("slowest", 10, "how many of the slowest tests to list")
	summary := flag.Bool("summary", false, "only the end: the slowest tests and the counts (of a record of several runs)")
	flag.Parse()
	if !run(os.Stdin, os.Stdout, *slowest, !*summary) {
		os.Exit(1)
	}
}
