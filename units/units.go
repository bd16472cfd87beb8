// Package units reads the sizes people write ("512MB", binary, as the
// servers read them) and suggests the name they likely meant (a typo's
// nearest neighbour). The inventory and the tuner share it.
package units

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// sizeUnits are binary, as PostgreSQL and MySQL read them: MB = MiB = 2^20.
var sizeUnits = map[string]uint64{
	"b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

var numberWithUnit = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*$`)

// NumberWithUnit splits "512MB" into "512" and "MB"; ok is false for
// anything that is not a number followed by letters.
func NumberWithUnit(s string) (number, unit string, ok bool) {
	m := numberWithUnit.FindStringSubmatch(s)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// ParseSize reads a size such as "512MB", "1G", "64kB" or "1048576" (bytes).
// Units are binary: MB, MiB and M all mean 2^20 bytes.
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseUint(t, 10, 64); err == nil {
		return n, nil
	}
	num, unit, ok := NumberWithUnit(t)
	if !ok {
		return 0, fmt.Errorf("bad size %q: want a whole number and a unit, like \"512MB\" or \"1GB\"", s)
	}
	mult, ok := sizeUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("bad size %q: unknown unit %q (use B, kB, MB, GB or TB; binary: 1MB = 1024kB)", s, unit)
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q: want a whole number of %s", s, unit)
	}
	if n > math.MaxUint64/mult {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return n * mult, nil
}

// Closest returns the name in known nearest to s by edit distance, when it
// is near enough to be a likely typo; else "".
func Closest(s string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if d := editDistance(s, k); d < bestDist || (d == bestDist && best != "" && k < best) {
			best, bestDist = k, d
		}
	}
	if best == "" || bestDist > len(s)/2+1 {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
