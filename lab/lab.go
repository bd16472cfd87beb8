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
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
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
	Fleet []Board   // the boards Up boots when none are named
	Log   io.Writer // progress, for people (stderr)

	// The thermal simulation (see Simulate), set for Up: each host's
	// cooling (default CoolingFan), the hosts left without
	// vcgencmd, how fast simulated time runs (default 1), and the command
	// that runs the simulator in its own process (`pidb lab simulate`,
	// set by RunsAs); without it Up starts none.
	Cooling          map[string]Cooling
	NoVcgencmd       map[string]bool
	ThermalSpeed     float64
	SimulatorCommand []string
	// CPU is each host's CPU speed for Up, CPUBoard or CPUFull;
	// its "*" entry becomes the lab's speed, for the hosts Up boots or
	// finds and the hosts booted later. A host it does not name keeps the
	// speed it had; a new lab's is CPUBoard.
	CPU map[string]string
	// Latency is the round trip the lab's link adds between this machine
	// and each host, for Up, as a duration ("20ms", at most MaxLatency), kept as
	// CPU is; LinkCommand runs the link in its own process (`pidb lab
	// link`).
	Latency     map[string]string
	LinkCommand []string
	// Drives are the drives Up plugs into hosts besides their cards: host
	// name -> "usb-ssd" or "nvme".
	Drives map[string]string
	// Releases are the releases (see Releases) Up boots hosts with: host
	// name -> release name; a "*" entry for every host it boots that it
	// does not name; else DefaultRelease. A host that is up keeps its
	// own; one booted from a snapshot has the snapshot's.
	Releases map[string]string

	logMu sync.Mutex // hosts boot at once, and each logs
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

// RunsAs has the lab start its simulator and its link as `pidb lab
// simulate` and `pidb lab link` of the pidb binary exe (the running one,
// os.Executable): without it, as in a Go test binary, which cannot be
// either, the lab goes on without them and says so.
func (l *Lab) RunsAs(exe string) *Lab {
	l.SimulatorCommand = []string{exe, "lab", "simulate", "--dir", l.Dir}
	l.LinkCommand = []string{exe, "lab", "link", "--dir", l.Dir}
	return l
}

// Own is RunsAs of the running binary: the lab as pidb's own commands
// use it.
func (l *Lab) Own() *Lab {
	if exe, err := os.Executable(); err == nil {
		l.RunsAs(exe)
	}
	return l
}

func (l *Lab) logf(format string, args ...any) {
	l.logMu.Lock()
	defer l.logMu.Unlock()
	fmt.Fprintf(l.Log, "lab: "+format+"\n", args...)
}

// hosts is every host the lab knows of: the default fleet's, then any other
// it has a directory or cgroup for, in address order.
func (l *Lab) hosts() []Board {
	out := append([]Board{}, l.Fleet...)
	seen := map[string]bool{}
	for _, b := range out {
		seen[b.Name] = true
	}
	var names []string
	dirs, _ := os.ReadDir(filepath.Join(l.Dir, "hosts"))
	for _, d := range dirs {
		names = append(names, d.Name())
	}
	groups, _ := filepath.Glob(filepath.Join(cgroupRoot, "memory", Prefix+"-*"))
	for _, g := range groups {
		names = append(names, strings.TrimPrefix(filepath.Base(g), Prefix+"-"))
	}
	var more []Board
	for _, n := range names {
		if b, ok := BoardNamed(n); ok && !seen[n] {
			seen[n] = true
			more = append(more, b)
		}
	}
	sort.Slice(more, func(i, j int) bool { return more[i].Octet < more[j].Octet })
	return append(out, more...)
}

// baseDir is the base image of the release called name.
func (l *Lab) baseDir(release string) string { return filepath.Join(l.Dir, "images", release) }

// lowerOf is what the host's disk lies over: its snapshot's disk, else its
// release's base image (an older lab's one image, for a host it booted).
func (l *Lab) lowerOf(name string) string {
	if from, err := os.ReadFile(l.snapshotMark(name)); err == nil {
		return l.snapshotRoot(strings.TrimSpace(string(from)))
	}
	if data, err := os.ReadFile(l.releaseMark(name)); err == nil {
		return l.baseDir(strings.TrimSpace(string(data)))
	}
	return filepath.Join(l.Dir, "base")
}

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
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// lockHosts takes the named hosts' own locks, in name order (so two
// commands never wait for each other crosswise), waiting while another
// command boots, removes or copies one of them. A command takes these
// before the lab's lock, never after.
func (l *Lab) lockHosts(names []string) (func(), error) {
	sorted := append([]string{}, names...)
	sort.Strings(sorted)
	var held []*os.File
	unlock := func() {
		for _, f := range held {
			f.Close()
		}
	}
	for i, n := range sorted {
		if i > 0 && n == sorted[i-1] {
			continue
		}
		f, err := l.hostLockFile(n)
		if err != nil {
			unlock()
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			unlock()
			return nil, err
		}
		held = append(held, f)
	}
	return unlock, nil
}

// tryLockHost takes the host's own lock if no other command holds it.
func (l *Lab) tryLockHost(name string) (unlock func(), free bool, err error) {
	f, err := l.hostLockFile(name)
	if err != nil {
		return nil, false, err
	}
	free, err = tryLockFile(f)
	if err != nil || !free {
		f.Close()
		return nil, false, err
	}
	return func() { f.Close() }, true, nil
}

func (l *Lab) hostLockFile(name string) (*os.File, error) {
	dir := filepath.Join(l.Dir, "host-locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_RDWR, 0o644)
}

// Up boots the named boards (all when names is empty), writes the lab's
// inventory and known_hosts, and returns the inventory's path. A host that is
// already up is left as it is (one that reboots is waited for); one that a
// killed run left broken is removed and booted again from a pristine copy.
func (l *Lab) Up(ctx context.Context, names []string) (string, error) {
	return l.up(ctx, names, "")
}

// UpFrom boots the named boards from the disk of a snapshot (see Snapshot)
// instead of a pristine image: each comes up as the snapshot's host was,
// databases and all, with its own name, address and host keys. None of them
// may be up already.
func (l *Lab) UpFrom(ctx context.Context, names []string, snapshot string) (string, error) {
	if len(names) == 0 {
		return "", errors.New("name the hosts to boot from a snapshot")
	}
	if err := checkSnapshotName(snapshot); err != nil {
		return "", err
	}
	if !fileExists(l.snapshotRoot(snapshot)) {
		return "", fmt.Errorf("no snapshot %q in %s (pidb lab snapshot HOST %s takes one)", snapshot, l.snapshotsDir(), snapshot)
	}
	return l.up(ctx, names, snapshot)
}

func (l *Lab) up(ctx context.Context, names []string, from string) (string, error) {
	if err := checkHost(); err != nil {
		return "", err
	}
	boards := l.Fleet
	if len(names) > 0 {
		boards = nil
		for _, n := range names {
			b, ok := BoardNamed(n)
			if !ok {
				return "", fmt.Errorf("no lab board %q (the lab has %s)", n, strings.Join(Kinds(), ", "))
			}
			boards = append(boards, b)
		}
	}
	for name := range l.Drives {
		if !slices.ContainsFunc(boards, func(b Board) bool { return b.Name == name }) {
			return "", fmt.Errorf("--storage: %s is not among the hosts this up boots or finds (--hosts)", name)
		}
	}
	// the hosts' own locks first, then the lab's for what all share:
	// another command boots or removes other hosts meanwhile
	var own []string
	for _, b := range boards {
		own = append(own, b.Name)
	}
	unlockHosts, err := l.lockHosts(own)
	if err != nil {
		return "", err
	}
	defer unlockHosts()
	if err := l.prepareUp(ctx, boards, from); err != nil {
		return "", err
	}
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(boards))
	for _, b := range boards {
		go func(b Board) {
			var err error
			if l.powered(b.Name) {
				if !l.running(b.Name) {
					l.logf("%s: booting again (it rebooted); waiting for its sshd", b.Name)
					err = l.waitForSSH(ctx, b, l.supervisor(b.Name), 2*time.Minute)
				}
				if err == nil {
					l.logf("%s: already up at %s", b.Name, Address(b))
				}
			} else {
				err = l.bootHost(ctx, b, from)
			}
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
	unlock, err := l.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	if err := l.writeAccess(); err != nil {
		return "", err
	}
	for _, b := range boards {
		if err := l.setVcgencmd(b, false); err != nil {
			return "", fmt.Errorf("%s: vcgencmd: %w", b.Name, err)
		}
		if kind := l.Drives[b.Name]; kind != "" {
			if err := l.attachDrive(ctx, b, kind); err != nil {
				return "", fmt.Errorf("%s: its drive: %w", b.Name, err)
			}
		}
	}
	if err := l.writeThermalConfig(ctx, boards); err != nil {
		return "", err
	}
	if err := l.ensureSimulator(); err != nil {
		return "", err
	}
	cfg, _ := l.readThermalConfig()
	if err := l.ensureLink(cfg); err != nil {
		return "", err
	}
	return l.InventoryPath(), nil
}

// prepareUp makes what every host shares (the key, the network, the apt
// proxy, the base image) and removes what a killed run left of hosts that
// are not running and that no command holds, under the lab's lock.
func (l *Lab) prepareUp(ctx context.Context, boards []Board, from string) error {
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if from != "" {
		for _, b := range boards {
			if l.powered(b.Name) {
				return fmt.Errorf("%s is up: take it down (lab down --hosts %s) before booting it from snapshot %s", b.Name, b.Name, from)
			}
		}
	}
	if err := l.ensureKey(ctx); err != nil {
		return err
	}
	if err := l.ensureNetwork(ctx); err != nil {
		return err
	}
	if err := l.ensureAptProxy(ctx); err != nil {
		return err
	}
	if from == "" {
		built := map[string]bool{}
		for _, b := range boards {
			if l.powered(b.Name) {
				continue
			}
			rel, err := l.releaseFor(b.Name)
			if err != nil {
				return err
			}
			if !built[rel.Name] {
				if err := l.ensureBase(ctx, rel); err != nil {
					return err
				}
				built[rel.Name] = true
			}
		}
	}
	mine := map[string]bool{}
	for _, b := range boards {
		mine[b.Name] = true
	}
	// a host that reboots is running: its supervisor boots it again; one
	// whose lock another command holds is being booted or removed by it
	for _, b := range l.hosts() {
		if l.powered(b.Name) {
			continue
		}
		if mine[b.Name] {
			if err := l.removeHost(ctx, b.Name); err != nil {
				return err
			}
			continue
		}
		unlockHost, free, err := l.tryLockHost(b.Name)
		if err != nil {
			return err
		}
		if !free {
			continue
		}
		err = l.removeHost(ctx, b.Name)
		unlockHost()
		if err != nil {
			return err
		}
	}
	// the snapshot under each new disk, marked while the lab's lock is
	// held: from here on no one replaces or removes it (snapshotUsers)
	if from != "" {
		for _, b := range boards {
			if err := os.MkdirAll(l.hostDir(b.Name), 0o755); err != nil {
				return err
			}
			if err := writeFile(l.snapshotMark(b.Name), from+"\n", 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
