package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/config"
)

// thermalCommand is `pidb thermal`; run does the work (nil: runThermal),
// a seam for the tests of its options.
func thermalCommand(run func(*cli.Context, action.ThermalOptions) error) *cli.Command {
	if run == nil {
		run = runThermal
	}
	return &cli.Command{
		Name:      "thermal",
		Usage:     "read each Pi's temperature, Arm clock and throttling flags, once or for a while",
		UsageText: "pidb thermal -i FILE [--limit NAMES] [--interval D] [--duration D] [--csv FILE] [--json]",
		Flags: append(append(fleetFlags(), settingFlags(config.ForBench, "thermal-interval=interval")...),
			&cli.DurationFlag{Name: "duration", Usage: "keep reading for `D` (default: one reading)"},
			&cli.StringFlag{Name: "csv", Usage: "also write every reading to `FILE` in the write-up's format: hostname, YYYYmmdd-HH:MM:SS, millidegrees (then Arm Hz, get_throttled)"},
		),
		Action: func(c *cli.Context) error {
			o, err := thermalOptions(c)
			if err != nil {
				return err
			}
			return run(c, o)
		},
	}
}

// thermalOptions reads thermal's flags.
func thermalOptions(c *cli.Context) (action.ThermalOptions, error) {
	f, err := fleetOf(c)
	if err != nil {
		return action.ThermalOptions{}, err
	}
	return action.ThermalOptions{Fleet: f, Thermal: settingValues(c, config.ThermalSection, "thermal-interval=interval"), Duration: c.Duration("duration"), CSVFile: c.String("csv")}, nil
}

// runThermal reads the hosts and prints each one's summary.
func runThermal(c *cli.Context, o action.ThermalOptions) error {
	js, err := action.Thermal(c.Context, o)
	if js == nil {
		return err
	}
	rows := make([][]string, 0, len(js))
	for _, j := range js {
		flags := strings.Join(j.Flags, ",")
		if j.Error != "" {
			flags = failedCell
		}
		rows = append(rows, []string{j.Host, strconv.Itoa(j.Samples), numOr(j.MinTempC, "%.1f"), numOr(j.MaxTempC, "%.1f"), numOr(j.MinArmMHz, "%.0f"),
			strOr(j.Throttled), flags})
	}
	if perr := printResults(c, js, []string{"HOST", "SAMPLES", "MIN_C", "MAX_C", "MIN_ARM_MHZ", "THROTTLED", "FLAGS"}, rows); perr != nil {
		return perr
	}
	return err
}

func strOr(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
