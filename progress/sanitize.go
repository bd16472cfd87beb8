package progress

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Sanitize makes text that came from a host safe to print on a terminal:
// every control character but newline and tab (C0, DEL and the C1
// controls U+0080 to U+009F, which some terminals obey as ESC [) and every
// byte that is not UTF-8 is written out as a visible escape, \x1b, \x0d,
// \u009b, \xff, so that a host's error output, a fact or a setting's
// value can neither move the cursor, rewrite a line, set the window's
// title nor put anything in the clipboard. Text without any comes back as
// it was. pidb's own colours are added after it, never passed through it.
func Sanitize(s string) string {
	i := unsafeAt(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeAt is the index of the first byte of s that Sanitize escapes, or -1.
func unsafeAt(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (r >= 0x80 && r <= 0x9f) {
			return i
		}
		i += n
	}
	return -1
}
