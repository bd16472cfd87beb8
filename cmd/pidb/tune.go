package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/internal/cmdutil"
	"pidb/job"
	"pidb/output"
	"pidb/tables"
	"pidb/units"
	"pidb/usage"
)

// tuneRun does the work of tune's subcommands; a nil one is the
// command's own (runProvision for apply and rollback, runTuneShow): a
// seam for the tests of their options.
type tuneRun struct {
	steps func(*cli.Context, action.ProvisionOptions) error
	show  func(*cli.Context, action.TuneShowOptions) error
}

// tuneCommand is `pidb tune` with its subcommands, doing their work with
// run's functions.
func tuneCommand(run tuneRun) *cli.Command {
	steps := func(s job.Steps) cli.ActionFunc {
		return cmdutil.WithOptions(stepsOf(s), cmdutil.OrWork(run.steps, runProvision))
	}
	return &cli.Command{
		Name:  "tune",
		Usage: "the tuner: RAM-scaled settings for PostgreSQL, MySQL and MariaDB",
		Subcommands: []*cli.Command{
			{
				Name:      "show",
				Usage:     "print the settings for a board, offline",
				UsageText: "pidb tune show --engine postgres|mysql|mariadb [--version V] --mem SIZE --cpus N [--storage S] [--bits 32|64] [--preset P] [--set name=value]... [--max-connections N] [--format conf|json] [--json]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "engine", Usage: "postgres, mysql or mariadb"},
					&cli.StringFlag{Name: "version", Usage: "the server's version (default: what current Raspberry Pi OS ships: PostgreSQL 17, MariaDB 11.8; MySQL 8.4)"},
					&cli.StringFlag{Name: "mem", Usage: "the board's nominal RAM, e.g. 4GiB or 512MB (binary)"},
					&cli.IntFlag{Name: "cpus", Usage: "cores", DefaultText: "none: give it"},
					&cli.StringFlag{Name: "storage", Usage: "sd, usb, nvme or unknown", Value: "sd"},
					&cli.IntFlag{Name: "bits", Usage: "the server's word size: 32 for a 32-bit userland (armhf: sized within 3 GB), else 64", Value: 64},
					&cli.StringFlag{Name: "preset", Usage: strings.Join(action.PresetNames(), ", ") + " (see pidb tune presets)", Value: action.DefaultPreset},
					&cli.StringSliceFlag{Name: "set", Usage: "override a setting: `name=value` (repeatable)"},
					&cli.IntFlag{Name: "max-connections", Usage: "connections to plan for (default: scaled to RAM)"},
					&cli.StringFlag{Name: "format", Usage: "conf (the drop-in file) or json", Value: "conf"},
					cmdutil.JSONFlag(),
				},
				Action: cmdutil.WithOptions(tuneShowOptions, cmdutil.OrWork(run.show, runTuneShow)),
			},
			{
				Name:      "apply",
				Usage:     "the os and configure steps of provision: the kernel's overcommit for the preset, the tuner's drop-in, restart, verify",
				UsageText: "pidb tune apply -i FILE [--limit NAMES] [--preset P] [--dry-run] [--json]",
				Flags: append(fleetFlags(),
					&cli.StringFlag{Name: "preset", Usage: "override the inventory's preset for this run: " + strings.Join(action.PresetNames(), ", ")},
					&cli.BoolFlag{Name: "dry-run", Usage: "show the diff and change nothing"},
				),
				Action: steps(job.Configure),
			},
			{
				Name:      "rollback",
				Usage:     "put back the drop-in pidb replaced last, restart, verify (a second rollback undoes the first)",
				UsageText: "pidb tune rollback -i FILE [--limit NAMES] [--dry-run] [--json]",
				Flags: append(fleetFlags(),
					&cli.BoolFlag{Name: "dry-run", Usage: "show the diff and change nothing"},
				),
				Action: steps(job.Rollback),
			},
			{
				Name:  "presets",
				Usage: "list the presets",
				Flags: []cli.Flag{cmdutil.JSONFlag()},
				Action: func(c *cli.Context) error {
					return cmdutil.PrintResults(c, action.Presets(), tables.Presets(action.Presets()), cmdutil.NoArguments(c))
				},
			},
		},
	}
}

// tuneShowOptions reads tune show's flags: the board, the preset, and
// each --set name=value.
func tuneShowOptions(c *cli.Context) (action.TuneShowOptions, error) {
	if c.Args().Present() {
		return action.TuneShowOptions{}, usage.Errorf("unexpected argument %q: pidb tune show takes no arguments", c.Args().First())
	}
	for _, f := range []string{"engine", "mem", "cpus"} {
		if !c.IsSet(f) {
			return action.TuneShowOptions{}, usage.Errorf("tune show needs --%s", f)
		}
	}
	mem, err := units.ParseSize(c.String("mem"))
	if err != nil {
		return action.TuneShowOptions{}, usage.Errorf("--mem: %v", err)
	}
	if b := c.Int("bits"); b != 32 && b != 64 {
		return action.TuneShowOptions{}, usage.Errorf("--bits %d: want 32 (a 32-bit userland, armhf) or 64", b)
	}
	o := action.TuneShowOptions{Engine: c.String("engine"), Version: c.String("version"), RAMBytes: mem, CPUs: c.Int("cpus"), Storage: c.String("storage"),
		Bits: c.Int("bits"), MaxConnections: c.Int("max-connections"), Preset: c.String("preset"), Set: map[string]string{}}
	for _, kv := range c.StringSlice("set") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return o, usage.Errorf("--set %q: want name=value", kv)
		}
		o.Set[strings.TrimSpace(k)] = v
	}
	return o, nil
}

// runTuneShow prints the tuner's drop-in file, or its settings in JSON.
func runTuneShow(c *cli.Context, o action.TuneShowOptions) error {
	format := c.String("format")
	if c.Bool("json") {
		if c.IsSet("format") && format != "json" {
			return usage.Errorf("--json and --format %s: give one", format)
		}
		format = "json"
	}
	if format != "conf" && format != "json" {
		return usage.Errorf("--format %q: want conf or json", c.String("format"))
	}
	t, err := action.TuneShow(o)
	if err != nil {
		return err
	}
	for _, w := range t.Warnings {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", w)
	}
	if format == "json" {
		return output.JSON(c.App.Writer, t.JSON)
	}
	_, err = fmt.Fprint(c.App.Writer, t.Conf)
	return err
}
