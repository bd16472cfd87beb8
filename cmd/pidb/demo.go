package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"pidb/demo"
	"pidb/internal/cmdutil"
	"pidb/internal/labcmd"
	"pidb/tables"
	"pidb/usage"
)

// demoCommand is `pidb demo`; run does the work (nil: the demo), a seam
// for the tests of its options.
func demoCommand(run func(*cli.Context, demo.Options) error) *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "the whole job on three simulated Pis: lab up, provision, validate, the Pi 4 in a case against with a fan, the report (Linux, root)",
		UsageText: "pidb demo [--keep] [--duration D] [--thermal-speed N] [--idle D] [--out DIR]\n" +
			"   a few minutes once the lab's base image is cached (the first run builds it and installs the databases)",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "keep", Usage: "leave the lab up at the end, to explore it (a lab that was up before the demo is always left up)"},
			&cli.DurationFlag{Name: "duration", Usage: "each validation's measured time", Value: demo.DefaultDuration},
			&cli.DurationFlag{Name: "warmup", Usage: "each validation's warm-up", Value: demo.DefaultWarmup},
			&cli.DurationFlag{Name: "idle", Usage: "the idle readings before and after each load", Value: demo.DefaultIdle},
			&cli.Float64Flag{Name: "thermal-speed", Usage: "simulated seconds per real second: 1 is real time (a Pi 4 in a case takes minutes to pass 80 C)", Value: demo.DefaultThermalSpeed},
			&cli.StringFlag{Name: "out", Usage: "the runs and the report go into `DIR`", Value: demo.DefaultOut},
			labcmd.DirFlag(),
		}, cmdutil.ViewFlags()...),
		Action: cmdutil.WithOptions(demoOptions, cmdutil.OrWork(run, runDemo)),
	}
}

// demoOptions reads demo's flags.
func demoOptions(c *cli.Context) (demo.Options, error) {
	o := demo.Options{LabDir: c.String("dir"), Out: c.String("out"), Duration: c.Duration("duration"), Warmup: c.Duration("warmup"),
		Idle: c.Duration("idle"), ThermalSpeed: c.Float64("thermal-speed"), Keep: c.Bool("keep"), Log: c.App.ErrWriter, Version: version()}
	switch {
	case c.Args().Present():
		return o, usage.Errorf("unexpected argument %q", c.Args().First())
	case o.Duration <= 0:
		return o, usage.Errorf("--duration %s: want more than zero", o.Duration)
	case o.Warmup < 0:
		return o, usage.Errorf("--warmup %s: want zero or more", o.Warmup)
	case o.Idle < 0:
		return o, usage.Errorf("--idle %s: want zero or more", o.Idle)
	case o.ThermalSpeed <= 0 || o.ThermalSpeed > 1000:
		return o, usage.Errorf("--thermal-speed %g: want more than 0, at most 1000", o.ThermalSpeed)
	}
	o.View = cmdutil.NewView(c)
	return o, nil
}

// runDemo runs the demo and prints its validations, the comparison and
// where the report is.
func runDemo(c *cli.Context, o demo.Options) error {
	res, err := demo.Run(c.Context, o)
	w := c.App.Writer
	if len(res.Validations) > 0 {
		fmt.Fprintln(w)
		if err := cmdutil.Table(c, tables.Demo(res.Validations)); err != nil {
			return err
		}
		fmt.Fprintln(w, "(simulated boards; SPEED board: its board's published CPU capacity as a CPU quota and its card's limits; full: this machine's)")
	}
	if err != nil {
		return err
	}
	if res.Comparison != nil {
		fmt.Fprintln(w, "\nThe Pi 4 in a case (base) against the Pi 4 with a fan:")
		if err := cmdutil.Table(c, tables.Comparison(res.Comparison)); err != nil {
			return err
		}
	}
	abs, _ := filepath.Abs(res.Report)
	fmt.Fprintf(w, "\nThe report: %s\n", abs)
	if res.KeptUp {
		fmt.Fprintf(w, "The lab is up (pidb lab down takes it away). Log in to the simulated Pi 4 the way pidb does:\n  %s\nIts inventory: %s\n", res.SSH, res.Inventory)
	}
	return nil
}
