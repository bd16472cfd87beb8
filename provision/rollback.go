package provision

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"pidb/engine"
	"pidb/tune"
)

// Rollback puts back the drop-in that pidb's last configure replaced (or
// removes pidb's, when there was none before), restarts the server and
// checks that the restored values are live. The file it replaces becomes
// the one to go back to, so a second rollback undoes the first. A failure
// leaves the server on the configuration it had. With dryRun it changes
// nothing, and its plan is the drop-in's diff and the os step's.
func Rollback(ctx context.Context, t *Target, dryRun bool) (Report, error) {
	rep := Report{Engine: t.Facts.Engine.Flavor, Version: t.Facts.Engine.Version}
	e, err := engine.Of(t.Facts)
	if err != nil {
		return rep, fmt.Errorf("%s: rollback: %w", t.Host.Name, err)
	}
	want := ""
	if _, err := t.Root.ReadFile(ctx, absentMark(e.ConfPath)); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return rep, err
		}
		prev, err := t.Root.ReadFile(ctx, previous(e.ConfPath))
		if errors.Is(err, fs.ErrNotExist) {
			return rep, fmt.Errorf("%s: rollback: no previous drop-in to go back to (pidb has not changed %s)", t.Host.Name, e.ConfPath)
		}
		if err != nil {
			return rep, err
		}
		want = string(prev)
	}
	in, _, err := t.settings(e)
	if err != nil {
		return rep, err
	}
	restored, err := tune.ParseFile(in, want)
	if err != nil {
		return rep, fmt.Errorf("%s: rollback: the previous drop-in: %w", t.Host.Name, err)
	}
	if dryRun {
		have, err := t.Root.ReadFile(ctx, e.ConfPath)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return rep, err
		}
		rep.Plan = []Planned{{Step: "configure", Diff: unified(e.ConfPath, string(have), want),
			Commands: []string{"systemctl restart " + e.Service}, Note: "the drop-in pidb replaced last back, the server restarted and its values verified"}}
	} else {
		t.Step("rollback: putting the previous drop-in back")
		verify := func() error { return verifyLive(ctx, t, e, restored) }
		if len(restored) == 0 {
			verify = func() error { return nil }
		}
		if err := replaceFiles(ctx, t, e, []fileChange{{e.ConfPath, want}}, verify); err != nil {
			return rep, fmt.Errorf("%s: rollback: %w", t.Host.Name, err)
		}
		rep.Changed = []string{"configure"}
	}
	// the kernel's overcommit for the drop-in the server runs on again
	// (the os step, with its worst case)
	t.restored = restored
	if restored == nil {
		t.restored = tune.Settings{}
	}
	defer func() { t.restored = nil }()
	kernel, err := Run(ctx, t, []Step{osStep{}}, dryRun)
	rep.Changed = append(rep.Changed, kernel.Changed...)
	rep.Plan = append(rep.Plan, kernel.Plan...)
	rep.Notes = append(rep.Notes, kernel.Notes...)
	if err != nil {
		return rep, fmt.Errorf("%w (after the rollback, which put the previous drop-in back)", err)
	}
	return rep, nil
}
