// Package termtest is for tests of what pidb shows on a terminal: it plays
// the bytes written to a pty back onto a screen, as the terminal would
// show them.
package termtest

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creack/pty"
)

// Render plays terminal output back onto a screen, with the cursor moves
// that live progress lines use (ESC [ n A: up; ESC [ n G: to a column;
// ESC [ J and ESC [ K: clear; other sequences, colours among them, are
// dropped), and returns the screen's non-empty lines.
func Render(s string) []string { return RenderCols(s, 0) }

// RenderCols is Render on a screen cols wide, which wraps a longer line
// onto the next row as a terminal does (0: no wrapping).
func RenderCols(s string, cols int) []string {
	var screen []string
	row, col := 0, 0
	put := func(r rune) {
		if cols > 0 && col >= cols {
			row, col = row+1, 0
		}
		for len(screen) <= row {
			screen = append(screen, "")
		}
		line := []rune(screen[row])
		for len(line) < col {
			line = append(line, ' ')
		}
		if col < len(line) {
			line[col] = r
		} else {
			line = append(line, r)
		}
		screen[row] = string(line)
		col++
	}
	csi := regexp.MustCompile(`^\x1b\[([0-9;?]*)([A-Za-z])`)
	for i := 0; i < len(s); {
		if m := csi.FindStringSubmatch(s[i:]); m != nil {
			n := 1
			if m[1] != "" && !strings.ContainsAny(m[1], ";?") {
				n = atoi(m[1])
			}
			switch m[2] {
			case "A":
				row = max(0, row-n)
			case "J": // clear to the end of the screen
				if row < len(screen) {
					screen[row] = truncate(screen[row], col)
					screen = screen[:row+1]
				}
			case "K":
				if row < len(screen) {
					screen[row] = truncate(screen[row], col)
				}
			case "G":
				col = n - 1
			}
			i += len(m[0])
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\r':
			col = 0
		case '\n':
			row, col = row+1, 0
		default:
			put(r)
		}
		i += size
	}
	var out []string
	for _, l := range screen {
		if l = strings.TrimRight(l, " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func truncate(s string, n int) string {
	r := []rune(s)
	if n < len(r) {
		return string(r[:n])
	}
	return s
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// PTY opens a terminal of rows x cols for a test to write to, and returns
// it with done, which closes it and returns every byte written to it. A
// machine without ptys skips the test.
func PTY(t testing.TB, rows, cols uint16) (tty *os.File, done func() string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := pty.Setsize(tty, &pty.Winsize{Rows: rows, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&raw, ptmx); close(copied) }()
	return tty, func() string {
		tty.Close()
		<-copied
		return raw.String()
	}
}
