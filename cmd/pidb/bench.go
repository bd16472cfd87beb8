package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/config"
	"pidb/job"
)

// benchCommand is `pidb bench` with its subcommands, doing their work
// with run's functions.
func benchCommand(run benchRun) *cli.Command {
	if run.bench == nil {
		run.bench = runBench
	}
	if run.check == nil {
		run.check = runTPCCCheck
	}
	if run.cleanup == nil {
		run.cleanup = runBenchCleanup
	}
	return &cli.Command{
		Name:      "bench",
		Usage:     "run a workload on each Pi from this machine, and save the run",
		UsageText: "pidb bench -i FILE [--limit NAMES] [--workload tpcb] [--clients N] [--duration D] [--scale N] [--warmup D] [--interval D] [--protocol simple|prepared] [--queries N] [--mix W:W:W:W:W] [--use-fk=false] [--reload] [--check] [--via auto|direct|ssh] [--tls auto|on|off] [--out DIR] [--json]",
		Flags: append(append(append(append(fleetFlags(), workloadFlags(config.ForBench)...),
			settingFlags(config.ForBench, "tables", "table-size", "interval", "protocol", "queries", "reload", "use-fk", "check", "threads", "via", "tls")...),
			thermalFlags(config.ForBench)...),
			outFlag(),
			&cli.StringFlag{Name: "cpuprofile", Usage: "write this client's CPU profile to `FILE` (pprof), for work on its cost", Hidden: true},
		),
		Action: func(c *cli.Context) error {
			f, err := fleetOf(c)
			if err != nil {
				return err
			}
			return run.bench(c, action.BenchOptions{Fleet: f, Workload: workloadOf(c), Out: c.String("out"), Version: version()})
		},
		Subcommands: []*cli.Command{{
			Name:  "tpcc",
			Usage: "TPC-C's own commands",
			Subcommands: []*cli.Command{{
				Name:      "check",
				Usage:     "test the standard's consistency conditions 1-4 on every warehouse of tpcc's tables on each Pi",
				UsageText: "pidb bench tpcc check -i FILE [--limit NAMES] [--tables N] [--via auto|direct|ssh] [--tls auto|on|off] [--json]",
				Flags:     append(fleetFlags(), settingFlags(config.ForBench, "tables", "via", "tls")...),
				Action: func(c *cli.Context) error {
					f, err := fleetOf(c)
					if err != nil {
						return err
					}
					return run.check(c, action.CheckOptions{Fleet: f, Workload: workloadOf(c)})
				},
			}},
		}, {
			Name:      "cleanup",
			Usage:     "drop pidb's own benchmark database (and every workload's tables in it) on each Pi",
			UsageText: "pidb bench cleanup -i FILE [--limit NAMES] [--json]",
			Flags:     fleetFlags(),
			Action: func(c *cli.Context) error {
				f, err := fleetOf(c)
				if err != nil {
					return err
				}
				return run.cleanup(c, action.CleanupOptions{Fleet: f})
			},
		}},
	}
}

func outFlag() cli.Flag {
	return &cli.StringFlag{Name: "out", Usage: "save runs under `DIR`", Value: "pidb-results"}
}

// benchRun does the work of bench and its subcommands; a nil one is the
// command's own (runBench, runTPCCCheck, runBenchCleanup): a seam for the
// tests of their options.
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
	rows := make([][]string, 0, len(js))
	for _, b := range js {
		if b.Error != "" && b.RunDir == "" {
			rows = append(rows, []string{b.Host, b.Workload, "", "", "", "", "", "", "", "", failedCell, ""})
			continue
		}
		var errs []string
		if b.DownS > 0 {
			errs = append(errs, fmt.Sprintf("DOWN %.1fs (see stderr)", b.DownS))
		}
		for k, v := range b.Errors {
			errs = append(errs, fmt.Sprintf("%s:%d", k, v))
		}
		rows = append(rows, []string{b.Host, b.Workload, strconv.Itoa(b.Clients), strconv.FormatInt(b.Transactions, 10), fmt.Sprintf("%.2f", b.DurationS),
			fmt.Sprintf("%.1f", b.TPS), fmt.Sprintf("%.1f", b.QPS), fmt.Sprintf("%.3f", b.LatencyMs.Avg), fmt.Sprintf("%.3f", b.P95Ms),
			fmt.Sprintf("%.3f", b.LatencyMs.P99), strings.Join(errs, ","), b.RunDir})
	}
	if perr := printResults(c, js, []string{"HOST", "WORKLOAD", "CLIENTS", "TRANSACTIONS", "SECONDS", "TPS", "QPS", "AVG_MS", "P95_MS", "P99_MS", "ERRORS", "RUN"}, rows); perr != nil {
		return perr
	}
	if !c.Bool("json") {
		if perr := opsTables(c, js); perr != nil {
			return perr
		}
	}
	return err
}

// opsTables print, for the hosts whose workload reports its transaction
// types (tpcc), a table of them (with tpmC), and the consistency checks
// that ran after a run.
func opsTables(c *cli.Context, js []job.BenchResult) error {
	var ops, checks [][]string
	for _, b := range js {
		for _, o := range b.Ops {
			ops = append(ops, []string{b.Host, o.Name, strconv.FormatInt(o.Count, 10), fmt.Sprintf("%.2f", o.Rate), fmt.Sprintf("%.3f", o.P50Ms),
				fmt.Sprintf("%.3f", o.P95Ms), fmt.Sprintf("%.3f", o.P99Ms), strconv.FormatInt(o.Errors, 10)})
		}
		if len(b.Ops) > 0 {
			ops = append(ops, []string{b.Host, "tpmC", fmt.Sprintf("%.1f", b.TpmC), "", "", "", "", fmt.Sprintf("%d retried, %d rolled back", b.Retries, b.RolledBack)})
		}
		checks = append(checks, checkRows(b.Host, b.Checks)...)
	}
	if len(ops) > 0 {
		fmt.Fprintln(c.App.Writer)
		if err := table(c, []string{"HOST", "TRANSACTION", "COUNT", "PER_S", "P50_MS", "P95_MS", "P99_MS", "ERRORS"}, ops); err != nil {
			return err
		}
	}
	if len(checks) > 0 {
		fmt.Fprintln(c.App.Writer)
		return table(c, checkHeader, checks)
	}
	return nil
}

var checkHeader = []string{"HOST", "TABLE", "WAREHOUSE", "CONDITION", "RESULT", "DETAIL"}

func checkRows(host string, cs []job.Check) [][]string {
	var out [][]string
	for _, k := range cs {
		out = append(out, []string{host, strconv.Itoa(k.Table), strconv.FormatInt(k.Warehouse, 10), fmt.Sprintf("%d: %s", k.Condition, k.Name),
			map[bool]string{true: "PASS", false: "FAIL"}[k.Pass], k.Detail})
	}
	return out
}

// runTPCCCheck tests tpcc's consistency conditions on each host and
// prints every condition's result.
func runTPCCCheck(c *cli.Context, o action.CheckOptions) error {
	js, err := action.CheckTPCC(c.Context, o)
	if js == nil {
		return err
	}
	var rows [][]string
	for _, j := range js {
		rows = append(rows, checkRows(j.Host, j.Checks)...)
		if len(j.Checks) == 0 && j.Error != "" {
			rows = append(rows, []string{j.Host, "", "", "", failedCell, ""})
		}
	}
	if perr := printResults(c, js, checkHeader, rows); perr != nil {
		return perr
	}
	return err
}

// runBenchCleanup drops pidb's benchmark database where pidb made it, and
// prints what it did on each host.
func runBenchCleanup(c *cli.Context, o action.CleanupOptions) error {
	js, err := action.Cleanup(c.Context, o)
	if js == nil {
		return err
	}
	rows := make([][]string, 0, len(js))
	for _, j := range js {
		what := map[bool]string{true: "dropped", false: "nothing to drop"}[j.Dropped]
		if j.Error != "" {
			what = failedCell
		}
		rows = append(rows, []string{j.Host, j.Database, what})
	}
	if perr := printResults(c, js, []string{"HOST", "DATABASE", "RESULT"}, rows); perr != nil {
		return perr
	}
	return err
}
