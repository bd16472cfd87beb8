package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/config"
	"pidb/progress"
)

// validateCommand is `pidb validate`; run does the work (nil:
// runValidate), a seam for the tests of its options.
func validateCommand(run func(*cli.Context, action.ValidateOptions) error) *cli.Command {
	if run == nil {
		run = runValidate
	}
	return &cli.Command{
		Name:  "validate",
		Usage: "check each Pi and run its baseline workload while watching the temperature: PASS, WARN or FAIL with reasons",
		UsageText: "pidb validate -i FILE [--limit NAMES] [--strict] [--workload W] [--clients N] [--duration D] [--warmup D] [--scale N]\n" +
			"   [--thermal-interval D] [--idle-before D] [--idle-after D] [--out DIR] [--json]",
		Flags: append(append(append(append(fleetFlags(), workloadFlags(config.ForValidate)...), settingFlags(config.ForValidate, "strict")...),
			thermalFlags(config.ForValidate)...), outFlag()),
		Action: func(c *cli.Context) error {
			o, err := validateOptions(c)
			if err != nil {
				return err
			}
			return run(c, o)
		},
	}
}

// validateOptions reads validate's flags.
func validateOptions(c *cli.Context) (action.ValidateOptions, error) {
	f, err := fleetOf(c)
	if err != nil {
		return action.ValidateOptions{}, err
	}
	return action.ValidateOptions{Fleet: f, Workload: workloadOf(c), Validate: settingValues(c, config.ValidateSection), Out: c.String("out"), Version: version()}, nil
}

// runValidate validates the hosts and prints the verdicts, then each
// reason on a line of its own.
func runValidate(c *cli.Context, o action.ValidateOptions) error {
	js, err := action.Validate(c.Context, o)
	if js == nil {
		return err
	}
	rows := make([][]string, 0, len(js))
	for _, j := range js {
		rows = append(rows, []string{j.Host, j.Verdict, fmt.Sprintf("%.1f", j.TPS), numOr(j.MaxTempC, "%.1f"), fmt.Sprint(j.Throttled),
			fmt.Sprintf("%.1f", j.TPSFirstQuarter), fmt.Sprintf("%.1f", j.TPSLastQuarter), strings.Join(j.Codes(), ","), j.RunDir})
	}
	if perr := printResults(c, js, []string{"HOST", "VERDICT", "TPS", "MAX_C", "THROTTLED", "TPS_Q1", "TPS_Q4", "REASONS", "RUN"}, rows); perr != nil {
		return perr
	}
	if !c.Bool("json") {
		for _, j := range js {
			for _, x := range j.Reasons {
				level := map[bool]string{true: "FAIL", false: "WARN"}[x.Fail]
				fmt.Fprintf(c.App.Writer, "%s: %s %s: %s\n", j.Host, level, x.Code, progress.Sanitize(x.Message))
			}
		}
	}
	return err
}

func numOr(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}
