package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/config"
	"pidb/internal/cmdutil"
	"pidb/tables"
)

// benchCommand is `pidb bench` with its subcommands, doing their work
// with run's functions.
func benchCommand(run benchRun) *cli.Command {
	return &cli.Command{
		Name:      "bench",
		Usage:     "run a workload on each Pi from this machine, and save the run",
		UsageText: "pidb bench -i FILE [--limit NAMES] [--workload tpcb] [--clients N] [--duration D] [--scale N] [--warmup D] [--interval D] [--protocol simple|prepared] [--queries N] [--mix W:W:W:W:W] [--use-fk=false] [--reload] [--check] [--via auto|direct|ssh] [--tls auto|on|off] [--out DIR] [--cluster NAME] [--json]",
		Flags: append(append(fleetFlags(), benchSettings().Flags(config.ForBench)...),
			outFlag(),
			&cli.StringFlag{Name: "cluster", Usage: "measure every host of the inventory's cluster `NAME` at once (quiz or oltp-read-only: the data made on its primary, read on every host), with the cluster's totals"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write this client's CPU profile to `FILE` (pprof), for work on its cost", Hidden: true},
		),
		Action: cmdutil.WithOptions(func(c *cli.Context) (action.BenchOptions, error) {
			f, err := fleetOf(c)
			return action.BenchOptions{Fleet: f, Workload: workloadOf(c, benchSettings()), Out: c.String("out"), Version: version(), Cluster: c.String("cluster")}, err
		}, cmdutil.OrWork(run.bench, runBench)),
		Subcommands: []*cli.Command{
			checkCommand(run, "tpcc", "TPC-C's own commands",
				"test the standard's consistency conditions 1-4 on every warehouse of tpcc's tables on each Pi",
				"pidb bench tpcc check -i FILE [--limit NAMES] [--tables N] [--via auto|direct|ssh] [--tls auto|on|off] [--json]",
				tpccCheckSettings()),
			checkCommand(run, "tpcb", "the TPC-B-like workload's own commands",
				"test tpcb's tables on each Pi: pgbench's rows for the scale, and every branch's, teller's and account's balance the sum of its history (after a crash or a power cut: no transaction half kept)",
				"pidb bench tpcb check -i FILE [--limit NAMES] [--via auto|direct|ssh] [--tls auto|on|off] [--json]",
				tpcbCheckSettings()),
			{
				Name:      "cleanup",
				Usage:     "drop pidb's own benchmark database (and every workload's tables in it) on each Pi",
				UsageText: "pidb bench cleanup -i FILE [--limit NAMES] [--json]",
				Flags:     fleetFlags(),
				Action: cmdutil.WithOptions(func(c *cli.Context) (action.CleanupOptions, error) {
					f, err := fleetOf(c)
					return action.CleanupOptions{Fleet: f}, err
				}, cmdutil.OrWork(run.cleanup, cmdutil.Printed(action.Cleanup, tables.Cleanup))),
			}},
	}
}

// checkCommand is `pidb bench WORKLOAD check`, under a command of the
// workload's own.
func checkCommand(run benchRun, workload, usageOf, usageCheck, usageText string, settings cmdutil.Settings) *cli.Command {
	return &cli.Command{
		Name:  workload,
		Usage: usageOf,
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     usageCheck,
			UsageText: usageText,
			Flags:     append(fleetFlags(), settings.Flags(config.ForBench)...),
			Action: cmdutil.WithOptions(func(c *cli.Context) (action.CheckOptions, error) {
				f, err := fleetOf(c)
				return action.CheckOptions{Fleet: f, Workload: workloadOf(c, settings), Name: workload}, err
			}, cmdutil.OrWork(run.check, cmdutil.Printed(action.Check, tables.Check))),
		}},
	}
}

func outFlag() cli.Flag {
	return &cli.StringFlag{Name: "out", Usage: "save runs under `DIR`", Value: "pidb-results"}
}

// benchRun does the work of bench and its subcommands; a nil one is the
// command's own: a seam for the tests of their options.
type benchRun struct {
	bench   func(*cli.Context, action.BenchOptions) error
	check   func(*cli.Context, action.CheckOptions) error
	cleanup func(*cli.Context, action.CleanupOptions) error
}

// runBench runs the workload on the hosts and prints each one's run, and
// tpcc's transactions and checks.
func runBench(c *cli.Context, o action.BenchOptions) error {
	if path := c.String("cpuprofile"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	js, err := action.Bench(c.Context, o)
	if js == nil {
		return err
	}
	if c.Bool("json") {
		return cmdutil.PrintResults(c, js, tables.Table{}, err)
	}
	perHost := tables.Bench(js)
	if o.Cluster != "" {
		perHost = tables.BenchCluster(js)
	}
	for i, t := range []tables.Table{perHost, tables.ReplicaLag(js), tables.Ops(js), tables.BenchChecks(js)} {
		if i > 0 && len(t.Rows) > 0 {
			fmt.Fprintln(c.App.Writer)
		}
		if len(t.Rows) > 0 || i == 0 {
			if perr := cmdutil.Table(c, t); perr != nil {
				return perr
			}
		}
	}
	return err
}
