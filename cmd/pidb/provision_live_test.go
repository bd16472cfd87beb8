package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pidb/internal/labtest"
	"pidb/inventory"
)

type provisionJSON struct {
	Host    string   `json:"host"`
	OK      bool     `json:"ok"`
	Changed []string `json:"changed"`
	Error   string   `json:"error"`
	Engine  string   `json:"engine"`
}

func provisionLab(t *testing.T, args ...string) (int, map[string]provisionJSON, string) {
	t.Helper()
	code, out, errOut := runPidb(t, append([]string{"provision", "--json"}, args...)...)
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
const etcState = "find /etc -type f -print0 | sort -z | xargs -0 md5sum; dpkg-query -W -f '${Package} ${Status}\\n'"

// startTime is when the host's database server last started.
const startTime = "systemctl show -p ActiveEnterTimestampMonotonic --value postgresql@15-main mariadb 2>/dev/null | tr '\\n' ' '"

// TestProvisionTheLab provisions the whole lab as the "done when"
// says, then checks re-runs, a dry run, a setting that stops the server, and
// a host that runs another engine. It changes the lab hosts.
func TestProvisionTheLab(t *testing.T) {
	inv := labtest.Inventory(t)
	hosts := map[string]inventory.Host{}
	for _, n := range []string{"pi4", "pi3", "zero"} {
		hosts[n] = labtest.Host(t, inv, n)
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
		code, res, errOut := provisionLab(t, "-i", inv.Path, "--preset", "seed")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		for n := range hosts {
			if !res[n].OK {
				t.Errorf("%s: %+v", n, res[n])
			}
		}
		for _, c := range []struct{ host, cmd, want string }{
			{"pi4", `cd /tmp && runuser -u postgres -- psql -AtX -c "SHOW shared_buffers" -c "SHOW max_parallel_workers_per_gather"`, "1GB\n0"},
			{"zero", `cd /tmp && runuser -u postgres -- psql -AtX -c "SHOW shared_buffers"`, "128MB"},
			{"pi3", `mariadb -NBe "SELECT @@log_bin, @@innodb_buffer_pool_size"`, "0\t268435456"},
		} {
			if got := strings.TrimSpace(labtest.MustSSH(t, root(c.host), c.cmd)); got != c.want {
				t.Errorf("%s: %q, want %q", c.host, got, c.want)
			}
		}
		for n := range hosts {
			if got := strings.TrimSpace(labtest.MustSSH(t, hosts[n], "systemctl get-default")); got != "multi-user.target" {
				t.Errorf("%s boots to %s", n, got)
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
		code, res, errOut := provisionLab(t, "-i", inv.Path, "--limit", "pi4,pi3")
		if code != 0 || strings.Join(res["pi4"].Changed, ",") != "configure" || strings.Join(res["pi3"].Changed, ",") != "configure" {
			t.Fatalf("exit %d %+v\n%s", code, res, errOut)
		}
		src, _ := os.ReadFile(inv.Path)
		p := filepath.Join(t.TempDir(), "root.toml")
		os.WriteFile(p, []byte(strings.Replace(string(src), `user = "pi"`, `user = "root"`, 1)), 0o644)
		code, res, errOut = provisionLab(t, "-i", p, "--limit", "zero")
		if code != 0 || strings.Join(res["zero"].Changed, ",") != "configure" {
			t.Fatalf("as root: exit %d %+v\n%s", code, res, errOut)
		}
	})

	// huge_pages = on passes pidb's checks (a valid value) and PostgreSQL's
	// own parser, but the server cannot start: the board reserves no huge
	// pages. The run must fail for zero alone, with zero back up on its
	// previous configuration and its data intact.
	t.Run("a setting that stops the server is rolled back", func(t *testing.T) {
		z := root("zero")
		labtest.MustSSH(t, z, `cd /tmp && runuser -u postgres -- psql -qX -c "DROP TABLE IF EXISTS canary; CREATE TABLE canary AS SELECT g AS id FROM generate_series(1, 1000) g"`)
		before := labtest.MustSSH(t, z, "cat /etc/postgresql/15/main/conf.d/90-pidb.conf")
		src, _ := os.ReadFile(inv.Path)
		p := filepath.Join(t.TempDir(), "huge.toml")
		os.WriteFile(p, append(src, []byte("[host.settings]\nhuge_pages = \"on\"\n")...), 0o644) // the last host: zero
		code, res, errOut := provisionLab(t, "-i", p, "--limit", "zero")
		if code != 1 || res["zero"].OK {
			t.Fatalf("exit %d %+v, want a failure\n%s", code, res["zero"], errOut)
		}
		if e := res["zero"].Error; !strings.Contains(e, "zero: configure") || !strings.Contains(e, "the previous configuration is back") {
			t.Errorf("error: %s", e)
		}
		if after := labtest.MustSSH(t, z, "cat /etc/postgresql/15/main/conf.d/90-pidb.conf"); after != before {
			t.Errorf("the drop-in was not put back:\n%s", after)
		}
		got := strings.TrimSpace(labtest.MustSSH(t, z, `systemctl is-active postgresql@15-main; cd /tmp && runuser -u postgres -- psql -AtX -c "SELECT count(*) FROM canary" -c "SHOW huge_pages"`))
		if got != "active\n1000\ntry" {
			t.Errorf("after the rollback: %q, want the server active, 1000 canary rows, huge_pages back at try", got)
		}
	})

	t.Run("another engine is refused", func(t *testing.T) {
		src, _ := os.ReadFile(inv.Path)
		p := filepath.Join(t.TempDir(), "other.toml")
		s := strings.Replace(string(src), "name = \"pi3\"\naddress = \"10.213.41.30\"\nengine = \"mysql\"", "name = \"pi3\"\naddress = \"10.213.41.30\"\nengine = \"postgres\"", 1)
		os.WriteFile(p, []byte(s), 0o644)
		before := labtest.MustSSH(t, root("pi3"), etcState)
		code, res, _ := provisionLab(t, "-i", p, "--limit", "pi3")
		if code != 1 || !strings.Contains(res["pi3"].Error, "pidb does not replace a database engine") {
			t.Errorf("exit %d %+v", code, res["pi3"])
		}
		if after := labtest.MustSSH(t, root("pi3"), etcState); after != before {
			t.Errorf("a refused host was changed")
		}
	})
}
