package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"pidb/config"
	"pidb/fleet"
	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
	"pidb/remote"
	"pidb/thermal"
)

func thermalCommand() *cli.Command {
	return &cli.Command{
		Name:      "thermal",
		Usage:     "read each Pi's temperature, Arm clock and throttling flags, once or for a while",
		UsageText: "pidb thermal -i FILE [--limit NAMES] [--interval D] [--duration D] [--csv FILE] [--json]",
		Flags: append(fleetFlags(),
			&cli.DurationFlag{Name: "interval", Usage: fmt.Sprintf("one reading per `D` (default: the inventory's [thermal] interval, else %s)", config.DefaultThermal(config.ForBench).Interval)},
			&cli.DurationFlag{Name: "duration", Usage: "keep reading for `D` (default: one reading)"},
			&cli.StringFlag{Name: "csv", Usage: "also write every reading to `FILE` in the write-up's format: hostname, YYYYmmdd-HH:MM:SS, millidegrees (then Arm Hz, get_throttled)"},
		),
		Action: runThermal,
	}
}

func runThermal(c *cli.Context) error {
	inv, hosts, err := loadHosts(c)
	if err != nil {
		return err
	}
	tc, err := config.ThermalFor(inv, config.ForBench, setFlags(c, []string{"interval"}, nil))
	if err != nil {
		return usageError{err}
	}
	duration := c.Duration("duration")
	switch {
	case tc.Interval <= 0:
		return usagef("--interval %s: want more than zero", tc.Interval)
	case duration < 0:
		return usagef("--duration %s: want zero (one reading) or more", duration)
	}
	var record func(thermal.Reading) error
	if path := c.String("csv"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		record = lockedCSV(f)
	}
	opt, done, err := fleetOptions(c, hosts)
	if err != nil {
		return err
	}
	defer done()
	res := fleet.Run(c.Context, hosts, opt, func(ctx context.Context, h inventory.Host, rc *remote.Client, r progress.Reporter) ([]thermal.Reading, error) {
		return job.Watch(ctx, h, job.Over(rc), tc.Interval, duration, record, r)
	})
	var js []thermal.Summary
	var rows [][]string
	for _, r := range res {
		j := thermal.Summarize(r.Host.Name, r.Value)
		flags := strings.Join(j.Flags, ",")
		if r.Err != nil {
			j.Error, flags = r.Err.Error(), "FAILED (see stderr)"
		}
		js = append(js, j)
		rows = append(rows, []string{j.Host, strconv.Itoa(j.Samples), numOr(j.MinTempC, "%.1f"), numOr(j.MaxTempC, "%.1f"), numOr(j.MinArmMHz, "%.0f"),
			strOr(j.Throttled), flags})
	}
	if err := printResults(c, js, []string{"HOST", "SAMPLES", "MIN_C", "MAX_C", "MIN_ARM_MHZ", "THROTTLED", "FLAGS"}, rows); err != nil {
		return err
	}
	return fleet.Err(res)
}

// lockedCSV writes readings from every host's goroutine to one CSV file.
func lockedCSV(w io.Writer) func(thermal.Reading) error {
	var mu sync.Mutex
	return func(r thermal.Reading) error {
		mu.Lock()
		defer mu.Unlock()
		return thermal.WriteCSV(w, r)
	}
}

func strOr(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
