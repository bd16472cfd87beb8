package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"pidb/internal/labtest"
	"pidb/inventory"
)

// The faults a Pi on a desk or in a rack meets: its link gone for half a
// minute (nft drops every packet between the controller and the host, as a
// pulled cable does) and a reboot, each in the middle of an install, of a
// configuration change and of a benchmark; and another apt holding the
// lock for longer than pidb waits. Each ends with a clear error and a
// non-zero exit, the server as it was (the canary rows counted), and a
// re-run that completes.

// watchWriter hands each whole line written to it to on, as it comes.
type watchWriter struct {
	mu      sync.Mutex
	all     bytes.Buffer
	pending string
	on      func(line string)
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	w.pending += string(p)
	for {
		line, rest, ok := strings.Cut(w.pending, "\n")
		if !ok {
			return len(p), nil
		}
		w.pending = rest
		w.on(line)
	}
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}

// pidbRun is a pidb command running in this process.
type pidbRun struct {
	done           chan struct{}
	code           int
	stdout, stderr string
	at             chan struct{} // closed at the first stderr line with the mark
	ended          time.Time
}

// startWatching starts pidb with args and closes r.at when it writes a
// progress line that contains mark.
func startWatching(mark string, args ...string) *pidbRun {
	r := &pidbRun{done: make(chan struct{}), at: make(chan struct{})}
	var once sync.Once
	w := &watchWriter{on: func(line string) {
		if strings.Contains(line, mark) {
			once.Do(func() { close(r.at) })
		}
	}}
	go func() {
		var out bytes.Buffer
		r.code = run(append([]string{"pidb"}, args...), &out, w)
		r.ended = time.Now()
		r.stdout, r.stderr = out.String(), w.String()
		close(r.done)
	}()
	return r
}

// waitMark waits for the run's mark; it fails the test if the run ends or
// a few minutes pass first.
func (r *pidbRun) waitMark(t *testing.T, mark string) {
	t.Helper()
	select {
	case <-r.at:
	case <-r.done:
		t.Fatalf("the run ended (exit %d) before %q\n%s", r.code, mark, r.stderr)
	case <-time.After(5 * time.Minute):
		t.Fatalf("no %q within 5 minutes", mark)
	}
}

// wait waits for the run to end, for at most within.
func (r *pidbRun) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(within):
		t.Fatalf("the run had not ended %s later", within)
	}
}

// noAnswer is how pidb says a host stopped answering over SSH.
const noAnswer = "no answer from the host"

// TestInstallFaults: on a fresh Pi, an apt that holds the lock for longer
// than --apt-lock-timeout, the link cut while apt installs the server, and
// a reboot while dpkg configures it. Each run fails with a clear error; the
// next one installs the server and leaves no half-installed package.
func TestInstallFaults(t *testing.T) {
	labtest.Inventory(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	installed := func(t *testing.T, h inventory.Host) {
		t.Helper()
		if out := labtest.MustSSH(t, h, "dpkg --audit; pg_lsclusters --no-header"); !strings.Contains(out, " online ") || strings.Contains(out, "not fully installed") {
			t.Errorf("after the re-run: %s", out)
		}
	}
	t.Run("lock held past the wait", func(t *testing.T) {
		inv, h := labtest.FreshHost(t, "zero2")
		h.User = "root"
		// a real apt holding the package lists' lock, as a fresh Pi's
		// first-boot update does
		labtest.MustSSH(t, h, "nohup apt-get -o 'APT::Update::Pre-Invoke::=sleep 600' update >/dev/null 2>&1 </dev/null &")
		defer labtest.MustSSH(t, h, "pkill -x apt-get; pkill -f '^sleep 600$'; true")
		waitFor(t, h, "pgrep -f '^sleep 600$'")
		code, res, errOut := provisionLabCmd(t, "provision", "-i", inv.Path, "--limit", h.Name, "--apt-lock-timeout", "6s")
		msg := res[h.Name].Error
		if code != 1 || !strings.Contains(msg, "another apt held its lock for 6s") || !strings.Contains(errOut, "waiting for the dpkg lock, held by process") {
			t.Errorf("exit %d, error %q; want 1 and the lock's holder named\n%s", code, msg, errOut)
		}
		if out := labtest.MustSSH(t, h, "ls /usr/lib/postgresql 2>/dev/null | wc -l"); strings.TrimSpace(out) != "0" {
			t.Errorf("something was installed while the lock was held: %s", out)
		}
	})
	t.Run("link cut mid install", func(t *testing.T) {
		inv, h := labtest.FreshHost(t, "zero2")
		r := startWatching("install: apt-get -q install", "provision", "-i", inv.Path, "--limit", h.Name)
		r.waitMark(t, "install: apt-get -q install")
		time.Sleep(2 * time.Second)
		mend := labtest.Cut(t, h)
		cut := time.Now()
		r.wait(t, 2*time.Minute)
		mend()
		if r.code != 1 || !strings.Contains(r.stderr, noAnswer) {
			t.Errorf("exit %d; want 1 and %q\n%s", r.code, noAnswer, r.stderr)
		}
		t.Logf("the run cut off:\n%s", lastLines(r.stderr, 6))
		if d := r.ended.Sub(cut); d > 75*time.Second {
			t.Errorf("the run noticed the cut after %s", d.Round(time.Second))
		}
		if code, _, errOut := provisionLab(t, "-i", inv.Path, "--limit", h.Name); code != 0 {
			t.Fatalf("the re-run: exit %d\n%s", code, errOut)
		}
		installed(t, h)
	})
	t.Run("reboot while dpkg configures", func(t *testing.T) {
		inv, h := labtest.FreshHost(t, "zero2")
		h.User = "root"
		r := startWatching("install: apt-get -q install", "provision", "-i", inv.Path, "--limit", h.Name)
		r.waitMark(t, "install: apt-get -q install")
		// dpkg at work on the server's packages, as in the case
		waitFor(t, h, "pgrep -x dpkg && ls /var/lib/dpkg/info/postgresql-common.list")
		labtest.Reboot(t, h)
		r.wait(t, 2*time.Minute)
		if r.code != 1 || !strings.Contains(r.stderr, "FAILED") {
			t.Errorf("exit %d; want 1\n%s", r.code, r.stderr)
		}
		t.Logf("the run cut off by the reboot:\n%s", lastLines(r.stderr, 6))
		code, res, errOut := provisionLabCmd(t, "provision", "-i", inv.Path, "--limit", h.Name)
		if code != 0 {
			t.Fatalf("the re-run: exit %d\n%s", code, errOut)
		}
		if notes := strings.Join(res[h.Name].Notes, "\n"); !strings.Contains(notes, "an earlier install was cut off") {
			t.Errorf("the re-run did not find the install dpkg left half done; notes:\n%s", notes)
		}
		installed(t, h)
	})
}

// TestConfigureFaults: on pi4 with a canary table, the link cut as the
// configure step begins writing, and a reboot between the write and the
// restart. The server keeps running with its rows; the re-run applies the
// preset and the server runs it (its live values, no pending restart).
func TestConfigureFaults(t *testing.T) {
	inv := labtest.Inventory(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	h := provisionedAsRoot(t, inv, "pi4")
	psql := func(sql string) string {
		t.Helper()
		return strings.TrimSpace(labtest.MustSSH(t, h, `cd /tmp && runuser -u postgres -- psql -AtX -d pidb -c "`+sql+`"`))
	}
	const live = "SELECT setting FROM pg_settings WHERE name = 'synchronous_commit' UNION ALL SELECT count(*)::text FROM pg_settings WHERE pending_restart"
	apply := func(t *testing.T, preset string) {
		t.Helper()
		if code, res, errOut := provisionLabCmd(t, "tune", "apply", "-i", inv.Path, "--limit", "pi4", "--preset", preset); code != 0 {
			t.Fatalf("tune apply --preset %s: exit %d %+v\n%s", preset, code, res, errOut)
		}
	}
	apply(t, "fast")
	fast := psql(live)
	apply(t, "balanced")
	if balanced := psql(live); balanced == fast {
		t.Fatalf("the presets give the same live values (%q): the test would prove nothing", fast)
	}
	psql("DROP TABLE IF EXISTS canary; CREATE TABLE canary AS SELECT generate_series(1, 1000) AS n")
	defer psql("DROP TABLE IF EXISTS canary")
	after := func(t *testing.T) {
		t.Helper()
		if got := psql("SELECT count(*) FROM canary"); got != "1000" {
			t.Errorf("canary rows: %s, want 1000", got)
		}
		apply(t, "fast")
		if got := psql(live); got != fast {
			t.Errorf("live after the re-run: %q, want the fast preset's %q", got, fast)
		}
		apply(t, "balanced")
	}
	t.Run("link cut as the drop-in is written", func(t *testing.T) {
		r := startWatching("pi4: configure", "tune", "apply", "-i", inv.Path, "--limit", "pi4", "--preset", "fast")
		r.waitMark(t, "pi4: configure")
		mend := labtest.Cut(t, h)
		r.wait(t, 2*time.Minute)
		mend()
		if r.code != 1 || !strings.Contains(r.stderr, noAnswer) {
			t.Errorf("exit %d; want 1 and %q\n%s", r.code, noAnswer, r.stderr)
		}
		after(t)
	})
	t.Run("reboot between the write and the restart", func(t *testing.T) {
		r := startWatching("checking the new configuration", "tune", "apply", "-i", inv.Path, "--limit", "pi4", "--preset", "fast")
		r.waitMark(t, "checking the new configuration")
		labtest.Reboot(t, h)
		r.wait(t, 2*time.Minute)
		if r.code == 0 {
			t.Logf("the reboot came after the run had finished:\n%s", r.stderr)
		} else if !strings.Contains(r.stderr, "FAILED") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
		after(t)
	})
}

// lastLines is the end of a run's output, for the log.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitFor runs cmd on h until it succeeds, for a minute at most.
func waitFor(t *testing.T, h inventory.Host, cmd string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, _, err := labtest.SSH(h, cmd); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q did not succeed within a minute", h.Name, cmd)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
