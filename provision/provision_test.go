package provision

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"pidb/facts"
	"pidb/inventory"
	"pidb/remote"
	"pidb/tune"
)

// fakeRunner answers commands by prefix and records them. It is for the
// command strings only; the steps run for real in the lab tests.
type fakeRunner struct {
	answers map[string]string // command prefix -> stdout
	files   map[string]string
	ran     []string
}

func (f *fakeRunner) Run(_ context.Context, cmd string) (remote.Result, error) {
	f.ran = append(f.ran, cmd)
	for prefix, out := range f.answers {
		if strings.HasPrefix(cmd, prefix) {
			return remote.Result{Stdout: []byte(out)}, nil
		}
	}
	return remote.Result{}, nil
}

func (f *fakeRunner) RunInput(ctx context.Context, cmd string, _ []byte) (remote.Result, error) {
	return f.Run(ctx, cmd)
}

func (f *fakeRunner) Upload(_ context.Context, path string, data []byte, _ fs.FileMode) error {
	f.files[path] = string(data)
	return nil
}

func (f *fakeRunner) ReadFile(_ context.Context, path string) ([]byte, error) {
	if d, ok := f.files[path]; ok {
		return []byte(d), nil
	}
	return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
}

func (f *fakeRunner) Host() string { return "pi4" }

func target(engine string, have facts.EngineState, r *fakeRunner) *Target {
	return &Target{
		Host:   inventory.Host{Name: "pi4", Engine: engine, Storage: "sd"},
		Root:   r,
		Facts:  facts.Facts{RAMBytes: 4 << 30, CPUs: 4, Storage: "sd", OS: facts.OSRelease{ID: "debian"}, BootTarget: "graphical.target", Engine: have},
		Preset: "seed",
		Step:   func(string) {},
	}
}

func TestEngineCommands(t *testing.T) {
	pg, _ := engineOf(facts.Facts{Engine: facts.EngineState{Flavor: "postgres", Version: "15.18"}})
	if pg.confPath != "/etc/postgresql/15/main/conf.d/90-pidb.conf" || pg.service != "postgresql@15-main" || pg.tuneAs != "15" {
		t.Errorf("postgres: %+v", pg)
	}
	if got, want := pg.restartCmd(), "systemctl reset-failed postgresql@15-main 2>/dev/null; systemctl restart postgresql@15-main"; got != want {
		t.Errorf("restart = %q", got)
	}
	if got, want := pg.checkCmd(), "cd /tmp && runuser -u postgres -- /usr/lib/postgresql/15/bin/postgres -C data_directory -D /etc/postgresql/15/main >/dev/null"; got != want {
		t.Errorf("check = %q\nwant   %q", got, want)
	}
	if got, want := pg.client("SELECT 'x'"), `cd /tmp && runuser -u postgres -- psql -AtqX -F '|' -c 'SELECT '\''x'\'''`; got != want {
		t.Errorf("client = %q\nwant    %q", got, want)
	}
	my, _ := engineOf(facts.Facts{Engine: facts.EngineState{Flavor: "mariadb", Version: "10.11.6"}})
	if my.confPath != "/etc/mysql/mariadb.conf.d/90-pidb.cnf" || my.service != "mariadb" || my.tuneAs != "10.11" || my.readyCmd() != "mariadb-admin ping --silent" {
		t.Errorf("mariadb: %+v", my)
	}
	ms, _ := engineOf(facts.Facts{Engine: facts.EngineState{Flavor: "mysql", Version: "8.0.39"}})
	if ms.confPath != "/etc/mysql/mysql.conf.d/90-pidb.cnf" || ms.tuneAs != "8.0.39" || ms.checkCmd() != "cd /tmp && mysqld --validate-config" {
		t.Errorf("mysql: %+v", ms)
	}
	if _, err := engineOf(facts.Facts{}); err == nil {
		t.Errorf("no engine: no error")
	}
	s := tune.Settings{{Name: "shared_buffers", Value: tune.Size(1 << 30)}, {Name: "jit", Value: tune.Switch(false)}}
	if got, want := pg.readBackSQL(s), "SELECT name, setting, coalesce(unit, '') FROM pg_settings WHERE name IN ('shared_buffers', 'jit')"; got != want {
		t.Errorf("read back = %q", got)
	}
	if got, want := my.readBackSQL(s), "SELECT @@shared_buffers, @@jit"; got != want {
		t.Errorf("read back = %q", got)
	}
}

func TestCompareLive(t *testing.T) {
	pg := engine{flavor: "postgres"}
	s := tune.Settings{
		{Name: "shared_buffers", Value: tune.Size(1 << 30)},
		{Name: "work_mem", Value: tune.Size(10 << 20)},
		{Name: "jit", Value: tune.Switch(false)},
		{Name: "random_page_cost", Value: tune.Number(1.5)},
		{Name: "synchronous_commit", Value: tune.Word("off")},
		{Name: "max_connections", Value: tune.Integer(100)},
	}
	// what pg_settings says on PostgreSQL 15 for those values
	live := "shared_buffers|131072|8kB\nwork_mem|10240|kB\njit|off|\nrandom_page_cost|1.5|\nsynchronous_commit|off|\nmax_connections|100|\n"
	if bad := pg.compareLive(s, live); len(bad) != 0 {
		t.Errorf("equal values reported as different: %v", bad)
	}
	live = "shared_buffers|16384|8kB\nwork_mem|10240|kB\njit|on|\nrandom_page_cost|4|\nsynchronous_commit|off|\n"
	bad := pg.compareLive(s, live)
	var names []string
	for _, m := range bad {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "shared_buffers,jit,random_page_cost,max_connections" {
		t.Errorf("mismatches = %v", bad)
	}
	my := engine{flavor: "mariadb"}
	ms := tune.Settings{{Name: "innodb_buffer_pool_size", Value: tune.Size(256 << 20)}, {Name: "log_bin", Value: tune.Switch(false)},
		{Name: "innodb_adaptive_hash_index", Value: tune.Switch(true)}, {Name: "innodb_flush_method", Value: tune.Word("O_DIRECT")}}
	if bad := my.compareLive(ms, "268435456\t0\t1\tO_DIRECT\n"); len(bad) != 0 {
		t.Errorf("mariadb equal values: %v", bad)
	}
	if bad := my.compareLive(ms, "134217728\t1\t1\tfsync\n"); len(bad) != 3 {
		t.Errorf("mariadb mismatches: %v", bad)
	}
}

func TestInstallCheck(t *testing.T) {
	ctx := context.Background()
	// fresh: install from the distribution, MariaDB on Debian
	r := &fakeRunner{answers: map[string]string{}, files: map[string]string{}}
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
	// running already: nothing to do
	if ch, err := (installStep{}).Check(ctx, target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.8", Running: true}, r)); err != nil || ch.Needed {
		t.Errorf("installed and running: %+v %v", ch, err)
	}
	// another engine: refused
	_, err = installStep{}.Check(ctx, target("postgres", facts.EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true}, r))
	if err == nil || !strings.Contains(err.Error(), "pidb does not replace a database engine") {
		t.Errorf("other engine: %v", err)
	}
	// data with no server: refused
	r.answers["ls -A /var/lib/postgresql"] = "15\n"
	_, err = installStep{}.Check(ctx, target("postgres", facts.EngineState{}, r))
	if err == nil || !strings.Contains(err.Error(), "holds data pidb did not create") {
		t.Errorf("leftover data: %v", err)
	}
}

func TestConfigureCheck(t *testing.T) {
	ctx := context.Background()
	r := &fakeRunner{answers: map[string]string{}, files: map[string]string{}}
	tg := target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.8", Running: true}, r)
	ch, err := configureStep{}.Check(ctx, tg)
	if err != nil || !ch.Needed || !strings.Contains(ch.Diff, "+shared_buffers = 1GB") || !strings.HasPrefix(ch.Diff, "--- /etc/postgresql/15/main/conf.d/90-pidb.conf") {
		t.Fatalf("no file yet: %+v %v", ch, err)
	}
	// the same file already there: nothing to do, no restart
	in, _ := tune.Normalize(tune.Input{Flavor: "postgres", Version: "15", RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"})
	s, _ := tune.Recommend(in, "seed", nil)
	r.files["/etc/postgresql/15/main/conf.d/90-pidb.conf"] = tune.Render(in, "seed", s)
	if ch, err := (configureStep{}).Check(ctx, tg); err != nil || ch.Needed {
		t.Errorf("file up to date: %+v %v", ch, err)
	}
	// a bad [host.settings] override names the inventory line
	tg.Inventory = "pis.toml"
	tg.Host.Settings = inventory.Section{"shared_bufers": {Raw: "1GB", Line: 17}}
	_, err = configureStep{}.Check(ctx, tg)
	if err == nil || !strings.Contains(err.Error(), "pis.toml:17: setting shared_bufers") || !inventory.IsInputError(err) {
		t.Errorf("bad override: %v", err)
	}
}

func TestDesktopCheck(t *testing.T) {
	ctx := context.Background()
	r := &fakeRunner{answers: map[string]string{"systemctl is-active display-manager": "active\n"}, files: map[string]string{}}
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
