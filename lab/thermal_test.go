package lab

import (
	"math"
	"testing"
	"time"
)

func TestThrottleSteps(t *testing.T) {
	pi4 := DefaultFleet()[0]
	m := modelFor(pi4, "case")
	for _, tc := range []struct {
		c   float64
		mhz int
	}{{45, 1500}, {79.9, 1500}, {80, 1000}, {82.4, 1000}, {82.5, 750}, {84.9, 750}, {85, 600}, {92, 600}} {
		if got := int(float64(m.maxMHz) * clockFactor(tc.c)); got != tc.mhz {
			t.Errorf("%.1f C: %d MHz, want the 4-series' %d", tc.c, got, tc.mhz)
		}
	}
}

// TestThermalModel checks the model against what the issue asks: in a case
// a Pi 4 under full load passes 80 C within a few minutes; with a fan it
// stays near 55 C.
func TestThermalModel(t *testing.T) {
	pi4 := DefaultFleet()[0]
	reach := func(cooling Cooling, c float64) time.Duration {
		m := modelFor(pi4, cooling)
		if m.fullC <= c {
			return -1
		}
		return time.Duration(float64(m.tau) * math.Log((m.fullC-m.idleC)/(m.fullC-c)))
	}
	if d := reach("case", 80); d < time.Minute || d > 5*time.Minute {
		t.Errorf("in a case, 80 C after %s of full load; want a few minutes", d)
	}
	if d := reach("fan", 80); d != -1 {
		t.Errorf("with a fan, 80 C after %s; want never", d)
	}
	if m := modelFor(pi4, "fan"); m.fullC < 50 || m.fullC > 60 {
		t.Errorf("with a fan, full load settles at %.0f C; want near 55", m.fullC)
	}
	for _, b := range DefaultFleet() {
		for _, c := range []Cooling{CoolingCase, CoolingFan} {
			if m := modelFor(b, c); m.idleC <= 28 || m.idleC >= m.fullC || m.maxMHz == 0 {
				t.Errorf("%s, %s: %+v", b.Name, c, m)
			}
		}
	}
}

// TestModelStep: a Pi 4 in a case (idle 50 C, full load 95 C, a time
// constant of 100 s), worked by hand.
func TestModelStep(t *testing.T) {
	m := modelFor(DefaultFleet()[0], "case")
	// one time constant at full load from idle: 50 + 45 x (1 - 1/e) = 78.45 C
	st := m.step(50, 1, 100*time.Second, 0, -1)
	if math.Abs(st.tempC-78.445) > 0.01 || st.armHz != 1_500_000_000 || st.flags != 0 || st.quota != -1 {
		t.Errorf("first step: %+v", st)
	}
	// another: 78.45 + 16.55 x 0.632 = 88.91 C, past 85 C: 600 MHz, capped
	// and throttled now and since boot, 40% of a core
	st = m.step(st.tempC, 1, 100*time.Second, st.flags, -1)
	if math.Abs(st.tempC-88.91) > 0.01 || st.armHz != 600_000_000 || st.flags != 0x60006 || st.quota != 40000 {
		t.Errorf("second step: %+v", st)
	}
	// idle for ten time constants: back to 50 C and the full clock; the
	// since-boot flags stay
	st = m.step(st.tempC, 0, 1000*time.Second, st.flags, -1)
	if math.Abs(st.tempC-50) > 0.01 || st.armHz != 1_500_000_000 || st.flags != 0x60000 || st.quota != -1 {
		t.Errorf("cooled down: %+v", st)
	}
	// a step of no time leaves the temperature: at 82 C (80 to 82.5) the
	// 4-series runs at 1000 MHz, two thirds of a core
	if st2 := m.step(82, 1, 0, 0x60006, -1); st2.tempC != 82 || st2.armHz != 1_000_000_000 || st2.flags != 0x60006 || st2.quota != 66666 {
		t.Errorf("no time: %+v", st2)
	}
	// at board speed the quota is the board's (1.15 cores on a machine
	// whose core rates 5,000 MIPS), and throttling scales it: two thirds
	// of 115000 is 76666; below 80 C it is the board's whole
	if st2 := m.step(82, 1, 0, 0x60006, 115000); st2.armHz != 1_000_000_000 || st2.quota != 76666 {
		t.Errorf("board speed, throttled: %+v", st2)
	}
	if st2 := m.step(60, 1, 0, 0, 115000); st2.armHz != 1_500_000_000 || st2.quota != 115000 {
		t.Errorf("board speed, cool: %+v", st2)
	}
}

// TestSoftLimit: a 3B+ (1.4 GHz) runs at 1.2 GHz from 60 C with
// get_throttled's soft-limit bits (3, and 19 since boot) and no throttling
// bits; from 80 C it is throttled as well. Worked by hand: 1200/1400 of a
// core is 85714 of 100000.
func TestSoftLimit(t *testing.T) {
	b, _ := BoardNamed("pi3plus")
	m := modelFor(b, "case")
	if st := m.step(59.9, 0, 0, 0, -1); st.armHz != 1_400_000_000 || st.flags != 0 || st.quota != -1 {
		t.Errorf("59.9 C: %+v", st)
	}
	st := m.step(60, 0, 0, 0, -1)
	if st.armHz != 1_200_000_000 || st.flags != 0x80008 || st.quota != 85714 {
		t.Errorf("60 C: %+v", st)
	}
	if st := m.step(55, 0, 0, st.flags, -1); st.armHz != 1_400_000_000 || st.flags != 0x80000 || st.quota != -1 {
		t.Errorf("back at 55 C: %+v", st)
	}
	if st := m.step(81, 0, 0, 0, -1); st.armHz != 933_000_000 || st.flags != 0xe000e || st.quota != 66666 {
		t.Errorf("81 C: %+v", st)
	}
	// at board speed (64800: 0.648 of a 5,000-MIPS core), the soft limit
	// takes 1200/1400 of that: 55542
	if st := m.step(60, 0, 0, 0, 64800); st.quota != 55542 {
		t.Errorf("60 C at board speed: %+v", st)
	}
	// the Pi 4 has no soft limit
	if st := modelFor(DefaultFleet()[0], "case").step(70, 0, 0, 0, -1); st.flags != 0 || st.armHz != 1_500_000_000 {
		t.Errorf("Pi 4 at 70 C: %+v", st)
	}
}

// TestPi5Heat: without its cooler a Pi 5 under full load passes 80 C
// sooner than a Pi 4 in a case; with it, it stays near 60 C.
func TestPi5Heat(t *testing.T) {
	pi5, _ := BoardNamed("pi5")
	reach := func(b Board, c float64) time.Duration {
		m := modelFor(b, "case")
		return time.Duration(float64(m.tau) * math.Log((m.fullC-m.idleC)/(m.fullC-c)))
	}
	if p5, p4 := reach(pi5, 80), reach(DefaultFleet()[0], 80); p5 >= p4 || p5 < 30*time.Second {
		t.Errorf("80 C after %s on a Pi 5, %s on a Pi 4", p5, p4)
	}
	if m := modelFor(pi5, "fan"); m.fullC > 65 || m.maxMHz != 2400 {
		t.Errorf("Pi 5 with its cooler: %+v", m)
	}
}
