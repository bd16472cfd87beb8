package validate

import (
	"math"
	"strings"
	"testing"
	"time"

	"pidb/results"
	"pidb/thermal"
)

// cool is evidence of a host that told nothing unusual: no readings.
func cool() evidence {
	return evidence{maxC: math.Inf(-1), startC: math.NaN(), lowC: math.Inf(1), hotC: math.Inf(-1)}
}

// TestEachRule runs each rule on its own, on input and evidence written
// out by hand: the reasons it gives (code, FAIL or WARN, and a part of
// the sentence), and none where there is nothing to say.
func TestEachRule(t *testing.T) {
	hot := cool()
	hot.maxC = 81.5
	near := cool()
	near.maxC = 76.2
	throttled := cool()
	throttled.flags = Flags{During: thermal.Throttled | thermal.FreqCapped, Known: true}
	softSince := cool()
	softSince.flags = Flags{Appeared: thermal.SoftTempLimitSinceBoot, Known: true}
	volts := cool()
	volts.underVoltage, volts.flags = true, Flags{Last: thermal.UnderVoltage, Known: true}
	// sags: 100 TPS, then 60; the heat's where the clock fell, not where
	// the host ran at full clock, cool
	sagClock := cool()
	sagClock.q1, sagClock.q4, sagClock.clockKnown, sagClock.topHz, sagClock.lowHz = 100, 60, true, 1_500_000_000, 1_000_000_000
	sagCalm := cool()
	sagCalm.q1, sagCalm.q4, sagCalm.clockKnown, sagCalm.topHz, sagCalm.lowHz = 100, 60, true, 1_500_000_000, 1_500_000_000
	sagCalm.tempKnown, sagCalm.startC, sagCalm.lowC, sagCalm.hotC = true, 48, 48, 52
	// a climb of 20 C where the host tells neither flags nor clock: the heat's
	sagRose := cool()
	sagRose.q1, sagRose.q4, sagRose.tempKnown, sagRose.startC, sagRose.lowC, sagRose.hotC = 100, 60, true, 50, 50, 70
	steady := cool()
	steady.q1, steady.q4 = 100, 85

	type want struct {
		code string
		fail bool
		text string
	}
	for _, c := range []struct {
		rule string
		in   Input
		ev   evidence
		want []want
	}{
		{"service", Input{}, cool(), []want{{ServiceDown, true, "not running"}}},
		{"service", Input{ServiceActive: true}, cool(), nil},
		{"outages", Input{Outages: []results.Outage{{FromS: 3, ToS: 8, FailedConnects: 4, Kind: results.ServerGone}, {FromS: 20, ToS: 21, Kind: results.NoAnswer}}}, cool(),
			[]want{{ServerGone, true, "went away 3.0 s into the measured time, for 5.0 s (4 failed connections)"}, {NoAnswer, true, "stopped answering 20.0 s"}}},
		{"settings", Input{Mismatches: []string{"shared_buffers is 128MB, want 1GB"}}, cool(), []want{{SettingsMismatch, true, "shared_buffers is 128MB, want 1GB"}}},
		{"settings", Input{}, cool(), nil},
		{"desktop", Input{DesktopOn: true}, cool(), []want{{DesktopOn, false, "boots to the desktop"}}},
		{"min_tps", Input{TPS: 90, MinTPS: 100}, cool(), []want{{MinTPS, true, "90.0 TPS is below the inventory's min_tps of 100"}}},
		{"min_tps", Input{TPS: 110, MinTPS: 100}, cool(), nil},
		{"min_tps", Input{TPS: 1}, cool(), nil},
		{"errors", Input{Transactions: 9493, Errors: map[string]int64{"new_order: mysql 1020": 1647, "payment: mysql 1020": 1197}}, cool(),
			[]want{{Errors, true, "2844 of the 12337 transactions tried (23.1%) ended in an error (new_order: mysql 1020 1647, payment: mysql 1020 1197), more than 1%"}}},
		{"errors", Input{Transactions: 990, Errors: map[string]int64{"mysql 1062": 10}}, cool(), nil},
		{"errors", Input{Transactions: 10, Errors: map[string]int64{"pg 57P01": 40}, Outages: []results.Outage{{FromS: 3, ToS: 8, Kind: results.ServerGone}}}, cool(), nil},
		{"under_voltage", Input{}, volts, []want{{UnderVoltage, true, "cannot hold 5 V"}}},
		{"under_voltage", Input{}, cool(), nil},
		{"throttled", Input{}, throttled, []want{{Throttled, true, "throttled the Arm cores"}}},
		{"throttled", Input{}, softSince, nil},
		{"soft_temp_limit", Input{}, softSince, []want{{SoftTempLimit, true, "soft temperature limit"}}},
		{"temperature", Input{MaxTempC: 80}, hot, []want{{MaxTemp, true, "reached 81.5 C, at or above the limit of 80 C"}}},
		{"temperature", Input{MaxTempC: 80}, near, []want{{NearLimit, false, "reached 76.2 C, within 5 C of the limit of 80 C"}}},
		{"temperature", Input{MaxTempC: 85}, near, nil},
		{"temperature", Input{MaxTempC: 80}, cool(), nil},
		{"sag", Input{}, sagClock, []want{{ThermalSag, false, "fell from 100.0 TPS in the first quarter of the run to 60.0 in the last (40% less): the shape of a Pi that heats up, and this one the firmware slowed its cores"}}},
		{"sag", Input{}, sagRose, []want{{ThermalSag, false, "its CPU climbed from 50.0 to 70.0 C"}}},
		{"sag", Input{}, sagCalm, []want{{UnstableTPS, false, "not from the heat: the CPU stayed between 48.0 and 52.0 C, the clock at 1500 MHz"}}},
		{"sag", Input{}, steady, nil},
		{"controller", Input{Client: results.Client{CPUS: 18, WallS: 10, Cores: 2}}, cool(), []want{{ControllerBusy, false, "pidb used 90% of this machine's 2 cores"}}},
		{"controller", Input{Client: results.Client{CPUS: 10, WallS: 10, Cores: 2}}, cool(), nil},
		{"controller", Input{}, cool(), nil},
		{"replication", Input{}, cool(), nil},
		{"replication", Input{Replica: &Replica{Primary: "pi4", Streaming: true, LagS: ptr(2.5), MaxLag: 30 * time.Second}}, cool(), nil},
		{"replication", Input{Replica: &Replica{Primary: "pi4", Streaming: true, LagS: ptr(42.25), MaxLag: 30 * time.Second}}, cool(),
			[]want{{Replication, true, "the replica is 42.2 s behind pi4, more than the inventory's max_lag of 30s"}}},
		{"replication", Input{Replica: &Replica{Primary: "pi4", Why: "in recovery, but its WAL receiver is not running", MaxLag: 30 * time.Second}}, cool(),
			[]want{{Replication, true, "the replica does not stream from pi4: in recovery, but its WAL receiver is not running (pidb cluster status)"}}},
		{"replication", Input{Replica: &Replica{Primary: "pi4", Streaming: true, MaxLag: 30 * time.Second}}, cool(),
			[]want{{Replication, true, "has replayed nothing yet"}}},
	} {
		var check func(Input, evidence) []results.Reason
		for _, r := range rules() {
			if r.name == c.rule {
				check = r.check
			}
		}
		if check == nil {
			t.Fatalf("no rule %q", c.rule)
		}
		got := check(c.in, c.ev)
		if len(got) != len(c.want) {
			t.Errorf("%s on %+v: %d reasons %+v, want %d", c.rule, c.in, len(got), got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if got[i].Code != w.code || got[i].Fail != w.fail || !strings.Contains(got[i].Message, w.text) {
				t.Errorf("%s: reason %d is %+v, want %s (fail %v) saying %q", c.rule, i, got[i], w.code, w.fail, w.text)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
