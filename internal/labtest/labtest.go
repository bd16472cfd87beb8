// Package labtest gives tests the running simulated Pi lab: its inventory
// and a way to run commands on its hosts with the system's own ssh client.
//
// Lab tests run when PIDB_LAB names the lab's inventory (what `pidb lab up`
// prints). Without it they skip and say why, except under CI=true, where a
// lab test that cannot reach the lab fails.
package labtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pidb/inventory"
	"pidb/lab"
)

// Inventory loads the running lab's inventory, or skips (fails under CI).
func Inventory(t testing.TB) *inventory.Inventory {
	t.Helper()
	path := os.Getenv("PIDB_LAB")
	if path == "" {
		Unavailable(t, "PIDB_LAB is not set: run `export PIDB_LAB=$(sudo pidb lab up)` to run the lab tests")
	}
	inv, err := inventory.Load(path)
	if err != nil {
		Unavailable(t, "cannot read the lab inventory: "+err.Error())
	}
	// test traffic goes only to the lab's own addresses, and only while its
	// bridge is there: without it they would route out of the machine
	if _, err := net.InterfaceByName(lab.Bridge); err != nil {
		Unavailable(t, "the lab's bridge "+lab.Bridge+" is missing: the lab is down")
	}
	for _, h := range inv.Hosts {
		a, err := netip.ParseAddr(h.Address)
		if err != nil || !lab.Subnet.Contains(a) {
			t.Fatalf("lab inventory host %s has address %s, outside the lab subnet %s: refusing to send it test traffic", h.Name, h.Address, lab.Subnet)
		}
	}
	return inv
}

// Unavailable skips the test with reason, or fails it when CI=true.
func Unavailable(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("lab unavailable under CI=true: %s", reason)
	}
	t.Skip(reason)
}

// Host returns the inventory's host called name, failing the test if absent.
func Host(t testing.TB, inv *inventory.Inventory, name string) inventory.Host {
	t.Helper()
	for _, h := range inv.Hosts {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("the lab inventory has no host %q", name)
	return inventory.Host{}
}

// RootHost is Host logged in as root (the lab's hosts take the lab key
// for root too): for a test's own commands on the host, with SSH.
func RootHost(t testing.TB, inv *inventory.Inventory, name string) inventory.Host {
	t.Helper()
	h := Host(t, inv, name)
	h.User = "root"
	return h
}

// ConnectTimeout is how long the lab tests give a host to answer SSH,
// pidb's runs (PIDB_CONNECT_TIMEOUT) and the ssh client's alike: the
// machine runs up to twenty hosts on two cores, and a test must not fail
// because it was busy. pidb's default of 10 s is a Pi on a LAN's; in CI
// two hosts of one test once took longer than that to answer a
// provision's handshake, and answered the next one.
const ConnectTimeout = 30 * time.Second

// SSHArgs are the ssh client's arguments to reach h with the inventory's key
// and known_hosts and strict host-key checking. The key exchange is
// curve25519's, as pidb's own (x/crypto/ssh) makes it with the lab's
// OpenSSH 9.2: the client's default, sntrup761x25519, took 0.14 s of CPU a
// connection here against 0.02 s, and a run of the suite makes hundreds.
func SSHArgs(h inventory.Host) []string {
	return []string{
		"-o", "KexAlgorithms=curve25519-sha256",
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile=" + h.KnownHosts,
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "ConnectTimeout=" + strconv.Itoa(int(ConnectTimeout.Seconds())),
		"-o", "LogLevel=ERROR",
		"-i", h.IdentityFile,
		"-p", strconv.Itoa(h.Port),
		h.User + "@" + h.Address,
	}
}

// SSH runs cmd on h with the system's ssh client and returns its stdout and
// stderr and the error from ssh.
func SSH(h inventory.Host, cmd string) (string, string, error) {
	c := exec.Command("ssh", append(SSHArgs(h), cmd)...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	return out.String(), errb.String(), err
}

// MustSSH is SSH that fails the test when the command fails.
func MustSSH(t testing.TB, h inventory.Host, cmd string) string {
	t.Helper()
	out, errOut, err := SSH(h, cmd)
	if err != nil {
		t.Fatalf("%s: ssh %q: %v\n%s", h.Name, cmd, err, errOut)
	}
	return out
}

// Armed connects to h and readies cmd there, to run the moment fire is
// called: on a busy machine an ssh connection can take seconds to make,
// and a command that must land inside a short window (a kill in the
// middle of a run) cannot wait for one. Armed returns once the host
// answered; fire runs cmd and returns its stdout, and fails the test
// (t.Errorf: fire may run on another goroutine) if it fails. A command
// never fired ends with the test.
func Armed(t testing.TB, h inventory.Host, cmd string) (fire func() string) {
	t.Helper()
	c := exec.Command("ssh", append(SSHArgs(h), "echo armed; read -r _ || exit 0; "+cmd)...)
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); line != "armed\n" {
		_ = c.Wait()
		t.Fatalf("%s: ssh: the host did not answer (%v)\n%s", h.Name, err, errb.String())
	}
	fired := false
	t.Cleanup(func() {
		if !fired {
			_ = stdin.Close()
			_ = c.Wait()
		}
	})
	return func() string {
		t.Helper()
		fired = true
		_, _ = io.WriteString(stdin, "go\n")
		_ = stdin.Close()
		rest, _ := io.ReadAll(out)
		if err := c.Wait(); err != nil {
			t.Errorf("%s: ssh %q: %v\n%s", h.Name, cmd, err, errb.String())
		}
		return string(rest)
	}
}

// Lab is the lab behind PIDB_LAB, which names the inventory in its state
// folder; what it does is logged to the test.
func Lab(t testing.TB) *lab.Lab {
	t.Helper()
	path := os.Getenv("PIDB_LAB")
	if path == "" {
		Unavailable(t, "PIDB_LAB is not set: run `export PIDB_LAB=$(sudo pidb lab up)` to run the lab tests")
	}
	return lab.New(filepath.Dir(path), logWriter{t})
}

type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// FreshHost boots a pristine lab host of a board (a name `lab up --hosts`
// takes: "zero2", "cm4-1"), for a test that needs a Pi nothing has touched,
// and returns an inventory of it and the host. The test leases it (see
// Lease); when the test ends the host is removed, disk and all.
func FreshHost(t testing.TB, name string) (*inventory.Inventory, inventory.Host) {
	t.Helper()
	inv := FreshHosts(t, name)
	return inv, Host(t, inv, name)
}

// FreshHosts is FreshHost for several hosts, booted at once; the inventory
// has them, in the order given.
func FreshHosts(t testing.TB, names ...string) *inventory.Inventory {
	t.Helper()
	Inventory(t)
	l := atFullSpeed(Lab(t), names)
	if err := take(t, l, true, names); err != nil {
		t.Fatal(err)
	}
	bootOwn(t, l, names, "")
	return InventoryOf(t, names...)
}

// bootOwn boots the named hosts for the test, which holds them, from the
// snapshot snap ("": the pristine image), after removing what a killed
// test left of them, and removes them, disks and all, when the test ends.
func bootOwn(t testing.TB, l *lab.Lab, names []string, snap string) {
	t.Helper()
	ctx := context.Background()
	if err := l.Remove(ctx, names); err != nil { // what a killed test left
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Remove(context.Background(), names); err != nil {
			t.Errorf("lab: remove %v: %v", names, err)
		}
	})
	var err error
	if snap == "" {
		_, err = l.Up(ctx, names)
	} else {
		_, err = l.UpFrom(ctx, names, snap)
	}
	if err != nil {
		t.Fatalf("lab up %v (from %q): %v", names, snap, err)
	}
}

// ClonedHosts is FreshHosts from the snapshot of a provisioned host of
// board kind from ("pi4": PostgreSQL; "pi3": MariaDB) instead of the
// pristine image: Pis of other boards (a Pi 5, a CM4) with the server
// installed and provisioned for another board, as a card moved into
// another Pi is. A test that needs a server on a board but not its
// install pays no apt for it; provision sets it up for the board
// (configure, accounts). The snapshot is taken first if no test has yet
// (see Clone).
func ClonedHosts(t testing.TB, from string, names ...string) *inventory.Inventory {
	t.Helper()
	Inventory(t)
	l := atFullSpeed(Lab(t), names)
	snap := readySnapshot(t, from)
	if err := take(t, l, true, names); err != nil {
		t.Fatal(err)
	}
	bootOwn(t, l, names, snap)
	return InventoryOf(t, names...)
}

// Cut drops every packet between this machine and h until mend is called
// (or the test ends): the host runs on, unreachable.
func Cut(t testing.TB, h inventory.Host) (mend func()) {
	t.Helper()
	m, err := Lab(t).Cut(context.Background(), LabName(t, h))
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	mend = func() {
		once.Do(func() {
			if err := m(); err != nil {
				t.Errorf("%s: mend the cut: %v", h.Name, err)
			}
		})
	}
	t.Cleanup(mend)
	return mend
}

// Reboot reboots h (systemctl reboot, as on a Pi) and waits until it is back
// from a new boot (a mark in /run, a tmpfs, is gone) with its units started.
func Reboot(t testing.TB, h inventory.Host) {
	t.Helper()
	reboot(t, h, "systemctl reboot")
}

// RebootNow reboots h at once, its units not stopped but its processes
// killed (systemctl --force reboot), and waits as Reboot does: as a Pi
// goes down in the middle of an install. A clean reboot waits for the
// install instead: Debian 13's apt holds a logind inhibitor while dpkg
// runs, which refuses it ("Access denied", also to root).
func RebootNow(t testing.TB, h inventory.Host) {
	t.Helper()
	reboot(t, h, "systemctl --force reboot")
}

func reboot(t testing.TB, h inventory.Host, cmd string) {
	t.Helper()
	MustSSH(t, h, "touch /run/pidb-test-before-reboot")
	_, _, _ = SSH(h, cmd)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if _, _, err := SSH(h, "test ! -e /run/pidb-test-before-reboot && { systemctl is-system-running --wait >/dev/null 2>&1; true; }"); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not come back within 3 minutes of its reboot", h.Name)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Main runs a package's tests with XDG_STATE_HOME set to a folder of their
// own, removed at the end, for TestMain: the passwords that pidb generates
// while the tests run in parallel (they cannot each set their own
// environment) never reach the user's own store, and each test's inventory
// keeps its passwords apart from the others'.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "pidb-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("XDG_STATE_HOME", dir)
	return m.Run()
}

// PlugDrive plugs a blank drive of kind ("usb-ssd", "nvme") into the
// running host h, as a drive plugged into a running Pi appears (/dev/sda,
// /dev/nvme0n1); it goes when the host is removed.
func PlugDrive(t testing.TB, h inventory.Host, kind string) {
	t.Helper()
	if err := Lab(t).Plug(context.Background(), LabName(t, h), kind); err != nil {
		t.Fatal(err)
	}
}

// HostFile is a file of h's root filesystem as the lab machine reads it
// ("" when it is not there): what a test watches while h's link is cut.
func HostFile(t testing.TB, h inventory.Host, p string) string {
	t.Helper()
	b, err := Lab(t).HostFile(LabName(t, h), p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}
