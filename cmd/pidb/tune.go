package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/inventory"
	"pidb/job"
	"pidb/output"
	"pidb/tune"
)

// tuneCommand is `pidb tune`; run does the work of apply and rollback
// (nil: runProvision), a seam for the tests of their options.
func tuneCommand(run func(*cli.Context, action.ProvisionOptions) error) *cli.Command {
	if run == nil {
		run = runProvision
	}
	steps := func(s job.Steps) cli.ActionFunc {
		return func(c *cli.Context) error {
			o, err := stepsOf(c, s)
			if err != nil {
				return err
			}
			return run(c, o)
		}
	}
	return &cli.Command{
		Name:  "tune",
		Usage: "the tuner: RAM-scaled settings for PostgreSQL, MySQL and MariaDB",
		Subcommands: []*cli.Command{
			{
				Name:      "show",
				Usage:     "print the settings for a board, offline",
				UsageText: "pidb tune show --engine postgres|mysql|mariadb [--version V] --mem SIZE --cpus N [--storage S] [--preset P] [--set name=value]... [--max-connections N] [--format conf|json] [--json]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "engine", Usage: "postgres, mysql or mariadb"},
					&cli.StringFlag{Name: "version", Usage: "the server's version (default: what Debian 12 / Raspberry Pi OS ships)"},
					&cli.StringFlag{Name: "mem", Usage: "the board's nominal RAM, e.g. 4GiB or 512MB (binary)"},
					&cli.IntFlag{Name: "cpus", Usage: "cores", DefaultText: "none: give it"},
					&cli.StringFlag{Name: "storage", Usage: "sd, usb, nvme or unknown", Value: "sd"},
					&cli.StringFlag{Name: "preset", Usage: strings.Join(tune.PresetNames(), ", ") + " (see pidb tune presets)", Value: "balanced"},
					&cli.StringSliceFlag{Name: "set", Usage: "override a setting: `name=value` (repeatable)"},
					&cli.IntFlag{Name: "max-connections", Usage: "connections to plan for (default: scaled to RAM)"},
					&cli.StringFlag{Name: "format", Usage: "conf (the drop-in file) or json", Value: "conf"},
					jsonFlag(),
				},
				Action: tuneShow,
			},
			{
				Name:      "apply",
				Usage:     "the configure step of provision alone: write the tuner's drop-in, restart, verify",
				UsageText: "pidb tune apply -i FILE [--limit NAMES] [--preset P] [--dry-run] [--json]",
				Flags: append(fleetFlags(),
					&cli.StringFlag{Name: "preset", Usage: "override the inventory's preset for this run: " + strings.Join(tune.PresetNames(), ", ")},
					&cli.BoolFlag{Name: "dry-run", Usage: "show the diff and change nothing"},
				),
				Action: steps(job.Configure),
			},
			{
				Name:      "rollback",
				Usage:     "put back the drop-in pidb replaced last, restart, verify (a second rollback undoes the first)",
				UsageText: "pidb tune rollback -i FILE [--limit NAMES] [--json]",
				Flags:     fleetFlags(),
				Action:    steps(job.Rollback),
			},
			{
				Name:  "presets",
				Usage: "list the presets",
				Flags: []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error {
					if c.Bool("json") {
						type p struct {
							Name        string `json:"name"`
							Description string `json:"description"`
						}
						var out []p
						for _, x := range tune.Presets {
							out = append(out, p{x.Name, x.Description})
						}
						return output.JSON(c.App.Writer, out)
					}
					var rows [][]string
					for _, x := range tune.Presets {
						rows = append(rows, []string{x.Name, x.Description})
					}
					return table(c, []string{"PRESET", "DESCRIPTION"}, rows)
				},
			},
		},
	}
}

func tuneShow(c *cli.Context) error {
	if c.Args().Present() {
		return usagef("unexpected argument %q (flags go before arguments)", c.Args().First())
	}
	for _, f := range []string{"engine", "mem", "cpus"} {
		if !c.IsSet(f) {
			return usagef("tune show needs --%s", f)
		}
	}
	mem, err := inventory.ParseSize(c.String("mem"))
	if err != nil {
		return usagef("--mem: %v", err)
	}
	overrides := map[string]string{}
	for _, kv := range c.StringSlice("set") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return usagef("--set %q: want name=value", kv)
		}
		overrides[strings.TrimSpace(k)] = v
	}
	engine := c.String("engine")
	if engine == "postgresql" {
		engine = "postgres"
	}
	in := tune.Input{Flavor: engine, Version: c.String("version"), RAMBytes: mem, CPUs: c.Int("cpus"),
		Storage: c.String("storage"), MaxConnections: c.Int("max-connections")}
	s, err := tune.Recommend(in, c.String("preset"), overrides)
	if err != nil {
		return usageError{err}
	}
	in, _ = tune.Normalize(in)
	format := c.String("format")
	if c.Bool("json") {
		if c.IsSet("format") && format != "json" {
			return usagef("--json and --format %s: give one", format)
		}
		format = "json"
	}
	switch format {
	case "conf":
		_, err := fmt.Fprint(c.App.Writer, tune.Render(in, c.String("preset"), s))
		return err
	case "json":
		return output.JSON(c.App.Writer, tune.JSON(in.Flavor, s))
	}
	return usagef("--format %q: want conf or json", c.String("format"))
}
