// Package validate judges a host from what validate gathered: the service,
// the boot target, the live settings against the tuner's, the workload's
// series and the thermal readings around it. It does no I/O. Every reason
// has a stable code and a sentence; any FAIL reason makes the verdict FAIL,
// else any WARN reason WARN, else PASS.
package validate

import (
	"fmt"
	"math"
	"strings"
	"time"

	"pidb/results"
	"pidb/thermal"
)

// The reasons' codes.
const (
	UnderVoltage     = "under_voltage"
	Throttled        = "throttled"
	SoftTempLimit    = "soft_temp_limit"
	MaxTemp          = "max_temp"
	SettingsMismatch = "settings_mismatch"
	ServiceDown      = "service_down"
	ServerGone       = "server_gone"
	NoAnswer         = "no_answer"
	DesktopOn        = "desktop_on"
	MinTPS           = "min_tps"
	ThermalSag       = "thermal_sag"
	UnstableTPS      = "unstable_throughput"
	NearLimit        = "near_limit"
	ControllerBusy   = "controller_busy"
)

// Verdicts, as package results defines them.
const (
	Pass = results.Pass
	Warn = results.Warn
	Fail = results.Fail
)

// Input is what validate gathered about one host.
type Input struct {
	ServiceActive bool
	DesktopOn     bool     // the host boots to the desktop (graphical.target)
	Mismatches    []string // live settings that differ from the tuner's, as sentences
	TPS           float64  // the whole run's
	Series        []results.Interval
	Readings      []thermal.Reading // idle before, the run, idle after
	// RunStart and RunEnd bound the measured run: throttling counts
	// inside it; under-voltage and temperature count at any time.
	RunStart, RunEnd time.Time
	MaxTempC         float64 // the limit; default 80 (the firmware starts throttling there)
	MinTPS           float64 // 0: no floor
	// Client is what pidb's own process used of the controller while the
	// workload ran (zero: not measured).
	Client results.Client
	// Outages are when the server was gone during the run.
	Outages []results.Outage
}

// DefaultMaxTempC is where the firmware starts to throttle the Arm cores;
// 85 C is the hard limit on every model.
const DefaultMaxTempC = 80

// nearMargin is how close to the limit a temperature warns.
const nearMargin = 5

// sagRatio: the last quarter's throughput below this share of the first
// quarter's is the first write-up's hot-case shape.
const sagRatio = 0.8

// riseC is how far the temperature must climb during the run to count as
// the heat's evidence for a sag: a Pi 4 in a case went from the 50s to
// 86-88 C within minutes; one with a fan moves a few degrees.
const riseC = 10

// busyShare is the share of the controller's cores pidb's process used,
// over which the numbers may be the controller's.
const busyShare = 0.85

// Judge returns the verdict and its reasons.
func Judge(in Input) results.Verdict {
	if in.MaxTempC <= 0 {
		in.MaxTempC = DefaultMaxTempC
	}
	v := results.Verdict{Reasons: []results.Reason{}}
	add := func(fail bool, code, format string, args ...any) {
		v.Reasons = append(v.Reasons, results.Reason{Code: code, Message: fmt.Sprintf(format, args...), Fail: fail})
	}
	if !in.ServiceActive {
		add(true, ServiceDown, "the database server is not running")
	}
	for _, o := range in.Outages {
		if o.Gone() {
			add(true, ServerGone, "%s: the TPS leaves that time out; a server that dies under load needs its logs read (journalctl -u the database's unit)", o)
		} else {
			add(true, NoAnswer, "%s: the TPS leaves that time out; look at the host's link (cable, Wi-Fi, switch) and its power", o)
		}
	}
	if len(in.Mismatches) > 0 {
		add(true, SettingsMismatch, "live settings differ from the tuner's: %s", strings.Join(in.Mismatches, "; "))
	}
	if in.DesktopOn {
		add(false, DesktopOn, "the host boots to the desktop, which takes memory and CPU from the database (pidb provision turns it off)")
	}
	if in.MinTPS > 0 && in.TPS < in.MinTPS {
		add(true, MinTPS, "%.1f TPS is below the inventory's min_tps of %g", in.TPS, in.MinTPS)
	}

	// thermal
	fl := Throttling(in.Readings, in.RunStart, in.RunEnd)
	during, appeared, haveFlags := fl.During, fl.Appeared, fl.Known
	underVoltage := false
	maxC := math.Inf(-1)
	for _, r := range in.Readings {
		if !math.IsNaN(r.TempC) && r.TempC > maxC {
			maxC = r.TempC
		}
		if r.ThrottledKnown && r.UnderVoltageKnown && r.Throttled&(thermal.UnderVoltage|thermal.UnderVoltageSinceBoot) != 0 {
			underVoltage = true
		}
	}
	if underVoltage {
		add(true, UnderVoltage, "under-voltage: the power supply cannot hold 5 V under load (get_throttled %s)", fl.Last)
	}
	if fl.ArmThrottled() {
		v.Throttled = true
		add(true, Throttled, "the firmware throttled the Arm cores during the run (get_throttled %s): the numbers are the cooling's, not the board's", (during | appeared))
	}
	if during&thermal.SoftTempLimit != 0 || appeared&thermal.SoftTempLimitSinceBoot != 0 {
		add(true, SoftTempLimit, "the soft temperature limit capped the clock during the run")
	}
	if !math.IsInf(maxC, -1) {
		m := maxC
		v.MaxTempC = &m
		switch {
		case maxC >= in.MaxTempC:
			add(true, MaxTemp, "the CPU reached %.1f C, at or above the limit of %g C: it needs better cooling (a fan, or a case that draws the heat away)", maxC, in.MaxTempC)
		case maxC >= in.MaxTempC-nearMargin:
			add(false, NearLimit, "the CPU reached %.1f C, within %d C of the limit of %g C", maxC, nearMargin, in.MaxTempC)
		}
	}

	// a sag is the heat's only with the heat's evidence on that host: the
	// firmware slowed the cores (a throttling flag, or an Arm clock that
	// fell during the run), or the temperature climbed. A busy controller
	// or a slow card makes the same shape with the Pi cool and at full
	// speed: that sag is unstable_throughput, not thermal_sag.
	// the run's readings: the Arm clock's range, and the temperature's
	// first value and range
	var topHz, lowHz int64
	clockKnown := false
	startC, lowC, hotC, tempKnown := math.NaN(), math.Inf(1), math.Inf(-1), false
	for _, r := range in.Readings {
		if r.At.Before(in.RunStart) || r.At.After(in.RunEnd) {
			continue
		}
		if r.ArmHz > 0 {
			if !clockKnown || r.ArmHz > topHz {
				topHz = r.ArmHz
			}
			if !clockKnown || r.ArmHz < lowHz {
				lowHz = r.ArmHz
			}
			clockKnown = true
		}
		if !math.IsNaN(r.TempC) {
			if !tempKnown {
				startC, tempKnown = r.TempC, true
			}
			lowC, hotC = math.Min(lowC, r.TempC), math.Max(hotC, r.TempC)
		}
	}
	slowed := v.Throttled || during&thermal.SoftTempLimit != 0 || appeared&thermal.SoftTempLimitSinceBoot != 0 ||
		(clockKnown && float64(lowHz) < 0.95*float64(topHz))
	// or the temperature climbed during the run: the heat's mark where
	// the host tells neither its firmware's flags nor its clock; where
	// they are known and say full speed, a climb (every Pi warms under
	// load, with a fan too) did not slow it
	rose := tempKnown && hotC-startC >= riseC && !clockKnown && !haveFlags

	v.TPSFirstQuarter, v.TPSLastQuarter = Quarters(in.Series)
	if v.TPSFirstQuarter > 0 && v.TPSLastQuarter < sagRatio*v.TPSFirstQuarter {
		fell := fmt.Sprintf("throughput fell from %.1f TPS in the first quarter of the run to %.1f in the last (%.0f%% less)",
			v.TPSFirstQuarter, v.TPSLastQuarter, 100*(1-v.TPSLastQuarter/v.TPSFirstQuarter))
		if slowed || rose {
			add(false, ThermalSag, "%s: the shape of a Pi that heats up, and this one %s", fell, heatEvidence(slowed, rose, startC, hotC))
		} else {
			add(false, UnstableTPS, "%s, but not from the heat: %s; look at what else was busy (this machine, the network, the Pi's storage)",
				fell, calm(tempKnown, lowC, hotC, clockKnown, topHz, haveFlags))
		}
	}

	if c := in.Client; c.Cores > 0 && c.WallS > 0 && c.CPUS/(float64(c.Cores)*c.WallS) >= busyShare {
		add(false, ControllerBusy, "pidb used %.0f%% of this machine's %d cores while the workload ran (%.1f s of CPU in %.1f s): the numbers may be this machine's limit, not the Pi's; run fewer hosts at once, or from a machine with more cores",
			100*c.CPUS/(float64(c.Cores)*c.WallS), c.Cores, c.CPUS, c.WallS)
	}

	v.Verdict = Pass
	for _, r := range v.Reasons {
		if r.Fail {
			v.Verdict = Fail
			break
		}
		v.Verdict = Warn
	}
	return v
}

// heatEvidence says what showed the heat, for a thermal_sag.
func heatEvidence(slowed, rose bool, startC, hotC float64) string {
	var what []string
	if slowed {
		what = append(what, "the firmware slowed its cores")
	}
	if rose {
		what = append(what, fmt.Sprintf("its CPU climbed from %.1f to %.1f C", startC, hotC))
	}
	return strings.Join(what, ", and ")
}

// calm says what the host's temperature and clock did, for a sag that was
// not the heat's.
func calm(tempKnown bool, lowC, hotC float64, clockKnown bool, topHz int64, flagsKnown bool) string {
	if !tempKnown && !clockKnown && !flagsKnown {
		return "the host tells neither its temperature nor its clock, so nothing shows the heat"
	}
	var what []string
	if tempKnown {
		what = append(what, fmt.Sprintf("the CPU stayed between %.1f and %.1f C", lowC, hotC))
	}
	if clockKnown {
		what = append(what, fmt.Sprintf("the clock at %d MHz", topHz/1_000_000))
	}
	if flagsKnown {
		what = append(what, "the firmware never throttled")
	}
	return strings.Join(what, ", ")
}

// Flags is what get_throttled said of a run.
type Flags struct {
	During   thermal.Flags // the "now" flags seen at readings during the run
	Appeared thermal.Flags // flags set at the last reading that the first had not: since-boot flags that appeared in between
	Last     thermal.Flags // the last reading's value
	Known    bool          // some reading had get_throttled's value
}

// Throttling reads the flags of the readings, the run being from start to
// end. A since-boot flag that appeared between the first reading and the
// last happened in between, even if no reading caught it.
func Throttling(rs []thermal.Reading, start, end time.Time) Flags {
	var f Flags
	var first thermal.Flags
	for _, r := range rs {
		if !r.ThrottledKnown {
			continue
		}
		if !f.Known {
			first, f.Known = r.Throttled, true
		}
		f.Last = r.Throttled
		if !r.At.Before(start) && !r.At.After(end) {
			f.During |= r.Throttled
		}
	}
	f.Appeared = f.Last &^ first
	return f
}

// ArmThrottled reports whether the firmware throttled or capped the Arm
// cores during the run.
func (f Flags) ArmThrottled() bool {
	return f.During&(thermal.Throttled|thermal.FreqCapped) != 0 || f.Appeared&(thermal.ThrottledSinceBoot|thermal.FreqCappedSinceBoot) != 0
}

// Quarters returns the mean TPS of the measured series' first and last
// quarters by time (points with T > 0; warm-up points are not measured).
func Quarters(series []results.Interval) (first, last float64) {
	var end float64
	for _, p := range series {
		end = math.Max(end, p.T)
	}
	if end <= 0 {
		return 0, 0
	}
	var fs, ls float64
	var fn, ln int
	for _, p := range series {
		switch {
		case p.T <= 0:
		case p.T <= end/4:
			fs += p.TPS
			fn++
		case p.T > end*3/4:
			ls += p.TPS
			ln++
		}
	}
	if fn > 0 {
		first = fs / float64(fn)
	}
	if ln > 0 {
		last = ls / float64(ln)
	}
	return first, last
}
