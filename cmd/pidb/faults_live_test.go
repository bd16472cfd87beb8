package main

import (
	"strings"
	"testing"

	"pidb/internal/labtest"
)

// TestWrittenNotApplied: a run cut off between writing the tuner's drop-in
// and restarting the server leaves the new file on disk and the old values
// live. A re-run must see that from the server's live values (and on
// PostgreSQL its pending_restart), restart it and verify, not say that
// nothing changed. The state is made as the cut leaves it: the fast
// preset's file, kept aside, put back over the balanced one after the
// server restarted on that.
func TestWrittenNotApplied(t *testing.T) {
	inv := labtest.Inventory(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, tc := range []struct{ host, conf, live string }{
		{"pi4", "/etc/postgresql/15/main/conf.d/90-pidb.conf", `cd /tmp && runuser -u postgres -- psql -AtX -c "SELECT setting FROM pg_settings WHERE name = 'synchronous_commit'" -c "SELECT count(*) FROM pg_settings WHERE pending_restart"`},
		{"pi3", "/etc/mysql/mariadb.conf.d/90-pidb.cnf", `mariadb -NBe "SELECT @@innodb_flush_log_at_trx_commit"`},
	} {
		t.Run(tc.host, func(t *testing.T) {
			h := labtest.Host(t, inv, tc.host)
			h.User = "root"
			if code, _, errOut := provisionLab(t, "-i", inv.Path, "--limit", tc.host); code != 0 {
				t.Fatalf("provision: exit %d\n%s", code, errOut)
			}
			apply := func(preset string) []string {
				t.Helper()
				code, res, errOut := provisionLabCmd(t, "tune", "apply", "-i", inv.Path, "--limit", tc.host, "--preset", preset)
				if code != 0 {
					t.Fatalf("tune apply --preset %s: exit %d %+v\n%s", preset, code, res, errOut)
				}
				return res[tc.host].Changed
			}
			apply("fast")
			fast := labtest.MustSSH(t, h, tc.live)
			labtest.MustSSH(t, h, "cp -p "+tc.conf+" /root/pidb-fast.conf")
			apply("balanced")
			balanced := labtest.MustSSH(t, h, tc.live)
			if fast == balanced {
				t.Fatalf("the presets give the same live values (%q): the test would prove nothing", fast)
			}
			// as a cut between the upload and the restart leaves it
			labtest.MustSSH(t, h, "cp -p /root/pidb-fast.conf "+tc.conf+" && rm /root/pidb-fast.conf")
			before := labtest.MustSSH(t, h, startTime)
			if changed := apply("fast"); strings.Join(changed, ",") != "configure" {
				t.Errorf("the re-run changed %v, want configure (restarted onto the file)", changed)
			}
			if now := labtest.MustSSH(t, h, startTime); now == before {
				t.Errorf("the server was not restarted")
			}
			if got := labtest.MustSSH(t, h, tc.live); got != fast {
				t.Errorf("live after the re-run: %q, want the fast preset's %q", got, fast)
			}
			// and then nothing to do, no restart
			before = labtest.MustSSH(t, h, startTime)
			if changed := apply("fast"); len(changed) != 0 {
				t.Errorf("a second re-run changed %v", changed)
			}
			if now := labtest.MustSSH(t, h, startTime); now != before {
				t.Errorf("a second re-run restarted the server")
			}
			apply("balanced")
		})
	}
}
