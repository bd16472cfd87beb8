// Package version compares dotted version numbers as servers print them.
package version

import (
	"strconv"
	"strings"
)

// Less reports whether a is an earlier version than b, comparing dotted
// parts as numbers ("8.0.9" < "8.0.30"); a missing part counts as 0, so
// "15" equals "15.0". Text after a part's digits is ignored.
func Less(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x = leadingInt(as[i])
		}
		if i < len(bs) {
			y = leadingInt(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func leadingInt(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	return n
}

// Valid reports whether s is a version as the tuner and the servers write
// it: one to four dotted numbers ("15", "10.11.6").
func Valid(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 6 {
			return false
		}
		for _, c := range p {
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}
