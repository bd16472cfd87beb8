package provision

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"pidb/dbms"
)

// RoleSteps are what a switchover leaves to provisioning: each changed
// member's drop-in written for its new part (roleStep).
func RoleSteps() []Step { return []Step{roleStep{}} }

// roleSettings are the settings a cluster's primary and its replicas
// differ in, each one the server takes while it runs: MariaDB's read_only
// (set live), PostgreSQL's synchronous_standby_names (reloaded).
var roleSettings = []string{"read_only", "synchronous_standby_names"}

// roleStep writes, after a switchover, the drop-in of a member whose part
// changed as the tuner writes it for that part, with no restart: the two
// parts' drop-ins differ only in roleSettings, which the server takes
// live. A drop-in that differs in anything else (the inventory's preset
// changed since the last provision) is refused here: pidb provision
// writes it, with its restart.
type roleStep struct{}

func (roleStep) Name() string { return "role" }

// settingLines are a drop-in's settings, each line as written, beside
// its comments and section headers.
func settingLines(file string) []string {
	var out []string
	for _, l := range strings.Split(file, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "[") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// settingName is the name a drop-in's line sets.
func settingName(line string) string {
	line, _, _ = strings.Cut(line, "#")
	name, _, _ := strings.Cut(line, "=")
	return strings.TrimSpace(name)
}

// onlyRole says which settings two drop-ins differ in beside roleSettings
// ("" for none).
func onlyRole(have, want string) string {
	h, w := settingLines(have), settingLines(want)
	var other []string
	for _, l := range append(slices.Clone(h), w...) {
		if slices.Contains(h, l) && slices.Contains(w, l) {
			continue
		}
		if n := settingName(l); !slices.Contains(roleSettings, n) && !slices.Contains(other, n) {
			other = append(other, n)
		}
	}
	return strings.Join(other, ", ")
}

func (roleStep) Check(ctx context.Context, t *Target) (Change, error) {
	if t.Cluster == nil {
		return Change{}, nil
	}
	e, _, want, err := desired(t)
	if err != nil {
		return Change{}, err
	}
	have, err := t.Root.ReadFile(ctx, e.ConfPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Change{}, err
	}
	if string(have) == want {
		return Change{}, nil
	}
	if other := onlyRole(string(have), want); other != "" {
		return Change{}, fmt.Errorf("its drop-in %s differs from the tuner's in more than its part in the cluster (%s): run pidb provision, which restarts it with them", e.ConfPath, other)
	}
	return Change{Needed: true, Diff: unified(e.ConfPath, string(have), want), Note: "its drop-in for its part as " + string(t.role()) + ", taken live"}, nil
}

func (roleStep) Apply(ctx context.Context, t *Target) error {
	e, s, want, err := desired(t)
	if err != nil {
		return err
	}
	if err := t.Root.Upload(ctx, e.ConfPath, []byte(want), 0o644); err != nil {
		return err
	}
	live := "SELECT pg_reload_conf();"
	if e.Flavor != dbms.Postgres {
		ro := "OFF"
		if v, ok := s.Get("read_only"); ok && v.Value.Bool {
			ro = "ON"
		}
		live = "SET GLOBAL read_only = " + ro + ";"
	}
	if _, err := t.run(ctx, e.Client(live)); err != nil {
		return fmt.Errorf("take its part's settings live: %w", err)
	}
	return verifyLive(ctx, t, e, s)
}
