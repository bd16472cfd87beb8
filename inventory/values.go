package inventory

import (
	"fmt"
	"strings"
	"time"

	"pidb/units"
)

// durationUnits are the units PostgreSQL accepts in time settings.
var durationUnits = map[string]bool{"us": true, "ms": true, "s": true, "min": true, "h": true, "d": true}

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
		_, unit, ok := units.NumberWithUnit(x)
		if !ok || durationUnits[unit] {
			return nil
		}
		_, err := units.ParseSize(x)
		if err != nil && strings.Contains(err.Error(), "unknown unit") {
			return fmt.Errorf("bad size %q: unknown unit %q (sizes: B, kB, MB, GB, TB; times: ms, s, min, h, d)", x, unit)
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
