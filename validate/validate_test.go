package validate

import (
	"math"
	"strings"
	"testing"
	"time"

	"pidb/results"
	"pidb/thermal"
)

var t0 = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)

// series is 40 one-second points from tps(t).
func series(tps func(t float64) float64) []results.Interval {
	var s []results.Interval
	for t := -2.0; t <= 40; t++ {
		s = append(s, results.Interval{T: t, TPS: tps(t)})
	}
	return s
}

// readings is one reading per 5 s from 10 s before the run to 10 s after.
func readings(temp func(t float64) float64, flags func(t float64) thermal.Flags) []thermal.Reading {
	var rs []thermal.Reading
	for t := -10.0; t <= 50; t += 5 {
		rs = append(rs, thermal.Reading{At: t0.Add(time.Duration(t * float64(time.Second))), TempC: temp(t), ThrottledKnown: true,
			Throttled: flags(t), UnderVoltageKnown: true})
	}
	return rs
}

func healthy() Input {
	return Input{ServiceActive: true, TPS: 700, Series: series(func(float64) float64 { return 700 }),
		Readings: readings(func(float64) float64 { return 55 }, func(float64) thermal.Flags { return 0 }),
		RunStart: t0, RunEnd: t0.Add(40 * time.Second)}
}

func codes(v results.Verdict) map[string]bool {
	m := map[string]bool{}
	for _, r := range v.Reasons {
		m[r.Code] = true
		if r.Message == "" {
			panic("a reason without a sentence")
		}
	}
	return m
}

func TestJudge(t *testing.T) {
	hot := func(in *Input) { // the write-up's Pi 4 in a case: 86-88 C, throttled, TPS sagging
		in.Readings = readings(func(t float64) float64 { return math.Min(88, 50+t) }, func(t float64) thermal.Flags {
			if t >= 30 {
				return thermal.Throttled | thermal.FreqCapped | thermal.ThrottledSinceBoot | thermal.FreqCappedSinceBoot
			}
			return 0
		})
		in.Series = series(func(t float64) float64 { return 750 - 10*math.Max(0, t) })
	}
	for _, tc := range []struct {
		name    string
		change  func(*Input)
		verdict results.Grade
		codes   []string
	}{
		{"healthy, with a fan", func(*Input) {}, Pass, nil},
		{"hot in a case", hot, Fail, []string{Throttled, MaxTemp, ThermalSag}},
		{"under-voltage since boot", func(in *Input) {
			in.Readings[0].Throttled = thermal.UnderVoltageSinceBoot
		}, Fail, []string{UnderVoltage}},
		{"a Zero's under-voltage bits mean nothing", func(in *Input) {
			for i := range in.Readings {
				in.Readings[i].Throttled, in.Readings[i].UnderVoltageKnown = thermal.UnderVoltageSinceBoot, false
			}
		}, Pass, nil},
		{"throttled before the run only", func(in *Input) {
			in.Readings[0].Throttled = thermal.Throttled | thermal.ThrottledSinceBoot
			for i := 1; i < len(in.Readings); i++ {
				in.Readings[i].Throttled = thermal.ThrottledSinceBoot
			}
		}, Pass, nil},
		{"throttled between two readings", func(in *Input) {
			for i := 6; i < len(in.Readings); i++ {
				in.Readings[i].Throttled = thermal.ThrottledSinceBoot
			}
		}, Fail, []string{Throttled}},
		{"soft limit (3B+ at 60 C)", func(in *Input) {
			in.Readings[4].Throttled = thermal.SoftTempLimit | thermal.SoftTempLimitSinceBoot
		}, Fail, []string{SoftTempLimit}},
		{"near the limit", func(in *Input) { in.Readings[5].TempC = 77 }, Warn, []string{NearLimit}},
		{"at the limit", func(in *Input) { in.Readings[5].TempC = 80 }, Fail, []string{MaxTemp}},
		{"a lower limit", func(in *Input) { in.MaxTempC = 55 }, Fail, []string{MaxTemp}},
		{"no sensor", func(in *Input) {
			for i := range in.Readings {
				in.Readings[i].TempC, in.Readings[i].ThrottledKnown = math.NaN(), false
			}
		}, Pass, nil},
		{"settings", func(in *Input) { in.Mismatches = []string{"shared_buffers is 128MB, not 1GB"} }, Fail, []string{SettingsMismatch}},
		{"service down", func(in *Input) { in.ServiceActive = false }, Fail, []string{ServiceDown}},
		{"desktop on", func(in *Input) { in.DesktopOn = true }, Warn, []string{DesktopOn}},
		{"below min_tps", func(in *Input) { in.MinTPS = 750 }, Fail, []string{MinTPS}},
		{"above min_tps", func(in *Input) { in.MinTPS = 650 }, Pass, nil},
		{"a sag of 15% is not one", func(in *Input) {
			in.Series = series(func(t float64) float64 { return 700 - 2.6*math.Max(0, t) })
		}, Pass, nil},
		// the shape of a busy controller: the same sag with the Pi cool and
		// the firmware at full speed all along is not the heat's
		{"a sag at full clock, unthrottled, cool", func(in *Input) {
			for i := range in.Readings {
				in.Readings[i].ArmHz = 1_500_000_000
			}
			in.Series = series(func(t float64) float64 { return 750 - 10*math.Max(0, t) })
		}, Warn, []string{UnstableTPS}},
		{"a sag with the clock falling", func(in *Input) {
			for i := range in.Readings {
				in.Readings[i].ArmHz = 1_500_000_000
			}
			in.Readings[7].ArmHz = 1_000_000_000 // 25 s into the run
			in.Series = series(func(t float64) float64 { return 750 - 10*math.Max(0, t) })
		}, Warn, []string{ThermalSag}},
		{"a sag without flags or clock, the CPU climbing 12 C", func(in *Input) {
			for i := range in.Readings {
				in.Readings[i].ThrottledKnown = false
				in.Readings[i].TempC = 50 + 0.3*math.Max(0, float64(i-2)*5) // 50 C at the start, 62 C 40 s in
			}
			in.Series = series(func(t float64) float64 { return 750 - 10*math.Max(0, t) })
		}, Warn, []string{ThermalSag}},
		// with a fan every Pi warms as the load starts; where the flags and
		// the clock say it ran at full speed, a sag beside the climb (a busy
		// controller's) is not the heat's
		{"a sag at full clock, unthrottled, the CPU climbing 12 C", func(in *Input) {
			for i := range in.Readings {
				in.Readings[i].ArmHz = 1_500_000_000
				in.Readings[i].TempC = 44 + 0.3*math.Max(0, float64(i-2)*5) // 44 C at the start, 56 C 40 s in
			}
			in.Series = series(func(t float64) float64 { return 750 - 10*math.Max(0, t) })
		}, Warn, []string{UnstableTPS}},
		{"a sag without flags or clock, the CPU steady", func(in *Input) {
			for i := range in.Readings {
				in.Readings[i].ThrottledKnown = false
			}
			in.Series = series(func(t float64) float64 { return 750 - 10*math.Max(0, t) })
		}, Warn, []string{UnstableTPS}},
		{"a sag on a host that tells nothing", func(in *Input) {
			for i := range in.Readings {
				in.Readings[i].ThrottledKnown, in.Readings[i].TempC = false, math.NaN()
			}
			in.Series = series(func(t float64) float64 { return 750 - 10*math.Max(0, t) })
		}, Warn, []string{UnstableTPS}},
		{"the controller saturated", func(in *Input) {
			in.Client = results.Client{CPUS: 75, WallS: 42, Cores: 2}
		}, Warn, []string{ControllerBusy}},
		{"the server gone for 8 s", func(in *Input) {
			in.Outages = []results.Outage{{FromS: 10, ToS: 18, FailedConnects: 160}}
		}, Fail, []string{ServerGone}},
		{"the host not answering for 12 s", func(in *Input) {
			in.Outages = []results.Outage{{FromS: 10, ToS: 22, Kind: results.NoAnswer}}
		}, Fail, []string{NoAnswer}},
		{"the controller half used", func(in *Input) {
			in.Client = results.Client{CPUS: 42, WallS: 42, Cores: 2}
		}, Pass, nil},
	} {
		in := healthy()
		tc.change(&in)
		v := Judge(in)
		got := codes(v)
		if v.Verdict != tc.verdict || len(got) != len(tc.codes) {
			t.Errorf("%s: %s %v, want %s %v", tc.name, v.Verdict, v.Reasons, tc.verdict, tc.codes)
			continue
		}
		for _, c := range tc.codes {
			if !got[c] {
				t.Errorf("%s: no %s in %v", tc.name, c, v.Reasons)
			}
		}
	}
}

// TestSagWords: what each sag's sentence says of the evidence: the heat's
// with what showed it, the other with what the host's temperature and
// clock did.
func TestSagWords(t *testing.T) {
	msg := func(in Input, code string) string {
		for _, r := range Judge(in).Reasons {
			if r.Code == code {
				return r.Message
			}
		}
		t.Fatalf("no %s in %v", code, Judge(in).Reasons)
		return ""
	}
	in := healthy()
	in.Series = series(func(t float64) float64 { return 750 - 10*math.Max(0, t) })
	for i := range in.Readings {
		in.Readings[i].ArmHz = 1_500_000_000
	}
	if m := msg(in, UnstableTPS); !strings.Contains(m, "not from the heat") || !strings.Contains(m, "between 55.0 and 55.0 C") ||
		!strings.Contains(m, "1500 MHz") || !strings.Contains(m, "never throttled") {
		t.Errorf("unstable: %s", m)
	}
	in.Readings[7].ArmHz = 1_000_000_000
	if m := msg(in, ThermalSag); !strings.Contains(m, "the firmware slowed its cores") {
		t.Errorf("thermal, the clock fell: %s", m)
	}
}

func TestQuarters(t *testing.T) {
	f, l := Quarters(series(func(t float64) float64 { return 1000 - 10*t }))
	// first quarter: t in (0, 10], mean 1000 - 55 = 945; last: t in (30, 40], mean 1000 - 355 = 645
	if f != 945 || l != 645 {
		t.Errorf("quarters %.1f %.1f, want 945 645", f, l)
	}
	if f, l := Quarters(nil); f != 0 || l != 0 {
		t.Errorf("no series: %v %v", f, l)
	}
	hot := Judge(Input{ServiceActive: true, Series: series(func(t float64) float64 { return 1000 - 10*t })})
	if hot.TPSFirstQuarter != 945 || hot.TPSLastQuarter != 645 || hot.Verdict != Warn {
		t.Errorf("%+v", hot)
	}
}
