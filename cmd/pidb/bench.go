package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/urfave/cli/v2"

	"pidb/bench"
	"pidb/bench/oltp"
	"pidb/bench/quiz"
	"pidb/bench/sqldb"
	"pidb/bench/tpcb"
	"pidb/facts"
	"pidb/fleet"
	"pidb/inventory"
	"pidb/output"
	"pidb/provision"
	"pidb/remote"
	"pidb/results"
	"pidb/secrets"
	"pidb/tune"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:      "bench",
		Usage:     "run a workload on each Pi from this machine, and save the run",
		UsageText: "pidb bench -i FILE [--limit NAMES] [--workload tpcb] [--clients N] [--duration D] [--scale N] [--warmup D] [--interval D] [--protocol simple|prepared] [--via auto|direct|ssh] [--out DIR] [--json]",
		Flags: append(append(fleetFlags(), workloadFlags()...),
			&cli.IntFlag{Name: "tables", Usage: "oltp-read-only: sbtest tables (default 1)"},
			&cli.IntFlag{Name: "table-size", Usage: "oltp-read-only: rows per table (default 10000)"},
			&cli.DurationFlag{Name: "interval", Usage: "one point of the series per `D` (default 1s)"},
			&cli.StringFlag{Name: "protocol", Usage: "tpcb: simple (pgbench's default) or prepared (pgbench -M prepared); the other workloads always prepare, as sysbench does"},
			&cli.IntFlag{Name: "threads", Usage: "tpcb: threads the clients share, each waiting on its clients' sockets at once, as pgbench -j (default: this machine's cores); 0: a thread per client"},
			&cli.StringFlag{Name: "via", Usage: "auto (direct when allow_from lets this machine in), direct, or ssh (through the SSH connection)"},
			&cli.DurationFlag{Name: "thermal-interval", Usage: "one thermal reading per `D` beside the run (default 5s)"},
			&cli.DurationFlag{Name: "idle-before", Usage: "thermal readings for `D` before the load, as a baseline (default 0)"},
			&cli.DurationFlag{Name: "idle-after", Usage: "thermal readings for `D` after the load, the cool-down (default 0)"},
			&cli.StringFlag{Name: "out", Usage: "save runs under `DIR`", Value: "pidb-results"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write this client's CPU profile to `FILE` (pprof), for work on its cost", Hidden: true},
		),
		Action: runBench,
		Subcommands: []*cli.Command{{
			Name:      "cleanup",
			Usage:     "drop pidb's own benchmark database (and every workload's tables in it) on each Pi",
			UsageText: "pidb bench cleanup -i FILE [--limit NAMES] [--json]",
			Flags:     fleetFlags(),
			Action:    runBenchCleanup,
		}},
	}
}

// cleanupJSON is one host as `pidb bench cleanup --json` prints it.
type cleanupJSON struct {
	Host     string `json:"host"`
	Database string `json:"database"`
	Dropped  bool   `json:"dropped"`
	Error    string `json:"error,omitempty"`
}

// runBenchCleanup drops pidb's benchmark database where pidb made it, and
// leaves any other database of that name alone, with an error.
func runBenchCleanup(c *cli.Context) error {
	if c.Args().Present() {
		return usagef("unexpected argument %q", c.Args().First())
	}
	inv, hosts, err := loadHosts(c)
	if err != nil {
		return err
	}
	opt, done, err := fleetOptions(c, hosts)
	if err != nil {
		return err
	}
	defer done()
	res := fleet.Run(c.Context, hosts, opt, func(ctx context.Context, h inventory.Host, r *remote.Client, step func(string)) (bool, error) {
		step("gathering facts")
		f, err := facts.Collect(ctx, r, h)
		if err != nil {
			return false, err
		}
		if f.Engine.Flavor == "" {
			return false, nil // no server, so no database
		}
		step("dropping database " + provision.BenchDatabase)
		return provision.DropBenchDatabase(ctx, &provision.Target{Host: h, Inventory: inv.Path, Root: r.AsRoot(), Facts: f, Step: step})
	})
	var js []cleanupJSON
	var rows [][]string
	for _, r := range res {
		j := cleanupJSON{Host: r.Host.Name, Database: provision.BenchDatabase, Dropped: r.Value}
		what := "nothing to drop"
		if r.Value {
			what = "dropped"
		}
		if r.Err != nil {
			j.Error, what = r.Err.Error(), "FAILED (see stderr)"
		}
		js = append(js, j)
		rows = append(rows, []string{j.Host, j.Database, what})
	}
	if c.Bool("json") {
		if err := output.JSON(c.App.Writer, js); err != nil {
			return err
		}
	} else if err := output.Table(c.App.Writer, []string{"HOST", "DATABASE", "RESULT"}, rows); err != nil {
		return err
	}
	return fleet.Err(res)
}

// workloadFlags are the workload's flags that bench and validate share.
func workloadFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "workload", Usage: "tpcb (default on PostgreSQL), oltp-read-only (default on MySQL/MariaDB) or quiz"},
		&cli.IntFlag{Name: "clients", Usage: "client connections (default: the inventory's [bench], else 8)"},
		&cli.DurationFlag{Name: "duration", Usage: "measured time (default: the inventory's [bench], else 5m)"},
		&cli.IntFlag{Name: "scale", Usage: "tpcb: pgbench's scale (default 10); quiz: users (default 1000)"},
		&cli.DurationFlag{Name: "warmup", Usage: "time before measuring (default: the inventory's [bench], else 10s)"},
	}
}

// benchJSON is one host as `pidb bench --json` prints it.
type benchJSON struct {
	Host         string           `json:"host"`
	Workload     string           `json:"workload"`
	Engine       string           `json:"engine"`
	Clients      int              `json:"clients"`
	DurationS    float64          `json:"duration_s"`
	Transactions int64            `json:"transactions"`
	TPS          float64          `json:"tps"`
	QPS          float64          `json:"qps"`
	LatencyMs    results.Latency  `json:"latency_ms"`
	P95Ms        float64          `json:"p95_ms"`
	Errors       map[string]int64 `json:"errors"`
	RunDir       string           `json:"run_dir"`
	Error        string           `json:"error,omitempty"`
}

// benchParams resolves one host's parameters: flags over [host.bench] over [bench].
type benchParams struct {
	workload                   string
	clients, scale             int
	tables, tableSize          int
	duration, warmup, interval time.Duration
	via, protocol              string
	threads                    int
	// the thermal readings beside the run
	thermalEvery, idleBefore, idleAfter time.Duration
}

func paramsFor(c *cli.Context, h inventory.Host) (benchParams, error) {
	p := benchParams{
		workload:  h.Bench.String("workload", ""),
		clients:   h.Bench.Int("clients", 8),
		scale:     h.Bench.Int("scale", 0), // by workload, below
		tables:    h.Bench.Int("tables", 1),
		tableSize: h.Bench.Int("table_size", 10000),
		duration:  h.Bench.Duration("duration", 5*time.Minute),
		warmup:    h.Bench.Duration("warmup", 10*time.Second),
		interval:  h.Bench.Duration("interval", time.Second),
		via:       h.Bench.String("via", "auto"),
		protocol:  "simple",
		threads:   runtime.NumCPU(),
		// bench reads the temperature beside the run, with no idle time
		// around it unless asked; validate sets its own
		thermalEvery: 5 * time.Second,
	}
	if c.IsSet("thermal-interval") {
		p.thermalEvery = c.Duration("thermal-interval")
	}
	if c.IsSet("idle-before") {
		p.idleBefore = c.Duration("idle-before")
	}
	if c.IsSet("idle-after") {
		p.idleAfter = c.Duration("idle-after")
	}
	if c.IsSet("threads") {
		p.threads = c.Int("threads")
	}
	if c.IsSet("protocol") {
		p.protocol = c.String("protocol")
	}
	if c.IsSet("workload") {
		p.workload = c.String("workload")
	}
	if c.IsSet("clients") {
		p.clients = c.Int("clients")
	}
	if c.IsSet("scale") {
		p.scale = c.Int("scale")
	}
	if c.IsSet("duration") {
		p.duration = c.Duration("duration")
	}
	if c.IsSet("tables") {
		p.tables = c.Int("tables")
	}
	if c.IsSet("table-size") {
		p.tableSize = c.Int("table-size")
	}
	if c.IsSet("warmup") {
		p.warmup = c.Duration("warmup")
	}
	if c.IsSet("interval") {
		p.interval = c.Duration("interval")
	}
	if c.IsSet("via") {
		p.via = c.String("via")
	}
	if p.workload == "" {
		p.workload = map[bool]string{true: "tpcb", false: "oltp-read-only"}[h.Engine == "postgres"]
	}
	if p.scale == 0 {
		p.scale = 10 // pgbench's scale
		if p.workload == "quiz" {
			p.scale = 1000 // users, as in the write-up
		}
	}
	switch {
	case p.workload != "tpcb" && p.workload != "oltp-read-only" && p.workload != "quiz":
		return p, usagef("%s: unknown workload %q", h.Name, p.workload)
	case p.workload == "tpcb" && h.Engine != "postgres":
		return p, usagef("%s: workload tpcb needs PostgreSQL; the host's engine is %s", h.Name, h.Engine)
	case p.threads < 0:
		return p, usagef("--threads %d: want 0 or more", p.threads)
	case p.thermalEvery <= 0 || p.idleBefore < 0 || p.idleAfter < 0:
		return p, usagef("--thermal-interval must be more than zero, --idle-before and --idle-after not negative")
	case p.clients < 1 || p.scale < 1 || p.duration <= 0 || p.warmup < 0 || p.interval <= 0:
		return p, usagef("%s: clients and scale must be at least 1, duration and interval more than zero", h.Name)
	}
	switch {
	case p.protocol != "simple" && p.protocol != "prepared":
		return p, usagef("--protocol %q: want simple or prepared", p.protocol)
	case p.protocol == "simple" && p.workload != "tpcb" && c.IsSet("protocol"):
		return p, usagef("%s: --protocol simple is for tpcb; %s sends prepared statements, as sysbench does", h.Name, p.workload)
	case p.workload != "tpcb":
		p.protocol = "prepared"
	}
	switch p.via {
	case "auto":
		p.via = "ssh"
		if len(h.AllowFrom) > 0 {
			p.via = "direct"
		}
	case "direct", "ssh":
	default:
		return p, usagef("--via %q: want auto, direct or ssh", p.via)
	}
	return p, nil
}

func runBench(c *cli.Context) error {
	inv, hosts, err := loadHosts(c)
	if err != nil {
		return err
	}
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
	params := map[string]benchParams{}
	for _, h := range hosts {
		p, err := paramsFor(c, h)
		if err != nil {
			return err // a workload that does not fit a host: exit 2 before anything runs
		}
		params[h.Name] = p
	}
	leavePFor(params)
	opt, done, err := fleetOptions(c, hosts)
	if err != nil {
		return err
	}
	defer done()
	out := c.String("out")
	results_ := fleet.Run(c.Context, hosts, opt, func(ctx context.Context, h inventory.Host, r *remote.Client, step func(string)) (benchJSON, error) {
		return benchHost(ctx, inv, h, r, params[h.Name], out, step)
	})
	var rows [][]string
	var js []benchJSON
	for _, res := range results_ {
		b := res.Value
		b.Host = res.Host.Name
		if res.Err != nil {
			b.Error = res.Err.Error()
		}
		js = append(js, b)
		if res.Err != nil {
			rows = append(rows, []string{b.Host, params[b.Host].workload, "", "", "", "", "", "", "", "FAILED (see stderr)", ""})
			continue
		}
		var errs []string
		for k, v := range b.Errors {
			errs = append(errs, fmt.Sprintf("%s:%d", k, v))
		}
		rows = append(rows, []string{b.Host, b.Workload, strconv.Itoa(b.Clients), strconv.FormatInt(b.Transactions, 10),
			fmt.Sprintf("%.1f", b.TPS), fmt.Sprintf("%.1f", b.QPS), fmt.Sprintf("%.3f", b.LatencyMs.Avg), fmt.Sprintf("%.3f", b.P95Ms),
			fmt.Sprintf("%.3f", b.LatencyMs.P99), strings.Join(errs, ","), b.RunDir})
	}
	if c.Bool("json") {
		if err := output.JSON(c.App.Writer, js); err != nil {
			return err
		}
	} else if err := output.Table(c.App.Writer, []string{"HOST", "WORKLOAD", "CLIENTS", "TRANSACTIONS", "TPS", "QPS", "AVG_MS", "P95_MS", "P99_MS", "ERRORS", "RUN"}, rows); err != nil {
		return err
	}
	return fleet.Err(results_)
}

// leavePFor raises GOMAXPROCS so that the hosts' multiplexing threads,
// which wait in epoll without giving up their P (see package bench), leave
// one P for everything else.
func leavePFor(params map[string]benchParams) {
	threads := 0
	for _, p := range params {
		threads += p.threads
	}
	if runtime.GOMAXPROCS(0) < threads+1 {
		runtime.GOMAXPROCS(threads + 1)
	}
}

// benchHost runs the workload on one host and saves the run.
func benchHost(ctx context.Context, inv *inventory.Inventory, h inventory.Host, r *remote.Client, p benchParams, out string, step func(string)) (benchJSON, error) {
	step("gathering facts")
	f, err := facts.Collect(ctx, r, h)
	if err != nil {
		return benchJSON{}, err
	}
	pw, err := prepareWorkload(ctx, inv, h, r, f, p, step)
	if err != nil {
		return benchJSON{}, err
	}
	defer pw.close()
	run, measured, readings, err := runWithThermal(ctx, pw, h, r, f, p, p.thermalEvery, p.idleBefore, p.idleAfter, step)
	if err != nil {
		return benchJSON{}, err
	}
	dir, err := saveWithThermal(out, run, measured, readings)
	if err != nil {
		return benchJSON{}, err
	}
	sum := run.Summary
	return benchJSON{Workload: p.workload, Engine: f.Engine.Flavor, Clients: p.clients, DurationS: sum.MeasuredS, Transactions: sum.Transactions,
		TPS: sum.TPS, QPS: sum.QPS, LatencyMs: sum.Latency, P95Ms: sum.Latency.P95, Errors: sum.Errors, RunDir: dir}, nil
}

// preparedWorkload is a workload whose data is loaded and checked, ready to run.
type preparedWorkload struct {
	w        bench.Workload
	wl       results.Workload
	settings []results.Setting
	close    func() // stops the SSH port forward, if any
}

// prepareWorkload connects the workload to the host (directly or through an
// SSH port forward), loads or checks its data, and reads the live settings.
func prepareWorkload(ctx context.Context, inv *inventory.Inventory, h inventory.Host, r *remote.Client, f facts.Facts, p benchParams, step func(string)) (*preparedWorkload, error) {
	if !f.Engine.Running {
		return nil, fmt.Errorf("%s: no database server is running here: run pidb provision first", h.Name)
	}
	sec, err := secrets.Load(inv.Path, h.Name)
	if err != nil {
		return nil, err
	}
	if sec.Pidb == "" {
		return nil, fmt.Errorf("%s: no password for the pidb account: run pidb provision -i %s first", h.Name, inv.Path)
	}
	pw := &preparedWorkload{close: func() {}, wl: results.Workload{Name: p.workload, Engine: f.Engine.Flavor, Clients: p.clients,
		DurationS: p.duration.Seconds(), WarmupS: p.warmup.Seconds(), Via: p.via, Protocol: p.protocol}}
	host, port := h.Address, provision.Port(h.Engine)
	if p.via == "ssh" {
		local, stop, err := r.Forward(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return nil, err
		}
		pw.close = stop
		lh, lp, _ := net.SplitHostPort(local)
		host = lh
		port, _ = strconv.Atoi(lp)
	}
	var db sqldb.DB // the workloads on database/sql
	if h.Engine == "postgres" {
		cfg, err := pgx.ParseConfig("user=pidb dbname=pidb sslmode=disable connect_timeout=10")
		if err != nil {
			pw.close()
			return nil, err
		}
		cfg.Password, cfg.Host, cfg.Port = sec.Pidb, host, uint16(port)
		db.Postgres = cfg
	} else {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "pidb", sec.Pidb, "tcp", net.JoinHostPort(host, strconv.Itoa(port)), "pidb"
		cfg.Timeout = 10 * time.Second
		db.MySQL = cfg
	}
	switch p.workload {
	case "tpcb":
		pw.w = &tpcb.Workload{Config: &db.Postgres.Config, Scale: p.scale, Protocol: p.protocol, Log: step}
		pw.wl.Scale = p.scale
	case "quiz":
		pw.w = &quiz.Workload{DB: db, Scale: p.scale, Log: step}
		pw.wl.Scale = p.scale
	default:
		pw.w = &oltp.Workload{DB: db, Tables: p.tables, TableSize: p.tableSize, Log: step}
		pw.wl.Tables, pw.wl.TableSize = p.tables, p.tableSize
	}
	step("preparing " + p.workload)
	if err := pw.w.Prepare(ctx); err != nil {
		pw.close()
		return nil, fmt.Errorf("%s: prepare %s: %w%s", h.Name, p.workload, err, missingDatabaseHint(err, inv.Path))
	}
	if pw.settings, err = liveSettings(ctx, db, f.Engine); err != nil {
		pw.close()
		return nil, fmt.Errorf("%s: read the live settings: %w", h.Name, err)
	}
	return pw, nil
}

// run runs the prepared workload and returns the run, not yet saved, and
// when its measured time began.
func (pw *preparedWorkload) run(ctx context.Context, h inventory.Host, f facts.Facts, p benchParams, step func(string)) (results.Run, time.Time, error) {
	start := time.Now()
	measured := start.Add(p.warmup)
	first := true
	step(fmt.Sprintf("running %s: %d clients, %s (after %s warm-up)", p.workload, p.clients, p.duration, p.warmup))
	sum, series, err := bench.Run(ctx, pw.w, bench.Options{Clients: p.clients, Duration: p.duration, Warmup: p.warmup, Interval: p.interval, Threads: p.threads,
		OnInterval: func(iv results.Interval) {
			if first { // the driver's own measured start, from its first point
				measured, first = time.Now().Add(-time.Duration(iv.T*float64(time.Second))), false
			}
			step(fmt.Sprintf("%6.0fs  tps %8.1f  qps %9.1f  p95 %7.2f ms  errors %d", iv.T, iv.TPS, iv.QPS, iv.P95Ms, iv.Errors))
		}})
	if err != nil {
		return results.Run{}, measured, fmt.Errorf("%s: %s: %w", h.Name, p.workload, err)
	}
	var factsMap map[string]any
	if data, err := json.Marshal(f); err == nil {
		_ = json.Unmarshal(data, &factsMap)
	}
	return results.Run{ID: results.NewID(start, p.workload), Kind: "bench", Host: h.Name, Started: start, Finished: time.Now(),
		Facts: factsMap, Settings: pw.settings, Workload: pw.wl, Summary: sum, Series: series}, measured, nil
}

// missingDatabaseHint says what to do when pidb's database is not there
// (after `pidb bench cleanup`, say).
func missingDatabaseHint(err error, inv string) string {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	if (errors.As(err, &pe) && pe.Code == "3D000") || (errors.As(err, &me) && me.Number == 1049) {
		return fmt.Sprintf(" (pidb's database %q is not there: run pidb provision -i %s to make it again)", provision.BenchDatabase, inv)
	}
	return ""
}

// liveSettings reads the server's live settings for the run's record: on
// PostgreSQL those taken from its configuration files, on MySQL and MariaDB
// the variables the tuner knows.
func liveSettings(ctx context.Context, d sqldb.DB, e facts.EngineState) ([]results.Setting, error) {
	db, err := d.Open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	q := "SELECT name, current_setting(name) FROM pg_settings WHERE source = 'configuration file' ORDER BY name"
	if d.Engine() != "postgres" {
		names := tune.Names(e.Flavor, e.Version)
		if len(names) == 0 {
			return nil, nil
		}
		q = "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('" + strings.Join(names, "','") + "')"
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []results.Setting
	for rows.Next() {
		var s results.Setting
		if err := rows.Scan(&s.Name, &s.Value); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
