package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/fleet"
	"pidb/inventory"
	"pidb/job"
	"pidb/output"
	"pidb/progress"
	"pidb/provision"
	"pidb/remote"
	"pidb/tune"
)

func provisionCommand() *cli.Command {
	return &cli.Command{
		Name:      "provision",
		Usage:     "install, tune and turn the desktop off, on every selected Pi; safe to run again",
		UsageText: "pidb provision -i FILE [--limit NAMES] [--preset P] [--dry-run] [--now] [--apt-lock-timeout D] [--json]",
		Flags: append(fleetFlags(),
			&cli.StringFlag{Name: "preset", Usage: "override the inventory's preset for this run: " + strings.Join(tune.PresetNames(), ", ")},
			&cli.BoolFlag{Name: "dry-run", Usage: "show what would change (diffs, commands) and change nothing"},
			&cli.BoolFlag{Name: "now", Usage: "also stop the display manager now, not only from the next boot"},
			&cli.DurationFlag{Name: "apt-lock-timeout", Usage: "wait at most `D` for another apt or dpkg (a fresh Pi updates itself at first boot) to let go of its lock", Value: provision.DefaultAptLockWait},
		),
		Action: func(c *cli.Context) error { return runSteps(c, "provision") },
	}
}

// provisionResult is one host as `pidb provision --json` prints it.
type provisionResult struct {
	Host          string              `json:"host"`
	OK            bool                `json:"ok"`
	Changed       []string            `json:"changed"`
	Error         string              `json:"error,omitempty"`
	DurationS     float64             `json:"duration_s"`
	Engine        string              `json:"engine"`
	EngineVersion string              `json:"engine_version"`
	Preset        string              `json:"preset"`
	Notes         []string            `json:"notes,omitempty"`
	Plan          []provision.Planned `json:"plan,omitempty"`
}

// runSteps runs provisioning's steps (mode "provision"), the configure step
// alone ("apply") or a rollback of it ("rollback") on the selected hosts.
func runSteps(c *cli.Context, mode string) error {
	inv, hosts, err := loadHosts(c)
	if err != nil {
		return err
	}
	preset := c.String("preset")
	if preset != "" && !slices.Contains(tune.PresetNames(), preset) {
		return usagef("--preset %q: want one of %s", preset, strings.Join(tune.PresetNames(), ", "))
	}
	opt, done, err := fleetOptions(c, hosts)
	if err != nil {
		return err
	}
	defer done()
	o := job.ProvisionOptions{Steps: map[string]job.Steps{"provision": job.AllSteps, "apply": job.Configure, "rollback": job.Rollback}[mode],
		Preset: preset, Now: c.Bool("now"), DryRun: c.Bool("dry-run")}
	if mode == "provision" {
		if o.AptLockWait = c.Duration("apt-lock-timeout"); o.AptLockWait <= 0 {
			return usagef("--apt-lock-timeout %s: want more than 0", o.AptLockWait)
		}
	}
	dry := o.DryRun
	env := job.Env{Inventory: inv}
	results := fleet.Run(c.Context, hosts, opt, func(ctx context.Context, h inventory.Host, rc *remote.Client, r progress.Reporter) (provision.Report, error) {
		return env.Provision(ctx, h, job.Over(rc), o, r)
	})
	out := make([]provisionResult, 0, len(results))
	for _, r := range results {
		p := o.PresetFor(r.Host)
		pr := provisionResult{Host: r.Host.Name, OK: r.Err == nil, Changed: r.Value.Changed, DurationS: r.Duration.Seconds(),
			Engine: r.Value.Engine, EngineVersion: r.Value.Version, Preset: p, Notes: r.Value.Notes, Plan: r.Value.Plan}
		if pr.Changed == nil {
			pr.Changed = []string{}
		}
		if r.Err != nil {
			pr.Error = r.Err.Error()
		}
		out = append(out, pr)
	}
	if c.Bool("json") {
		if err := output.JSON(c.App.Writer, out); err != nil {
			return err
		}
	} else {
		if dry {
			printPlans(c, out)
		}
		if err := table(c, []string{"HOST", "ENGINE", "PRESET", "CHANGED", "RESULT", "TIME"}, provisionRows(out, dry)); err != nil {
			return err
		}
		for _, r := range out {
			for _, n := range r.Notes {
				fmt.Fprintf(c.App.ErrWriter, "%s: note: %s\n", r.Host, progress.Sanitize(n))
			}
		}
	}
	return fleet.Err(results)
}

func printPlans(c *cli.Context, out []provisionResult) {
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

func provisionRows(out []provisionResult, dry bool) [][]string {
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
			result = "FAILED (see stderr)"
		}
		rows = append(rows, []string{r.Host, engine, r.Preset, changed, result, fmt.Sprintf("%.1fs", r.DurationS)})
	}
	return rows
}
