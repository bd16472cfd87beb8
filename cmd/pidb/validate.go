package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/config"
	"pidb/fleet"
	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
	"pidb/remote"
	"pidb/results"
)

func validateCommand() *cli.Command {
	t := config.DefaultThermal(config.ForValidate)
	return &cli.Command{
		Name:  "validate",
		Usage: "check each Pi and run its baseline workload while watching the temperature: PASS, WARN or FAIL with reasons",
		UsageText: "pidb validate -i FILE [--limit NAMES] [--strict] [--workload W] [--clients N] [--duration D] [--warmup D] [--scale N]\n" +
			"   [--thermal-interval D] [--idle-before D] [--idle-after D] [--out DIR] [--json]",
		Flags: append(append(fleetFlags(), workloadFlags()...),
			&cli.BoolFlag{Name: "strict", Usage: "WARN fails too (default: the inventory's [validate] strict)"},
			&cli.DurationFlag{Name: "thermal-interval", Usage: fmt.Sprintf("one thermal reading per `D` (default: the inventory's [thermal] interval, else %s)", t.Interval)},
			&cli.DurationFlag{Name: "idle-before", Usage: fmt.Sprintf("idle readings before the load (default: the inventory's [thermal] idle_before, else %s)", t.IdleBefore)},
			&cli.DurationFlag{Name: "idle-after", Usage: fmt.Sprintf("cool-down readings after it (default: the inventory's [thermal] idle_after, else %s)", t.IdleAfter)},
			outFlag(),
		),
		Action: runValidate,
	}
}

func runValidate(c *cli.Context) error {
	inv, hosts, err := loadHosts(c)
	if err != nil {
		return err
	}
	params, err := plans(c, inv, hosts, config.ForValidate)
	if err != nil {
		return err
	}
	vc, err := config.ValidateFor(inv, setFlags(c, []string{"strict"}, nil))
	if err != nil {
		return usageError{err}
	}
	opt, done, err := fleetOptions(c, hosts)
	if err != nil {
		return err
	}
	defer done()
	env := job.Env{Inventory: inv, Out: c.String("out"), Version: version()}
	res := fleet.Run(c.Context, hosts, opt, func(ctx context.Context, h inventory.Host, rc *remote.Client, r progress.Reporter) (job.ValidateResult, error) {
		return env.Validate(ctx, h, job.Over(rc), params[h.Name], vc, r)
	})
	var js []job.ValidateResult
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
		if j.Failed(vc.Strict) {
			failed++
		}
		js = append(js, j)
		rows = append(rows, []string{j.Host, j.Verdict, fmt.Sprintf("%.1f", j.TPS), numOr(j.MaxTempC, "%.1f"), fmt.Sprint(j.Throttled),
			fmt.Sprintf("%.1f", j.TPSFirstQuarter), fmt.Sprintf("%.1f", j.TPSLastQuarter), strings.Join(results.Codes(j.Reasons), ","), j.RunDir})
	}
	if err := printResults(c, js, []string{"HOST", "VERDICT", "TPS", "MAX_C", "THROTTLED", "TPS_Q1", "TPS_Q4", "REASONS", "RUN"}, rows); err != nil {
		return err
	}
	if !c.Bool("json") {
		for _, j := range js {
			for _, x := range j.Reasons {
				level := map[bool]string{true: "FAIL", false: "WARN"}[x.Fail]
				fmt.Fprintf(c.App.Writer, "%s: %s %s: %s\n", j.Host, level, x.Code, progress.Sanitize(x.Message))
			}
		}
	}
	if err := fleet.Err(res); err != nil {
		return err
	}
	if failed > 0 {
		what := "FAIL"
		if vc.Strict {
			what = "FAIL or WARN (--strict)"
		}
		return fmt.Errorf("%d of %d hosts: %s", failed, len(res), what)
	}
	return nil
}

func numOr(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}
