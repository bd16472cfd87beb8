// Package provision takes a Pi from fresh to a tuned database host in
// idempotent steps. Each step first checks whether there is anything to do
// (and what would change: a diff, the commands), then applies it; a dry run
// stops after the checks. A configuration that the server refuses is rolled
// back: a running server keeps running, on its previous configuration.
package provision

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/inventory"
	"pidb/remote"
	"pidb/tune"
)

// Target is one host being provisioned.
type Target struct {
	Host      inventory.Host
	Inventory string        // the inventory's path, for errors in [host.settings]
	Root      remote.Runner // runs as root (sudo -n for other users)
	Facts     facts.Facts   // refreshed after a step changes the host
	Preset    string
	Now       bool // stop the display manager now, not only at the next boot
	Step      func(string)
	// AptLockWait is how long the install waits for another apt or dpkg
	// to let go of its lock; 0 means DefaultAptLockWait
	AptLockWait time.Duration
	// Cluster is the [[cluster]] the host is in; nil on its own
	Cluster *Cluster
	// later, during Run, holds the restart the steps that wrote the
	// server's configuration wait for: one restart for all of them
	later *restartLater
	// restored, after a rollback, is the drop-in the server runs on again:
	// the os step's strict overcommit counts its worst case, not the
	// preset's
	restored tune.Settings
}

// NewTarget is a host to provision, as the fleet connected to it: its
// inventory entry (from the inventory file invPath), root on it, its facts
// and the preset to tune for.
func NewTarget(h inventory.Host, invPath string, root remote.Runner, f facts.Facts, preset string, step func(string)) *Target {
	return &Target{Host: h, Inventory: invPath, Root: root, Facts: f, Preset: preset, Step: step}
}

// Change is what a step would do.
type Change struct {
	Needed   bool
	Diff     string   // unified diff of a file, when the step writes one
	Commands []string // the commands Apply runs
	Note     string   // for people: what it means (e.g. "takes effect at the next boot")
}

// Step is one idempotent part of provisioning.
type Step interface {
	Name() string
	Check(ctx context.Context, t *Target) (Change, error)
	Apply(ctx context.Context, t *Target) error
}

// Steps are provisioning's steps, in order.
func Steps() []Step {
	return []Step{installStep{}, serviceStep{}, datadirStep{}, osStep{}, configureStep{}, desktopStep{}, accessStep{}, accountsStep{}, replicationStep{}}
}

// TuneSteps are `pidb tune apply`'s: the configure step, after the os
// step, whose strict overcommit follows the preset's worst case (a preset
// that needs more memory than the kernel commits to would fail its
// allocations).
func TuneSteps() []Step { return []Step{osStep{}, configureStep{}} }

// Planned is a step that would change the host, in a dry run.
type Planned struct {
	Step     string   `json:"step"`
	Diff     string   `json:"diff,omitempty"`
	Commands []string `json:"commands,omitempty"`
	Note     string   `json:"note,omitempty"`
}

// Report is the outcome of provisioning one host.
type Report struct {
	Changed []string  // the steps that changed the host
	Plan    []Planned // dry run: the steps that would change it
	Notes   []string
	Engine  dbms.Flavor
	Version string
	// Cert is, on a cluster's primary, the certificate its server
	// presents (ServedCert), which its replicas verify it by
	Cert string
}

// Run provisions one host with steps: each is checked, and applied when
// needed unless dryRun. It stops at the first step that fails.
func Run(ctx context.Context, t *Target, steps []Step, dryRun bool) (Report, error) {
	var rep Report
	t.later = &restartLater{}
	defer func() { t.later = nil }()
	fail := func(step string, err error) (Report, error) {
		if abErr := t.later.abandon(ctx, t); abErr != nil {
			err = fmt.Errorf("%w; and putting back what %s wrote FAILED too: %v", err, strings.Join(t.later.steps, " and "), abErr)
		}
		return rep, fmt.Errorf("%s: %s: %w", t.Host.Name, step, err)
	}
	// a server that runs but is still starting (a Pi just booted, a
	// recovery after a crash) answers no query yet: wait for it
	if e, err := engine.Of(t.Facts); err == nil && t.Facts.Engine.Running {
		if _, err := t.Root.Run(ctx, e.ReadyCmd()); err != nil {
			t.Step("waiting for " + e.Service + " to accept connections")
			if err := t.waitFor(ctx, e.ReadyCmd(), 2*time.Minute); err != nil {
				return rep, fmt.Errorf("%s: %s runs, but does not accept connections after 2 minutes: %w", t.Host.Name, e.Service, err)
			}
		}
	}
	for _, s := range steps {
		step := s.Name()
		t.Step("checking " + step)
		ch, err := s.Check(ctx, t)
		if err != nil {
			return fail(step, err)
		}
		if !ch.Needed {
			continue
		}
		if ch.Note != "" {
			rep.Notes = append(rep.Notes, step+": "+ch.Note)
		}
		if dryRun {
			rep.Plan = append(rep.Plan, Planned{Step: step, Diff: ch.Diff, Commands: ch.Commands, Note: ch.Note})
			continue
		}
		t.Step(step)
		t.later.step = step
		if err := s.Apply(ctx, t); err != nil {
			return fail(step, err)
		}
		rep.Changed = append(rep.Changed, step)
	}
	if len(t.later.verify) > 0 {
		// one restart for every step that wrote the server's configuration
		steps := strings.Join(t.later.steps, " and ")
		if err := t.later.run(ctx, t); err != nil {
			return rep, fmt.Errorf("%s: %s: %w", t.Host.Name, steps, err)
		}
	}
	rep.Engine, rep.Version = t.Facts.Engine.Flavor, t.Facts.Engine.Version
	return rep, nil
}

// refresh gathers the host's facts again after a change.
func (t *Target) refresh(ctx context.Context) error {
	f, err := facts.Gather(ctx, t.Root)
	if err != nil {
		return err
	}
	f.Of(t.Host)
	t.Facts = f
	return nil
}

// run runs one command as root.
func (t *Target) run(ctx context.Context, cmd string) (string, error) {
	res, err := t.Root.Run(ctx, cmd)
	return string(res.Stdout), err
}

// inFolder runs cmd, which acts on file and others beside it, as the user
// who controls file's folder (remote.FolderUser): root never copies,
// removes or marks a file where another user could have planted a link.
func (t *Target) inFolder(ctx context.Context, file, cmd string) (string, error) {
	return t.inFolderAs(ctx, file, func(string) string { return cmd })
}

// inFolderAs is inFolder for a command that depends on who runs it.
func (t *Target) inFolderAs(ctx context.Context, file string, cmd func(user string) string) (string, error) {
	user, err := remote.FolderUser(ctx, t.Root, path.Dir(file))
	if err != nil {
		return "", err
	}
	res, err := t.Root.Run(ctx, remote.AsUser(user, cmd(user)))
	return string(res.Stdout), err
}

// waitFor runs cmd until it succeeds or timeout passes.
func (t *Target) waitFor(ctx context.Context, cmd string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := t.Root.Run(ctx, cmd)
		if err == nil {
			return nil
		}
		var ee *remote.ExitError
		if !errors.As(err, &ee) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// settings are the tuner's settings for the host's engine and board (a
// rollback's restored drop-in after a rollback).
func (t *Target) settings(e engine.Engine) (tune.Input, tune.Settings, error) {
	in, s, err := engine.Desired(e, t.Facts, t.Host, t.Inventory, t.Preset)
	if err == nil && t.restored != nil {
		s = t.restored
	}
	return in, s, err
}
