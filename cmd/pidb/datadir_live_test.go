package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/lab"
)

// withHostKeys writes inv's inventory again with lines added to its one
// host (after its name) and its engine replaced where engine is not "".
func withHostKeys(t *testing.T, inv *inventory.Inventory, engine string, lines ...string) string {
	t.Helper()
	src, err := os.ReadFile(inv.Path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	name := inv.Hosts[0].Name
	s = strings.Replace(s, "name = \""+name+"\"\n", "name = \""+name+"\"\n"+strings.Join(lines, "\n")+"\n", 1)
	if engine != "" {
		s = strings.Replace(s, `engine = "postgres"`, `engine = "`+engine+`"`, 1)
	}
	p := filepath.Join(t.TempDir(), "inventory.toml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// dataFacts are the facts of the data directory, as pidb facts --json
// gives them.
func dataFacts(t *testing.T, inv string) (dir, device, storage string) {
	t.Helper()
	code, out, errOut := runPidb(t, "facts", "-i", inv, "--json")
	var fs []struct {
		DataDir     string `json:"data_dir"`
		DataDevice  string `json:"data_device"`
		DataStorage string `json:"data_storage"`
	}
	if err := json.Unmarshal([]byte(out), &fs); err != nil || code != 0 || len(fs) != 1 {
		t.Fatalf("facts: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	return fs[0].DataDir, fs[0].DataDevice, fs[0].DataStorage
}

// TestDataDevice moves a running PostgreSQL and a running MariaDB, each
// with canary rows, onto a USB SSD plugged into a Pi 4 (data_device =
// "auto"; for MariaDB its name in /dev/disk/by-id): the rows are there after, the server runs on the drive, facts
// say so, and a second provision changes nothing. On PostgreSQL, whose
// canary is large enough for its copy to take a while, the link is cut
// while the host copies: the host puts the server back on its old
// directory, running, with every row; the next provision moves it; and
// after a reboot the drive is mounted again and the server runs on it.
func TestDataDevice(t *testing.T) {
	t.Parallel()
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		inv := labtest.CloneAsBoard(t, "pi4")
		h := labtest.Host(t, inv, "pi4")
		h.User = "root"
		labtest.PlugDrive(t, h, "usb-ssd")
		psql := func(sql string) string {
			return strings.TrimSpace(labtest.MustSSH(t, h, `cd /tmp && runuser -u postgres -- psql -AtX -d pidb -c "`+sql+`"`))
		}
		labtest.MustSSH(t, h, "until pg_isready -q; do sleep 0.2; done")
		// about 150 MB of rows: a copy that takes a while, to cut the link in
		psql("CREATE TABLE canary AS SELECT g AS id, md5(g::text) || repeat('x', 100) AS note FROM generate_series(1, 1000000) g")
		count := "SELECT count(*) || ' ' || sum(id) FROM canary"
		want := psql(count)
		moved := withHostKeys(t, inv, "", `data_device = "auto"`)

		cmd := pidbCommand("provision", "-i", moved, "--json")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		state := func() string {
			return strings.TrimSpace(labtest.HostFile(t, h, "/var/lib/pidb/datadir/state"))
		}
		deadline := time.Now().Add(2 * time.Minute)
		for state() != "copying" {
			if time.Now().After(deadline) {
				t.Fatalf("the move never began copying (state %q)\n%s", state(), out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		mend := labtest.Cut(t, h)
		if code := exitOf(t, cmd.Wait()); code == 0 {
			t.Fatalf("provision with its link cut while the host copied: exit 0\n%s", out.String())
		}
		// the script waits 30 s for go by the host's clock, then puts the
		// server back: 5 minutes bound that on a starved machine
		for deadline = time.Now().Add(5 * time.Minute); !strings.HasPrefix(state(), "failed: no go from pidb"); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the host did not put the server back: state %q", state())
			}
		}
		mend()
		if got := psql("SHOW data_directory"); got != labtest.PGData {
			t.Errorf("after the cut move, the server runs on %s", got)
		}
		if got := psql(count); got != want {
			t.Errorf("after the cut move, the canary holds %s, want %s", got, want)
		}
		if left := labtest.MustSSH(t, h, "ls /srv/pidb-data/postgresql/15 2>/dev/null; true"); strings.TrimSpace(left) != "" {
			t.Errorf("the cut move left %q on the drive", left)
		}

		code, res, errOut := provisionLab(t, "-i", moved)
		if code != 0 || !res["pi4"].OK || !contains(res["pi4"].Changed, "datadir") || !contains(res["pi4"].Changed, "configure") {
			t.Fatalf("provision after the cut: exit %d %+v\n%s", code, res, errOut)
		}
		if got := psql("SHOW data_directory"); got != "/srv/pidb-data/postgresql/"+labtest.PG+"/main" {
			t.Errorf("the server runs on %s", got)
		}
		if got := psql(count); got != want {
			t.Errorf("the canary holds %s after the move, want %s", got, want)
		}
		if dir, dev, kind := dataFacts(t, moved); dir != "/srv/pidb-data/postgresql/"+labtest.PG+"/main" || dev != "/dev/sda" || kind != "usb" {
			t.Errorf("facts: data in %s on %s (%s)", dir, dev, kind)
		}
		if rest := labtest.MustSSH(t, h, "ls -A /var/lib/postgresql/15; findmnt -n -o SOURCE,OPTIONS /srv/pidb-data; grep -c ' /srv/pidb-data ext4 noatime,nofail ' /etc/fstab"); !strings.Contains(rest, "/dev/sda rw,noatime") || !strings.HasSuffix(strings.TrimSpace(rest), "\n1") || strings.Contains(rest, "main") {
			t.Errorf("the old directory, the mount and the fstab line:\n%s", rest)
		}
		if code, res, errOut := provisionLab(t, "-i", moved); code != 0 || len(res["pi4"].Changed) != 0 {
			t.Errorf("a second provision: exit %d, changed %v\n%s", code, res["pi4"].Changed, errOut)
		}
		labtest.Reboot(t, h)
		if got := psql("SHOW data_directory") + " " + psql(count); got != "/srv/pidb-data/postgresql/"+labtest.PG+"/main "+want {
			t.Errorf("after a reboot: %s", got)
		}
	})
	t.Run("mariadb", func(t *testing.T) {
		t.Parallel()
		// a Pi 4 with the Pi 3's MariaDB (a Pi 3 has no USB 3), set up
		// for the Pi 4 by a provision
		inv := labtest.BoardFrom(t, "pi4", "pi3")
		h := labtest.Host(t, inv, inv.Hosts[0].Name)
		h.User = "root"
		labtest.PlugDrive(t, h, "usb-ssd")
		plain := withHostKeys(t, inv, "mysql")
		if code, res, errOut := provisionLab(t, "-i", plain); code != 0 {
			t.Fatalf("provision MariaDB: exit %d %+v\n%s", code, res, errOut)
		}
		sql := func(q string) string {
			return strings.TrimSpace(labtest.MustSSH(t, h, `mariadb -NB pidb -e "`+q+`"`))
		}
		sql("CREATE TABLE canary (id INT PRIMARY KEY, note VARCHAR(64)) ENGINE=InnoDB; INSERT INTO canary WITH RECURSIVE s (id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM s WHERE id < 1000) SELECT id, MD5(id) FROM s")
		count := "SELECT CONCAT(COUNT(*), ' ', SUM(id)) FROM canary"
		want := sql(count)
		if want != "1000 500500" {
			t.Fatalf("the canary: %q", want)
		}
		// by its stable name, as people copy it from ls /dev/disk/by-id
		moved := withHostKeys(t, inv, "mysql", `data_device = "/dev/disk/by-id/`+lab.DriveID(labtest.LabName(t, h), "usb-ssd")+`"`)
		code, res, errOut := provisionLab(t, "-i", moved)
		name := inv.Hosts[0].Name
		if code != 0 || !res[name].OK || !strings.Contains(strings.Join(res[name].Changed, ","), "datadir") {
			t.Fatalf("provision with data_device: exit %d %+v\n%s", code, res, errOut)
		}
		if got := sql("SELECT @@datadir"); got != "/srv/pidb-data/mysql/data/" {
			t.Errorf("MariaDB runs on %s", got)
		}
		if got := sql(count); got != want {
			t.Errorf("the canary holds %s after the move, want %s", got, want)
		}
		if dir, dev, kind := dataFacts(t, moved); dir != "/srv/pidb-data/mysql/data" || dev != "/dev/sda" || kind != "usb" {
			t.Errorf("facts: data in %s on %s (%s)", dir, dev, kind)
		}
		if old := labtest.MustSSH(t, h, "ls -A /var/lib/mysql 2>/dev/null; true"); strings.TrimSpace(old) != "" {
			t.Errorf("the old directory still holds %q", old)
		}
		if code, res, errOut := provisionLab(t, "-i", moved); code != 0 || len(res[name].Changed) != 0 {
			t.Errorf("a second provision: exit %d, changed %v\n%s", code, res[name].Changed, errOut)
		}
	})
}
