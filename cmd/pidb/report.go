package main

import (
	"cmp"
	"fmt"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/internal/cmdutil"
	"pidb/output"
	"pidb/report"
	"pidb/tables"
	"pidb/usage"
)

const resultsDir = "pidb-results"

// runsCommand is `pidb runs`; run does the work (nil: runRuns), a seam
// for the tests of its options.
func runsCommand(run func(*cli.Context, action.RunsOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "runs",
		Usage:     "list the saved bench and validate runs, newest first",
		UsageText: "pidb runs [--host NAME] [--workload W] [--last N] [--json] [DIR]   (DIR: default ./" + resultsDir + ")",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "host", Usage: "only this host's runs"},
			&cli.StringFlag{Name: "workload", Usage: "only this workload's runs"},
			&cli.IntFlag{Name: "last", Usage: "only the newest `N` (after --host and --workload) (default: all)"},
			cmdutil.JSONFlag(),
		},
		Action: cmdutil.WithOptions(func(c *cli.Context) (action.RunsOptions, error) {
			o := action.RunsOptions{Dir: cmp.Or(c.Args().First(), resultsDir), Filter: report.Filter{Host: c.String("host"), Workload: c.String("workload"), Last: c.Int("last")}}
			switch {
			case c.NArg() > 1:
				return o, usage.Errorf("want one results folder, have %d arguments", c.NArg())
			case o.Filter.Last < 0:
				return o, usage.Errorf("--last %d: want 0 (all) or more", o.Filter.Last)
			}
			return o, nil
		}, cmdutil.OrWork(run, runRuns)),
	}
}

// runRuns lists the runs: a table, or JSON; what cannot be read, on stderr.
func runRuns(c *cli.Context, o action.RunsOptions) error {
	rows, listed, err := action.Runs(o)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if rows == nil {
			rows = []report.Row{}
		}
		return output.JSON(c.App.Writer, rows)
	}
	if len(rows) > 0 {
		if err := cmdutil.Table(c, tables.Runs(rows)); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(c.App.ErrWriter, "%s: cannot be read: %s\n", r.Dir, r.Error)
		}
	}
	switch {
	case len(rows) > 0:
	case listed > 0:
		fmt.Fprintf(c.App.ErrWriter, "%s holds %d runs; none match %s\n", o.Dir, listed, o.Filter.Flags())
	default:
		fmt.Fprintf(c.App.ErrWriter, "no runs in %s\n", o.Dir)
	}
	return nil
}

func reportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the page to `FILE`", Value: "report.html"},
		&cli.StringFlag{Name: "png", Usage: "also write each chart as a PNG into `DIR`"},
		&cli.StringFlag{Name: "dir", Usage: "the results folder that run ids and no arguments mean", Value: resultsDir},
	}
}

// reportCommand is `pidb report`; run does the work (nil: runReport), a
// seam for the tests of its options.
func reportCommand(run func(*cli.Context, action.ReportOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "one self-contained HTML page of saved runs: the fleet table, charts of throughput, temperature, clock and latency, the settings",
		UsageText: "pidb report [-o report.html] [--png DIR] [DIR | RUN ...]     (no arguments: the newest run of each host in ./" + resultsDir + ")\n" +
			"   pidb report --compare [-o report.html] RUN_A RUN_B [RUN ...]   (RUN: a run's folder, its run.json, or its id)",
		Flags: append(reportFlags(), &cli.BoolFlag{Name: "compare", Usage: "compare the runs named, the first as the base: on the page and as a table on stdout"}),
		Action: func(c *cli.Context) error {
			return cmdutil.OrWork(run, runReport)(c, reportOptions(c, c.Bool("compare")))
		},
	}
}

// compareCommand is `pidb compare`, report --compare; run does the work
// (nil: runReport).
func compareCommand(run func(*cli.Context, action.ReportOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare saved runs, the first as the base (pidb report --compare)",
		UsageText: "pidb compare [-o report.html] [--png DIR] RUN_A RUN_B [RUN ...]",
		Flags:     reportFlags(),
		Action:    func(c *cli.Context) error { return cmdutil.OrWork(run, runReport)(c, reportOptions(c, true)) },
	}
}

// reportOptions reads report's flags and its runs.
func reportOptions(c *cli.Context, compare bool) action.ReportOptions {
	return action.ReportOptions{Runs: c.Args().Slice(), Dir: c.String("dir"), Compare: compare, Output: c.String("output"), PNGDir: c.String("png"), Version: version()}
}

// runReport writes the page, and prints the comparison and where the page is.
func runReport(c *cli.Context, o action.ReportOptions) error {
	r, err := action.Report(o)
	if err != nil {
		return err
	}
	for _, x := range r.Unreadable {
		cmdutil.Lines(c.App.ErrWriter, fmt.Sprintf("%s: cannot be read, left off the page: %v", x.Dir, x.Err))
	}
	if o.PNGDir != "" {
		fmt.Fprintf(c.App.ErrWriter, "%d charts written to %s\n", len(r.PNGs), o.PNGDir)
	}
	if r.Comparison != nil {
		for _, s := range r.Comparison.Cautions {
			fmt.Fprintln(c.App.Writer, s)
		}
		if err := cmdutil.Table(c, tables.Comparison(r.Comparison)); err != nil {
			return err
		}
	}
	fmt.Fprintln(c.App.Writer, r.Page)
	return nil
}
