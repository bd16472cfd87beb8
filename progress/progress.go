// Package progress shows what each host is doing while a command runs, on
// stderr. On a terminal it is one line per host that changes in place (the
// host, the time since it began, its current step, or for a workload its
// last interval), with notes printed above the lines and each host's result
// left on its line when it is done. Elsewhere (CI, a pipe, a log) the same
// events are plain lines, each with the time of day: every step, every
// note, a workload's status at most once per host every ten seconds, and
// the result. Quiet shows only failures and notes; Verbose adds the
// commands run on the hosts. What a host's work reports (steps, statuses,
// notes, commands, the lines of Writer) can hold a host's own text, so
// each is passed through Sanitize on its way in: a host cannot send the
// terminal escapes.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Reporter is where one host's work says how it goes.
type Reporter interface {
	// Step says what the host does now.
	Step(s string)
	// Status says how a long step goes (a workload's last interval, a
	// thermal reading): it replaces the line on a terminal, and comes at
	// most once every Options.StatusEvery in plain lines.
	Status(s string)
	// Note is something to keep: always printed, above the live lines.
	Note(s string)
	// Command is a command about to run on the host, shown with Verbose.
	Command(s string)
}

// Options choose how the view looks.
type Options struct {
	Live        bool          // one line per host that changes in place (stderr is a terminal)
	Quiet       bool          // only failures and notes
	Verbose     bool          // and the commands run on the hosts
	Color       bool          // results in colour (a terminal, without NO_COLOR)
	StatusEvery time.Duration // plain lines: a host's status at most this often; default 10s
	// Now is the clock, for tests; default time.Now.
	Now func() time.Time
}

// View is the progress of one command over its hosts.
type View struct {
	w    io.Writer
	opt  Options
	mu   sync.Mutex // plain lines, and the hosts' text
	bars *mpb.Progress
	// width is the longest host name so far, so the live lines align
	width int
}

// New makes a view that writes to w (stderr).
func New(w io.Writer, opt Options) *View {
	if opt.StatusEvery <= 0 {
		opt.StatusEvery = 10 * time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Quiet {
		opt.Live = false
	}
	return &View{w: w, opt: opt}
}

// Wait ends the live lines once every host is done; they stay on the
// terminal, and the next Host starts new ones below them. It returns at
// once for plain lines.
func (v *View) Wait() {
	v.mu.Lock()
	bars := v.bars
	v.mu.Unlock()
	if bars != nil {
		bars.Wait() // the last render, with the hosts' widths
	}
	v.mu.Lock()
	v.bars, v.width = nil, 0
	v.mu.Unlock()
}

// Writer is where a line that belongs to no host goes (a recorded host
// key): above the live lines, or as a plain line.
func (v *View) Writer() io.Writer { return lineWriter{v} }

type lineWriter struct{ v *View }

func (l lineWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		l.v.line(Sanitize(line))
	}
	return len(p), nil
}

// line prints one line: above the live view, or plain with the time. s
// is printed as it is: what came from a host was sanitized on the way in
// (Step, Status, Note, Command, Writer), and pidb's own colours are not.
func (v *View) line(s string) {
	v.mu.Lock()
	bars := v.bars
	if bars == nil {
		defer v.mu.Unlock()
		fmt.Fprintf(v.w, "%s %s\n", v.opt.Now().Format("15:04:05"), s)
		return
	}
	v.mu.Unlock()
	_, _ = bars.Write([]byte(s + "\n"))
}

// Host starts a host's line; every host of a run should be added before
// the first is done, so that the live lines keep their order.
func (v *View) Host(name string) *Host {
	name = Sanitize(name)
	h := &Host{v: v, name: name, start: v.opt.Now(), text: "waiting for its turn"}
	v.mu.Lock()
	v.width = max(v.width, len(name))
	if v.opt.Live && v.bars == nil {
		v.bars = mpb.New(mpb.WithOutput(v.w), mpb.WithRefreshRate(150*time.Millisecond), mpb.WithWidth(1))
	}
	bars := v.bars
	v.mu.Unlock()
	if bars != nil { // not under the lock: mpb renders the lines, which takes it
		h.bar = bars.New(0, mpb.NopStyle(), mpb.BarFillerTrim(),
			mpb.PrependDecorators(lineDecor{h: h}))
	}
	return h
}

// Host is one host's line.
type Host struct {
	v          *View
	name       string
	start      time.Time
	bar        *mpb.Bar
	text       string    // the step or status shown
	lastStatus time.Time // plain lines: when a status was last printed
	result     string    // set when done: "done: ..." or "FAILED at: ...", unpainted
	took       time.Duration
}

// lineDecor draws a host's live line for mpb, with its width on the
// screen: without the colours' escapes, which mpb would count as
// characters (and then cut the line, and strip its colours).
type lineDecor struct {
	decor.WC
	h *Host
}

// Decor is the line, cut to the terminal's width.
func (d lineDecor) Decor(st decor.Statistics) (string, int) { return d.h.render(st.AvailableWidth) }

// render is the host's live line and its width on the screen, cut to
// cols (the terminal's width; 0: uncut) so that it never wraps, which
// would scatter the lines as they are redrawn; a result is painted after
// the cut, so its colour stays.
func (h *Host) render(cols int) (string, int) {
	h.v.mu.Lock()
	defer h.v.mu.Unlock()
	took := h.took
	if h.result == "" {
		took = h.v.opt.Now().Sub(h.start)
	}
	head := fmt.Sprintf("%-*s  %5s  ", h.v.width, h.name, clock(took))
	text := h.text
	if h.result != "" {
		text = h.result
	}
	if cols > 0 {
		text = fit(text, cols-utf8.RuneCountInString(head))
	}
	width := utf8.RuneCountInString(head) + utf8.RuneCountInString(text)
	if h.result != "" {
		text = h.v.paintResult(text)
	}
	return head + text, width
}

// fit cuts s to n characters, the last of them an ellipsis when it cut.
func fit(s string, n int) string {
	r := []rune(s)
	switch {
	case len(r) <= n:
		return s
	case n <= 0:
		return ""
	}
	return string(r[:n-1]) + "…"
}

// paintResult paints a result's done (green) or FAILED (red), and the
// verdict after done.
func (v *View) paintResult(s string) string {
	switch {
	case strings.HasPrefix(s, "FAILED"):
		return v.paint(red, "FAILED") + s[len("FAILED"):]
	case strings.HasPrefix(s, "done: "):
		return v.paint(green, "done") + ": " + v.verdict(s[len("done: "):])
	case strings.HasPrefix(s, "done"):
		return v.paint(green, "done") + s[len("done"):]
	}
	return s
}

// clock is a duration as m:ss.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// Step says what the host does now.
func (h *Host) Step(s string) {
	s = Sanitize(s)
	h.v.mu.Lock()
	h.text = s
	h.v.mu.Unlock()
	if h.bar == nil && !h.v.opt.Quiet {
		h.v.line(h.name + ": " + s)
	}
}

// Status says how a long step goes; plain lines show it at most once per
// StatusEvery.
func (h *Host) Status(s string) {
	s = Sanitize(s)
	h.v.mu.Lock()
	h.text = s
	now := h.v.opt.Now()
	show := h.bar == nil && !h.v.opt.Quiet && now.Sub(h.lastStatus) >= h.v.opt.StatusEvery
	if show {
		h.lastStatus = now
	}
	h.v.mu.Unlock()
	if show {
		h.v.line(h.name + ": " + s)
	}
}

// Note prints something to keep, whatever the mode.
func (h *Host) Note(s string) { h.v.line(h.name + ": " + Sanitize(s)) }

// Command shows a command run on the host, with Verbose.
func (h *Host) Command(s string) {
	if h.v.opt.Verbose {
		h.v.line(h.name + ": $ " + Sanitize(s))
	}
}

// Done ends the host's line with its result: on a terminal the last
// step (the task's summary, or where it failed) after done or FAILED; in
// plain lines done or FAILED with the time, the summary being a line of
// its own already. The error itself is the command's to print.
func (h *Host) Done(err error) {
	h.v.mu.Lock()
	h.took = h.v.opt.Now().Sub(h.start)
	var plain string
	if err != nil {
		h.result = "FAILED at: " + h.text
		plain = h.v.paint(red, "FAILED") + fmt.Sprintf(" after %.1fs", h.took.Seconds())
	} else {
		h.result = "done: " + h.text
		plain = h.v.paint(green, "done") + fmt.Sprintf(" in %.1fs", h.took.Seconds())
	}
	h.v.mu.Unlock()
	switch {
	case h.bar != nil:
		h.bar.SetTotal(-1, true)
	case err != nil || !h.v.opt.Quiet:
		h.v.line(h.name + ": " + plain)
	}
}

// verdict paints a text that begins with a verdict: PASS green, WARN
// yellow, FAIL red.
func (v *View) verdict(s string) string {
	for word, code := range map[string]string{"PASS": green, "WARN": yellow, "FAIL": red} {
		if strings.HasPrefix(s, word) {
			return v.paint(code, word) + s[len(word):]
		}
	}
	return s
}

// colours, as ANSI SGR codes
const (
	red    = "31"
	green  = "32"
	yellow = "33"
)

func (v *View) paint(code, s string) string {
	if !v.opt.Color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Lines is a Reporter that hands every step, status and note, and no
// command, to f as one line: for a caller that wants the lines themselves.
// They come as the host's work gave them: f is to pass what it prints
// through Sanitize.
type Lines func(string)

// Step hands s to f.
func (f Lines) Step(s string) { f(s) }

// Status hands s to f.
func (f Lines) Status(s string) { f(s) }

// Note hands s to f.
func (f Lines) Note(s string) { f(s) }

// Command drops s.
func (f Lines) Command(string) {}
