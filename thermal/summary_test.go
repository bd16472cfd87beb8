package thermal

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// TestSummarize: a host's readings summed up; what it could not tell is
// null, and a host never reached (no reading) knows nothing of
// under-voltage either: null, not true.
func TestSummarize(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	s := Summarize("pi4", []Reading{
		{At: at, TempC: 55, ArmHz: 1_500_000_000, ThrottledKnown: true, UnderVoltageKnown: true},
		{At: at.Add(time.Second), TempC: 81.5, ArmHz: 1_000_000_000, Throttled: Throttled | ThrottledSinceBoot, ThrottledKnown: true, UnderVoltageKnown: true},
	})
	if s.Samples != 2 || *s.MinTempC != 55 || *s.MaxTempC != 81.5 || *s.MinArmMHz != 1000 || s.UnderVoltageKnown == nil || !*s.UnderVoltageKnown ||
		s.Throttled == nil || !strings.Contains(strings.Join(s.Flags, ","), "throttled") {
		t.Errorf("pi4: %+v", s)
	}
	zero := Summarize("zero", []Reading{{At: at, TempC: 40, ArmHz: 1_000_000_000}})
	if zero.UnderVoltageKnown == nil || *zero.UnderVoltageKnown || zero.Throttled != nil {
		t.Errorf("a Zero, which cannot tell: %+v", zero)
	}
	none := Summarize("gone", nil)
	out, _ := json.Marshal(none)
	for _, k := range []string{`"under_voltage_known":null`, `"max_temp_c":null`, `"throttled":null`, `"samples":0`} {
		if !strings.Contains(string(out), k) {
			t.Errorf("a host never reached: %s, want %s", out, k)
		}
	}
	nan := Summarize("nan", []Reading{{At: at, TempC: math.NaN()}})
	if nan.MaxTempC != nil {
		t.Errorf("a reading with no temperature: %+v", nan)
	}
}
