package provision

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"pidb/dbms"
	"pidb/engine"
	"pidb/remote"
	"pidb/tune"
)

// configureStep writes the tuner's drop-in. Apply keeps the previous file,
// checks the new configuration with the server's own parser, restarts, waits
// for connections and reads every value back; if any of that fails it puts
// the previous file back and restarts the server on it.
type configureStep struct{}

func (configureStep) Name() string { return "configure" }

// previous is where the file that was there before pidb's last write is kept;
// absentMark says there was none. Both sit beside the file, in a folder
// that may be the server's (/etc/postgresql/15/main is postgres's): every
// copy, removal and mark there runs as the user who controls the folder
// (Target.inFolder), so a link planted at one of these names can only make
// pidb write what that user could write itself.
func previous(path string) string   { return path + ".pidb-previous" }
func absentMark(path string) string { return path + ".pidb-none" }

// desired returns the engine, the settings and the drop-in for the host.
func desired(t *Target) (engine.Engine, tune.Settings, string, error) {
	e, err := engine.Of(t.Facts)
	if err != nil {
		return e, nil, "", err
	}
	in, s, err := t.settings(e)
	if err != nil {
		return e, nil, "", err
	}
	return e, s, tune.Render(in, tune.PresetName(t.Preset), s), nil
}

func (configureStep) Check(ctx context.Context, t *Target) (Change, error) {
	if t.Facts.Engine.Flavor == "" {
		// a dry run before the install: the version the distribution
		// ships, where pidb knows it, else current Raspberry Pi OS's
		f := t.Facts
		f.Engine.Flavor = dbms.FlavorOn(t.Host.Engine, f.OS.ID)
		f.Engine.Version = dbms.Shipped(f.OS.ID, f.OS.VersionID, f.Engine.Flavor)
		assumed := fmt.Sprintf("assuming the distribution's %s %s", f.Engine.Flavor, f.Engine.Version)
		if f.Engine.Version == "" {
			f.Engine.Version = tune.DefaultVersion(f.Engine.Flavor)
			assumed = fmt.Sprintf("pidb does not know which %s %s %s ships: assuming %s, as current Raspberry Pi OS (or Ubuntu, for MySQL) has it", f.Engine.Flavor, f.OS.ID, f.OS.VersionID, f.Engine.Version)
		}
		tmp := *t
		tmp.Facts = f
		e, _, want, err := desired(&tmp)
		if err != nil {
			return Change{}, err
		}
		return Change{Needed: true, Diff: unified(e.ConfPath, "", want), Note: "after the install; " + assumed}, nil
	}
	e, s, want, err := desired(t)
	if err != nil {
		return Change{}, err
	}
	have, err := t.Root.ReadFile(ctx, e.ConfPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Change{}, err
	}
	if string(have) == want {
		// written, but is it what the server runs? (a run cut off between
		// the write and the restart leaves the file and the old values)
		if !t.Facts.Engine.Running {
			return Change{}, nil
		}
		// a server systemd runs may still be starting: a Pi just booted
		// replays its WAL or its redo log before it lets anyone in
		if err := t.waitFor(ctx, e.ReadyCmd(), 60*time.Second); err != nil {
			return Change{}, fmt.Errorf("%s runs but does not accept connections after 60 s: %w", e.Flavor, err)
		}
		stale, err := notLive(ctx, t, e, s)
		if err != nil || stale == "" {
			return Change{}, err
		}
		return Change{Needed: true, Commands: []string{e.RestartCmd()},
			Note: "the drop-in is written but the server does not run it (" + stale + "): a restart"}, nil
	}
	// a release newer than any the tuner knows: tuned as the newest it
	// knows, and said
	note := ""
	if in, _, err := t.settings(e); err == nil {
		note = strings.Join(tune.Warnings(in), "; ")
	}
	return Change{Needed: true, Diff: unified(e.ConfPath, string(have), want),
		Commands: []string{e.CheckCmd(), e.RestartCmd()}, Note: note}, nil
}

func (configureStep) Apply(ctx context.Context, t *Target) error {
	e, s, want, err := desired(t)
	if err != nil {
		return err
	}
	return replaceFiles(ctx, t, e, []fileChange{{e.ConfPath, want}}, func() error { return verifyLive(ctx, t, e, s) })
}

// fileChange is a file to write ("" content: to remove).
type fileChange struct{ path, want string }

// replaceFiles writes the files that differ, keeping what was there, then
// checks the configuration with the server's parser, restarts the server,
// waits for connections and runs verify. If any of that fails, every file is
// put back and the server restarted on its previous configuration. When
// every file is as wanted already, the server is restarted only if verify
// says it does not run them (written by a run that was cut off before its
// restart).
func replaceFiles(ctx context.Context, t *Target, e engine.Engine, files []fileChange, verify func() error) error {
	var changed []fileChange
	for _, f := range files {
		have, err := t.Root.ReadFile(ctx, f.path)
		existed := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if string(have) == f.want && (existed || f.want == "") {
			continue
		}
		// keep what was there
		// (whatever was at the two names goes first: a link there is
		// removed, never written through)
		p, a := remote.Quote(previous(f.path)), remote.Quote(absentMark(f.path))
		keep := "rm -f -- " + p + " " + a + " && : > " + a
		if existed {
			keep = "rm -f -- " + p + " " + a + " && cp -p -- " + remote.Quote(f.path) + " " + p
		}
		if _, err := t.inFolder(ctx, f.path, keep); err != nil {
			return fmt.Errorf("keep the previous %s: %w; nothing was changed, and %s runs as it did", f.path, err, e.Flavor)
		}
		changed = append(changed, f)
	}
	if len(changed) == 0 {
		// the files are as wanted: restart only if the server does not run
		// them, and there is nothing to put back if that fails
		if verify() == nil {
			return nil
		}
		if t.later != nil {
			t.later.add(e, nil, verify)
			return nil
		}
		return restartAndVerify(ctx, t, e, verify)
	}
	var written []fileChange // what has been replaced so far: what to put back
	restore := func(cause error) error {
		if len(written) == 0 {
			// nothing replaced, nothing restarted: the server runs as it did
			return fmt.Errorf("%w; nothing was changed, and %s runs as it did", cause, e.Flavor)
		}
		return putBack(ctx, t, e, written, cause)
	}
	for _, f := range changed {
		var err error
		if f.want == "" {
			_, err = t.inFolder(ctx, f.path, "rm -f "+remote.Quote(f.path))
		} else {
			err = t.Root.Upload(ctx, f.path, []byte(f.want), 0o644)
		}
		if err != nil {
			return restore(err)
		}
		written = append(written, f)
	}
	if t.later != nil {
		// provisioning restarts once, after every step that wrote
		t.later.add(e, written, verify)
		return nil
	}
	if err := restartAndVerify(ctx, t, e, verify); err != nil {
		return restore(err)
	}
	return nil
}

// restartAndVerify checks the written configuration, restarts the server,
// waits for it and runs verify.
func restartAndVerify(ctx context.Context, t *Target, e engine.Engine, verify func() error) error {
	t.Step("checking the new configuration")
	if _, err := t.run(ctx, e.CheckCmd()); err != nil {
		return fmt.Errorf("%s refuses the new configuration: %w", e.Flavor, err)
	}
	t.Step("restarting " + e.Service)
	if _, err := t.run(ctx, e.RestartCmd()); err != nil {
		return fmt.Errorf("restart with the new configuration: %w", err)
	}
	if err := t.waitFor(ctx, e.ReadyCmd(), 60*time.Second); err != nil {
		return fmt.Errorf("%s does not accept connections with the new configuration: %w", e.Flavor, err)
	}
	return verify()
}

// notLive says how the running server differs from the drop-in it has on
// disk: the live values that are not the tuner's, and on PostgreSQL the
// settings waiting for a restart (pg_settings.pending_restart); "" when
// it runs what is written.
func notLive(ctx context.Context, t *Target, e engine.Engine, s tune.Settings) (string, error) {
	bad, err := engine.Live(ctx, t.Root, e, s)
	if err != nil {
		return "", err
	}
	what := engine.Sentences(bad)
	if e.Flavor == dbms.Postgres {
		out, err := t.run(ctx, e.Client("SELECT name FROM pg_settings WHERE pending_restart ORDER BY name"))
		if err != nil {
			return "", err
		}
		if names := strings.Fields(out); len(names) > 0 {
			what = append(what, "waiting for a restart: "+strings.Join(names, ", "))
		}
	}
	return strings.Join(what, "; "), nil
}

// verifyLive reads the live values back and compares them.
func verifyLive(ctx context.Context, t *Target, e engine.Engine, s tune.Settings) error {
	bad, err := engine.Live(ctx, t.Root, e, s)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("live settings differ from what was written: %s", strings.Join(engine.Sentences(bad), "; "))
	}
	return nil
}

// putBack puts back the files written before cause, restarts the server on
// them, and says both with cause.
func putBack(ctx context.Context, t *Target, e engine.Engine, written []fileChange, cause error) error {
	if rbErr := restorePrevious(ctx, t, e, written); rbErr != nil {
		return fmt.Errorf("%w; and putting the previous configuration back FAILED too: %v", cause, rbErr)
	}
	return fmt.Errorf("%w; the previous configuration is back and %s is running on it", cause, e.Flavor)
}

// restorePrevious puts back the files pidb replaced (or removes the ones
// that were not there) and restarts the server on them.
func restorePrevious(ctx context.Context, t *Target, e engine.Engine, files []fileChange) error {
	t.Step("putting the previous configuration back")
	if err := restoreFiles(ctx, t, files); err != nil {
		return err
	}
	if _, err := t.run(ctx, e.RestartCmd()); err != nil {
		return err
	}
	return t.waitFor(ctx, e.ReadyCmd(), 60*time.Second)
}

// restoreFiles puts back the files pidb replaced, or removes the ones that
// were not there.
func restoreFiles(ctx context.Context, t *Target, files []fileChange) error {
	for _, f := range files {
		p, a, c := remote.Quote(previous(f.path)), remote.Quote(absentMark(f.path)), remote.Quote(f.path)
		// the copy back replaces the file as an upload does (remote.Replace):
		// whole at every moment, and a link at its name replaced
		cmd := "if [ -e " + a + " ]; then rm -f -- " + c + "; elif [ -e " + p + " ]; then " + remote.Replace(f.path, "cp -p -- "+p+` "$t"`) + "; fi"
		if _, err := t.inFolder(ctx, f.path, cmd); err != nil {
			return err
		}
	}
	return nil
}

// restartLater is the one restart a provisioning run makes, after every
// step that wrote the server's configuration (configure, access): the
// files they wrote, what each checks of the restarted server, and which
// steps they were.
type restartLater struct {
	e       engine.Engine
	written []fileChange
	verify  []func() error
	steps   []string
	step    string // the step being applied
}

func (l *restartLater) add(e engine.Engine, written []fileChange, verify func() error) {
	l.e = e
	l.written = append(l.written, written...)
	l.verify = append(l.verify, verify)
	if len(l.steps) == 0 || l.steps[len(l.steps)-1] != l.step {
		l.steps = append(l.steps, l.step)
	}
}

// run restarts the server once and runs every step's check; if that
// fails, every file is put back and the server restarted on them.
func (l *restartLater) run(ctx context.Context, t *Target) error {
	verify := func() error {
		for _, v := range l.verify {
			if err := v(); err != nil {
				return err
			}
		}
		return nil
	}
	err := restartAndVerify(ctx, t, l.e, verify)
	if err == nil || len(l.written) == 0 {
		return err
	}
	return putBack(ctx, t, l.e, l.written, err)
}

// abandon puts back what the steps wrote when a later step failed before
// the restart: the server never ran those files, so it needs none.
func (l *restartLater) abandon(ctx context.Context, t *Target) error {
	if len(l.written) == 0 {
		return nil
	}
	t.Step("putting back the configuration written before the failure (the server never ran it)")
	return restoreFiles(ctx, t, l.written)
}

// unified is a unified diff of a file's old and new contents.
func unified(path, old, new string) string {
	lines := func(s string) []string {
		if s == "" {
			return nil
		}
		l := difflib.SplitLines(s)
		if l[len(l)-1] == "" {
			l = l[:len(l)-1]
		}
		return l
	}
	d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(old), B: lines(new),
		FromFile: path + " (now)", ToFile: path + " (pidb)", Context: 2,
	})
	return d
}

// LiveMismatches reads the server's live settings over SSH and lists those
// that differ from what the tuner wants for the host (its preset and its
// [host.settings]): what `pidb validate` checks.
func LiveMismatches(ctx context.Context, t *Target) ([]engine.Mismatch, error) {
	e, s, _, err := desired(t)
	if err != nil {
		return nil, err
	}
	return engine.Live(ctx, t.Root, e, s)
}
