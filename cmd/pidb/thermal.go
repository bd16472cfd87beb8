package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"pidb/facts"
	"pidb/fleet"
	"pidb/inventory"
	"pidb/output"
	"pidb/remote"
	"pidb/thermal"
)

func thermalCommand() *cli.Command {
	return &cli.Command{
		Name:      "thermal",
		Usage:     "read each Pi's temperature, Arm clock and throttling flags, once or for a while",
		UsageText: "pidb thermal -i FILE [--limit NAMES] [--interval D] [--duration D] [--csv FILE] [--json]",
		Flags: append(fleetFlags(),
			&cli.DurationFlag{Name: "interval", Usage: "one reading per `D` (default: the inventory's [thermal] interval, else 15s)"},
			&cli.DurationFlag{Name: "duration", Usage: "keep reading for `D`; without it, one reading"},
			&cli.StringFlag{Name: "csv", Usage: "also write every reading to `FILE` in the write-up's format: hostname, YYYYmmdd-HH:MM:SS, millidegrees (then Arm Hz, get_throttled)"},
		),
		Action: runThermal,
	}
}

// readingJSON is one reading in `pidb thermal --json`.
type readingJSON struct {
	At        time.Time `json:"at"`
	TempC     *float64  `json:"temp_c"`
	ArmMHz    *float64  `json:"arm_mhz"`
	Throttled *string   `json:"throttled"`
	Flags     []string  `json:"flags"`
}

// thermalJSON is one host in `pidb thermal --json`.
type thermalJSON struct {
	Host              string        `json:"host"`
	Samples           int           `json:"samples"`
	MinTempC          *float64      `json:"min_temp_c"`
	MaxTempC          *float64      `json:"max_temp_c"`
	MinArmMHz         *float64      `json:"min_arm_mhz"`
	Throttled         *string       `json:"throttled"` // every get_throttled value seen, or'ed
	Flags             []string      `json:"flags"`
	UnderVoltageKnown bool          `json:"under_voltage_known"`
	Readings          []readingJSON `json:"readings"`
	Error             string        `json:"error,omitempty"`
}

func runThermal(c *cli.Context) error {
	inv, hosts, err := loadHosts(c)
	if err != nil {
		return err
	}
	interval := inv.Thermal.Duration("interval", 15*time.Second)
	if c.IsSet("interval") {
		interval = c.Duration("interval")
	}
	duration := c.Duration("duration")
	if interval <= 0 || duration < 0 {
		return usagef("--interval must be more than zero and --duration not negative")
	}
	var csvMu sync.Mutex
	var csv io.Writer
	if path := c.String("csv"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		csv = f
	}
	opt, done, err := fleetOptions(c, hosts)
	if err != nil {
		return err
	}
	defer done()
	res := fleet.Run(c.Context, hosts, opt, func(ctx context.Context, h inventory.Host, r *remote.Client, step func(string)) ([]thermal.Reading, error) {
		step("gathering facts")
		f, err := facts.Collect(ctx, r, h)
		if err != nil {
			return nil, err
		}
		s := &thermal.Sampler{R: r, Model: f.Model}
		var out []thermal.Reading
		var sampleErr error
		take := func(rd thermal.Reading, err error) {
			if err != nil {
				sampleErr = err
				step("reading failed: " + err.Error())
				return
			}
			out = append(out, rd)
			step(describeReading(rd))
			if csv != nil {
				csvMu.Lock()
				if err := thermal.WriteCSV(csv, rd); err != nil && sampleErr == nil {
					sampleErr = err
				}
				csvMu.Unlock()
			}
		}
		if duration == 0 {
			take(s.Sample(ctx))
		} else {
			runCtx, cancel := context.WithTimeout(ctx, duration)
			defer cancel()
			s.Run(runCtx, interval, take)
		}
		if len(out) == 0 && sampleErr != nil {
			return nil, sampleErr
		}
		return out, ctx.Err()
	})
	var js []thermalJSON
	var rows [][]string
	for _, r := range res {
		j := summarizeReadings(r.Host.Name, r.Value)
		if r.Err != nil {
			j.Error = r.Err.Error()
		}
		js = append(js, j)
		rows = append(rows, []string{j.Host, strconv.Itoa(j.Samples), numOr(j.MinTempC, "%.1f"), numOr(j.MaxTempC, "%.1f"), numOr(j.MinArmMHz, "%.0f"),
			strOr(j.Throttled), strings.Join(j.Flags, ",")})
		if r.Err != nil {
			rows[len(rows)-1][len(rows[0])-1] = "FAILED (see stderr)"
		}
	}
	if c.Bool("json") {
		if err := output.JSON(c.App.Writer, js); err != nil {
			return err
		}
	} else if err := output.Table(c.App.Writer, []string{"HOST", "SAMPLES", "MIN_C", "MAX_C", "MIN_ARM_MHZ", "THROTTLED", "FLAGS"}, rows); err != nil {
		return err
	}
	return fleet.Err(res)
}

// describeReading is a reading for the progress lines.
func describeReading(r thermal.Reading) string {
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

// summarizeReadings makes a host's JSON from its readings.
func summarizeReadings(host string, rs []thermal.Reading) thermalJSON {
	j := thermalJSON{Host: host, Samples: len(rs), Flags: []string{}, Readings: []readingJSON{}, UnderVoltageKnown: true}
	var seen thermal.Flags
	known := false
	for _, r := range rs {
		rj := readingJSON{At: r.At, Flags: []string{}}
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
		j.UnderVoltageKnown = j.UnderVoltageKnown && r.UnderVoltageKnown
		j.Readings = append(j.Readings, rj)
	}
	if known {
		s := seen.String()
		j.Throttled, j.Flags = &s, seen.Names()
	}
	return j
}

func numOr(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

func strOr(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
