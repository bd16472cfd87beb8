package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"pidb/internal/labtest"
	"pidb/inventory"
)

type provisionJSON struct {
	Host    string   `json:"host"`
	OK      bool     `json:"ok"`
	Changed []string `json:"changed"`
	Error   string   `json:"error"`
	Engine  string   `json:"engine"`
	// EngineVersion is the server's version after the run
	EngineVersion string   `json:"engine_version"`
	Notes         []string `json:"notes"`
}

func provisionLab(t *testing.T, args ...string) (int, map[string]provisionJSON, string) {
	t.Helper()
	return provisionLabCmd(t, append([]string{"provision"}, args...)...)
}

// provisionLabCmd runs a provisioning command with --json and reads its result.
func provisionLabCmd(t *testing.T, args ...string) (int, map[string]provisionJSON, string) {
	t.Helper()
	code, out, errOut := runPidb(t, append(args, "--json")...)
	var res []provisionJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("provision %v: not JSON (%v): %s\n%s", args, err, out, errOut)
	}
	m := map[string]provisionJSON{}
	for _, r := range res {
		m[r.Host] = r
	}
	return code, m, errOut
}

// etcState is what a dry run must not change: every file under /etc and the
// installed packages.
// etcState is /etc and the packages, less /etc/pisim: the lab's simulated
// board, which its thermal simulator rewrites every second.
const etcState = "find /etc -path /etc/pisim -prune -o -type f -print0 | sort -z | xargs -0 md5sum; dpkg-query -W -f '${Package} ${Status}\\n'"

// startTime is when the host's database server last started.
const startTime = "systemctl show -p ActiveEnterTimestampMonotonic --value " + labtest.PGUnit + " mariadb 2>/dev/null | tr '\\n' ' '"

// TestProvisionTheLab provisions a fresh Pi 4, a Pi 3 and a Zero (clones
// of provisioned ones: scripts/test.sh's own first provision of the lab
// installs on a fresh Pi 3 and Zero every run, and TestFleetOfTen's CM4
// installs MariaDB fresh and checks it) of its own (the lab's three
// boards, numbered: pi4-14 say) as the "done when" says, then
// checks re-runs, a dry run, a setting that stops the server, and a host
// that runs another engine.
func TestProvisionTheLab(t *testing.T) {
	// before the parallel tests take them: the longest test but one
	fresh, cloned := labtest.Reserve(t, "pi4"), labtest.Reserve(t, "pi3", "zero")
	t.Parallel()
	pi4 := fresh.Fresh().Hosts[0].Name
	clones := cloned.Clone()
	pi3, zero := clones.Hosts[0].Name, clones.Hosts[1].Name
	inv := labtest.InventoryOf(t, pi4, pi3, zero)
	hosts := map[string]inventory.Host{}
	for _, h := range inv.Hosts {
		hosts[h.Name] = h
	}
	root := func(name string) inventory.Host { h := hosts[name]; h.User = "root"; return h }

	t.Run("dry run changes nothing", func(t *testing.T) {
		before := map[string]string{}
		for n := range hosts {
			before[n] = labtest.MustSSH(t, root(n), etcState)
		}
		code, res, errOut := provisionLab(t, "-i", inv.Path, "--dry-run")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		for n := range hosts {
			if !res[n].OK || len(res[n].Changed) != 0 {
				t.Errorf("%s: %+v", n, res[n])
			}
			if after := labtest.MustSSH(t, root(n), etcState); after != before[n] {
				t.Errorf("%s: the dry run changed /etc or the packages", n)
			}
		}
	})

	t.Run("seed", func(t *testing.T) {
		// as on a fresh Pi updating itself: someone holds dpkg's lock (a
		// transient unit, so it outlives the SSH session; fcntl, as apt
		// locks) until 8 s after pidb says it waits for it, however long
		// reaching the install takes on a busy machine
		labtest.MustSSH(t, root(pi4), `echo 'use Fcntl; open(my $f, "+<", "/var/lib/dpkg/lock-frontend") or die; `+
			`my $l = pack("s s x4 q q i x4", F_WRLCK, 0, 0, 0, 0); fcntl($f, F_SETLK, $l) or die; sleep 600' >/tmp/hold-dpkg-lock.pl && `+
			`systemd-run --quiet --collect --unit pidb-test-dpkg-lock perl /tmp/hold-dpkg-lock.pl`)
		waiting := pi4 + ": install: waiting for the dpkg lock, held by process"
		r := startWatching([]string{waiting}, "provision", "-i", inv.Path, "--preset", "seed", "--json")
		r.waitMark(t, waiting) // else pi4 installed without waiting for the held lock
		time.Sleep(8 * time.Second)
		labtest.MustSSH(t, root(pi4), "systemctl stop pidb-test-dpkg-lock")
		r.wait(t, 20*time.Minute) // three fresh installs: 11 minutes on a busy machine
		code, errOut := r.code, r.stderr
		res := provisionResults(t, code, r.stdout, errOut)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		// said once for an 8-second wait (every 30 s at most), not at every retry
		if n := strings.Count(errOut, pi4+": install: waiting for the dpkg lock"); n != 1 {
			t.Errorf("the wait for the dpkg lock said %d times in 8 s, want once", n)
		}
		for n := range hosts {
			if !res[n].OK {
				t.Errorf("%s: %+v", n, res[n])
			}
		}
		for _, c := range []struct{ host, cmd, want string }{
			{pi4, `cd /tmp && runuser -u postgres -- psql -AtX -c "SHOW shared_buffers" -c "SHOW max_parallel_workers_per_gather"`, "1GB\n0"},
			{zero, `cd /tmp && runuser -u postgres -- psql -AtX -c "SHOW shared_buffers"`, "128MB"},
			{pi3, `mariadb -NBe "SELECT @@log_bin, @@innodb_buffer_pool_size"`, "0\t268435456"},
		} {
			if got := strings.TrimSpace(labtest.MustSSH(t, root(c.host), c.cmd)); got != c.want {
				t.Errorf("%s: %q, want %q", c.host, got, c.want)
			}
		}
		// the os step's first run on fresh Pis (ondemand and swappiness 60
		// as they boot; TestOSStep goes on from there)
		code, out, errOut := runPidb(t, "facts", "-i", inv.Path, "--json")
		var fs []struct {
			Host       string `json:"host"`
			Governor   string `json:"governor"`
			Swappiness int    `json:"swappiness"`
		}
		if err := json.Unmarshal([]byte(out), &fs); err != nil || code != 0 || len(fs) != len(hosts) {
			t.Fatalf("facts: exit %d %v\n%s\n%s", code, err, out, errOut)
		}
		for _, f := range fs {
			if f.Governor != "performance" || f.Swappiness != 10 {
				t.Errorf("%s after provision: governor %q, swappiness %d", f.Host, f.Governor, f.Swappiness)
			}
		}
		for n := range hosts {
			if got := strings.TrimSpace(labtest.MustSSH(t, hosts[n], "systemctl get-default")); got != "multi-user.target" {
				t.Errorf("%s boots to %s", n, got)
			}
			// systemd starts the server again when it dies
			unit := map[string]string{pi4: labtest.PGUnit, zero: labtest.PGUnit, pi3: "mariadb"}[n]
			if got := strings.TrimSpace(labtest.MustSSH(t, hosts[n], "systemctl show -p Restart --value "+unit)); got != "on-failure" {
				t.Errorf("%s: Restart=%s for %s", n, got, unit)
			}
		}
	})

	t.Run("second run changes nothing", func(t *testing.T) {
		started := map[string]string{}
		for n := range hosts {
			started[n] = labtest.MustSSH(t, root(n), startTime)
		}
		code, res, errOut := provisionLab(t, "-i", inv.Path, "--preset", "seed")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		for n := range hosts {
			if !res[n].OK || len(res[n].Changed) != 0 {
				t.Errorf("%s: %+v, want no changes", n, res[n])
			}
			if now := labtest.MustSSH(t, root(n), startTime); now != started[n] {
				t.Errorf("%s: the server restarted (%s, then %s)", n, started[n], now)
			}
		}
	})

	t.Run("balanced as pi and as root", func(t *testing.T) {
		// on the Pi 4 the os step takes strict overcommit back: seed's
		// worst case fitted in the lab's 100 MB of swap and 90% of RAM,
		// balanced's fills the RAM (TestOSStep)
		code, res, errOut := provisionLab(t, "-i", inv.Path, "--limit", pi4+","+pi3)
		if code != 0 || strings.Join(res[pi4].Changed, ",") != "os,configure" || strings.Join(res[pi3].Changed, ",") != "configure" ||
			!strings.Contains(strings.Join(res[pi4].Notes, "\n"), "the kernel's overcommit heuristic kept") {
			t.Fatalf("exit %d %+v\n%s", code, res, errOut)
		}
		src, _ := os.ReadFile(inv.Path)
		p := filepath.Join(t.TempDir(), "root.toml")
		os.WriteFile(p, []byte(strings.Replace(string(src), `user = "pi"`, `user = "root"`, 1)), 0o644)
		code, res, errOut = provisionLab(t, "-i", p, "--limit", zero)
		// (another inventory keeps its own passwords: the accounts are set to them)
		if code != 0 || !contains(res[zero].Changed, "configure") {
			t.Fatalf("as root: exit %d %+v\n%s", code, res, errOut)
		}
	})

	t.Run("accounts: from the controller, only where allowed", func(t *testing.T) {
		// pidb's account reaches its own database from the controller, and no other
		pg := credentials(t, inv.Path, pi4, "")
		if got := pgQuery(t, pg, "SELECT current_user || ' ' || (SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user)"); got != "pidb false" {
			t.Errorf("pi4 as pidb: %q", got)
		}
		if _, err := pgTry(withDB(pg, "postgres")); err == nil || !strings.Contains(err.Error(), `database "postgres"`) {
			t.Errorf("pidb reached the postgres database, or was refused for another reason: %v", err)
		}
		my := credentials(t, inv.Path, pi3, "")
		if got := myQuery(t, my, "SELECT CURRENT_USER()"); !strings.HasPrefix(got, "pidb@10.213.41.0/") {
			t.Errorf("pi3 as pidb: %q", got)
		}
		if got := myQuery(t, my, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name NOT IN ('information_schema', 'pidb')"); got != "0" {
			t.Errorf("pidb sees %s other databases on pi3", got)
		}

		// an application database and its owner; then allow_from removed: closed to the network.
		// Names that mean something unquoted: MySQL's GRANT reads _ as a
		// wildcard (quiz_db would grant quizXdb too), and "order" is a
		// keyword of PostgreSQL's SQL
		src, _ := os.ReadFile(inv.Path)
		p := filepath.Join(t.TempDir(), "app.toml")
		app := strings.Replace(string(src), hostBlock(hosts[pi3], "mysql"),
			hostBlock(hosts[pi3], "mysql")+"\n[[host.database]]\nname = \"quiz_db\"\nowner = \"quizapp\"", 1)
		app = strings.Replace(app, hostBlock(hosts[pi4], "postgres"),
			hostBlock(hosts[pi4], "postgres")+"\n[[host.database]]\nname = \"order\"\nowner = \"app\"", 1)
		labtest.MustSSH(t, root(pi3), `mariadb -e 'CREATE DATABASE IF NOT EXISTS quizXdb'`)
		os.WriteFile(p, []byte(app), 0o644)
		if code, res, errOut := provisionLab(t, "-i", p, "--limit", pi4+","+pi3); code != 0 || !contains(res[pi3].Changed, "accounts") {
			t.Fatalf("app databases: exit %d %+v\n%s", code, res, errOut)
		}
		quiz := credentials(t, p, pi3, "quiz_db")
		myQuery(t, quiz, "CREATE TABLE IF NOT EXISTS q (id INT PRIMARY KEY)")
		if got := myQuery(t, quiz, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name IN ('pidb', 'quizXdb')"); got != "0" {
			t.Errorf("quizapp sees %s of pidb's database and quizXdb, which its grant's _ would match as a wildcard", got)
		}
		appURL := credentials(t, p, pi4, "order")
		pgQuery(t, appURL, "CREATE TABLE IF NOT EXISTS items (id int)")
		if _, err := pgTry(withDB(appURL, "pidb")); err == nil || !strings.Contains(err.Error(), `database "pidb"`) {
			t.Errorf("the order owner reached pidb's database, or was refused for another reason: %v", err)
		}

		closed := filepath.Join(t.TempDir(), "closed.toml")
		os.WriteFile(closed, []byte(strings.Replace(app, "allow_from = [\"10.213.41.0/24\"]\n", "", 1)), 0o644)
		if code, res, errOut := provisionLab(t, "-i", closed, "--limit", pi4+","+pi3); code != 0 || !contains(res[pi4].Changed, "access") || !contains(res[pi3].Changed, "access") {
			t.Fatalf("closing: exit %d %+v\n%s", code, res, errOut)
		}
		if _, err := pgTry(pg); err == nil {
			t.Errorf("pi4's port is still open without allow_from")
		}
		if _, err := myTry(my); err == nil {
			t.Errorf("pi3's port is still open without allow_from")
		}
		// and open again, as the lab inventory says
		if code, _, errOut := provisionLab(t, "-i", inv.Path, "--limit", pi4+","+pi3); code != 0 {
			t.Fatalf("reopening: exit %d\n%s", code, errOut)
		}
		if _, err := pgTry(pg); err != nil {
			t.Errorf("pi4 after reopening: %v", err)
		}
	})

	// each apply restarts the server and compares every live value with
	// the tuner's: success means the server took the whole preset
	t.Run("every preset on the real servers", func(t *testing.T) {
		for _, p := range []string{"seed", "fast", "balanced"} {
			code, res, errOut := provisionLabCmd(t, "tune", "apply", "-i", inv.Path, "--preset", p)
			if code != 0 {
				t.Errorf("preset %s: exit %d\n%s", p, code, errOut)
			}
			for n := range hosts {
				if !res[n].OK || !contains(res[n].Changed, "configure") {
					t.Errorf("preset %s on %s: %+v", p, n, res[n])
				}
			}
		}
	})

	t.Run("tune apply and rollback", func(t *testing.T) {
		workMem := func() string {
			return strings.TrimSpace(labtest.MustSSH(t, root(pi4), `cd /tmp && runuser -u postgres -- psql -AtX -c "SHOW work_mem"`))
		}
		// what 100 connections x 2 operations x hash_mem_multiplier 2 can
		// take of the 3,793 MB the Pi 4's kernel has beside 1GB of
		// shared_buffers, 16MB of WAL buffers, 256MB of maintenance, 3 x
		// 64MB of autovacuum and 100 x 2MB of backends: 5.26 MB
		if got := workMem(); got != "5MB" {
			t.Fatalf("balanced work_mem = %s", got)
		}
		code, out, errOut := runPidb(t, "tune", "apply", "-i", inv.Path, "--limit", pi4, "--preset", "seed", "--json")
		if code != 0 || !strings.Contains(out, `"configure"`) || workMem() != "4MB" {
			t.Fatalf("tune apply seed: exit %d, work_mem %s\n%s%s", code, workMem(), out, errOut)
		}
		// the dry run: the drop-in's diff back to balanced's (seed sets no
		// work_mem), nothing changed, the server not restarted
		before := labtest.MustSSH(t, root(pi4), "systemctl show -p ExecMainStartTimestamp "+labtest.PGUnit)
		code, out, errOut = runPidb(t, "tune", "rollback", "-i", inv.Path, "--limit", pi4, "--dry-run", "--json")
		if code != 0 || !strings.Contains(out, `"plan"`) || !strings.Contains(out, `+work_mem = 5MB`) || workMem() != "4MB" ||
			labtest.MustSSH(t, root(pi4), "systemctl show -p ExecMainStartTimestamp "+labtest.PGUnit) != before {
			t.Fatalf("rollback --dry-run: exit %d, work_mem %s\n%s%s", code, workMem(), out, errOut)
		}
		if code, _, errOut := runPidb(t, "tune", "rollback", "-i", inv.Path, "--limit", pi4); code != 0 || workMem() != "5MB" {
			t.Fatalf("rollback: exit %d, work_mem %s\n%s", code, workMem(), errOut)
		}
		if code, _, errOut := runPidb(t, "tune", "rollback", "-i", inv.Path, "--limit", pi4); code != 0 || workMem() != "4MB" {
			t.Fatalf("second rollback: exit %d, work_mem %s\n%s", code, workMem(), errOut)
		}
		if code, _, errOut := runPidb(t, "tune", "apply", "-i", inv.Path, "--limit", pi4); code != 0 || workMem() != "5MB" {
			t.Fatalf("apply balanced: exit %d\n%s", code, errOut)
		}
	})

	// huge_pages = on passes pidb's checks (a valid value) and PostgreSQL's
	// own parser, but the server cannot start: the board reserves no huge
	// pages. The run must fail for zero alone, with zero back up on its
	// previous configuration and its data intact.
	t.Run("a setting that stops the server is rolled back", func(t *testing.T) {
		z := root(zero)
		labtest.MustSSH(t, z, `cd /tmp && runuser -u postgres -- psql -qX -c "DROP TABLE IF EXISTS canary; CREATE TABLE canary AS SELECT g AS id FROM generate_series(1, 1000) g"`)
		before := labtest.MustSSH(t, z, "cat "+labtest.PGEtc+"/conf.d/90-pidb.conf")
		src, _ := os.ReadFile(inv.Path)
		p := filepath.Join(t.TempDir(), "huge.toml")
		os.WriteFile(p, append(src, []byte("[host.settings]\nhuge_pages = \"on\"\n")...), 0o644) // the last host: zero
		code, res, errOut := provisionLab(t, "-i", p, "--limit", zero)
		if code != 1 || res[zero].OK {
			t.Fatalf("exit %d %+v, want a failure\n%s", code, res[zero], errOut)
		}
		if e := res[zero].Error; !strings.Contains(e, zero+": configure") || !strings.Contains(e, "the previous configuration is back") {
			t.Errorf("error: %s", e)
		}
		if after := labtest.MustSSH(t, z, "cat "+labtest.PGEtc+"/conf.d/90-pidb.conf"); after != before {
			t.Errorf("the drop-in was not put back:\n%s", after)
		}
		got := strings.TrimSpace(labtest.MustSSH(t, z, `systemctl is-active `+labtest.PGUnit+`; cd /tmp && runuser -u postgres -- psql -AtX -c "SELECT count(*) FROM canary" -c "SHOW huge_pages"`))
		if got != "active\n1000\ntry" {
			t.Errorf("after the rollback: %q, want the server active, 1000 canary rows, huge_pages back at try", got)
		}
	})

	t.Run("another engine is refused", func(t *testing.T) {
		src, _ := os.ReadFile(inv.Path)
		p := filepath.Join(t.TempDir(), "other.toml")
		s := strings.Replace(string(src), hostBlock(hosts[pi3], "mysql"), hostBlock(hosts[pi3], "postgres"), 1)
		os.WriteFile(p, []byte(s), 0o644)
		before := labtest.MustSSH(t, root(pi3), etcState)
		code, res, _ := provisionLab(t, "-i", p, "--limit", pi3)
		if code != 1 || !strings.Contains(res[pi3].Error, "pidb does not replace a database engine") {
			t.Errorf("exit %d %+v", code, res[pi3])
		}
		if after := labtest.MustSSH(t, root(pi3), etcState); after != before {
			t.Errorf("a refused host was changed")
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hostBlock is h's table in an inventory as the lab writes it, with the
// engine, for a test to add to or change.
func hostBlock(h inventory.Host, engine string) string {
	return fmt.Sprintf("name = %q\naddress = %q\nengine = %q", h.Name, h.Address, engine)
}

// provisionedAsRoot provisions one lab host as the inventory has it and
// returns the host with root as its SSH user, for the test's own commands.
func provisionedAsRoot(t *testing.T, inv *inventory.Inventory, name string) inventory.Host {
	t.Helper()
	h := labtest.Host(t, inv, name)
	h.User = "root"
	if code, _, errOut := provisionLab(t, "-i", inv.Path, "--limit", name); code != 0 {
		t.Fatalf("provision %s: exit %d\n%s", name, code, errOut)
	}
	return h
}

// waitForClients waits until countCmd, run on h, says n of pidb's sessions
// are connected, however long connecting takes on a busy machine (TLS, the
// certificate read over SSH), for a minute at most.
func waitForClients(t *testing.T, h inventory.Host, countCmd string, n int) {
	t.Helper()
	for start := time.Now(); strings.TrimSpace(labtest.MustSSH(t, h, countCmd)) != strconv.Itoa(n); time.Sleep(100 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("the %d clients did not connect within a minute", n)
		}
	}
}

// credentials runs `pidb credentials` and returns the URL it prints.
func credentials(t *testing.T, inv, host, db string) string {
	t.Helper()
	args := []string{"credentials", "-i", inv}
	if db != "" {
		args = append(args, "--database", db)
	}
	code, out, errOut := runPidb(t, append(args, host)...)
	if code != 0 {
		t.Fatalf("credentials %s %s: exit %d\n%s", host, db, code, errOut)
	}
	return strings.TrimSpace(out)
}

func pgTry(u string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgURL(u))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	return "", nil
}

func pgQuery(t *testing.T, u, q string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgURL(u))
	if err != nil {
		t.Fatalf("connect %s: %v", redact(u), err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, q).Scan(&s); err != nil {
		if strings.HasPrefix(q, "CREATE") {
			return ""
		}
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

// withDB is a URL with another database.
func withDB(u, db string) string {
	p, _ := url.Parse(u)
	p.Path = "/" + db
	return p.String()
}

// pgURL is pidb's postgres:// URL with a timeout, and without TLS unless
// it asks for it (sslmode=require, where the host's network logins need it).
func pgURL(u string) string {
	if strings.Contains(u, "?") {
		return u + "&connect_timeout=5"
	}
	return u + "?sslmode=disable&connect_timeout=5"
}

// mysqlDSN turns pidb's mysql:// URL into the driver's DSN: with TLS (not
// checked against a CA) when it asks for it (ssl-mode=REQUIRED), else
// without.
func mysqlDSN(u string) string {
	p, _ := url.Parse(u)
	pw, _ := p.User.Password()
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName, c.Timeout = p.User.Username(), pw, "tcp", p.Host, strings.TrimPrefix(p.Path, "/"), 5*time.Second
	if p.Query().Get("ssl-mode") == "REQUIRED" {
		c.TLSConfig = "skip-verify"
	}
	return c.FormatDSN()
}

func myTry(u string) (string, error) {
	db, err := sql.Open("mysql", mysqlDSN(u))
	if err != nil {
		return "", err
	}
	defer db.Close()
	return "", db.Ping()
}

func myQuery(t *testing.T, u, q string) string {
	t.Helper()
	db, err := sql.Open("mysql", mysqlDSN(u))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if strings.HasPrefix(q, "CREATE") {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s as %s: %v", q, redact(u), err)
		}
		return ""
	}
	var s string
	if err := db.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s as %s: %v", q, redact(u), err)
	}
	return s
}

// redact hides the password of a URL in test output.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(url)"
	}
	return p.Redacted()
}

// TestMariaDBRefusedOn16KPages: a Pi 5 on its default kernel (16K pages,
// as the lab's Pi 5 reports them) is refused MariaDB before anything is
// installed, with the fix; its facts show the page size. On a fresh Pi 5
// of its own.
func TestMariaDBRefusedOn16KPages(t *testing.T) {
	t.Parallel()
	inv := labtest.FreshAsBoard(t, "pi5")
	h := labtest.RootHost(t, inv, "pi5")
	mysql := withHostKeys(t, inv, "mysql")
	code, res, errOut := provisionLab(t, "-i", mysql)
	if code != 1 || res["pi5"].OK || !strings.Contains(res["pi5"].Error, "16K pages") || !strings.Contains(res["pi5"].Error, "kernel=kernel8.img") {
		t.Errorf("MariaDB on the Pi 5: exit %d %+v\n%s", code, res, errOut)
	}
	if got := labtest.MustSSH(t, h, "dpkg-query -W -f '${Status}' mariadb-server 2>/dev/null; true"); strings.Contains(got, "installed") {
		t.Errorf("mariadb-server is installed: %q", got)
	}
	if code, out, _ := runPidb(t, "facts", "-i", mysql); code != 0 || !strings.Contains(out, " 16K ") {
		t.Errorf("facts: exit %d\n%s", code, out)
	}
}

// TestOSStep: provision's os step on a Pi 4 of its own (a clone of a
// provisioned one; TestProvisionTheLab's fresh Pis show the step's first
// run): the performance governor and vm.swappiness 10, also after a
// reboot, and the journal's bound; os_governor = "ondemand" gives the
// distribution's governor back. Strict overcommit: kept off where the
// preset's worst case fills the RAM (balanced, with the lab's 100 MB of
// swap), on where it leaves room (20 connections of 1MB work_mem), with
// the ratio in pidb's file, also after a reboot; off again when tune apply
// makes the worst case grow back, and on again at the small drop-in's
// ratio when tune rollback puts it back.
func TestOSStep(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4")
	h := labtest.RootHost(t, inv, "pi4")
	type osFacts struct {
		Governor   string `json:"governor"`
		Swappiness int    `json:"swappiness"`
		Overcommit *int   `json:"overcommit_memory"`
		Ratio      *int   `json:"overcommit_ratio"`
	}
	read := func(path string) osFacts {
		t.Helper()
		code, out, errOut := runPidb(t, "facts", "-i", path, "--json")
		var fs []osFacts
		if err := json.Unmarshal([]byte(out), &fs); err != nil || code != 0 || len(fs) != 1 || fs[0].Overcommit == nil || fs[0].Ratio == nil {
			t.Fatalf("facts: exit %d %v\n%s\n%s", code, err, out, errOut)
		}
		return fs[0]
	}
	provision := func(path string, want string) provisionJSON {
		t.Helper()
		code, res, errOut := provisionLab(t, "-i", path)
		// each inventory keeps its own passwords: a provision from another
		// sets the accounts to its own
		changed := slices.DeleteFunc(slices.Clone(res["pi4"].Changed), func(s string) bool { return s == "accounts" })
		if code != 0 || strings.Join(changed, ",") != want {
			t.Fatalf("provision: exit %d, changed %v, want %q\n%s", code, res["pi4"].Changed, want, errOut)
		}
		return res["pi4"]
	}
	// (booted: its units set the governor once SSH answers)
	labtest.MustSSH(t, h, "systemctl is-system-running --wait >/dev/null; true")
	provision(inv.Path, "")
	if f := read(inv.Path); f.Governor != "performance" || f.Swappiness != 10 || *f.Overcommit != 0 || *f.Ratio != 50 {
		t.Errorf("a provisioned Pi 4 (balanced, 100 MB of swap): %+v, want performance, 10, the kernel's overcommit 0 and 50", f)
	}
	if got := labtest.MustSSH(t, h, "systemd-analyze cat-config systemd/journald.conf | grep -c '^SystemMaxUse=64M'"); strings.TrimSpace(got) != "1" {
		t.Errorf("the journal's bound: %q", got)
	}

	ondemand := withHostKeys(t, inv, "", `os_governor = "ondemand"`)
	provision(ondemand, "os")
	if f := read(ondemand); f.Governor != "ondemand" {
		t.Errorf("os_governor = ondemand: governor %q", f.Governor)
	}
	if got := labtest.MustSSH(t, h, "ls /etc/systemd/system/pidb-cpu-governor.service 2>/dev/null; true"); strings.TrimSpace(got) != "" {
		t.Errorf("pidb's governor unit is still there: %q", got)
	}

	// room for strict overcommit: the worst case of 20 connections with
	// 1MB of work_mem each
	src, err := os.ReadFile(inv.Path) // its one host is the last table
	if err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(t.TempDir(), "small.toml")
	if err := os.WriteFile(small, append(src, "\n[host.settings]\nmax_connections = 20\nwork_mem = \"1MB\"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	res := provision(small, "os,configure")
	if !strings.Contains(strings.Join(res.Notes, "\n"), "strict overcommit (vm.overcommit_memory 2, ratio ") {
		t.Errorf("the os step did not say it set strict overcommit; notes:\n%s", strings.Join(res.Notes, "\n"))
	}
	file := labtest.MustSSH(t, h, "cat /etc/sysctl.d/60-pidb.conf")
	m := regexp.MustCompile(`(?m)^vm.overcommit_memory = 2\nvm.overcommit_ratio = (\d+)$`).FindStringSubmatch(file)
	if m == nil {
		t.Fatalf("pidb's sysctl file has no strict overcommit:\n%s", file)
	}
	for _, when := range []string{"after provision", "after a reboot"} {
		if when == "after a reboot" {
			labtest.Reboot(t, h)
		}
		if f := read(small); f.Governor != "performance" || f.Swappiness != 10 || *f.Overcommit != 2 || strconv.Itoa(*f.Ratio) != m[1] {
			t.Errorf("%s: %+v, want performance, 10, overcommit 2 and ratio %s", when, f, m[1])
		}
	}
	provision(small, "")

	// the worst case fills the RAM again, by tune apply: the kernel's
	// defaults; and tune rollback puts the small drop-in back, and with it
	// strict overcommit at its ratio
	for _, c := range []struct{ cmd, changed, note, mode, ratio string }{
		{"apply", "os,configure", "the kernel's overcommit heuristic kept", "0", "50"},
		{"rollback", "configure,os", "strict overcommit (vm.overcommit_memory 2, ratio ", "2", m[1]},
	} {
		code, res, errOut := provisionLabCmd(t, "tune", c.cmd, "-i", inv.Path)
		if code != 0 || strings.Join(res["pi4"].Changed, ",") != c.changed || !strings.Contains(strings.Join(res["pi4"].Notes, "\n"), c.note) {
			t.Errorf("tune %s: exit %d, %+v; want %s changed and a note %q\n%s", c.cmd, code, res["pi4"], c.changed, c.note, errOut)
		}
		if f := read(inv.Path); strconv.Itoa(*f.Overcommit) != c.mode || strconv.Itoa(*f.Ratio) != c.ratio {
			t.Errorf("after tune %s: overcommit %d, ratio %d; want %s and %s", c.cmd, *f.Overcommit, *f.Ratio, c.mode, c.ratio)
		}
	}
}
