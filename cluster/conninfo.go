package cluster

import (
	"fmt"
	"strings"
)

// ConnInfo is a libpq connection string of the keyword and value pairs,
// each value quoted by libpq's rules as pg_basebackup -R writes them: a
// value of letters, digits, '_' and '.' as it is, any other in single
// quotes with its quotes and backslashes escaped. No value can add a
// keyword of its own.
func ConnInfo(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(pairs[i])
		b.WriteByte('=')
		b.WriteString(connValue(pairs[i+1]))
	}
	return b.String()
}

func connValue(v string) string {
	plain := v != "" && strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.')
	}) < 0
	if plain {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// ParseConnInfo reads a libpq connection string (keyword = value pairs,
// values bare or in single quotes, backslash escaping the next
// character), as libpq does.
func ParseConnInfo(s string) (map[string]string, error) {
	out := map[string]string{}
	i := 0
	isSpace := func() bool { return strings.IndexByte(" \t\n\r\f\v", s[i]) >= 0 }
	space := func() {
		for i < len(s) && isSpace() {
			i++
		}
	}
	for {
		space()
		if i >= len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && !isSpace() {
			i++
		}
		key := s[start:i]
		space()
		if i >= len(s) || s[i] != '=' || key == "" {
			return nil, fmt.Errorf("connection string: %q is not followed by =", key)
		}
		i++
		space()
		var v strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			for {
				if i >= len(s) {
					return nil, fmt.Errorf("connection string: %s's quoted value has no end", key)
				}
				if s[i] == '\\' && i+1 < len(s) {
					v.WriteByte(s[i+1])
					i += 2
					continue
				}
				if s[i] == '\'' {
					i++
					break
				}
				v.WriteByte(s[i])
				i++
			}
		} else {
			for i < len(s) && !isSpace() {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				v.WriteByte(s[i])
				i++
			}
		}
		out[key] = v.String()
	}
}
