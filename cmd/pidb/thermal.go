package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/config"
	"pidb/internal/cmdutil"
	"pidb/tables"
	"pidb/usage"
)

// thermalCommand is `pidb thermal`; run does the work (nil: read and
// print), a seam for the tests of its options.
func thermalCommand(run func(*cli.Context, action.ThermalOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "thermal",
		Usage:     "read each Pi's temperature, Arm clock and throttling flags, once or for a while",
		UsageText: "pidb thermal -i FILE [--limit NAMES] [--interval D] [--duration D] [--csv FILE] [--json]",
		Flags: append(append(fleetFlags(), thermalSettings().Flags(config.ForBench)...),
			&cli.DurationFlag{Name: "duration", Usage: "keep reading for `D` (default: one reading)", Action: func(_ *cli.Context, d time.Duration) error {
				if d < 0 {
					return usage.Errorf("--duration %s: want zero (one reading) or more", d)
				}
				return nil
			}},
			&cli.StringFlag{Name: "csv", Usage: "also write every reading to `FILE` in the write-up's format: hostname, YYYYmmdd-HH:MM:SS, millidegrees (then Arm Hz, get_throttled)"},
		),
		Action: cmdutil.WithOptions(func(c *cli.Context) (action.ThermalOptions, error) {
			f, err := fleetOf(c)
			return action.ThermalOptions{Fleet: f, Thermal: thermalSettings().Values(c, config.ThermalSection), Duration: c.Duration("duration"), CSVFile: c.String("csv")}, err
		}, cmdutil.OrWork(run, cmdutil.Printed(action.Thermal, tables.Thermal))),
	}
}
