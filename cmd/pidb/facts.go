package main

import (
	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/internal/cmdutil"
	"pidb/tables"
)

// factsCommand is `pidb facts`; run does the work (nil: runFacts), a
// seam for the tests of its options.
func factsCommand(run func(*cli.Context, action.FactsOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "facts",
		Usage:     "show what each Pi is: model, RAM, cores, OS, storage, boot target, thermal sensor, engine",
		UsageText: "pidb facts -i FILE [--limit NAMES] [--concurrency N] [--json] [--accept-new-host-keys]",
		Flags:     fleetFlags(),
		Action: cmdutil.WithOptions(func(c *cli.Context) (action.FactsOptions, error) {
			f, err := fleetOf(c)
			return action.FactsOptions{Fleet: f}, err
		}, cmdutil.OrWork(run, runFacts)),
	}
}

// runFacts gathers the facts and prints them.
func runFacts(c *cli.Context, o action.FactsOptions) error {
	rs, err := action.Facts(c.Context, o)
	if rs == nil {
		return err
	}
	return cmdutil.PrintResults(c, tables.FactsJSON(rs), tables.Facts(rs), err)
}
