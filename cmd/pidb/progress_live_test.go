package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"pidb/internal/labtest"
	"pidb/internal/termtest"
)

// TestProgressOnTheLab: a three-host validate on a terminal (a pty) shows
// one line per host that changes in place and ends with the host's
// verdict, and the table on stdout; the same run into a pipe prints plain
// lines with the time of day, a few dozen per host, not one per interval.
// On a Pi 4, a Pi 3 and a Zero of its own (clones of provisioned ones).
func TestProgressOnTheLab(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4", "pi3", "zero")
	if code, _, errOut := provisionLab(t, "-i", inv.Path); code != 0 {
		t.Fatalf("provision: exit %d\n%s", code, errOut)
	}
	args := func(duration string) []string {
		return []string{"validate", "-i", inv.Path, "--duration", duration, "--warmup", "1s", "--scale", "1", "--clients", "2",
			"--idle-before", "1s", "--idle-after", "1s", "--thermal-interval", "1s", "--out", t.TempDir()}
	}
	hostLine := regexp.MustCompile(`^(pi4|pi3|zero) +\d:\d\d  done: (PASS|WARN)  [\d.]+ TPS`)

	t.Run("terminal", func(t *testing.T) {
		tty, done := termtest.PTY(t, 40, 120)
		var stdout bytes.Buffer
		cmd := pidbCommand(args("6s")...)
		cmd.Stdout, cmd.Stderr = &stdout, tty // pidb's stderr is the terminal
		code := exitOf(t, cmd.Run())
		raw := done()
		screen := termtest.Render(raw)
		var hosts, steps []string
		for _, l := range screen {
			switch {
			case hostLine.MatchString(l):
				hosts = append(hosts, l)
			case regexp.MustCompile(`^(pi4|pi3|zero): `).MatchString(l) && !strings.Contains(l, "thermal reading failed"):
				steps = append(steps, l) // a step left as a line of its own
			}
		}
		if code != 0 || len(hosts) != 3 || len(steps) != 0 || !strings.HasPrefix(stdout.String(), "HOST ") {
			t.Errorf("exit %d; %d live lines with a verdict (want 3), %d step lines (want 0); the screen:\n%s\nstdout:\n%s",
				code, len(hosts), len(steps), strings.Join(screen, "\n"), stdout.String())
		}
		if !strings.Contains(raw, "tps ") {
			t.Errorf("no workload status was drawn")
		}
	})
	t.Run("pipe", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		cmd := pidbCommand(args("12s")...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := exitOf(t, cmd.Run())
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		per, status := map[string]int{}, map[string]int{}
		stamped := regexp.MustCompile(`^\d\d:\d\d:\d\d (pi4|pi3|zero): `)
		for _, l := range lines {
			m := stamped.FindStringSubmatch(l)
			if m == nil {
				t.Errorf("a line without the time and the host: %q", l)
				continue
			}
			per[m[1]]++
			if strings.Contains(l, " tps ") {
				status[m[1]]++
			}
		}
		// twelve intervals of a second: a status line per 10 s, not twelve
		for _, h := range []string{"pi4", "pi3", "zero"} {
			if per[h] == 0 || per[h] > 30 || status[h] == 0 || status[h] > 2 {
				t.Errorf("%s: %d lines, %d of them the workload's status; want a few dozen at most, and one or two statuses:\n%s", h, per[h], status[h], stderr.String())
			}
		}
		if code != 0 {
			t.Errorf("exit %d\n%s", code, stderr.String())
		}
	})
}
