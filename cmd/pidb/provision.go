package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/job"
	"pidb/output"
	"pidb/progress"
	"pidb/usage"
)

// provisionCommand is `pidb provision`; run does the work (nil:
// runProvision), a seam for the tests of its options.
func provisionCommand(run func(*cli.Context, action.ProvisionOptions) error) *cli.Command {
	if run == nil {
		run = runProvision
	}
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
		Action: func(c *cli.Context) error {
			o, err := stepsOf(c, job.AllSteps)
			if err != nil {
				return err
			}
			return run(c, o)
		},
	}
}

// stepsOf reads provision's flags (tune apply's and rollback's are a
// subset) for steps.
func stepsOf(c *cli.Context, steps job.Steps) (action.ProvisionOptions, error) {
	f, err := fleetOf(c)
	if err != nil {
		return action.ProvisionOptions{}, err
	}
	o := action.ProvisionOptions{Fleet: f, ProvisionOptions: job.ProvisionOptions{Steps: steps, Preset: c.String("preset"), Now: c.Bool("now"), DryRun: c.Bool("dry-run")}}
	if steps == job.AllSteps {
		if o.AptLockWait = c.Duration("apt-lock-timeout"); o.AptLockWait <= 0 {
			return o, usage.Errorf("--apt-lock-timeout %s: want more than 0", o.AptLockWait)
		}
	}
	return o, nil
}

// runProvision provisions the hosts (or applies or rolls back the
// configuration) and prints what changed, or with --dry-run what would.
func runProvision(c *cli.Context, o action.ProvisionOptions) error {
	out, err := action.Provision(c.Context, o)
	if out == nil {
		return err
	}
	if c.Bool("json") {
		if perr := output.JSON(c.App.Writer, out); perr != nil {
			return perr
		}
		return err
	}
	if o.DryRun {
		printPlans(c, out)
	}
	if perr := table(c, []string{"HOST", "ENGINE", "PRESET", "CHANGED", "RESULT", "TIME"}, provisionRows(out, o.DryRun)); perr != nil {
		return perr
	}
	for _, r := range out {
		for _, n := range r.Notes {
			fmt.Fprintf(c.App.ErrWriter, "%s: note: %s\n", r.Host, progress.Sanitize(n))
		}
	}
	return err
}

func printPlans(c *cli.Context, out []action.ProvisionResult) {
	w := c.App.Writer
	for _, r := range out {
		if !r.OK {
			continue
		}
		if len(r.Plan) == 0 {
			fmt.Fprintf(w, "== %s: nothing to change\n\n", r.Host)
			continue
		}
		for _, p := range r.Plan {
			fmt.Fprintf(w, "== %s: %s would change", r.Host, p.Step)
			if p.Note != "" {
				fmt.Fprintf(w, " (%s)", progress.Sanitize(p.Note))
			}
			fmt.Fprintln(w)
			for _, cmd := range p.Commands {
				fmt.Fprintf(w, "   $ %s\n", progress.Sanitize(cmd))
			}
			if p.Diff != "" {
				fmt.Fprintln(w, progress.Sanitize(p.Diff)) // the host's files, as they are
			}
			fmt.Fprintln(w)
		}
	}
}

func provisionRows(out []action.ProvisionResult, dry bool) [][]string {
	rows := make([][]string, 0, len(out))
	for _, r := range out {
		engine := strings.TrimSpace(r.Engine + " " + r.EngineVersion)
		changed := strings.Join(r.Changed, ",")
		result := "ok"
		if dry {
			var steps []string
			for _, p := range r.Plan {
				steps = append(steps, p.Step)
			}
			changed = "would: " + strings.Join(steps, ",")
			if len(steps) == 0 {
				changed = "nothing"
			}
			result = "dry run"
		} else if changed == "" {
			changed = "nothing"
		}
		if !r.OK {
			result = failedCell
		}
		rows = append(rows, []string{r.Host, engine, r.Preset, changed, result, fmt.Sprintf("%.1fs", r.DurationS)})
	}
	return rows
}
