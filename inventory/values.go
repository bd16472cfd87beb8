package inventory

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// sizeUnits are binary, as PostgreSQL and MySQL read them: MB = MiB = 2^20.
var sizeUnits = map[string]uint64{
	"b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// durationUnits are the units PostgreSQL accepts in time settings.
var durationUnits = map[string]bool{"us": true, "ms": true, "s": true, "min": true, "h": true, "d": true}

var numberWithUnit = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*$`)

// ParseSize reads a size such as "512MB", "1G", "64kB" or "1048576" (bytes).
// Units are binary: MB, MiB and M all mean 2^20 bytes.
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseUint(t, 10, 64); err == nil {
		return n, nil
	}
	m := numberWithUnit.FindStringSubmatch(t)
	if m == nil {
		return 0, fmt.Errorf("bad size %q: want a whole number and a unit, like \"512MB\" or \"1GB\"", s)
	}
	mult, ok := sizeUnits[strings.ToLower(m[2])]
	if !ok {
		return 0, fmt.Errorf("bad size %q: unknown unit %q (use B, kB, MB, GB or TB; binary: 1MB = 1024kB)", s, m[2])
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q: want a whole number of %s", s, m[2])
	}
	if n > math.MaxUint64/mult {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return n * mult, nil
}

// ParseDuration reads a duration as Go writes it ("90s", "5m", "1h30m").
// Zero and negative durations are errors: every duration in the inventory is
// a length of time something runs or waits.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("bad duration %q: want a number and a unit, like \"90s\", \"5m\" or \"1h\"", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("bad duration %q: must be more than zero", s)
	}
	return d, nil
}

// checkSettingValue rejects a setting value that looks like a size or a time
// (a number followed by letters) but cannot be read as either. Everything
// else is left to the tuner, which knows each setting's type.
func checkSettingValue(v any) error {
	switch x := v.(type) {
	case string:
		m := numberWithUnit.FindStringSubmatch(x)
		if m == nil {
			return nil
		}
		if durationUnits[m[2]] {
			return nil
		}
		_, err := ParseSize(x)
		if err != nil && strings.Contains(err.Error(), "unknown unit") {
			return fmt.Errorf("bad size %q: unknown unit %q (sizes: B, kB, MB, GB, TB; times: ms, s, min, h, d)", x, m[2])
		}
		return err
	case int64, float64, bool:
		return nil
	default:
		return fmt.Errorf("want a string, number or boolean, not %s", tomlType(v))
	}
}

// tomlType names the TOML type of a decoded value, for error messages.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case []map[string]any:
		return "an array of tables"
	case map[string]any:
		return "a table"
	case time.Time:
		return "a date-time"
	default:
		return fmt.Sprintf("%T", v)
	}
}
