package main

import (
	"cmp"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/config"
	"pidb/internal/cmdutil"
	"pidb/tables"
)

// validateCommand is `pidb validate`; run does the work (nil:
// runValidate), a seam for the tests of its options.
func validateCommand(run func(*cli.Context, action.ValidateOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "check each Pi and run its baseline workload while watching the temperature: PASS, WARN or FAIL with reasons",
		UsageText: "pidb validate -i FILE [--limit NAMES] [--strict] [--workload W] [--clients N] [--duration D] [--warmup D] [--scale N]\n" +
			"   [--thermal-interval D] [--idle-before D] [--idle-after D] [--out DIR] [--json]",
		Flags: append(append(fleetFlags(), validateSettings().Flags(config.ForValidate)...), outFlag()),
		Action: cmdutil.WithOptions(func(c *cli.Context) (action.ValidateOptions, error) {
			f, err := fleetOf(c)
			return action.ValidateOptions{Fleet: f, Workload: workloadOf(c, validateSettings()), Validate: validateSettings().Values(c, config.ValidateSection), Out: c.String("out"), Version: version()}, err
		}, cmdutil.OrWork(run, runValidate)),
	}
}

// runValidate validates the hosts and prints the verdicts, then each
// reason on a line of its own.
func runValidate(c *cli.Context, o action.ValidateOptions) error {
	js, err := action.Validate(c.Context, o)
	if js == nil {
		return err
	}
	if perr := cmdutil.PrintResults(c, js, tables.Validate(js), nil); perr != nil || c.Bool("json") {
		return cmp.Or(perr, err)
	}
	cmdutil.Lines(c.App.Writer, tables.Reasons(js)...)
	return err
}
