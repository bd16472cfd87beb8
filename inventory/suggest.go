package inventory

import (
	"fmt"
	"slices"
	"strings"

	"pidb/units"
)

// suggest returns ` (did you mean "x"?)` when one of known is close to s,
// or is what s says in other words ([benchmark] for [bench]).
func suggest(s string, known []string) string {
	if best := closest(s, known); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// synonyms are the other words people write for the inventory's keys.
var synonyms = map[string]string{
	"benchmark": "bench", "benchmarks": "bench", "default": "defaults", "hosts": "host", "clusters": "cluster",
	"validation": "validate", "temperature": "thermal", "ip": "address", "host_name": "name", "hostname": "address",
}

// closest is the one of known that s names in other words (synonyms),
// else the nearest by spelling; "" for none.
func closest(s string, known []string) string {
	if w, ok := synonyms[strings.ToLower(s)]; ok && slices.Contains(known, w) {
		return w
	}
	return units.Closest(s, known)
}
