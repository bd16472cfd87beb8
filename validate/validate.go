// Package validate judges a host from what validate gathered: the service,
// the boot target, the live settings against the tuner's, the workload's
// series and the thermal readings around it. It does no I/O. Every reason
// has a stable code and a sentence; any FAIL reason makes the verdict FAIL,
// else any WARN reason WARN, else PASS.
package validate

import (
	"fmt"
	"math"
	"sort"
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
	Replication      = "replication"
	Errors           = "errors"
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
	// Transactions are the run's committed transactions, Errors those
	// that ended in an error, by kind
	Transactions int64
	Errors       map[string]int64
	Series       []results.Interval
	Readings     []thermal.Reading // idle before, the run, idle after
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
	// Replica is, for a cluster's replica (which runs no workload: it
	// takes no writes), what it says of its replication; nil otherwise
	Replica *Replica
}

// Replica is a cluster's replica as validate sees it.
type Replica struct {
	Primary   string        // its primary's name
	Streaming bool          // its WAL receiver streams from the primary
	Why       string        // why not, where it does not
	LagS      *float64      // how far behind, in seconds; nil: unknown
	MaxLag    time.Duration // how far it may be
}

// DefaultMaxTempC is the hottest a run may get before it fails: where
// the firmware starts to throttle the Arm cores (thermal.SoftLimitC).
const DefaultMaxTempC = thermal.SoftLimitC

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

// evidence is what the rules read from the input beyond its fields,
// worked out once: the flags, the temperatures and the clock.
type evidence struct {
	flags        Flags
	underVoltage bool    // at any reading
	maxC         float64 // the highest reading; -Inf: none
	// the run's readings: the Arm clock's range, and the temperature's
	// first value and range
	clockKnown, tempKnown bool
	topHz, lowHz          int64
	startC, lowC, hotC    float64
	q1, q4                float64 // the TPS of the run's first and last quarters
}

// gather works out the evidence.
func gather(in Input) evidence {
	ev := evidence{flags: Throttling(in.Readings, in.RunStart, in.RunEnd), maxC: math.Inf(-1),
		startC: math.NaN(), lowC: math.Inf(1), hotC: math.Inf(-1)}
	for _, r := range in.Readings {
		if !math.IsNaN(r.TempC) && r.TempC > ev.maxC {
			ev.maxC = r.TempC
		}
		if r.ThrottledKnown && r.UnderVoltageKnown && r.Throttled&(thermal.UnderVoltage|thermal.UnderVoltageSinceBoot) != 0 {
			ev.underVoltage = true
		}
		if r.At.Before(in.RunStart) || r.At.After(in.RunEnd) {
			continue
		}
		if r.ArmHz > 0 {
			if !ev.clockKnown || r.ArmHz > ev.topHz {
				ev.topHz = r.ArmHz
			}
			if !ev.clockKnown || r.ArmHz < ev.lowHz {
				ev.lowHz = r.ArmHz
			}
			ev.clockKnown = true
		}
		if !math.IsNaN(r.TempC) {
			if !ev.tempKnown {
				ev.startC, ev.tempKnown = r.TempC, true
			}
			ev.lowC, ev.hotC = math.Min(ev.lowC, r.TempC), math.Max(ev.hotC, r.TempC)
		}
	}
	ev.q1, ev.q4 = Quarters(in.Series)
	return ev
}

// softLimited reports whether the soft temperature limit capped the clock
// during the run.
func (ev evidence) softLimited() bool {
	return ev.flags.During&thermal.SoftTempLimit != 0 || ev.flags.Appeared&thermal.SoftTempLimitSinceBoot != 0
}

// rule is one of the verdict's rules: the reasons it finds, in order.
type rule struct {
	name  string
	check func(in Input, ev evidence) []results.Reason
}

// rules are the verdict's rules, in the order their reasons are given.
func rules() []rule {
	return []rule{
		{"service", serviceRule},
		{"outages", outagesRule},
		{"settings", settingsRule},
		{"desktop", desktopRule},
		{"min_tps", minTPSRule},
		{"errors", errorsRule},
		{"replication", replicationRule},
		{"under_voltage", underVoltageRule},
		{"throttled", throttledRule},
		{"soft_temp_limit", softLimitRule},
		{"temperature", temperatureRule},
		{"sag", sagRule},
		{"controller", controllerRule},
	}
}

func reason(fail bool, code, format string, args ...any) []results.Reason {
	return []results.Reason{{Code: code, Message: fmt.Sprintf(format, args...), Fail: fail}}
}

// Judge returns the verdict and its reasons: every rule's, in order.
func Judge(in Input) results.Verdict {
	if in.MaxTempC <= 0 {
		in.MaxTempC = DefaultMaxTempC
	}
	ev := gather(in)
	v := results.Verdict{Reasons: []results.Reason{}, Throttled: ev.flags.ArmThrottled(), TPSFirstQuarter: ev.q1, TPSLastQuarter: ev.q4}
	if !math.IsInf(ev.maxC, -1) {
		m := ev.maxC
		v.MaxTempC = &m
	}
	for _, r := range rules() {
		v.Reasons = append(v.Reasons, r.check(in, ev)...)
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

// serviceRule: the server is not running (FAIL).
func serviceRule(in Input, _ evidence) []results.Reason {
	if in.ServiceActive {
		return nil
	}
	return reason(true, ServiceDown, "the database server is not running")
}

// outagesRule: each time the server was gone, or did not answer, during
// the run (FAIL).
func outagesRule(in Input, _ evidence) []results.Reason {
	var out []results.Reason
	for _, o := range in.Outages {
		if o.Gone() {
			out = append(out, reason(true, ServerGone, "%s: the TPS leaves that time out; a server that dies under load needs its logs read (journalctl -u the database's unit)", o)...)
		} else {
			out = append(out, reason(true, NoAnswer, "%s: the TPS leaves that time out; look at the host's link (cable, Wi-Fi, switch) and its power", o)...)
		}
	}
	return out
}

// settingsRule: live settings that differ from the tuner's (FAIL).
func settingsRule(in Input, _ evidence) []results.Reason {
	if len(in.Mismatches) == 0 {
		return nil
	}
	return reason(true, SettingsMismatch, "live settings differ from the tuner's: %s", strings.Join(in.Mismatches, "; "))
}

// desktopRule: the host boots to the desktop (WARN).
func desktopRule(in Input, _ evidence) []results.Reason {
	if !in.DesktopOn {
		return nil
	}
	return reason(false, DesktopOn, "the host boots to the desktop, which takes memory and CPU from the database (pidb provision turns it off)")
}

// minTPSRule: the run's TPS below the inventory's floor (FAIL).
func minTPSRule(in Input, _ evidence) []results.Reason {
	if in.MinTPS <= 0 || in.TPS >= in.MinTPS {
		return nil
	}
	return reason(true, MinTPS, "%.1f TPS is below the inventory's min_tps of %g", in.TPS, in.MinTPS)
}

// errorsRule: more than results.ErrorShareLimit of the run's tries ended
// in an error, where the server was there throughout (FAIL): the TPS is
// then of what survived, not of the server. Outages say for themselves
// why transactions failed.
func errorsRule(in Input, _ evidence) []results.Reason {
	s := results.Summary{Transactions: in.Transactions, Errors: in.Errors}
	if len(in.Outages) > 0 || !s.Lossy() {
		return nil
	}
	kinds := make([]string, 0, len(in.Errors))
	for k := range in.Errors {
		if !strings.HasPrefix(k, "connect: ") {
			kinds = append(kinds, k)
		}
	}
	sort.Slice(kinds, func(i, j int) bool {
		if in.Errors[kinds[i]] != in.Errors[kinds[j]] {
			return in.Errors[kinds[i]] > in.Errors[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	if len(kinds) > 3 {
		kinds = kinds[:3]
	}
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%s %d", k, in.Errors[k])
	}
	return reason(true, Errors, "%d of the %d transactions tried (%.1f%%) ended in an error (%s), more than %.0f%%: the TPS is of those that committed, not the server's",
		s.Failures(), s.Failures()+s.Transactions, 100*s.ErrorShare(), strings.Join(kinds, ", "), 100*results.ErrorShareLimit)
}

// replicationRule: a cluster's replica that does not stream from its
// primary, or is further behind than max_lag (FAIL). In recovery is not
// streaming: its WAL receiver must be.
func replicationRule(in Input, _ evidence) []results.Reason {
	r := in.Replica
	switch {
	case r == nil:
		return nil
	case !r.Streaming:
		return reason(true, Replication, "the replica does not stream from %s: %s (pidb cluster status)", r.Primary, r.Why)
	case r.LagS == nil:
		return reason(true, Replication, "the replica streams from %s but has replayed nothing yet", r.Primary)
	case *r.LagS > r.MaxLag.Seconds():
		return reason(true, Replication, "the replica is %.1f s behind %s, more than the inventory's max_lag of %s", *r.LagS, r.Primary, r.MaxLag)
	}
	return nil
}

// underVoltageRule: the supply could not hold 5 V, at any reading (FAIL).
func underVoltageRule(_ Input, ev evidence) []results.Reason {
	if !ev.underVoltage {
		return nil
	}
	return reason(true, UnderVoltage, "under-voltage: the power supply cannot hold 5 V under load (get_throttled %s)", ev.flags.Last)
}

// throttledRule: the firmware throttled or capped the Arm cores during
// the run (FAIL).
func throttledRule(_ Input, ev evidence) []results.Reason {
	if !ev.flags.ArmThrottled() {
		return nil
	}
	return reason(true, Throttled, "the firmware throttled the Arm cores during the run (get_throttled %s): the numbers are the cooling's, not the board's", ev.flags.During|ev.flags.Appeared)
}

// softLimitRule: the soft temperature limit capped the clock during the
// run (FAIL).
func softLimitRule(_ Input, ev evidence) []results.Reason {
	if !ev.softLimited() {
		return nil
	}
	return reason(true, SoftTempLimit, "the soft temperature limit capped the clock during the run")
}

// temperatureRule: the hottest reading at the limit (FAIL) or within
// nearMargin of it (WARN).
func temperatureRule(in Input, ev evidence) []results.Reason {
	switch {
	case math.IsInf(ev.maxC, -1):
		return nil
	case ev.maxC >= in.MaxTempC:
		return reason(true, MaxTemp, "the CPU reached %.1f C, at or above the limit of %g C: it needs better cooling (a fan, or a case that draws the heat away)", ev.maxC, in.MaxTempC)
	case ev.maxC >= in.MaxTempC-nearMargin:
		return reason(false, NearLimit, "the CPU reached %.1f C, within %d C of the limit of %g C", ev.maxC, nearMargin, in.MaxTempC)
	}
	return nil
}

// sagRule: the last quarter's TPS below sagRatio of the first's (WARN),
// the heat's (thermal_sag) only with the heat's evidence on that host:
// the firmware slowed the cores (a throttling flag, or an Arm clock that
// fell during the run), or, where the host tells neither its flags nor its
// clock, the temperature climbed. A busy controller or a slow card makes
// the same shape with the Pi cool and at full speed: that sag is
// unstable_throughput. Where the flags or the clock are known and say full
// speed, a climb (every Pi warms under load, with a fan too) did not slow it.
func sagRule(_ Input, ev evidence) []results.Reason {
	if ev.q1 <= 0 || ev.q4 >= sagRatio*ev.q1 {
		return nil
	}
	slowed := ev.flags.ArmThrottled() || ev.softLimited() || (ev.clockKnown && float64(ev.lowHz) < 0.95*float64(ev.topHz))
	rose := ev.tempKnown && ev.hotC-ev.startC >= riseC && !ev.clockKnown && !ev.flags.Known
	fell := fmt.Sprintf("throughput fell from %.1f TPS in the first quarter of the run to %.1f in the last (%.0f%% less)", ev.q1, ev.q4, 100*(1-ev.q4/ev.q1))
	if slowed || rose {
		return reason(false, ThermalSag, "%s: the shape of a Pi that heats up, and this one %s", fell, heatEvidence(slowed, rose, ev.startC, ev.hotC))
	}
	return reason(false, UnstableTPS, "%s, but not from the heat: %s; look at what else was busy (this machine, the network, the Pi's storage)",
		fell, calm(ev.tempKnown, ev.lowC, ev.hotC, ev.clockKnown, ev.topHz, ev.flags.Known))
}

// controllerRule: pidb's own process used busyShare of this machine's
// cores while the workload ran (WARN): the numbers may be the machine's.
func controllerRule(in Input, _ evidence) []results.Reason {
	c := in.Client
	if c.Cores <= 0 || c.WallS <= 0 || c.CPUS/(float64(c.Cores)*c.WallS) < busyShare {
		return nil
	}
	return reason(false, ControllerBusy, "pidb used %.0f%% of this machine's %d cores while the workload ran (%.1f s of CPU in %.1f s): the numbers may be this machine's limit, not the Pi's; run fewer hosts at once, or from a machine with more cores",
		100*c.CPUS/(float64(c.Cores)*c.WallS), c.Cores, c.CPUS, c.WallS)
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
