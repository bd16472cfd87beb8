// Package labtest gives tests the running simulated Pi lab: its inventory
// and a way to run commands on its hosts with the system's own ssh client.
//
// Lab tests run when PIDB_LAB names the lab's inventory (what `pidb lab up`
// prints). Without it they skip and say why, except under CI=true, where a
// lab test that cannot reach the lab fails.
package labtest

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"testing"

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

// SSHArgs are the ssh client's arguments to reach h with the inventory's key
// and known_hosts and strict host-key checking.
func SSHArgs(h inventory.Host) []string {
	return []string{
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile=" + h.KnownHosts,
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "ConnectTimeout=10",
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
