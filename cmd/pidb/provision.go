package main

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/internal/cmdutil"
	"pidb/job"
	"pidb/progress"
	"pidb/tables"
	"pidb/usage"
)

// provisionCommand is `pidb provision`; run does the work (nil:
// runProvision), a seam for the tests of its options.
func provisionCommand(run func(*cli.Context, action.ProvisionOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "provision",
		Usage:     "install, tune and turn the desktop off, on every selected Pi; safe to run again",
		UsageText: "pidb provision -i FILE [--limit NAMES] [--preset P] [--dry-run] [--now] [--apt-lock-timeout D] [--json]",
		Flags: append(fleetFlags(),
			&cli.StringFlag{Name: "preset", Usage: "override the inventory's preset for this run: " + strings.Join(action.PresetNames(), ", ")},
			&cli.BoolFlag{Name: "dry-run", Usage: "show what would change (diffs, commands) and change nothing"},
			&cli.BoolFlag{Name: "now", Usage: "also stop the display manager now, not only from the next boot"},
			&cli.DurationFlag{Name: "apt-lock-timeout", Usage: "wait at most `D` for another apt or dpkg (a fresh Pi updates itself at first boot) to let go of its lock", Value: action.DefaultAptLockWait},
		),
		Action: cmdutil.WithOptions(stepsOf(job.AllSteps), cmdutil.OrWork(run, runProvision)),
	}
}

// stepsOf reads provision's flags (tune apply's and rollback's are a
// subset) for steps.
func stepsOf(steps job.Steps) func(*cli.Context) (action.ProvisionOptions, error) {
	return func(c *cli.Context) (action.ProvisionOptions, error) {
		f, err := fleetOf(c)
		o := action.ProvisionOptions{Fleet: f, ProvisionOptions: job.ProvisionOptions{Steps: steps, Preset: c.String("preset"), Now: c.Bool("now"), DryRun: c.Bool("dry-run")}}
		if o.AptLockWait = c.Duration("apt-lock-timeout"); err == nil && steps == job.AllSteps && o.AptLockWait <= 0 {
			err = usage.Errorf("--apt-lock-timeout %s: want more than 0", o.AptLockWait)
		}
		return o, err
	}
}

// runProvision provisions the hosts (or applies or rolls back the
// configuration) and prints what changed, or with --dry-run what would.
func runProvision(c *cli.Context, o action.ProvisionOptions) error {
	out, err := action.Provision(c.Context, o)
	if out == nil {
		return err
	}
	if o.DryRun && !c.Bool("json") {
		fmt.Fprint(c.App.Writer, progress.Sanitize(tables.Plans(out))) // the host's files, as they are
	}
	if perr := cmdutil.PrintResults(c, out, tables.Provision(out, o.DryRun), nil); perr != nil || c.Bool("json") {
		return cmp.Or(perr, err)
	}
	for _, r := range out {
		for _, n := range r.Notes {
			cmdutil.Lines(c.App.ErrWriter, fmt.Sprintf("%s: note: %s", r.Host, n))
		}
	}
	return err
}
