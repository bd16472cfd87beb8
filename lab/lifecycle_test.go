package lab_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/lab"
)

// TestLabLifecycle kills the running lab as a crash would, checks that Up
// removes what was left and boots pristine hosts, then that Down leaves
// nothing behind. It takes the lab away from other tests, so .ci/run runs it
// alone, last, with PIDB_LAB_LIFECYCLE=1.
func TestLabLifecycle(t *testing.T) {
	if os.Getenv("PIDB_LAB_LIFECYCLE") != "1" {
		t.Skip("kills and removes the lab: .ci/run runs it alone at the end with PIDB_LAB_LIFECYCLE=1")
	}
	inv := labtest.Inventory(t)
	l := labOf(inv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// leave a mark that a pristine host must not have
	zero := labtest.Host(t, inv, "zero")
	labtest.MustSSH(t, zero, "sudo -n touch /etc/pidb-lab-was-here")

	// and a host whose disk is a layer over a snapshot, whose mount the
	// kill leaves too
	if err := l.Snapshot(ctx, "zero", "lifecycle-zero"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.RemoveSnapshot("lifecycle-zero"); err != nil {
			t.Errorf("remove the snapshot: %v", err)
		}
	})
	if _, err := l.UpFrom(ctx, []string{"zero-1"}, "lifecycle-zero"); err != nil {
		t.Fatal(err)
	}
	if left := lab.Leftovers(); !strings.Contains(strings.Join(left, "\n"), "mount "+filepath.Join(l.Dir, "hosts/zero-1/rootfs")) {
		t.Errorf("zero-1's disk is not among what the lab has on the machine:\n  %s", strings.Join(left, "\n  "))
	}

	// kill every lab process at once, leaving namespaces, veths, cgroups,
	// the nft table, a mount
	var killed int
	for _, p := range []string{"--machine=" + lab.Prefix + "-", lab.Prefix + "-apt-proxy"} {
		for _, pid := range pidsMatching(t, p) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	if killed < 5 {
		t.Fatalf("killed %d lab processes, want the 4 hosts and the package cache", killed)
	}
	waitFor(t, func() bool {
		for _, s := range l.Status() {
			if s.State == "up" {
				return false
			}
		}
		return true
	})
	for _, s := range l.Status() {
		if s.State != "broken" {
			t.Errorf("%s: state %q after the kill, want broken", s.Name, s.State)
		}
	}

	path, err := l.Up(ctx, nil)
	if err != nil {
		t.Fatalf("Up after a killed run: %v", err)
	}
	inv, err = inventory.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Hosts) != 3 {
		t.Errorf("inventory after Up has %d hosts", len(inv.Hosts))
	}
	for _, h := range inv.Hosts {
		out := labtest.MustSSH(t, h, "sudo -n true && hostname && (test -e /etc/pidb-lab-was-here && echo dirty || echo pristine) && "+
			"systemctl get-default && systemctl is-active display-manager.service; systemctl is-system-running; "+
			"dpkg -l postgresql mariadb-server 2>/dev/null | grep -c '^ii' || true")
		want := h.Name + "\npristine\n" + boards[h.Name].target + "\n"
		if boards[h.Name].target == "graphical.target" {
			want += "active\n" // the desktop's display manager
		} else {
			want += "inactive\n"
		}
		want += "running\n0\n" // no failed unit; no database installed
		if out != want {
			t.Errorf("%s after Up: %q, want %q", h.Name, out, want)
		}
	}
	for _, s := range l.Status() {
		if s.State != "up" {
			t.Errorf("%s: state %q after Up", s.Name, s.State)
		}
	}
	if left := strings.Join(lab.Leftovers(), "\n"); strings.Contains(left, "zero-1") {
		t.Errorf("Up left what the killed zero-1 had:\n%s", left)
	}

	if err := l.Down(ctx); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if left := lab.Leftovers(); len(left) > 0 {
		t.Errorf("Down left behind:\n  %s", strings.Join(left, "\n  "))
	}
	for _, s := range l.Status() {
		if s.State != "down" {
			t.Errorf("%s: state %q after Down", s.Name, s.State)
		}
	}
	if _, err := os.Stat(inv.Path); !os.IsNotExist(err) {
		t.Errorf("Down left the lab inventory %s", inv.Path)
	}
}

// pidsMatching lists processes whose command line contains s.
func pidsMatching(t *testing.T, s string) []int {
	t.Helper()
	var pids []int
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(strings.ReplaceAll(string(data), "\x00", " "), s) {
			continue
		}
		if pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
