package provision

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"

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
// absentMark says there was none.
func previous(path string) string   { return path + ".pidb-previous" }
func absentMark(path string) string { return path + ".pidb-none" }

// desired returns the engine, the settings and the drop-in for the host.
func desired(t *Target) (engine, tune.Settings, string, error) {
	e, err := engineOf(t.Facts)
	if err != nil {
		return e, nil, "", err
	}
	in, s, err := t.settings(e)
	if err != nil {
		return e, nil, "", err
	}
	return e, s, tune.Render(in, t.Preset, s), nil
}

func (configureStep) Check(ctx context.Context, t *Target) (Change, error) {
	if t.Facts.Engine.Flavor == "" {
		// a dry run before the install: the distribution's default version
		f := t.Facts
		f.Engine.Flavor = map[bool]string{true: "postgres", false: "mariadb"}[t.Host.Engine == "postgres"]
		if t.Host.Engine != "postgres" && f.OS.ID == "ubuntu" {
			f.Engine.Flavor = "mysql"
		}
		f.Engine.Version = tune.DefaultVersions[f.Engine.Flavor]
		tmp := *t
		tmp.Facts = f
		e, _, want, err := desired(&tmp)
		if err != nil {
			return Change{}, err
		}
		return Change{Needed: true, Diff: unified(e.confPath, "", want),
			Note: fmt.Sprintf("after the install; assuming the distribution's %s %s", f.Engine.Flavor, f.Engine.Version)}, nil
	}
	e, _, want, err := desired(t)
	if err != nil {
		return Change{}, err
	}
	have, err := t.Root.ReadFile(ctx, e.confPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Change{}, err
	}
	if string(have) == want {
		return Change{}, nil
	}
	return Change{Needed: true, Diff: unified(e.confPath, string(have), want),
		Commands: []string{e.checkCmd(), "systemctl restart " + e.service}}, nil
}

func (configureStep) Apply(ctx context.Context, t *Target) error {
	e, s, want, err := desired(t)
	if err != nil {
		return err
	}
	have, err := t.Root.ReadFile(ctx, e.confPath)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if existed && string(have) == want {
		return nil
	}
	// keep what was there
	keep := "rm -f " + remote.Quote(previous(e.confPath)) + " && touch " + remote.Quote(absentMark(e.confPath))
	if existed {
		keep = "cp -p " + remote.Quote(e.confPath) + " " + remote.Quote(previous(e.confPath)) + " && rm -f " + remote.Quote(absentMark(e.confPath))
	}
	if _, err := t.run(ctx, keep); err != nil {
		return fmt.Errorf("keep the previous configuration: %w", err)
	}
	if err := t.Root.Upload(ctx, e.confPath, []byte(want), 0o644); err != nil {
		return err
	}
	if err := applyAndVerify(ctx, t, e, s); err != nil {
		if rbErr := restorePrevious(ctx, t, e); rbErr != nil {
			return fmt.Errorf("%w; and putting the previous configuration back FAILED too: %v", err, rbErr)
		}
		return fmt.Errorf("%w; the previous configuration is back and %s is running on it", err, e.flavor)
	}
	return nil
}

// applyAndVerify checks the written configuration, restarts the server,
// waits for it and compares the live values with the tuner's.
func applyAndVerify(ctx context.Context, t *Target, e engine, s tune.Settings) error {
	t.Step("configure: checking the new configuration")
	if _, err := t.run(ctx, e.checkCmd()); err != nil {
		return fmt.Errorf("%s refuses the new configuration: %w", e.flavor, err)
	}
	t.Step("configure: restarting " + e.service)
	if _, err := t.run(ctx, "systemctl restart "+e.service); err != nil {
		return fmt.Errorf("restart with the new configuration: %w", err)
	}
	if err := t.waitFor(ctx, e.readyCmd(), 60*time.Second); err != nil {
		return fmt.Errorf("%s does not accept connections with the new configuration: %w", e.flavor, err)
	}
	return verifyLive(ctx, t, e, s)
}

// verifyLive reads the live values back and compares them.
func verifyLive(ctx context.Context, t *Target, e engine, s tune.Settings) error {
	out, err := t.run(ctx, e.client(e.readBackSQL(s)))
	if err != nil {
		return fmt.Errorf("read the live settings: %w", err)
	}
	if bad := e.compareLive(s, out); len(bad) > 0 {
		var parts []string
		for _, m := range bad {
			parts = append(parts, fmt.Sprintf("%s is %s, not %s", m.Name, m.Live, m.Want))
		}
		return fmt.Errorf("live settings differ from what was written: %s", strings.Join(parts, "; "))
	}
	return nil
}

// restorePrevious puts back the file pidb replaced (or removes pidb's when
// there was none) and restarts the server on it.
func restorePrevious(ctx context.Context, t *Target, e engine) error {
	t.Step("configure: putting the previous configuration back")
	p, a, c := remote.Quote(previous(e.confPath)), remote.Quote(absentMark(e.confPath)), remote.Quote(e.confPath)
	cmd := "if [ -e " + a + " ]; then rm -f " + c + "; elif [ -e " + p + " ]; then cp -p " + p + " " + c + "; fi"
	if _, err := t.run(ctx, cmd); err != nil {
		return err
	}
	if _, err := t.run(ctx, "systemctl restart "+e.service); err != nil {
		return err
	}
	return t.waitFor(ctx, e.readyCmd(), 60*time.Second)
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
