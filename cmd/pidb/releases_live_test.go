package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidb/dbms"
	"pidb/internal/labtest"
	"pidb/job"
	"pidb/lab"
	"pidb/results"
)

// releaseHosts are, for each release the lab boots, the hosts the
// matrix runs on it: a board of the lab (whose engine the lab's inventory
// names), the server pidb must find there after its install, and the
// start of its version.
var releaseHosts = map[string][]struct {
	kind    string
	flavor  dbms.Flavor
	version string
}{
	"bookworm": {{"pi4", dbms.Postgres, "15."}, {"pi3", dbms.MariaDB, "10.11."}},
	"trixie":   {{"pi4", dbms.Postgres, "17."}, {"pi3", dbms.MariaDB, "11.8."}},
	"ubuntu":   {{"pi4", dbms.Postgres, "18."}, {"cm4", dbms.MySQL, "9."}},
}

// The release matrix: on each release the lab boots other than its
// default (trixie, whose servers every other lab test runs: MariaDB
// 11.8's throw-away certificate and its snapshot isolation's 1020 are
// theirs), fresh Pis with each engine the release ships, at its own
// versions: provisioned, provisioned again with nothing to change,
// every workload that fits the engine for 5 s over direct TLS (one
// through SSH too) with no transaction lost to an error, validated, and
// logged in to with credentials --ca. One test per release, each a
// top-level test, so that each starts with the suite's first lab tests
// (subtests of one test waited for a slot behind all of them, and were
// its last by minutes).

// TestReleasesInTheMatrix: every release the lab boots has its hosts in
// the matrix, and a test of its own (below) unless it is the default.
func TestReleasesInTheMatrix(t *testing.T) {
	tests := map[string]bool{"bookworm": true, "ubuntu": true} // TestRelease{Bookworm,Ubuntu}OnTheLab
	for _, r := range lab.Releases() {
		if _, ok := releaseHosts[r.Name]; !ok {
			t.Errorf("release %s: the matrix has no hosts for it", r.Name)
		}
		if r.Name != lab.DefaultRelease && !tests[r.Name] {
			t.Errorf("release %s: no lab test runs the matrix on it", r.Name)
		}
		if r.Name == lab.DefaultRelease && tests[r.Name] {
			t.Errorf("release %s is the default, which every other lab test runs: its matrix test is spent", r.Name)
		}
	}
}

// TestReleaseBookwormOnTheLab: PostgreSQL 15 and MariaDB 10.11, as
// Raspberry Pi OS Legacy runs them.
func TestReleaseBookwormOnTheLab(t *testing.T) { releaseMatrix(t, "bookworm") }

// TestReleaseUbuntuOnTheLab: PostgreSQL 18 and Oracle MySQL 9 (tuned as
// 8.4): its drop-in must sort after Ubuntu's mysqld.cnf and its buffer
// pool be whole chunks, or the read-back rolls the provision back; it
// has no @@have_ssl.
func TestReleaseUbuntuOnTheLab(t *testing.T) { releaseMatrix(t, "ubuntu") }

// releaseMatrix runs the matrix on fresh hosts of the release called rel.
func releaseMatrix(t *testing.T, rel string) {
	want := releaseHosts[rel]
	var kinds []string
	for _, h := range want {
		kinds = append(kinds, h.kind)
	}
	reserved := labtest.Reserve(t, kinds...)
	t.Parallel()
	inv := reserved.FreshOn(t, rel)
	var names, pgs []string
	flavor := map[string]dbms.Flavor{}
	for i, h := range inv.Hosts {
		names, flavor[h.Name] = append(names, h.Name), want[i].flavor
		if want[i].flavor == dbms.Postgres {
			pgs = append(pgs, h.Name)
		}
	}
	all := strings.Join(names, ",")

	code, res, errOut := provisionLab(t, "-i", inv.Path)
	if code != 0 {
		t.Fatalf("provision: exit %d %+v\n%s", code, res, errOut)
	}
	for i, h := range inv.Hosts {
		if r := res[h.Name]; !r.OK || r.Engine != string(want[i].flavor) || !strings.HasPrefix(r.EngineVersion, want[i].version) {
			t.Errorf("%s: %+v; want %s %s...", h.Name, r, want[i].flavor, want[i].version)
		}
		if want[i].flavor == dbms.MariaDB {
			if got := strings.TrimSpace(labtest.MustSSH(t, labtest.RootHost(t, inv, h.Name), `mariadb -NBe "SELECT @@ssl_cert"`)); got != "/etc/mysql/pidb-server.crt" {
				t.Errorf("%s: MariaDB runs the certificate %q, want pidb's own (a throw-away one cannot be pinned)", h.Name, got)
			}
		}
	}
	t.Logf("%s provision again", time.Now().Format(time.TimeOnly))
	if code, res, errOut := provisionLab(t, "-i", inv.Path); code != 0 {
		t.Errorf("provision again: exit %d\n%s", code, errOut)
	} else {
		for _, n := range names {
			if len(res[n].Changed) != 0 {
				t.Errorf("provision again: %s changed %v; want nothing", n, res[n].Changed)
			}
		}
	}

	out := t.TempDir() // the runs
	script := filepath.Join(t.TempDir(), "one.sql")
	if err := os.WriteFile(script, []byte("\\set k random(1, 100)\nSELECT :k;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// every workload over direct TLS; one through SSH, whose tunnel
	// is the same on every release (the default release's tests
	// run each workload both ways); at the smallest scales, since
	// what is tried is each server's SQL and TLS, not its speed
	for _, w := range []struct {
		workload, hosts string
		vias            []string
		more            []string
	}{
		{"tpcb", strings.Join(pgs, ","), []string{"direct"}, []string{"--scale", "1"}}, // not on MySQL's family
		{"oltp-read-only", all, []string{"direct", "ssh"}, nil},
		{"quiz", all, []string{"direct"}, []string{"--scale", "100"}},
		{"tpcc", all, []string{"direct"}, nil},
		{"sql", all, []string{"direct"}, []string{"--script", script}},
	} {
		for _, via := range w.vias {
			if w.hosts == "" {
				continue
			}
			t.Logf("%s %s via %s", time.Now().Format(time.TimeOnly), w.workload, via)
			args := append([]string{"bench", "-i", inv.Path, "--limit", w.hosts, "--workload", w.workload, "--duration", "5s", "--warmup", "1s", "--via", via, "--out", out, "--json"}, w.more...)
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

	t.Logf("%s validate", time.Now().Format(time.TimeOnly))
	code, stdout, errOut := runPidb(t, "validate", "-i", inv.Path, "--duration", "5s", "--warmup", "1s", "--scale", "1",
		"--idle-before", "2s", "--idle-after", "2s", "--thermal-interval", "1s", "--out", out, "--json")
	var vs []validateJSON
	if err := json.Unmarshal([]byte(stdout), &vs); err != nil || len(vs) != len(names) {
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
		if flavor[h.Name] == dbms.Postgres {
			if got := pgQuery(t, u, "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()"); got != "true" {
				t.Errorf("%s: the login with the --ca URL is not over TLS: %q", h.Name, got)
			}
		} else if err := myCATry(u, ""); err != nil {
			t.Errorf("%s: the login with the --ca URL, the certificate checked against the file and the address: %v", h.Name, err)
		}
	}
}

// TestMixedReleasesClusterRefused: a cluster whose primary runs trixie
// and whose replica bookworm would pair PostgreSQL 17 with 15, which
// cannot replicate: provision refuses it before it changes anything,
// naming both hosts and what each would run, and installs nothing on
// either.
func TestMixedReleasesClusterRefused(t *testing.T) {
	newer, older := labtest.Reserve(t, "pi4"), labtest.Reserve(t, "pi3plus")
	t.Parallel()
	p, r := newer.FreshOn(t, "trixie").Hosts[0], older.FreshOn(t, "bookworm").Hosts[0]
	inv := labtest.InventoryOf(t, p.Name, r.Name)
	addCluster(t, inv, "mixed", "")
	code, stdout, errOut := runPidb(t, "provision", "-i", inv.Path)
	want := `cluster "mixed": ` + p.Name + ` would run PostgreSQL 17 (what debian 13 ships) and ` + r.Name + ` PostgreSQL 15 (what debian 12 ships)`
	if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "nothing was changed") {
		t.Errorf("provision: exit %d; want 1 and %q\n%s\n%s", code, want, stdout, errOut)
	}
	for _, h := range inv.Hosts {
		if out := labtest.MustSSH(t, labtest.RootHost(t, inv, h.Name), "ls -d /usr/lib/postgresql /etc/postgresql 2>/dev/null; dpkg-query -W -f '${Package} ${Status}\\n' 'postgresql*' 2>/dev/null | grep ' installed$'; true"); strings.TrimSpace(out) != "" {
			t.Errorf("%s: something was installed: %q", h.Name, out)
		}
	}
}
