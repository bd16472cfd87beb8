package main

import (
	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/config"
	"pidb/tables"
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
	return printResults(c, js, tables.Thermal(js), err)
}
