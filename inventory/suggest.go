package inventory

import (
	"fmt"

	"pidb/units"
)

// suggest returns ` (did you mean "x"?)` when one of known is close to s.
func suggest(s string, known []string) string {
	if best := units.Closest(s, known); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}
