// Package lab runs a simulated Raspberry Pi fleet on this machine for tests,
// CI and rehearsal: each Pi is a systemd-nspawn container booted with real
// systemd from a pristine copy of a cached Debian image, with its own address
// on a lab bridge, SSH host keys, /proc/cpuinfo and /proc/meminfo as the
// board shows them, its memory limited to the board's RAM, its own CPU
// accounting group, and a thermal zone the host can drive.
//
// Everything the lab makes on the machine carries the prefix "pidblab":
// processes (--machine=pidblab-NAME), the bridge, veths, network namespaces,
// the nft table and the cgroups. Down removes all of it; Up first removes
// whatever a killed run left.
package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
)

// Prefix starts the name of everything the lab creates on the machine.

const Prefix = "pidblab"

// DefaultDir is where the lab keeps its state: outside any checkout.

const DefaultDir = "/var/lib/pidb-lab"

// Bridge is the lab's network bridge on this machine; while it is missing,

// the lab's addresses route nowhere safe, so nothing may be sent to them.

const Bridge = Prefix + "0"

const (
	bridge  = Bridge
	nftName = Prefix
)

// Subnet is the lab's network; the bridge holds its .1 address.

var Subnet = netip.MustParsePrefix("10.213.41.0/24")

// Lab is the simulated fleet kept in Dir.

type Lab struct {
	Dir   string    // state: base image, caches, host roots, key, inventory
	Fleet []Board   // the boards the lab knows
	Log   io.Writer // progress, for people (stderr)

	// The thermal simulation (see Simulate), set for Up: each host's
	// cooling ("case" or "fan"; default fan), the hosts left without
	// vcgencmd, how fast simulated time runs (default 1), and the command
	// that runs the simulator in its own process (`pidb lab simulate`);
	// without it Up starts none.
	Cooling          map[string]string
	NoVcgencmd       map[string]bool
	ThermalSpeed     float64
	SimulatorCommand []string
}

// New returns a lab with the default fleet. An empty dir means DefaultDir.

func New(dir string, log io.Writer) *Lab {
	if dir == "" {
		dir = DefaultDir
	}
	if log == nil {
		log = io.Discard
	}
	return &Lab{Dir: dir, Fleet: DefaultFleet(), Log: log}
}

func (l *Lab) logf(format string, args ...any) {
	fmt.Fprintf(l.Log, "lab: "+format+"\n", args...)
}

func (l *Lab) baseDir() string { return filepath.Join(l.Dir, "base") }

func (l *Lab) hostDir(name string) string { return filepath.Join(l.Dir, "hosts", name) }

func (l *Lab) rootfs(name string) string { return filepath.Join(l.hostDir(name), "rootfs") }

func machineName(name string) string { return Prefix + "-" + name }

func netnsPath(name string) string { return "/run/netns/" + machineName(name) }

func (l *Lab) pidFile(name string) string { return filepath.Join(l.hostDir(name), "nspawn.pid") }

func (l *Lab) consoleLog(name string) string { return filepath.Join(l.hostDir(name), "console.log") }

// KeyPath is the lab's private SSH key, accepted by root and pi on every host.

func (l *Lab) KeyPath() string { return filepath.Join(l.Dir, "id_ed25519") }

// KnownHostsPath is the lab's known_hosts, built from the hosts' own keys.

func (l *Lab) KnownHostsPath() string { return filepath.Join(l.Dir, "known_hosts") }

// InventoryPath is where Up writes the lab's inventory.

func (l *Lab) InventoryPath() string { return filepath.Join(l.Dir, "inventory.toml") }

// Address returns the board's address in the lab subnet.

// checkHost refuses to run where the lab cannot: not Linux, not root, or

// without the tools it needs.

func checkHost() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the lab needs Linux (systemd-nspawn); this is %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		return errors.New("the lab needs root: run it with sudo")
	}
	var missing []string
	for tool, pkg := range map[string]string{"systemd-nspawn": "systemd-container", "debootstrap": "debootstrap", "nft": "nftables", "ip": "iproute2", "ssh-keygen": "openssh-client", "nsenter": "util-linux", "apt-cacher-ng": "apt-cacher-ng"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, pkg)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("the lab needs these packages: apt-get install %s", strings.Join(missing, " "))
	}
	if !fileExists(filepath.Join(cgroupRoot, "memory")) {
		return errors.New("the lab needs cgroup v1 memory, cpu and cpuacct hierarchies under /sys/fs/cgroup")
	}
	return nil
}

// lock takes the lab's lock file so two commands never change it at once.

func (l *Lab) lock() (func(), error) {
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(l.Dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// Up boots the named boards (all when names is empty), writes the lab's

// inventory and known_hosts, and returns the inventory's path. A host that is

// already up and answering is left as it is; one that a killed run left

// broken is removed and booted again from a pristine copy.

func (l *Lab) Up(ctx context.Context, names []string) (string, error) {
	if err := checkHost(); err != nil {
		return "", err
	}
	boards, err := SelectBoards(l.Fleet, names)
	if err != nil {
		return "", err
	}
	unlock, err := l.lock()
	if err != nil {
		return "", err
	}
	defer unlock()

	if err := l.ensureKey(ctx); err != nil {
		return "", err
	}
	if err := l.ensureNetwork(ctx); err != nil {
		return "", err
	}
	if err := l.ensureAptProxy(ctx); err != nil {
		return "", err
	}
	if err := l.ensureBase(ctx); err != nil {
		return "", err
	}
	// remove what a killed run left of hosts that are not running
	for _, b := range l.Fleet {
		if l.running(b.Name) {
			continue
		}
		if err := l.removeHost(ctx, b.Name); err != nil {
			return "", err
		}
	}
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(boards))
	for _, b := range boards {
		if l.running(b.Name) {
			l.logf("%s: already up at %s", b.Name, Address(b))
			results <- result{b.Name, nil}
			continue
		}
		go func(b Board) {
			err := l.bootHost(ctx, b)
			if err != nil {
				err = fmt.Errorf("%s: %w", b.Name, err)
			}
			results <- result{b.Name, err}
		}(b)
	}
	var errs []error
	for range boards {
		if r := <-results; r.err != nil {
			errs = append(errs, r.err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	if err := l.writeAccess(); err != nil {
		return "", err
	}
	for _, b := range boards {
		if err := l.setVcgencmd(b, false); err != nil {
			return "", fmt.Errorf("%s: vcgencmd: %w", b.Name, err)
		}
	}
	if err := l.writeThermalConfig(boards); err != nil {
		return "", err
	}
	if err := l.ensureSimulator(); err != nil {
		return "", err
	}
	return l.InventoryPath(), nil
}

// ensureKey makes the lab's SSH key once; it is kept across up and down.

// ensureNetwork sets up the bridge with the gateway address, forwarding, and

// an nft table that masquerades the lab's traffic out of the default route,

// so apt works inside the hosts.

// checkSubnetFree refuses a lab subnet that another interface already uses.

// running reports whether the host's nspawn process is alive.

// sshAnswers reports whether an SSH server greets on addr:22.

// bootHost makes a pristine root for the board, its network and cgroups,

// starts it, makes its /proc and thermal files the board's, and waits until

// sshd answers.

// prepareRoot copies the base image and gives the copy the board's identity.

// lookupUser reads a user's uid and gid from the image's /etc/passwd.

// setupNetns makes the host's network namespace: a veth whose inside end is

// eth0 with the board's address, the other end on the lab bridge.

// setupCgroups makes the host's groups and limits its memory to the board's RAM.

// startNspawn starts the container detached, inside the host's cgroups, and

// records nspawn's pid.

// removeHost stops a host and removes everything it had on the machine.

// Down stops every lab host and removes everything the lab made on the

// machine. The base image, the package cache and the lab key stay for the

// next Up.

// HostStatus is one lab host as Status reports it.

// Status reports every board of the fleet.

// SetTemp sets the temperature the host's thermal zone reports, in

// millidegrees Celsius, as /sys/class/thermal/thermal_zone0/temp does. The

// file is replaced atomically, so a reader never sees half a number.

// CPUTime returns the CPU time the host's processes have used since it booted.

// MemoryLimit returns the memory limit of the host's cgroup, in bytes.

// Leftovers lists what the lab has on this machine: processes, interfaces,

// network namespaces, the nft table and cgroups carrying the lab's prefix.

// After Down it is empty.

// containsTable reports whether `nft list tables` output lists "table ip NAME".

// deleteLink removes a network interface if it exists. A veth goes away by

// itself, a moment later, when its peer's namespace is deleted, so one that

// vanishes while being deleted is not an error.
