package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/output"
	"pidb/report"
	"pidb/usage"
)

const resultsDir = "pidb-results"

func runsCommand() *cli.Command {
	return &cli.Command{
		Name:      "runs",
		Usage:     "list the saved bench and validate runs, newest first",
		UsageText: "pidb runs [--host NAME] [--workload W] [--last N] [--json] [DIR]   (DIR: default ./" + resultsDir + ")",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "host", Usage: "only this host's runs"},
			&cli.StringFlag{Name: "workload", Usage: "only this workload's runs"},
			&cli.IntFlag{Name: "last", Usage: "only the newest `N` (after --host and --workload) (default: all)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usage.Errorf("want one results folder, have %d arguments", c.NArg())
			}
			if c.Int("last") < 0 {
				return usage.Errorf("--last %d: want 0 (all) or more", c.Int("last"))
			}
			dir := resultsDir
			if c.Args().Present() {
				dir = c.Args().First()
			}
			rows, err := action.Runs(action.RunsOptions{Dir: dir, Filter: report.Filter{Host: c.String("host"), Workload: c.String("workload"), Last: c.Int("last")}})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if rows == nil {
					rows = []report.Row{}
				}
				return output.JSON(c.App.Writer, rows)
			}
			cells := make([][]string, 0, len(rows))
			for _, r := range rows {
				cells = append(cells, r.Cells())
			}
			if err := table(c, report.RowHeader, cells); err != nil {
				return err
			}
			for _, r := range rows {
				if r.Error != "" {
					fmt.Fprintf(c.App.ErrWriter, "%s: cannot be read: %s\n", r.Dir, r.Error)
				}
			}
			if len(rows) == 0 {
				fmt.Fprintf(c.App.ErrWriter, "no runs in %s\n", dir)
			}
			return nil
		},
	}
}

func reportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the page to `FILE`", Value: "report.html"},
		&cli.StringFlag{Name: "png", Usage: "also write each chart as a PNG into `DIR`"},
		&cli.StringFlag{Name: "dir", Usage: "the results folder that run ids and no arguments mean", Value: resultsDir},
	}
}

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "one self-contained HTML page of saved runs: the fleet table, charts of throughput, temperature, clock and latency, the settings",
		UsageText: "pidb report [-o report.html] [--png DIR] [DIR | RUN ...]     (no arguments: the newest run of each host in ./" + resultsDir + ")\n" +
			"   pidb report --compare [-o report.html] RUN_A RUN_B [RUN ...]   (RUN: a run's folder, its run.json, or its id)",
		Flags: append(reportFlags(), &cli.BoolFlag{Name: "compare", Usage: "compare the runs named, the first as the base: on the page and as a table on stdout"}),
		Action: func(c *cli.Context) error {
			return runReport(c, c.Bool("compare"))
		},
	}
}

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare saved runs, the first as the base (pidb report --compare)",
		UsageText: "pidb compare [-o report.html] [--png DIR] RUN_A RUN_B [RUN ...]",
		Flags:     reportFlags(),
		Action:    func(c *cli.Context) error { return runReport(c, true) },
	}
}

func runReport(c *cli.Context, compare bool) error {
	if compare && c.NArg() < 2 {
		return usage.Errorf("--compare wants two runs or more (a run's folder, its run.json or its id), have %d", c.NArg())
	}
	runs, source, err := report.Gather(c.Args().Slice(), c.String("dir"))
	if err != nil {
		return usage.Wrap(err)
	}
	in := report.Input{Runs: runs, Source: source, Version: version(), Now: time.Now()}
	if compare {
		in.Compare = runs
	}
	rep, err := report.Build(in)
	if err != nil {
		return err
	}
	if err := rep.WriteFile(c.String("output")); err != nil {
		return err
	}
	if dir := c.String("png"); dir != "" {
		files, err := rep.WritePNGs(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "%d charts written to %s\n", len(files), dir)
	}
	if rep.Comparison != nil {
		for _, s := range rep.Comparison.Cautions {
			fmt.Fprintln(c.App.Writer, s)
		}
		header, rows := rep.Comparison.Table()
		if err := table(c, header, rows); err != nil {
			return err
		}
	}
	abs, _ := filepath.Abs(c.String("output"))
	fmt.Fprintln(c.App.Writer, abs)
	return nil
}
