package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pidb/internal/labtest"
	"pidb/job"
	"pidb/lab"
	"pidb/results"
)

// releaseVersions are the servers each Debian release the lab boots
// ships: what pidb must find there after its install.
var releaseVersions = map[string]struct{ postgres, mariadb string }{
	"bookworm": {"15.", "10.11."},
	"trixie":   {"17.", "11.8."},
}

// TestReleasesOnTheLab is the release matrix: on each release the lab
// boots other than its default (whose servers every other lab test
// runs), a fresh Pi 4 with PostgreSQL and a fresh Pi 3 with MariaDB, the
// release's own versions: provisioned, provisioned again with nothing to
// change, every workload that fits the engine for 5 s over direct TLS
// and through SSH with no transaction lost to an error, validated, and
// logged in to with credentials --ca. On trixie this is MariaDB 11.8,
// which makes a throw-away certificate at each start (pidb makes its
// own: the direct runs and --ca would fail without it), and whose
// snapshot isolation fails a quarter of tpcc's New-Orders and Payments
// with 1020 (tried again, as sysbench does).
func TestReleasesOnTheLab(t *testing.T) {
	var rels []lab.Release
	for _, r := range lab.Releases() {
		if _, ok := releaseVersions[r.Name]; ok && r.Name != lab.DefaultRelease {
			rels = append(rels, r)
		}
	}
	reserved := map[string]*labtest.Reserved{}
	for _, r := range rels {
		reserved[r.Name] = labtest.Reserve(t, "pi4", "pi3")
	}
	t.Parallel()
	for _, rel := range rels {
		t.Run(rel.Name, func(t *testing.T) {
			want := releaseVersions[rel.Name]
			inv := reserved[rel.Name].FreshOn(rel.Name)
			pg, my := inv.Hosts[0], inv.Hosts[1]
			both := pg.Name + "," + my.Name

			code, res, errOut := provisionLab(t, "-i", inv.Path)
			if code != 0 {
				t.Fatalf("provision: exit %d %+v\n%s", code, res, errOut)
			}
			for host, engine := range map[string]string{pg.Name: want.postgres, my.Name: want.mariadb} {
				if r := res[host]; !r.OK || !strings.HasPrefix(r.EngineVersion, engine) {
					t.Errorf("%s: %+v; want %s...", host, r, engine)
				}
			}
			if got := strings.TrimSpace(labtest.MustSSH(t, labtest.RootHost(t, inv, my.Name), `mariadb -NBe "SELECT @@ssl_cert"`)); got != "/etc/mysql/pidb-server.crt" {
				t.Errorf("%s: MariaDB runs the certificate %q, want pidb's own (a throw-away one cannot be pinned)", my.Name, got)
			}
			if code, res, errOut := provisionLab(t, "-i", inv.Path); code != 0 || len(res[pg.Name].Changed)+len(res[my.Name].Changed) != 0 {
				t.Errorf("provision again: exit %d, changed %v and %v; want nothing\n%s", code, res[pg.Name].Changed, res[my.Name].Changed, errOut)
			}

			script := filepath.Join(t.TempDir(), "one.sql")
			if err := os.WriteFile(script, []byte("\\set k random(1, 100)\nSELECT :k;\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, w := range []struct {
				workload, hosts string
				more            []string
			}{
				{"tpcb", pg.Name, nil}, // not on MySQL's family
				{"oltp-read-only", both, nil},
				{"quiz", both, nil},
				{"tpcc", both, nil},
				{"sql", both, []string{"--script", script}},
			} {
				for _, via := range []string{"direct", "ssh"} {
					args := append([]string{"bench", "-i", inv.Path, "--limit", w.hosts, "--workload", w.workload, "--duration", "5s", "--warmup", "1s", "--via", via, "--json"}, w.more...)
					code, stdout, errOut := runPidb(t, args...)
					var bs []job.BenchResult
					if err := json.Unmarshal([]byte(stdout), &bs); err != nil || code != 0 || len(bs) != len(strings.Split(w.hosts, ",")) {
						t.Errorf("%s via %s: exit %d, %v\n%s\n%s", w.workload, via, code, err, stdout, lastLines(errOut, 20))
						continue
					}
					for _, b := range bs {
						if b.Transactions == 0 || len(b.Errors) != 0 || b.ErrorShare > results.ErrorShareLimit || b.TLS != (via == "direct") {
							t.Errorf("%s: %s via %s: %d transactions, errors %v, tls %v", b.Host, w.workload, via, b.Transactions, b.Errors, b.TLS)
						}
					}
				}
			}

			code, stdout, errOut := runPidb(t, "validate", "-i", inv.Path, "--duration", "5s", "--warmup", "1s", "--json")
			var vs []validateJSON
			if err := json.Unmarshal([]byte(stdout), &vs); err != nil || len(vs) != 2 {
				t.Fatalf("validate: exit %d, %v\n%s\n%s", code, err, stdout, errOut)
			}
			for _, v := range vs {
				// the heat and a busy machine may warn; nothing pidb set
				// or ran may fail
				if v.Verdict == "FAIL" {
					t.Errorf("validate %s: FAIL %v", v.Host, v.Reasons)
				}
			}

			for _, h := range inv.Hosts {
				ca := filepath.Join(t.TempDir(), h.Name+".pem")
				code, out, errOut := runPidb(t, "credentials", "-i", inv.Path, "--ca", ca, h.Name)
				if code != 0 {
					t.Errorf("credentials --ca %s: exit %d\n%s", h.Name, code, errOut)
					continue
				}
				u := strings.TrimSpace(out)
				if h.Name == pg.Name {
					if got := pgQuery(t, u, "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()"); got != "true" {
						t.Errorf("%s: the login with the --ca URL is not over TLS: %q", h.Name, got)
					}
				} else if err := myCATry(u, ""); err != nil {
					t.Errorf("%s: the login with the --ca URL, the certificate checked against the file and the address: %v", h.Name, err)
				}
			}
		})
	}
}
