// Package thermal reads a Pi's CPU temperature, Arm clock and throttling
// flags over its open SSH connection: one short command per sample (a new
// session on the existing connection, never a new connection), cheap
// enough to run beside a benchmark. It decodes `vcgencmd get_throttled`,
// falls back to cpufreq for the clock where there is no vcgencmd (Ubuntu,
// the Pi 5), needs no root, and reports what it cannot read as unknown, not
// as a failure. Readings go to the first write-up's CSV format.
package thermal

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"pidb/remote"
)

// SoftLimitC is where a Pi's firmware starts to throttle the Arm cores
// (the soft temperature limit, 80 C by default on every model); 85 C is
// the hard limit.
const SoftLimitC = 80

// Flags is `vcgencmd get_throttled`'s value: bits 0-3 are now, bits 16-19
// the same conditions at any time since boot.
type Flags uint32

// The flags, as the firmware documents them.
const (
	UnderVoltage           Flags = 1 << 0
	FreqCapped             Flags = 1 << 1
	Throttled              Flags = 1 << 2
	SoftTempLimit          Flags = 1 << 3
	UnderVoltageSinceBoot  Flags = 1 << 16
	FreqCappedSinceBoot    Flags = 1 << 17
	ThrottledSinceBoot     Flags = 1 << 18
	SoftTempLimitSinceBoot Flags = 1 << 19
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{UnderVoltage, "under_voltage"},
	{FreqCapped, "freq_capped"},
	{Throttled, "throttled"},
	{SoftTempLimit, "soft_temp_limit"},
	{UnderVoltageSinceBoot, "under_voltage_since_boot"},
	{FreqCappedSinceBoot, "freq_capped_since_boot"},
	{ThrottledSinceBoot, "throttled_since_boot"},
	{SoftTempLimitSinceBoot, "soft_temp_limit_since_boot"},
}

// Names lists the set flags by name ("throttled", "throttled_since_boot").
func (f Flags) Names() []string {
	out := []string{}
	for _, n := range flagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// String is the value as vcgencmd prints it: 0x50005.
func (f Flags) String() string { return "0x" + strconv.FormatUint(uint64(f), 16) }

// ParseThrottled reads `vcgencmd get_throttled` ("throttled=0x50005").
func ParseThrottled(s string) (Flags, error) {
	v := strings.TrimSpace(s)
	v = strings.TrimPrefix(v, "throttled=")
	n, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 32)
	if err != nil || !strings.HasPrefix(v, "0x") {
		return 0, fmt.Errorf("get_throttled: %q is not 0x and a hex number", s)
	}
	return Flags(n), nil
}

// Reading is one sample. A value pidb could not read is unknown: NaN
// temperature, zero clock, ThrottledKnown false.
type Reading struct {
	Host  string
	At    time.Time
	TempC float64 // NaN when unknown
	ArmHz int64   // 0 when unknown
	// Throttled is get_throttled's value when ThrottledKnown (vcgencmd answered).
	Throttled      Flags
	ThrottledKnown bool
	// UnderVoltageKnown is false where the board cannot detect under-voltage
	// (the Zero family): its under-voltage flags mean nothing there.
	UnderVoltageKnown bool
}

// Script is the command one sample runs: the cpu-thermal zone's
// temperature (else zone 0's), then vcgencmd's clock and flags, or
// cpufreq's clock where there is no vcgencmd. Each line is key=value;
// what cannot be read is left empty.
const Script = `z=/sys/class/thermal/thermal_zone0
for d in /sys/class/thermal/thermal_zone*; do [ "$(cat "$d/type" 2>/dev/null)" = cpu-thermal ] && z=$d && break; done
echo "temp=$(cat "$z/temp" 2>/dev/null)"
if command -v vcgencmd >/dev/null 2>&1; then
  echo "clock=$(vcgencmd measure_clock arm 2>/dev/null)"
  echo "throttled=$(vcgencmd get_throttled 2>/dev/null)"
fi
echo "cpufreq=$(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq 2>/dev/null)"`

// Parse reads Script's output.
func Parse(out string) Reading {
	r := Reading{TempC: math.NaN(), UnderVoltageKnown: true}
	var cpufreq int64
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		switch k {
		case "temp":
			if mc, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				r.TempC = float64(mc) / 1000
			}
		case "clock": // frequency(48)=1500398464
			if _, hz, ok := strings.Cut(v, "="); ok {
				if n, err := strconv.ParseInt(strings.TrimSpace(hz), 10, 64); err == nil && n > 0 {
					r.ArmHz = n
				}
			}
		case "throttled":
			if f, err := ParseThrottled(v); err == nil {
				r.Throttled, r.ThrottledKnown = f, true
			}
		case "cpufreq": // kHz
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
				cpufreq = n * 1000
			}
		}
	}
	if r.ArmHz == 0 {
		r.ArmHz = cpufreq
	}
	return r
}

// Sampler samples one host over its connection.
type Sampler struct {
	R     remote.Runner
	Model string // the board's model (facts): a Zero cannot detect under-voltage
}

// Sample takes one reading.
func (s *Sampler) Sample(ctx context.Context) (Reading, error) {
	res, err := s.R.Run(ctx, Script)
	if err != nil {
		return Reading{}, err
	}
	r := Parse(string(res.Stdout))
	r.Host, r.At = s.R.Host(), time.Now()
	r.UnderVoltageKnown = !strings.Contains(s.Model, "Zero")
	if !r.UnderVoltageKnown {
		r.Throttled &^= UnderVoltage | UnderVoltageSinceBoot
	}
	return r, nil
}

// Run samples at once and then every interval until ctx ends, handing each
// reading to fn. A failed sample goes to fn as an error and sampling goes on.
func (s *Sampler) Run(ctx context.Context, interval time.Duration, fn func(Reading, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		r, err := s.Sample(ctx)
		if ctx.Err() != nil {
			return
		}
		fn(r, err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CSVHeader names WriteCSV's columns. `pidb thermal --csv` writes no header,
// as the write-up's logger did; a saved run's thermal.csv starts with it.
const CSVHeader = "hostname, time_utc, millidegrees, arm_hz, throttled\n"

// WriteCSV writes readings in the first write-up's format, `hostname,
// YYYYmmdd-HH:MM:SS, millidegrees` (UTC), with the Arm clock in Hz and the
// get_throttled value behind it; unknown values are empty.
func WriteCSV(w io.Writer, rs ...Reading) error {
	for _, r := range rs {
		temp, clock, flags := "", "", ""
		if !math.IsNaN(r.TempC) {
			temp = strconv.FormatInt(int64(math.Round(r.TempC*1000)), 10)
		}
		if r.ArmHz > 0 {
			clock = strconv.FormatInt(r.ArmHz, 10)
		}
		if r.ThrottledKnown {
			flags = r.Throttled.String()
		}
		if _, err := fmt.Fprintf(w, "%s, %s, %s, %s, %s\n", r.Host, r.At.UTC().Format("20060102-15:04:05"), temp, clock, flags); err != nil {
			return err
		}
	}
	return nil
}
