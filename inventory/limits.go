package inventory

import (
	"fmt"
	"strings"
)

// MaxSize is the largest inventory pidb reads, in bytes (256 KiB). An
// inventory of a thousand Pis is well under it (a host takes 60 to 200
// bytes); the TOML decoder's memory grows with the file, about 200 MB for
// a MiB of hosts.
const MaxSize = 256 << 10

// MaxDepth is how deep an inventory may nest: tables, arrays, inline
// tables and the parts of dotted keys inside one another, counted as
// nesting does (a key "a.b.c" is two levels, "[a.b]" two, "x = [[1]]"
// two). pidb's own format needs three ([[host.database]]). The TOML
// decoder copies the whole key path at every level of a file, so what a
// file of a few kilobytes costs it grows with the square of its depth:
// 2,500 nested inline tables, 10 KB, took seconds and hundreds of MB, and
// a MiB of keys 32 parts deep 950 MB.
const MaxDepth = 8

// checkLimits refuses, before it is decoded, an inventory larger than
// MaxSize or nested deeper than MaxDepth.
func checkLimits(name, src string) error {
	if len(src) > MaxSize {
		return tooBig(name, int64(len(src)))
	}
	if line := tooDeep(src, MaxDepth); line > 0 {
		return &Error{File: name, Line: line, Msg: fmt.Sprintf("nested more than %d levels deep (tables, arrays and dotted keys inside one another): pidb does not decode it; an inventory needs 3", MaxDepth)}
	}
	return nil
}

// tooBig is the error for an inventory larger than MaxSize; size < 0: how
// much larger is not known.
func tooBig(name string, size int64) error {
	of := ""
	if size >= 0 {
		of = fmt.Sprintf(" (%d bytes)", size)
	}
	return &Error{File: name, Msg: fmt.Sprintf("the inventory is larger than 256 KiB%s: pidb reads no more (an inventory of a thousand hosts takes well under it)", of)}
}

// tooDeep returns the line where src first nests deeper than limit, or 0
// (see nesting).
func tooDeep(src string, limit int) int {
	_, line := nesting(src, limit)
	return line
}

// nesting scans TOML source for how deep it nests, without decoding it:
// each '[' or '{' opens a level, ']' or '}' closes it, and each '.' of a
// key adds one while the key's value lasts (a '.' in a float or a date
// counts too, one at most, until the next ',' or line). Strings (basic,
// literal and their multi-line forms, with escapes) and comments count for
// nothing. It returns the deepest level seen and the line where the depth
// first went past limit (then it stops), or 0. A file it misreads is one
// the TOML decoder refuses before the place.
func nesting(src string, limit int) (deepest, line int) {
	var (
		opened = make([]int, 0, limit+1) // the base level outside each open bracket
		base   int                       // levels of the open brackets (and the keys that lead into them)
		dots   int                       // the dots of the current key (or float)
		// the keys under a table header ([a.b], [[a.b]]) start as deep
		// as its parts (a key "c" under [a.b] is a.b.c): parts counts the
		// header's being read, -1 outside one
		parts     = -1
		lineStart = true // nothing but blanks yet on this line
	)
	line = 1
	deeper := func(d int) bool {
		deepest = max(deepest, d)
		return d > limit
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		first := lineStart
		if c != ' ' && c != '\t' && c != '\r' {
			lineStart = false
		}
		switch c {
		case '\n':
			line++
			dots = 0
			lineStart = true
		case ',':
			dots = 0
		case '#':
			if end := strings.IndexByte(src[i:], '\n'); end >= 0 {
				i += end - 1 // the newline is counted above
			} else {
				i = len(src)
			}
		case '"', '\'':
			var lines int
			i, lines = skipString(src, i)
			line += lines
		case '[', '{':
			if c == '[' && first && len(opened) == 0 {
				// a table header: from the top, whatever table was before
				parts, base = 1, 0
			}
			opened = append(opened, base)
			base += dots + 1
			dots = 0
			if deeper(base) {
				return deepest, line
			}
		case ']', '}':
			if n := len(opened); n > 0 {
				base = opened[n-1]
				opened = opened[:n-1]
				if n == 1 && parts >= 0 {
					// the header's end: its keys start below its parts
					parts, base = -1, parts
				}
			}
			dots = 0
		case '.':
			dots++
			if parts >= 0 {
				parts++
			}
			if deeper(base + dots) {
				return deepest, line
			}
		}
	}
	return deepest, 0
}

// skipString returns the index of the last byte of the string that starts
// at src[i] (a quote), and the newlines inside it. A single-line string
// ends at the end of its line at the latest (the newline is not its), an
// unterminated multi-line one at the end of src.
func skipString(src string, i int) (end, lines int) {
	q := src[i]
	escapes := q == '"' // literal strings have none
	if strings.HasPrefix(src[i:], strings.Repeat(string(q), 3)) {
		for j := i + 3; j < len(src); j++ {
			switch src[j] {
			case '\n':
				lines++
			case '\\':
				if escapes && j+1 < len(src) {
					j++
					if src[j] == '\n' {
						lines++
					}
				}
			case q:
				if j+2 < len(src) && src[j+1] == q && src[j+2] == q {
					// up to two more quotes are the string's own: """a""""
					j += 2
					for k := 0; k < 2 && j+1 < len(src) && src[j+1] == q; k++ {
						j++
					}
					return j, lines
				}
			}
		}
		return len(src) - 1, lines
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\n':
			return j - 1, lines
		case '\\':
			if escapes && j+1 < len(src) && src[j+1] != '\n' {
				j++
			}
		case q:
			return j, lines
		}
	}
	return len(src) - 1, lines
}
