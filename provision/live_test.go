package provision

import (
	"context"
	"testing"
	"time"

	"pidb/facts"
	"pidb/internal/labtest"
	"pidb/remote"
)

// TestPresetsForOtherBoardsOnRealMariaDB renders every preset for the 512 MB
// and the 4 GB board and applies it to the lab's real MariaDB (on pi3, the
// lab's MySQL-family host): the server must start and report every value as
// written. The lab has no 512 MB or 4 GB MariaDB host, so the facts say so
// instead; at the end pi3 gets its own configuration back.
func TestPresetsForOtherBoardsOnRealMariaDB(t *testing.T) {
	inv := labtest.Inventory(t)
	h := labtest.Host(t, inv, "pi3")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	auth, err := remote.NewAuth([]string{h.IdentityFile}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := remote.Dial(ctx, remote.Config{Name: h.Name, Address: h.Address, Port: h.Port, User: h.User,
		IdentityFile: h.IdentityFile, Auth: auth, KnownHosts: h.KnownHosts})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	newTarget := func(preset string) *Target {
		f, err := facts.Collect(ctx, c, h)
		if err != nil {
			t.Fatal(err)
		}
		return &Target{Host: h, Inventory: inv.Path, Root: c.AsRoot(), Facts: f, Preset: preset, Step: func(string) {}}
	}
	// pi3 provisioned as the lab inventory says (a no-op when it already is)
	if _, err := Run(ctx, newTarget("balanced"), Steps(), false); err != nil {
		t.Fatalf("provision pi3: %v", err)
	}
	defer func() {
		if _, err := Run(ctx, newTarget("balanced"), ConfigureOnly(), false); err != nil {
			t.Errorf("putting pi3's own configuration back: %v", err)
		}
	}()
	for _, ram := range []uint64{512 << 20, 4 << 30} {
		for _, preset := range []string{"seed", "balanced", "fast"} {
			tg := newTarget(preset)
			if tg.Facts.Engine.Flavor != "mariadb" {
				t.Fatalf("pi3 runs %q", tg.Facts.Engine.Flavor)
			}
			tg.Facts.RAMBytes = ram
			if err := (configureStep{}).Apply(ctx, tg); err != nil {
				t.Errorf("%s for %d MB: %v", preset, ram>>20, err)
			}
		}
	}
}
