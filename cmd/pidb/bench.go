package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/bench/workloads"
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
	d, t := config.DefaultBench(), config.DefaultThermal(config.ForBench)
	return &cli.Command{
		Name:      "bench",
		Usage:     "run a workload on each Pi from this machine, and save the run",
		UsageText: "pidb bench -i FILE [--limit NAMES] [--workload tpcb] [--clients N] [--duration D] [--scale N] [--warmup D] [--interval D] [--protocol simple|prepared] [--queries N] [--mix W:W:W:W:W] [--use-fk=false] [--reload] [--check] [--via auto|direct|ssh] [--tls auto|on|off] [--out DIR] [--json]",
		Flags: append(append(fleetFlags(), workloadFlags()...),
			&cli.IntFlag{Name: "tables", Usage: workloads.ParamHelp("tables"), DefaultText: "the workload's"},
			&cli.IntFlag{Name: "table-size", Usage: workloads.ParamHelp("table_size"), DefaultText: "the workload's"},
			&cli.DurationFlag{Name: "interval", Usage: fmt.Sprintf("one point of the series per `D` (default: the inventory's [bench], else %s)", d.Interval)},
			&cli.StringFlag{Name: "protocol", Usage: "tpcb and quiz: simple (the value in the statement's text: pgbench's default, and load.py's through MySQLdb) or prepared (pgbench -M prepared); oltp-read-only always prepares, as sysbench does"},
			&cli.IntFlag{Name: "queries", Usage: "quiz: a fixed amount of work instead of a time: each client runs `N` queries, as load.py's QUERIES, with no warm-up; --duration is then the most it may take", DefaultText: "a timed run"},
			&cli.BoolFlag{Name: "reload", Usage: "load the workload's data again, even when what is there matches"},
			&cli.BoolFlag{Name: "use-fk", Value: true, Usage: "tpcc: load the tables with sysbench-tpcc's foreign keys (--use-fk=false: without, as its --use_fk=0; a load of the other kind is loaded again)"},
			&cli.BoolFlag{Name: "check", Usage: "tpcc: after the run, test the standard's consistency conditions 1-4 on every warehouse (as pidb bench tpcc check); one that fails is exit 1"},
			&cli.IntFlag{Name: "threads", Usage: "threads the clients share (every workload), each waiting on its clients' sockets at once, as pgbench -j; 0: a thread per client (default: this machine's cores)"},
			&cli.StringFlag{Name: "via", Usage: "auto (direct when allow_from lets this machine in), direct, or ssh (through the SSH connection)"},
			&cli.StringFlag{Name: "tls", Usage: "auto (on for a direct run to a host whose network logins need TLS, as tls = true in the inventory has it), on, or off (refused by a server that requires TLS)"},
			&cli.DurationFlag{Name: "thermal-interval", Usage: fmt.Sprintf("one thermal reading per `D` beside the run (default: the inventory's [thermal] interval, else %s)", t.Interval)},
			&cli.DurationFlag{Name: "idle-before", Usage: fmt.Sprintf("thermal readings for `D` before the load, as a baseline (default: the inventory's [thermal] idle_before, else %s)", t.IdleBefore)},
			&cli.DurationFlag{Name: "idle-after", Usage: fmt.Sprintf("thermal readings for `D` after the load, the cool-down (default: the inventory's [thermal] idle_after, else %s)", t.IdleAfter)},
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
				Flags: append(fleetFlags(),
					&cli.IntFlag{Name: "tables", Usage: "the table copies to check (sysbench-tpcc's --tables)", DefaultText: "the inventory's [bench], else 1"},
					&cli.StringFlag{Name: "via", Usage: "auto (direct when allow_from lets this machine in), direct, or ssh (through the SSH connection)"},
					&cli.StringFlag{Name: "tls", Usage: "auto, on or off, as for pidb bench"}),
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

// workloadFlags are the workload's flags that bench and validate share.
func workloadFlags() []cli.Flag {
	d := config.DefaultBench()
	return []cli.Flag{
		&cli.StringFlag{Name: "workload", Usage: workloads.Help()},
		&cli.IntFlag{Name: "clients", Usage: fmt.Sprintf("client connections (default: the inventory's [bench], else %d)", d.Clients)},
		&cli.DurationFlag{Name: "duration", Usage: fmt.Sprintf("measured time (default: the inventory's [bench], else %s)", d.Duration)},
		&cli.IntFlag{Name: "scale", Usage: workloads.ParamHelp("scale"), DefaultText: "the workload's"},
		&cli.DurationFlag{Name: "warmup", Usage: fmt.Sprintf("time before measuring (default: the inventory's [bench], else %s)", d.Warmup)},
		&cli.StringFlag{Name: "mix", Usage: "tpcc: the transactions' weights, new_order:payment:order_status:delivery:stock_level (sysbench-tpcc's is 10:10:1:1:1)", DefaultText: "the standard's 45:43:4:4:4"},
	}
}

// benchKeys are the flags that override [bench], by the inventory's key.
var benchKeys = []string{"workload", "clients", "duration", "scale", "warmup", "tables", "table_size", "interval", "protocol", "threads", "via", "tls", "queries", "mix", "use_fk", "reload", "check"}

// thermalKeys map the flags that override [thermal] to its keys.
var thermalKeys = map[string]string{"thermal-interval": "interval", "idle-before": "idle_before", "idle-after": "idle_after"}

// setFlags are the values of the flags given on the command line, by the
// inventory's keys: flag names are keys with - for _, or as keys maps them.
func setFlags(c *cli.Context, keys []string, renamed map[string]string) config.Values {
	v := config.Values{}
	add := func(flag, key string) {
		if c.IsSet(flag) {
			v[key] = c.Value(flag) // int, string, bool or time.Duration, as config reads them
		}
	}
	for _, k := range keys {
		add(strings.ReplaceAll(k, "_", "-"), k)
	}
	for f, k := range renamed {
		add(f, k)
	}
	return v
}

// workloadOf is the workload the flags ask for, over the inventory's.
func workloadOf(c *cli.Context) action.Workload {
	return action.Workload{Bench: setFlags(c, benchKeys, nil), Thermal: setFlags(c, nil, thermalKeys)}
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
