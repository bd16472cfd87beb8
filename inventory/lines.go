package inventory

import (
	"strconv"
	"strings"
)

// keyLines maps every key and table header of a TOML document to the line it
// is written on. The TOML library reports lines for syntax and type errors but
// keeps the lines of keys to itself, so this small scanner finds them in the
// source. Paths index arrays of tables: "host.1.settings.work_mem".
type keyLines struct {
	lines map[string]int
	order []string // paths in source order, tables and keys alike
}

// line returns the line of path, or of its nearest written ancestor, or 0.
func (k keyLines) line(path ...string) int {
	for n := len(path); n > 0; n-- {
		if l, ok := k.lines[strings.Join(path[:n], ".")]; ok {
			return l
		}
	}
	return 0
}

// scanKeyLines scans src. It assumes src already parsed as TOML, so it needs
// to understand only headers, keys, strings (to skip them) and brackets.
func scanKeyLines(src string) keyLines {
	k := keyLines{lines: map[string]int{}}
	counts := map[string]int{} // array-of-tables path (with parent indices) -> elements seen
	var table []string         // current table path, with indices
	add := func(path []string, line int) {
		p := strings.Join(path, ".")
		if _, ok := k.lines[p]; !ok {
			k.lines[p] = line
			k.order = append(k.order, p)
		}
	}
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		s := strings.TrimSpace(lines[i])
		if s == "" || s[0] == '#' {
			continue
		}
		if strings.HasPrefix(s, "[[") {
			name, _ := parseKey(s[2:])
			// resolve the parent (an earlier array element) for nested arrays
			path := resolveParent(name, counts)
			base := strings.Join(path, ".")
			n := counts[base]
			counts[base] = n + 1
			table = append(path, strconv.Itoa(n))
			add(path, lineNo)
			add(table, lineNo)
			continue
		}
		if s[0] == '[' {
			name, _ := parseKey(s[1:])
			table = resolveParent(name, counts)
			add(table, lineNo)
			continue
		}
		key, rest := parseKey(s)
		if len(key) == 0 {
			continue
		}
		full := append(append([]string{}, table...), key...)
		add(full, lineNo)
		// skip the value, which may span lines (multi-line strings, arrays)
		rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), "="))
		i = skipValue(lines, i, rest)
	}
	return k
}

// resolveParent turns a header's dotted name into a path with indices: each
// prefix that names an array of tables refers to its latest element.
func resolveParent(name []string, counts map[string]int) []string {
	var path []string
	for j, part := range name {
		path = append(path, part)
		if j == len(name)-1 {
			break
		}
		if n, ok := counts[strings.Join(path, ".")]; ok && n > 0 {
			path = append(path, strconv.Itoa(n-1))
		}
	}
	return path
}

// parseKey reads a dotted key (bare or quoted parts) from the start of s and
// returns its parts and what follows it.
func parseKey(s string) ([]string, string) {
	var parts []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return parts, s
		}
		var part string
		switch s[0] {
		case '"':
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return parts, ""
			}
			if u, err := strconv.Unquote(s[:end+1]); err == nil {
				part = u
			} else {
				part = s[1:end]
			}
			s = s[end+1:]
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return parts, ""
			}
			part = s[1 : end+1]
			s = s[end+2:]
		default:
			end := 0
			for end < len(s) && isBareKeyChar(s[end]) {
				end++
			}
			if end == 0 {
				return parts, s
			}
			part = s[:end]
			s = s[end:]
		}
		parts = append(parts, part)
		s = strings.TrimLeft(s, " \t")
		if s == "" || s[0] != '.' {
			return parts, s
		}
		s = s[1:]
	}
}

func isBareKeyChar(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// skipValue returns the index of the last line used by the value that starts
// with rest on line i.
func skipValue(lines []string, i int, rest string) int {
	depth := 0
	s := rest
	for {
		for j := 0; j < len(s); j++ {
			c := s[j]
			switch {
			case c == '#':
				j = len(s)
			case strings.HasPrefix(s[j:], `"""`) || strings.HasPrefix(s[j:], `'''`):
				delim := s[j : j+3]
				end := strings.Index(s[j+3:], delim)
				if end >= 0 {
					j += 3 + end + 2
					continue
				}
				// multi-line string: find the closing delimiter on a later line
				for i++; i < len(lines); i++ {
					if end := strings.Index(lines[i], delim); end >= 0 {
						s = lines[i][end+3:]
						j = -1
						break
					}
				}
				if i >= len(lines) {
					return len(lines) - 1
				}
			case c == '"':
				j++
				for j < len(s) && s[j] != '"' {
					if s[j] == '\\' {
						j++
					}
					j++
				}
			case c == '\'':
				end := strings.IndexByte(s[j+1:], '\'')
				if end < 0 {
					j = len(s)
				} else {
					j += end + 1
				}
			case c == '[' || c == '{':
				depth++
			case c == ']' || c == '}':
				depth--
			}
		}
		if depth <= 0 || i+1 >= len(lines) {
			return i
		}
		i++
		s = lines[i]
	}
}
