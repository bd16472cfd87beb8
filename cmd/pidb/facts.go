package main

import (
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/output"
)

// factsCommand is `pidb facts`; run does the work (nil: runFacts), a
// seam for the tests of its options.
func factsCommand(run func(*cli.Context, action.FactsOptions) error) *cli.Command {
	if run == nil {
		run = runFacts
	}
	return &cli.Command{
		Name:      "facts",
		Usage:     "show what each Pi is: model, RAM, cores, OS, storage, boot target, thermal sensor, engine",
		UsageText: "pidb facts -i FILE [--limit NAMES] [--concurrency N] [--json] [--accept-new-host-keys]",
		Flags:     fleetFlags(),
		Action: func(c *cli.Context) error {
			f, err := fleetOf(c)
			if err != nil {
				return err
			}
			return run(c, action.FactsOptions{Fleet: f})
		},
	}
}

// runFacts gathers the facts and prints them.
func runFacts(c *cli.Context, o action.FactsOptions) error {
	results, err := action.Facts(c.Context, o)
	if results == nil {
		return err
	}
	if c.Bool("json") {
		if err := output.JSON(c.App.Writer, factsJSON(results)); err != nil {
			return err
		}
	} else if err := table(c, factsHeader, factsRows(results)); err != nil {
		return err
	}
	return err
}

// factsJSON is one object per host: the facts, or the host and its error.
func factsJSON(results []action.HostFacts) []any {
	out := make([]any, 0, len(results))
	for _, r := range results {
		if r.Err != nil {
			out = append(out, map[string]any{"host": r.Host.Name, "address": r.Host.Address, "error": r.Err.Error()})
			continue
		}
		out = append(out, r.Value)
	}
	return out
}

var factsHeader = []string{"HOST", "MODEL", "RAM", "MEMTOTAL", "CPUS", "ARCH", "PAGE", "OS", "STORAGE", "BOOT", "DESKTOP", "THERMAL", "ENGINE"}

func factsRows(results []action.HostFacts) [][]string {
	rows := make([][]string, 0, len(results))
	for _, r := range results {
		if r.Err != nil {
			rows = append(rows, []string{r.Host.Name, failedCell, "", "", "", "", "", "", "", "", "", "", ""})
			continue
		}
		f := r.Value
		engine := "none"
		if f.Engine.Flavor != "" {
			engine = f.Engine.Flavor + " " + f.Engine.Version
			if f.Engine.Running {
				engine += " (running)"
			} else {
				engine += " (stopped)"
			}
		}
		model := f.Model
		if f.Simulated != "" {
			model += " (simulated, " + f.Simulated + " speed)"
		}
		rows = append(rows, []string{
			f.Host, model, mib(f.RAMBytes), mib(f.MemBytes), strconv.Itoa(f.CPUs), f.Arch, pageSize(f.PageSize),
			f.OS.ID + " " + f.OS.VersionID, f.Storage, f.BootTarget, yesNo(f.Desktop), yesNo(f.Thermal), engine,
		})
	}
	return rows
}

func pageSize(b int) string {
	if b == 0 {
		return "?"
	}
	return strconv.Itoa(b>>10) + "K"
}

func mib(b uint64) string { return fmt.Sprintf("%d MiB", b>>20) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
