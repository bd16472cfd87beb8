package thermal

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// JSONReading is one reading as `pidb thermal --json` prints it: what the
// host could not tell is null.
type JSONReading struct {
	At        time.Time `json:"at"`
	TempC     *float64  `json:"temp_c"`
	ArmMHz    *float64  `json:"arm_mhz"`
	Throttled *string   `json:"throttled"`
	Flags     []string  `json:"flags"`
}

// Summary is one host's readings as `pidb thermal --json` prints them.
type Summary struct {
	Host              string        `json:"host"`
	Samples           int           `json:"samples"`
	MinTempC          *float64      `json:"min_temp_c"`
	MaxTempC          *float64      `json:"max_temp_c"`
	MinArmMHz         *float64      `json:"min_arm_mhz"`
	Throttled         *string       `json:"throttled"` // every get_throttled value seen, or'ed
	Flags             []string      `json:"flags"`
	UnderVoltageKnown *bool         `json:"under_voltage_known"` // null: no reading (the host was not reached)
	Readings          []JSONReading `json:"readings"`
	Error             string        `json:"error,omitempty"`
}

// Summarize makes a host's summary from its readings.
func Summarize(host string, rs []Reading) Summary {
	j := Summary{Host: host, Samples: len(rs), Flags: []string{}, Readings: []JSONReading{}}
	uvKnown := len(rs) > 0
	var seen Flags
	known := false
	for _, r := range rs {
		rj := JSONReading{At: r.At, Flags: []string{}}
		if !math.IsNaN(r.TempC) {
			t := r.TempC
			rj.TempC = &t
			if j.MinTempC == nil || t < *j.MinTempC {
				j.MinTempC = &t
			}
			if j.MaxTempC == nil || t > *j.MaxTempC {
				j.MaxTempC = &t
			}
		}
		if r.ArmHz > 0 {
			mhz := float64(r.ArmHz) / 1e6
			rj.ArmMHz = &mhz
			if j.MinArmMHz == nil || mhz < *j.MinArmMHz {
				j.MinArmMHz = &mhz
			}
		}
		if r.ThrottledKnown {
			s := r.Throttled.String()
			rj.Throttled, rj.Flags = &s, r.Throttled.Names()
			seen |= r.Throttled
			known = true
		}
		uvKnown = uvKnown && r.UnderVoltageKnown
		j.Readings = append(j.Readings, rj)
	}
	if known {
		s := seen.String()
		j.Throttled, j.Flags = &s, seen.Names()
	}
	if len(rs) > 0 {
		j.UnderVoltageKnown = &uvKnown
	}
	return j
}

// Describe is a reading for people's progress lines.
func Describe(r Reading) string {
	temp, clock, flags := "temperature unknown", "clock unknown", "throttling unknown (no vcgencmd)"
	if !math.IsNaN(r.TempC) {
		temp = fmt.Sprintf("%.1f C", r.TempC)
	}
	if r.ArmHz > 0 {
		clock = fmt.Sprintf("%d MHz", r.ArmHz/1_000_000)
	}
	if r.ThrottledKnown {
		flags = "throttled=" + r.Throttled.String()
		if n := r.Throttled.Names(); len(n) > 0 {
			flags += " (" + strings.Join(n, ", ") + ")"
		}
	}
	return temp + "  " + clock + "  " + flags
}
