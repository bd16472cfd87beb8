package progress

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"pidb/internal/termtest"
)

// clock is a fake time of day that tests move on by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 12, 1, 17, 4, 5, 0, time.UTC)} }

// TestPlainLines: off a terminal every step, note and result is a line
// with the time of day, and a host's status at most once per ten seconds
// however often it comes (a five-minute bench: 30 lines, not 300).
func TestPlainLines(t *testing.T) {
	c := newClock()
	var out bytes.Buffer
	v := New(&out, Options{Now: c.now})
	pi4, pi3 := v.Host("pi4"), v.Host("pi3")
	pi4.Step("gathering facts")
	pi3.Step("gathering facts")
	statuses := 0
	for i := 0; i < 300; i++ {
		pi4.Status("tps 100")
		c.add(time.Second)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasSuffix(line, "pi4: tps 100") {
			statuses++
		}
	}
	if statuses != 30 {
		t.Errorf("%d status lines in 300 s, want 30 (one per 10 s)", statuses)
	}
	pi3.Note("note: the password kept was not the server's")
	pi4.Command("systemctl restart postgresql") // not without Verbose
	pi4.Done(nil)
	pi3.Done(errors.New("no route to host"))
	v.Wait()
	got := out.String()
	for _, want := range []string{
		"17:04:05 pi4: gathering facts\n", "17:04:05 pi3: gathering facts\n",
		"17:09:05 pi3: note: the password kept was not the server's\n",
		"17:09:05 pi4: done in 300.0s\n", "17:09:05 pi3: FAILED after 300.0s\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "systemctl") || strings.Contains(got, "\x1b[") {
		t.Errorf("a command without Verbose, or colour without Color:\n%s", got)
	}
}

// TestQuietAndVerbose: Quiet leaves only failures and notes; Verbose adds
// the commands.
func TestQuietAndVerbose(t *testing.T) {
	c := newClock()
	var out bytes.Buffer
	v := New(&out, Options{Quiet: true, Now: c.now})
	a, b := v.Host("a"), v.Host("b")
	a.Step("installing")
	a.Status("tps 1")
	b.Note("note: kept")
	a.Done(nil)
	b.Done(errors.New("x"))
	if got := out.String(); got != "17:04:05 b: note: kept\n17:04:05 b: FAILED after 0.0s\n" {
		t.Errorf("quiet:\n%s", got)
	}
	out.Reset()
	v = New(&out, Options{Verbose: true, Color: true, Now: c.now})
	a = v.Host("a")
	a.Command("apt-get -q update")
	a.Done(errors.New("x"))
	if got := out.String(); got != "17:04:05 a: $ apt-get -q update\n17:04:05 a: \x1b[31mFAILED\x1b[0m after 0.0s\n" {
		t.Errorf("verbose, in colour: %q", got)
	}
}

// TestLiveLines: on a terminal (a pty) each host has one line that changes
// in place: the screen, once the view is done, holds one line per host,
// the names aligned, with its result, and a note above them; no step is
// left as a line of its own.
func TestLiveLines(t *testing.T) {
	tty, done := termtest.PTY(t, 40, 100)
	v := New(tty, Options{Live: true})
	hosts := []*Host{v.Host("pi4"), v.Host("pi3"), v.Host("zero")}
	for i := 0; i < 5; i++ {
		for _, h := range hosts {
			h.Status("tps " + strings.Repeat("9", i+1))
		}
		time.Sleep(200 * time.Millisecond) // a few refreshes
	}
	hosts[1].Note("note: something to keep")
	hosts[0].Step("PASS  447.3 TPS")
	hosts[0].Done(nil)
	hosts[1].Done(nil)
	hosts[2].Done(errors.New("gone"))
	v.Wait()
	raw := done()

	screen := termtest.Render(raw)
	want := []*regexp.Regexp{
		regexp.MustCompile(`^pi3: note: something to keep$`),
		regexp.MustCompile(`^pi4 {4}\d:\d\d  done: PASS  447\.3 TPS$`), // the last step: the task's summary
		regexp.MustCompile(`^pi3 {4}\d:\d\d  done: tps 99999$`),
		regexp.MustCompile(`^zero {3}\d:\d\d  FAILED at: tps 99999$`), // where it failed
	}
	if len(screen) != len(want) {
		t.Fatalf("the screen has %d lines, want %d:\n%s\n(raw %q)", len(screen), len(want), strings.Join(screen, "\n"), raw)
	}
	for i, w := range want {
		if !w.MatchString(screen[i]) {
			t.Errorf("line %d %q, want %s", i, screen[i], w)
		}
	}
	if !strings.Contains(raw, "tps 99999") {
		t.Errorf("the last status was never drawn: %q", raw)
	}
}

// TestLiveLinesFitTheTerminal: a line wider than the terminal is cut by
// pidb to the terminal's width, ending in an ellipsis, so that it never
// wraps (a wrapped line leaves stale rows behind each redraw: the cursor
// goes up one row per line, not per row); the verdict's colour survives
// the cut.
func TestLiveLinesFitTheTerminal(t *testing.T) {
	const cols = 40
	tty, done := termtest.PTY(t, 24, cols)
	v := New(tty, Options{Live: true, Color: true})
	pi4, pi3 := v.Host("pi4"), v.Host("pi3")
	for i := 0; i < 4; i++ {
		pi4.Status(fmt.Sprintf("tps 1234.%d  qps 23456.7  p95 12.3 ms  errors 0  52.1 C", i))
		pi3.Status("bench (oltp-read-only on MariaDB 10.11, 8 clients)")
		time.Sleep(200 * time.Millisecond) // a few redraws
	}
	pi4.Step("PASS  447.3 TPS, up to 46.3 C: no reasons to give")
	pi4.Done(nil)
	pi3.Done(errors.New("gone"))
	v.Wait()
	raw := done()

	screen := termtest.RenderCols(raw, cols)
	want := []*regexp.Regexp{
		regexp.MustCompile(`^pi4 {3}\d:\d\d  done: PASS  447\.3 TPS, up t…$`),
		regexp.MustCompile(`^pi3 {3}\d:\d\d  FAILED at: bench \(oltp-read…$`),
	}
	if len(screen) != len(want) {
		t.Fatalf("the screen has %d rows, want %d (a line wrapped?):\n%s\n(raw %q)", len(screen), len(want), strings.Join(screen, "\n"), raw)
	}
	for i, w := range want {
		if !w.MatchString(screen[i]) || utf8.RuneCountInString(screen[i]) != cols {
			t.Errorf("row %d %q (%d wide), want %s, %d wide", i, screen[i], utf8.RuneCountInString(screen[i]), w, cols)
		}
	}
	for _, painted := range []string{"\x1b[32mPASS\x1b[0m", "\x1b[31mFAILED\x1b[0m", "\x1b[32mdone\x1b[0m"} {
		if !strings.Contains(raw, painted) {
			t.Errorf("no %q in the output: the colour was lost in the cut", painted)
		}
	}
}

// TestFit: the cut counts characters, not bytes, and marks itself.
func TestFit(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"tps 100", 10, "tps 100"}, {"tps 100", 7, "tps 100"}, {"tps 100", 6, "tps 1…"},
		{"52.1 °C", 6, "52.1 …"}, {"anything", 0, ""}, {"anything", 1, "…"},
	} {
		if got := fit(c.s, c.n); got != c.want {
			t.Errorf("fit(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// hostile is what a hostile host can put in its error output, a fact or a
// setting's value: clear the screen, set the window's title (OSC, ended by
// BEL), go back to the line's start and write over it, a C1 CSI (U+009B,
// which some terminals obey as ESC [) and a byte that is not UTF-8.
const hostile = "model\x1b[2J\x1b]0;pwned\x07\rPi 5\u009b31m\xff"

// TestSanitize: control characters but newline and tab, DEL, the C1
// controls and bytes that are not UTF-8 become visible escapes; other
// text, UTF-8 included, is left as it was.
func TestSanitize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"tps 100  52.1 °C  …", "tps 100  52.1 °C  …"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{hostile, `model\x1b[2J\x1b]0;pwned\x07\x0dPi 5\u009b31m\xff`},
		{"\x00\x08\x7f\x1b", `\x00\x08\x7f\x1b`},
		{"é\u0080\u009f\u00a0", `é\u0080\u009f` + "\u00a0"},
		{"cut\xe2\x80", `cut\xe2\x80`}, // a UTF-8 sequence cut short
		{"", ""},
	} {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// noEscapes fails the test if any of a hostile host's controls reached
// the terminal's writer, and checks that they are shown escaped instead.
func noEscapes(t *testing.T, what, got string) {
	t.Helper()
	got = strings.ReplaceAll(got, "\r\n", "\n") // a pty's own: its newlines go out as CR LF
	for _, bad := range []string{"\x1b[2J", "\x1b]", "\x07", "\r", "\u009b", "\xff"} {
		if strings.Contains(got, bad) {
			t.Errorf("%s: %q reached the writer:\n%q", what, bad, got)
		}
	}
	if !strings.Contains(got, `model\x1b[2J\x1b]0;pwned\x07\x0dPi 5`) {
		t.Errorf("%s: the host's text is not shown escaped:\n%q", what, got)
	}
}

// TestHostTextSanitized: in plain lines, everything a host's work
// reports (a step, a status, a note, a command with Verbose, a line to
// Writer, and the step a failure is reported at) reaches the writer
// without its control characters, while pidb's own colours stay.
func TestHostTextSanitized(t *testing.T) {
	for _, report := range []struct {
		name string
		f    func(v *View, h *Host)
	}{
		{"step", func(_ *View, h *Host) { h.Step(hostile) }},
		{"status", func(_ *View, h *Host) { h.Status(hostile) }},
		{"note", func(_ *View, h *Host) { h.Note("reading failed: " + hostile) }},
		{"command", func(_ *View, h *Host) { h.Command("echo " + hostile) }},
		{"writer", func(v *View, _ *Host) { fmt.Fprintf(v.Writer(), "host key: %s\n", hostile) }},
	} {
		var out bytes.Buffer
		v := New(&out, Options{Verbose: true, Color: true, Now: newClock().now})
		h := v.Host("pi4")
		report.f(v, h)
		h.Done(errors.New("x"))
		v.Wait()
		noEscapes(t, report.name, out.String())
		if !strings.Contains(out.String(), "\x1b[31mFAILED\x1b[0m") {
			t.Errorf("%s: pidb's own colour was lost: %q", report.name, out.String())
		}
	}
}

// TestLiveHostTextSanitized: on a terminal too, a step, a note and a
// failure's line hold the host's text escaped; the live lines stay one
// per host.
func TestLiveHostTextSanitized(t *testing.T) {
	tty, done := termtest.PTY(t, 24, 200)
	v := New(tty, Options{Live: true, Color: true})
	pi4 := v.Host("pi4")
	pi4.Status(hostile)
	time.Sleep(200 * time.Millisecond) // a redraw or two
	pi4.Note("note: " + hostile)
	pi4.Step(hostile)
	pi4.Done(errors.New("x"))
	v.Wait()
	raw := done()
	noEscapes(t, "live", raw)
	if !strings.Contains(raw, "\x1b[31mFAILED\x1b[0m") {
		t.Errorf("pidb's own colour was lost: %q", raw)
	}
	if screen := termtest.Render(raw); len(screen) != 2 {
		t.Errorf("the screen has %d lines, want the note and pi4's:\n%s", len(screen), strings.Join(screen, "\n"))
	}
}
