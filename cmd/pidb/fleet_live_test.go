package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/job"
)

// TestFleetOfTen: three provisioned Pis of the lab's boards (a Pi 4, a
// Pi 3 and a Zero, clones of provisioned ones, as the lab's three are
// after a first provision), four Pis of the other boards whose cards were
// provisioned in another Pi (a Pi 5 of each size, a Pi 4 2 GB, a second
// Pi 5 numbered pi5-1: clones of the Pi 4's PostgreSQL and of the Pi 3's
// MariaDB, set up for their boards by the run) and three fresh hosts (a
// 3B+, a Zero 2 W, a CM4), all ten the test's own, provisioned in one run
// while the three fresh ones meet what a rack of Pis meets during an
// install:
//   - cm4: another apt holds its lock for longer than --apt-lock-timeout;
//   - zero2: its link is cut while apt installs the server;
//   - pi3plus: it reboots while dpkg configures the server.
//
// The run fails those three, each with its own clear error, and provisions
// the other seven; the re-run finishes the three (pi3plus's half-done
// install first) and changes nothing on the seven; a run after that changes
// nothing anywhere. Then all ten validate at once: each gets a verdict, none
// FAILs (a busy controller or an unsteady throughput may WARN).
func TestFleetOfTen(t *testing.T) {
	reserved := labtest.Reserve(t, "pi4", "pi3", "zero") // before the parallel tests take them: the longest test
	t.Parallel()
	// a numbered host of a board no clone is of (clones are numbered Pi 4s,
	// Pi 3s and Zeros, and once took pi4-1 for 105 s of this test's time)
	// (apt installs on only three: ten at once, beside the other tests,
	// once took this test past nine minutes)
	var names []string
	for _, h := range reserved.Clone().Hosts {
		names = append(names, h.Name)
	}
	moved := [][]string{{"pi4", "pi5", "pi5-1"}, {"pi3", "pi5-4gb", "pi4-2gb"}}
	for _, m := range moved {
		labtest.ClonedHosts(t, m[0], m[1:]...)
		names = append(names, m[1:]...)
	}
	fresh := []string{"pi3plus", "zero2", "cm4"}
	labtest.FreshHosts(t, fresh...)
	inv := labtest.InventoryOf(t, append(names, fresh...)...)
	if len(inv.Hosts) != 10 {
		t.Fatalf("the lab has %d hosts up, want 10", len(inv.Hosts))
	}
	root := func(name string) inventory.Host {
		h := labtest.Host(t, inv, name)
		h.User = "root"
		return h
	}
	lockHost, cutHost, rebootHost := root("cm4"), root("zero2"), root("pi3plus")

	// a real apt holding the package lists' lock, as a fresh Pi's
	// first-boot update does
	labtest.MustSSH(t, lockHost, "nohup apt-get -o 'APT::Update::Pre-Invoke::=sleep 600' update >/dev/null 2>&1 </dev/null &")
	waitFor(t, lockHost, "pgrep -f '^sleep 600$'")
	cutMark, rebootMark := "zero2: install: apt-get -q install", "pi3plus: install: apt-get -q install"
	r := startWatching([]string{cutMark, rebootMark}, "provision", "-i", inv.Path, "--apt-lock-timeout", "20s", "--json")
	faults := make(chan func(), 2)
	go func() { // the link cut two seconds into zero2's install
		select {
		case <-r.at[cutMark]:
		case <-r.done:
			faults <- func() {}
			return
		}
		time.Sleep(2 * time.Second)
		mend, err := labtest.Lab(t).Cut(t.Context(), cutHost.Name)
		if err != nil {
			faults <- func() { t.Errorf("cut zero2: %v", err) }
			return
		}
		<-r.done
		faults <- func() {
			if err := mend(); err != nil {
				t.Errorf("mend zero2: %v", err)
			}
		}
	}()
	// pi3plus rebooted while dpkg works on the server's packages
	r.waitMark(t, rebootMark)
	// (its apt fetches and unpacks beside nine other installs: a minute
	// was once not enough)
	r.waitOn(t, rebootHost, "pgrep -x dpkg && ls /var/lib/dpkg/info/postgresql-common.list", 5*time.Minute)
	labtest.RebootNow(t, rebootHost) // a clean reboot waits for dpkg (apt's inhibitor)
	r.wait(t, 10*time.Minute)
	(<-faults)()
	labtest.MustSSH(t, lockHost, "pkill -x apt-get; pkill -f '^sleep 600$'; true")

	res := provisionResults(t, r.code, r.stdout, r.stderr)
	for name, want := range map[string]string{
		"cm4":     "another apt held its lock for 20s",
		"zero2":   noAnswer,
		"pi3plus": "", // the session ended or the link went quiet, as the reboot fell
	} {
		if res[name].OK || !strings.Contains(res[name].Error, want) {
			t.Errorf("%s: ok %v, error %q; want it failed with %q", name, res[name].OK, res[name].Error, want)
		}
		t.Logf("%s failed: %s", name, res[name].Error)
	}
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	for _, h := range inv.Hosts {
		if h.Name != "cm4" && h.Name != "zero2" && h.Name != "pi3plus" && !res[h.Name].OK {
			t.Errorf("%s failed beside the faults: %s", h.Name, res[h.Name].Error)
		}
	}

	// the re-run finishes the three and leaves the seven as they are
	code, res, errOut := provisionLab(t, "-i", inv.Path)
	if code != 0 {
		t.Fatalf("the re-run: exit %d\n%s", code, errOut)
	}
	for _, h := range inv.Hosts {
		switch h.Name {
		case "cm4", "zero2", "pi3plus":
			if !contains(res[h.Name].Changed, "install") {
				t.Errorf("%s: the re-run changed %v, want the install finished", h.Name, res[h.Name].Changed)
			}
		default:
			if len(res[h.Name].Changed) != 0 {
				t.Errorf("%s: the re-run changed %v on a host already provisioned", h.Name, res[h.Name].Changed)
			}
		}
	}
	if notes := strings.Join(res["pi3plus"].Notes, "\n"); !strings.Contains(notes, "an earlier install was cut off") {
		t.Errorf("pi3plus: the re-run did not find the install dpkg left half done; notes:\n%s", notes)
	}
	for _, h := range []inventory.Host{cutHost, rebootHost} {
		if out := labtest.MustSSH(t, h, "dpkg --audit; pg_lsclusters --no-header"); !strings.Contains(out, " online ") || strings.Contains(out, "not fully installed") {
			t.Errorf("%s after the re-run: %s", h.Name, out)
		}
	}
	began := time.Now()
	code, res, errOut = provisionLab(t, "-i", inv.Path)
	took := time.Since(began)
	if code != 0 {
		t.Fatalf("the run with nothing to change: exit %d\n%s", code, errOut)
	}
	for _, h := range inv.Hosts {
		if len(res[h.Name].Changed) != 0 {
			t.Errorf("%s: a run with nothing to change changed %v", h.Name, res[h.Name].Changed)
		}
	}
	t.Logf("ten hosts with nothing to change: %s", took.Round(10*time.Millisecond))

	// all ten validate at once
	code, stdout, errOut := runPidb(t, "validate", "-i", inv.Path, "--duration", "6s", "--warmup", "2s", "--scale", "1", "--clients", "2",
		"--idle-before", "2s", "--idle-after", "2s", "--thermal-interval", "1s", "--out", t.TempDir(), "--json")
	var vs []job.ValidateResult
	if err := json.Unmarshal([]byte(stdout), &vs); err != nil {
		t.Fatalf("validate: exit %d, not JSON: %v\n%s\n%s", code, err, stdout, errOut)
	}
	if code != 0 || len(vs) != 10 {
		t.Errorf("validate: exit %d, %d verdicts; want 0 and 10\n%s", code, len(vs), errOut)
	}
	for _, v := range vs {
		if v.Verdict != "PASS" && v.Verdict != "WARN" {
			t.Errorf("%s: %s %+v %s", v.Host, v.Verdict, v.Reasons, v.Error)
		}
		t.Logf("%s: %s %.1f TPS %v", v.Host, v.Verdict, v.TPS, v.Reasons)
	}
}

// provisionResults reads provision's --json output, one result per host.
func provisionResults(t *testing.T, code int, stdout, stderr string) map[string]provisionJSON {
	t.Helper()
	var res []provisionJSON
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("provision: exit %d, not JSON (%v): %s\n%s", code, err, stdout, stderr)
	}
	m := map[string]provisionJSON{}
	for _, r := range res {
		m[r.Host] = r
	}
	return m
}
