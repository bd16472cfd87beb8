package provision

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"pidb/engine"
)

// serviceStep has systemd start the database server again when it dies
// (Debian's PostgreSQL unit has no Restart=; MariaDB's restarts only
// after a crash by signal): a drop-in for the server's unit with
// Restart=on-failure, then systemctl daemon-reload. A server that stops
// because it was told to stays stopped. Nothing restarts the server now.
type serviceStep struct{}

func (serviceStep) Name() string { return "service" }

// restartDropIn is the drop-in and its place, for the engine's unit.
func restartDropIn(e engine.Engine) (path, content string) {
	return "/etc/systemd/system/" + e.Service + ".service.d/50-pidb-restart.conf",
		"# Managed by pidb: start the database server again when it dies (pidb provision).\n[Service]\nRestart=on-failure\nRestartSec=5s\n"
}

func (serviceStep) Check(ctx context.Context, t *Target) (Change, error) {
	e, err := engine.Of(t.Facts)
	if err != nil {
		return Change{Needed: true, Note: "after the install: restart the server when it dies"}, nil
	}
	path, want := restartDropIn(e)
	have, err := t.Root.ReadFile(ctx, path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Change{}, err
	}
	if string(have) == want {
		return Change{}, nil
	}
	return Change{Needed: true, Diff: unified(path, string(have), want), Commands: []string{"systemctl daemon-reload"},
		Note: "systemd starts the server again when it dies (Restart=on-failure)"}, nil
}

func (serviceStep) Apply(ctx context.Context, t *Target) error {
	e, err := engine.Of(t.Facts)
	if err != nil {
		return err
	}
	path, want := restartDropIn(e)
	dir := path[:strings.LastIndex(path, "/")]
	if _, err := t.run(ctx, "mkdir -p "+dir); err != nil {
		return err
	}
	if err := t.Root.Upload(ctx, path, []byte(want), 0o644); err != nil {
		return err
	}
	if _, err := t.run(ctx, "systemctl daemon-reload"); err != nil {
		return err
	}
	out, err := t.run(ctx, "systemctl show -p Restart --value "+e.Service)
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(out); got != "on-failure" {
		return fmt.Errorf("systemd says Restart=%s for %s after the drop-in, not on-failure", got, e.Service)
	}
	return nil
}
