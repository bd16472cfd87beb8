package provision

import (
	"context"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/inventory"
	"pidb/tune"
	"pidb/usage"
)

func target(engine dbms.Family, have facts.EngineState, r *fakerun.Runner) *Target {
	return &Target{
		Host:   inventory.Host{Name: "pi4", Engine: engine, Storage: "sd"},
		Root:   r,
		Facts:  facts.Facts{RAMBytes: 4 << 30, CPUs: 4, Storage: "sd", OS: facts.OSRelease{ID: "debian"}, BootTarget: "graphical.target", Engine: have},
		Preset: "seed",
		Step:   func(string) {},
	}
}

func TestInstallCheck(t *testing.T) {
	ctx := context.Background()
	// fresh: install from the distribution, MariaDB on Debian
	r := &fakerun.Runner{Files: map[string]string{}}
	ch, err := installStep{}.Check(ctx, target("mysql", facts.EngineState{}, r))
	if err != nil || !ch.Needed || !strings.Contains(strings.Join(ch.Commands, "\n"), "install -y mariadb-server") {
		t.Errorf("fresh mysql host: %+v %v", ch, err)
	}
	// Ubuntu ships MySQL
	tg := target("mysql", facts.EngineState{}, r)
	tg.Facts.OS.ID = "ubuntu"
	if ch, _ := (installStep{}).Check(ctx, tg); !strings.Contains(strings.Join(ch.Commands, "\n"), "install -y mysql-server") {
		t.Errorf("ubuntu: %v", ch.Commands)
	}
	// a Pi 5 on its 16K-page kernel: MariaDB refused before anything is
	// installed, with the fix; PostgreSQL and MySQL installed
	pi5 := target("mysql", facts.EngineState{}, &fakerun.Runner{Files: map[string]string{}})
	pi5.Facts.PageSize = 16384
	if _, err := (installStep{}).Check(ctx, pi5); err == nil || !strings.Contains(err.Error(), "16K pages") || !strings.Contains(err.Error(), "kernel=kernel8.img") {
		t.Errorf("MariaDB on 16K pages: %v", err)
	}
	for _, engine := range []dbms.Family{"postgres", "mysql"} {
		tg := target(engine, facts.EngineState{}, &fakerun.Runner{Files: map[string]string{}})
		tg.Facts.PageSize = 16384
		if engine == "mysql" {
			tg.Facts.OS.ID = "ubuntu"
		}
		if ch, err := (installStep{}).Check(ctx, tg); err != nil || !ch.Needed {
			t.Errorf("%s on 16K pages: %+v %v", engine, ch, err)
		}
	}
	// running already: nothing to do
	if ch, err := (installStep{}).Check(ctx, target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.8", Running: true}, r)); err != nil || ch.Needed {
		t.Errorf("installed and running: %+v %v", ch, err)
	}
	// an install cut off while dpkg configured PostgreSQL: finished first
	cut := (&fakerun.Runner{Files: map[string]string{}}).Prefix("dpkg --audit", fakerun.Reply{Stdout: "The following packages are only half configured...\n postgresql-15\n"})
	ch, err = installStep{}.Check(ctx, target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.8"}, cut))
	if err != nil || !ch.Needed || len(ch.Commands) != 2 || ch.Commands[0] != "DEBIAN_FRONTEND=noninteractive dpkg --configure -a" || !strings.Contains(ch.Note, "cut off") {
		t.Errorf("half-configured packages: %+v %v", ch, err)
	}
	// another engine: refused
	_, err = installStep{}.Check(ctx, target("postgres", facts.EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true}, r))
	if err == nil || !strings.Contains(err.Error(), "pidb does not replace a database engine") {
		t.Errorf("other engine: %v", err)
	}
	// data with no server: refused
	r.Prefix("ls -A /var/lib/postgresql", fakerun.Reply{Stdout: "15\n"})
	_, err = installStep{}.Check(ctx, target("postgres", facts.EngineState{}, r))
	if err == nil || !strings.Contains(err.Error(), "holds data pidb did not create") {
		t.Errorf("leftover data: %v", err)
	}
}

func TestConfigureCheck(t *testing.T) {
	ctx := context.Background()
	r := &fakerun.Runner{Files: map[string]string{}}
	tg := target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.8", Running: true}, r)
	ch, err := configureStep{}.Check(ctx, tg)
	if err != nil || !ch.Needed || !strings.Contains(ch.Diff, "+shared_buffers = 1GB") || !strings.HasPrefix(ch.Diff, "--- /etc/postgresql/15/main/conf.d/90-pidb.conf") || ch.Note != "" {
		t.Fatalf("no file yet: %+v %v", ch, err)
	}
	// PostgreSQL 19, newer than any the tuner knows: tuned as 18, and said
	newer := target("postgres", facts.EngineState{Flavor: "postgres", Version: "19.1", Running: true}, &fakerun.Runner{Files: map[string]string{}})
	if ch, err := (configureStep{}).Check(ctx, newer); err != nil || !ch.Needed || !strings.Contains(ch.Note, "PostgreSQL 19 is newer than any pidb knows: tuned as PostgreSQL 18") ||
		!strings.Contains(ch.Diff, "PostgreSQL 19 (tuned as 18, the newest pidb knows)") || !strings.HasPrefix(ch.Diff, "--- /etc/postgresql/19/main/conf.d/90-pidb.conf") {
		t.Errorf("PostgreSQL 19: %+v %v", ch, err)
	}
	// PostgreSQL 18: known, no note
	if ch, err := (configureStep{}).Check(ctx, target("postgres", facts.EngineState{Flavor: "postgres", Version: "18.1", Running: true}, &fakerun.Runner{Files: map[string]string{}})); err != nil || strings.Contains(ch.Note, "newer than any") {
		t.Errorf("PostgreSQL 18: %+v %v", ch, err)
	}
	// the same file already there: nothing to do, no restart
	in, _ := tune.Normalize(tune.Input{Flavor: "postgres", Version: "15", RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"})
	s, _ := tune.Recommend(in, "seed", nil)
	r.Files["/etc/postgresql/15/main/conf.d/90-pidb.conf"] = tune.Render(in, "seed", s)
	live := r.Contains("FROM pg_settings WHERE name IN", fakerun.Reply{Stdout: "shared_buffers\x00131072\x008kB\x00max_parallel_workers_per_gather\x000\x00\x00", Times: 1})
	if ch, err := (configureStep{}).Check(ctx, tg); err != nil || ch.Needed {
		t.Errorf("file up to date: %+v %v", ch, err)
	}
	// the server starting (a Pi just booted, replaying its WAL): the
	// settings are read once it lets clients in
	r.Exact("pg_isready -q", fakerun.Reply{Code: 1, Times: 2})
	live.Contains("FROM pg_settings WHERE name IN", fakerun.Reply{Stdout: "shared_buffers\x00131072\x008kB\x00max_parallel_workers_per_gather\x000\x00\x00", Times: 1})
	from := len(r.Ran())
	if ch, err := (configureStep{}).Check(ctx, tg); err != nil || ch.Needed {
		t.Errorf("server starting, then up to date: %+v %v", ch, err)
	}
	var asked []string
	for _, c := range r.Ran()[from:] {
		if c == "pg_isready -q" || strings.Contains(c, "FROM pg_settings WHERE name IN") {
			asked = append(asked, strings.Fields(c)[0])
		}
	}
	if strings.Join(asked, " ") != "pg_isready pg_isready pg_isready cd" {
		t.Errorf("a starting server: asked %v; want pg_isready until it answers, then the settings", asked)
	}
	// the file written, the server not restarted on it (a run cut off
	// between the two): the old value live, a restart pending
	live.Contains("FROM pg_settings WHERE name IN", fakerun.Reply{Stdout: "shared_buffers\x0016384\x008kB\x00max_parallel_workers_per_gather\x000\x00\x00", Times: 1}).
		Contains("WHERE pending_restart", fakerun.Reply{Stdout: "shared_buffers\n", Times: 1})
	ch, err = configureStep{}.Check(ctx, tg)
	if err != nil || !ch.Needed || !strings.Contains(strings.Join(ch.Commands, ";"), "systemctl restart postgresql@15-main") || !strings.Contains(ch.Note, "shared_buffers is 16384 x 8kB, not 1GB") ||
		!strings.Contains(ch.Note, "waiting for a restart: shared_buffers") {
		t.Errorf("written, not live: %+v %v", ch, err)
	}
	// a bad [host.settings] override names the inventory line
	tg.Inventory = "pis.toml"
	tg.Host.Settings = inventory.Section{"shared_bufers": {Raw: "1GB", Line: 17}}
	_, err = configureStep{}.Check(ctx, tg)
	if err == nil || !strings.Contains(err.Error(), "pis.toml:17: setting shared_bufers") || !usage.Is(err) {
		t.Errorf("bad override: %v", err)
	}
}

func TestDesktopCheck(t *testing.T) {
	ctx := context.Background()
	r := (&fakerun.Runner{Files: map[string]string{}}).Prefix("systemctl is-active display-manager", fakerun.Reply{Stdout: "active\n"})
	tg := target("postgres", facts.EngineState{}, r)
	ch, _ := desktopStep{}.Check(ctx, tg)
	if !ch.Needed || strings.Join(ch.Commands, ";") != "systemctl set-default multi-user.target" || !strings.Contains(ch.Note, "next boot") {
		t.Errorf("graphical: %+v", ch)
	}
	tg.Now = true
	ch, _ = desktopStep{}.Check(ctx, tg)
	if strings.Join(ch.Commands, ";") != "systemctl set-default multi-user.target;systemctl stop display-manager.service" {
		t.Errorf("--now: %+v", ch)
	}
	tg.Now = false
	tg.Facts.BootTarget = "multi-user.target"
	if ch, _ := (desktopStep{}).Check(ctx, tg); ch.Needed {
		t.Errorf("already multi-user: %+v", ch)
	}
}

// TestConfigureBeforeInstall: a dry run before the install tunes for
// what the host's distribution ships (Ubuntu 24.04's MySQL 8.0 past
// 8.0.30: its redo log as a whole), else for today's Raspberry Pi OS,
// and says which.
func TestConfigureBeforeInstall(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		engine        dbms.Family
		osID, version string
		note, diff    string
	}{
		{"mysql", "ubuntu", "24.04", "assuming the distribution's mysql 8.0.39", "innodb_redo_log_capacity"},
		{"postgres", "debian", "12", "assuming the distribution's postgres 15", "# Managed by pidb: preset \"seed\" for PostgreSQL 15"},
		{"mysql", "raspbian", "13", "assuming the distribution's mariadb 11.8", "for MariaDB 11.8"},
		{"postgres", "fedora", "41", "pidb does not know which postgres fedora 41 ships: assuming 17", "for PostgreSQL 17"},
	} {
		tg := target(c.engine, facts.EngineState{}, &fakerun.Runner{Files: map[string]string{}})
		tg.Facts.OS = facts.OSRelease{ID: c.osID, VersionID: c.version}
		tg.Preset = "balanced"
		if c.engine == "postgres" {
			tg.Preset = "seed"
		}
		ch, err := configureStep{}.Check(ctx, tg)
		if err != nil || !ch.Needed || !strings.Contains(ch.Note, c.note) || !strings.Contains(ch.Diff, c.diff) {
			t.Errorf("%s on %s %s: %v, note %q, want %q and %q in:\n%s", c.engine, c.osID, c.version, err, ch.Note, c.note, c.diff, ch.Diff)
		}
	}
}
