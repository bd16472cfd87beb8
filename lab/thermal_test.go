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
	reach := func(cooling string, c float64) time.Duration {
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
		for _, c := range Coolings {
			if m := modelFor(b, c); m.idleC <= 28 || m.idleC >= m.fullC || m.maxMHz == 0 {
				t.Errorf("%s, %s: %+v", b.Name, c, m)
			}
		}
	}
}
