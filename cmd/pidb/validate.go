package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"pidb/facts"
	"pidb/fleet"
	"pidb/inventory"
	"pidb/output"
	"pidb/provision"
	"pidb/remote"
	"pidb/results"
	"pidb/thermal"
	"pidb/validate"
)

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "check each Pi and run its baseline workload while watching the temperature: PASS, WARN or FAIL with reasons",
		UsageText: "pidb validate -i FILE [--limit NAMES] [--strict] [--workload W] [--clients N] [--duration D] [--warmup D] [--scale N]\n" +
			"   [--thermal-interval D] [--idle-before D] [--idle-after D] [--out DIR] [--json]",
		Flags: append(append(fleetFlags(), workloadFlags()...),
			&cli.BoolFlag{Name: "strict", Usage: "WARN fails too (default: the inventory's [validate] strict)"},
			&cli.DurationFlag{Name: "thermal-interval", Usage: "one thermal reading per `D` (default 5s)", Value: 5 * time.Second},
			&cli.DurationFlag{Name: "idle-before", Usage: "idle readings before the load (default: the inventory's [thermal] idle_before, else 1m)"},
			&cli.DurationFlag{Name: "idle-after", Usage: "cool-down readings after it (default: the inventory's [thermal] idle_after, else 1m)"},
			&cli.StringFlag{Name: "out", Usage: "save runs under `DIR`", Value: "pidb-results"},
		),
		Action: runValidate,
	}
}

// validateJSON is one host as `pidb validate --json` prints it.
type validateJSON struct {
	Host            string           `json:"host"`
	Verdict         string           `json:"verdict"`
	Reasons         []results.Reason `json:"reasons"`
	TPS             float64          `json:"tps"`
	QPS             float64          `json:"qps"`
	P95Ms           float64          `json:"p95_ms"`
	MaxTempC        *float64         `json:"max_temp_c"`
	Throttled       bool             `json:"throttled"`
	TPSFirstQuarter float64          `json:"tps_first_quarter"`
	TPSLastQuarter  float64          `json:"tps_last_quarter"`
	RunDir          string           `json:"run_dir"`
	Error           string           `json:"error,omitempty"`
}

func runValidate(c *cli.Context) error {
	inv, hosts, err := loadHosts(c)
	if err != nil {
		return err
	}
	params := map[string]benchParams{}
	for _, h := range hosts {
		p, err := paramsFor(c, h)
		if err != nil {
			return err
		}
		params[h.Name] = p
	}
	idleBefore := inv.Thermal.Duration("idle_before", time.Minute)
	if c.IsSet("idle-before") {
		idleBefore = c.Duration("idle-before")
	}
	idleAfter := inv.Thermal.Duration("idle_after", time.Minute)
	if c.IsSet("idle-after") {
		idleAfter = c.Duration("idle-after")
	}
	every := c.Duration("thermal-interval")
	if idleBefore < 0 || idleAfter < 0 || every <= 0 {
		return usagef("--idle-before and --idle-after must not be negative, --thermal-interval more than zero")
	}
	strict := inv.Validate.Bool("strict", false)
	if c.IsSet("strict") {
		strict = c.Bool("strict")
	}
	maxTemp := inv.Thermal.Float("max_temp_c", validate.DefaultMaxTempC)
	minTPS := inv.Validate.Float("min_tps", 0)
	leavePFor(params)
	opt, done, err := fleetOptions(c, hosts)
	if err != nil {
		return err
	}
	defer done()
	out := c.String("out")
	res := fleet.Run(c.Context, hosts, opt, func(ctx context.Context, h inventory.Host, r *remote.Client, step func(string)) (validateJSON, error) {
		return validateHost(ctx, inv, h, r, params[h.Name], hostChecks{idleBefore: idleBefore, idleAfter: idleAfter, every: every,
			maxTempC: maxTemp, minTPS: minTPS}, out, step)
	})
	var js []validateJSON
	var rows [][]string
	failed := 0
	for _, r := range res {
		j := r.Value
		j.Host = r.Host.Name
		if j.Reasons == nil {
			j.Reasons = []results.Reason{}
		}
		if r.Err != nil {
			j.Error, j.Verdict = r.Err.Error(), "ERROR"
		}
		if j.Verdict != validate.Pass && (j.Verdict != validate.Warn || strict) {
			failed++
		}
		js = append(js, j)
		var codes []string
		for _, x := range j.Reasons {
			codes = append(codes, x.Code)
		}
		rows = append(rows, []string{j.Host, j.Verdict, fmt.Sprintf("%.1f", j.TPS), numOr(j.MaxTempC, "%.1f"), fmt.Sprint(j.Throttled),
			fmt.Sprintf("%.1f", j.TPSFirstQuarter), fmt.Sprintf("%.1f", j.TPSLastQuarter), strings.Join(codes, ","), j.RunDir})
	}
	if c.Bool("json") {
		if err := output.JSON(c.App.Writer, js); err != nil {
			return err
		}
	} else {
		if err := output.Table(c.App.Writer, []string{"HOST", "VERDICT", "TPS", "MAX_C", "THROTTLED", "TPS_Q1", "TPS_Q4", "REASONS", "RUN"}, rows); err != nil {
			return err
		}
		for _, j := range js {
			for _, x := range j.Reasons {
				level := "WARN"
				if x.Fail {
					level = "FAIL"
				}
				fmt.Fprintf(c.App.Writer, "%s: %s %s: %s\n", j.Host, level, x.Code, x.Message)
			}
		}
	}
	if err := fleet.Err(res); err != nil {
		return err
	}
	if failed > 0 {
		what := "FAIL"
		if strict {
			what = "FAIL or WARN (--strict)"
		}
		return fmt.Errorf("%d of %d hosts: %s", failed, len(res), what)
	}
	return nil
}

// hostChecks are validate's thermal settings for a host.
type hostChecks struct {
	idleBefore, idleAfter, every time.Duration
	maxTempC, minTPS             float64
}

// validateHost checks one host, runs its baseline workload with thermal
// readings around it, judges, and saves the run.
func validateHost(ctx context.Context, inv *inventory.Inventory, h inventory.Host, r *remote.Client, p benchParams, hc hostChecks, out string, step func(string)) (validateJSON, error) {
	step("gathering facts")
	f, err := facts.Collect(ctx, r, h)
	if err != nil {
		return validateJSON{}, err
	}
	in := validate.Input{ServiceActive: f.Engine.Running, DesktopOn: f.BootTarget == "graphical.target", MaxTempC: hc.maxTempC, MinTPS: hc.minTPS}
	if !f.Engine.Running {
		v := validate.Judge(in)
		return validateJSON{Verdict: v.Verdict, Reasons: v.Reasons}, nil
	}
	step("reading the live settings")
	t := &provision.Target{Host: h, Inventory: inv.Path, Root: r.AsRoot(), Facts: f, Preset: h.Preset, Step: step}
	bad, err := provision.LiveMismatches(ctx, t)
	if err != nil {
		return validateJSON{}, err
	}
	for _, m := range bad {
		in.Mismatches = append(in.Mismatches, fmt.Sprintf("%s is %s, not %s", m.Name, m.Live, m.Want))
	}
	pw, err := prepareWorkload(ctx, inv, h, r, f, p, step)
	if err != nil {
		return validateJSON{}, err
	}
	defer pw.close()

	run, measured, readings, err := runWithThermal(ctx, pw, h, r, f, p, hc.every, hc.idleBefore, hc.idleAfter, step)
	if err != nil {
		return validateJSON{}, err
	}
	runEnd := run.Finished
	in.TPS, in.Series, in.Readings, in.RunStart, in.RunEnd = run.Summary.TPS, run.Series, readings, measured, runEnd
	v := validate.Judge(in)

	run.Kind, run.ID, run.Finished, run.Verdict = "validate", results.NewID(run.Started, "validate"), time.Now(), &v
	dir, err := saveWithThermal(out, run, measured, readings)
	if err != nil {
		return validateJSON{}, err
	}
	step(fmt.Sprintf("%s (%d reasons)", v.Verdict, len(v.Reasons)))
	return validateJSON{Verdict: v.Verdict, Reasons: v.Reasons, TPS: run.Summary.TPS, QPS: run.Summary.QPS, P95Ms: run.Summary.Latency.P95,
		MaxTempC: v.MaxTempC, Throttled: v.Throttled, TPSFirstQuarter: v.TPSFirstQuarter, TPSLastQuarter: v.TPSLastQuarter, RunDir: dir}, nil
}

// runWithThermal runs a prepared workload with the thermal sampler beside
// it on the host's connection, from idleBefore before the load to
// idleAfter after it, and returns the run, its measured start and the
// readings.
func runWithThermal(ctx context.Context, pw *preparedWorkload, h inventory.Host, r *remote.Client, f facts.Facts, p benchParams,
	every, idleBefore, idleAfter time.Duration, step func(string)) (results.Run, time.Time, []thermal.Reading, error) {
	var mu sync.Mutex
	var readings []thermal.Reading
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		s := &thermal.Sampler{R: r, Model: f.Model}
		s.Run(sampleCtx, every, func(rd thermal.Reading, err error) {
			if err != nil {
				step("thermal reading failed: " + err.Error())
				return
			}
			mu.Lock()
			readings = append(readings, rd)
			mu.Unlock()
		})
	}()
	stop := func() []thermal.Reading {
		stopSampling()
		<-sampled
		return readings
	}
	if idleBefore > 0 {
		step(fmt.Sprintf("idle for %s before the load (thermal baseline)", idleBefore))
		if err := sleepCtx(ctx, idleBefore); err != nil {
			stop()
			return results.Run{}, time.Time{}, nil, err
		}
	}
	run, measured, err := pw.run(ctx, h, f, p, step)
	if err != nil {
		stop()
		return results.Run{}, time.Time{}, nil, err
	}
	if idleAfter > 0 {
		step(fmt.Sprintf("idle for %s after the load (cool-down)", idleAfter))
		if err := sleepCtx(ctx, idleAfter); err != nil {
			stop()
			return results.Run{}, time.Time{}, nil, err
		}
	}
	return run, measured, stop(), nil
}

// saveWithThermal puts the readings on the run's timeline, saves the run,
// and writes thermal.csv beside it.
func saveWithThermal(out string, run results.Run, measured time.Time, readings []thermal.Reading) (string, error) {
	for _, rd := range readings {
		x := results.Reading{T: rd.At.Sub(measured).Seconds(), At: rd.At}
		if !math.IsNaN(rd.TempC) {
			c := rd.TempC
			x.TempC = &c
		}
		if rd.ArmHz > 0 {
			hz := rd.ArmHz
			x.ArmHz = &hz
		}
		if rd.ThrottledKnown {
			fl := uint32(rd.Throttled)
			x.Throttled = &fl
		}
		run.Thermal = append(run.Thermal, x)
	}
	dir, err := results.Save(out, run)
	if err != nil {
		return "", fmt.Errorf("save the run: %w", err)
	}
	if err := writeThermalCSV(filepath.Join(dir, "thermal.csv"), readings); err != nil {
		return "", fmt.Errorf("save the thermal readings: %w", err)
	}
	return dir, nil
}

// writeThermalCSV writes the readings in the first write-up's format.
func writeThermalCSV(path string, rs []thermal.Reading) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := thermal.WriteCSV(f, rs...); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
