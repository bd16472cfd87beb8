package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"pidb/internal/atomicfile"
)

// writeAccess writes the lab's known_hosts, built from the host keys in each
// powered host's image (not from the wire), and the lab's inventory. A host
// that reboots, or whose link is cut, is still the lab's: it stays in both.
func (l *Lab) writeAccess() error {
	var up []Board
	var known strings.Builder
	for _, b := range l.hosts() {
		if !l.powered(b.Name) {
			continue
		}
		up = append(up, b)
		keys, _ := filepath.Glob(filepath.Join(l.rootfs(b.Name), "etc/ssh/ssh_host_*_key.pub"))
		sort.Strings(keys)
		if len(keys) == 0 {
			return fmt.Errorf("%s: no host keys in its image", b.Name)
		}
		for _, k := range keys {
			line, err := knownHostsLine(Address(b).String(), k)
			if err != nil {
				return err
			}
			known.WriteString(line)
		}
	}
	// whole or not at all: tests and commands read both while another
	// up or down rewrites them
	if err := writeWhole(l.KnownHostsPath(), known.String()); err != nil {
		return err
	}
	return writeWhole(l.InventoryPath(), Inventory(up, l.KeyPath(), l.KnownHostsPath()))
}

func writeWhole(path, data string) error {
	return atomicfile.Write(path, 0o644, func(f *os.File) error {
		_, err := f.WriteString(data)
		return err
	})
}

// knownHostsLine turns a host key file ("TYPE BASE64 COMMENT") into a
// known_hosts line for addr.
func knownHostsLine(addr, pubFile string) (string, error) {
	data, err := os.ReadFile(pubFile)
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return "", fmt.Errorf("%s: not a public key", pubFile)
	}
	return addr + " " + f[0] + " " + f[1] + "\n", nil
}

// preset is the lab's inventory's preset: the tuner's default
// (TestInventoryPreset holds it so), named here so that the lab does not
// import the tuner for one word.
const preset = "balanced"

// Inventory renders the lab's inventory for the given boards, as ARCHITECTURE.md
// describes it: preset balanced, storage detected (each host's card),
// database access allowed from the lab's subnet, user pi with the lab
// key, and the lab's known_hosts.
func Inventory(boards []Board, key, knownHosts string) string {
	var s strings.Builder
	s.WriteString("# Written by `pidb lab up`: the simulated Pi fleet. Rewritten at every up.\n")
	s.WriteString("[defaults]\n")
	fmt.Fprintf(&s, "user = %q\n", "pi")
	fmt.Fprintf(&s, "identity_file = %q\n", key)
	fmt.Fprintf(&s, "known_hosts = %q\n", knownHosts)
	fmt.Fprintf(&s, "preset = %q\n", preset)
	s.WriteString("# storage: detected, as each host's card is its /dev/mmcblk0\n")
	fmt.Fprintf(&s, "allow_from = [%q]\n", Subnet.String())
	for _, b := range boards {
		fmt.Fprintf(&s, "\n# %s, %d MB\n[[host]]\nname = %q\naddress = %q\nengine = %q\n",
			b.Model, b.RAMBytes>>20, b.Name, Address(b).String(), b.Engine)
	}
	return s.String()
}
