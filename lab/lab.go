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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
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

func (l *Lab) baseDir() string               { return filepath.Join(l.Dir, "base") }
func (l *Lab) hostDir(name string) string    { return filepath.Join(l.Dir, "hosts", name) }
func (l *Lab) rootfs(name string) string     { return filepath.Join(l.hostDir(name), "rootfs") }
func machineName(name string) string         { return Prefix + "-" + name }
func netnsPath(name string) string           { return "/run/netns/" + machineName(name) }
func (l *Lab) pidFile(name string) string    { return filepath.Join(l.hostDir(name), "nspawn.pid") }
func (l *Lab) consoleLog(name string) string { return filepath.Join(l.hostDir(name), "console.log") }

// KeyPath is the lab's private SSH key, accepted by root and pi on every host.
func (l *Lab) KeyPath() string { return filepath.Join(l.Dir, "id_ed25519") }

// KnownHostsPath is the lab's known_hosts, built from the hosts' own keys.
func (l *Lab) KnownHostsPath() string { return filepath.Join(l.Dir, "known_hosts") }

// InventoryPath is where Up writes the lab's inventory.
func (l *Lab) InventoryPath() string { return filepath.Join(l.Dir, "inventory.toml") }

// Address returns the board's address in the lab subnet.
func Address(b Board) netip.Addr {
	a := Subnet.Addr().As4()
	a[3] = byte(b.Octet)
	return netip.AddrFrom4(a)
}

func gateway() netip.Addr { return Subnet.Addr().Next() }

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
func (l *Lab) ensureKey(ctx context.Context) error {
	if fileExists(l.KeyPath()) && fileExists(l.KeyPath()+".pub") {
		return nil
	}
	_ = os.Remove(l.KeyPath())
	_ = os.Remove(l.KeyPath() + ".pub")
	_, err := run(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "pidb-lab", "-f", l.KeyPath())
	return err
}

// ensureNetwork sets up the bridge with the gateway address, forwarding, and
// an nft table that masquerades the lab's traffic out of the default route,
// so apt works inside the hosts.
func (l *Lab) ensureNetwork(ctx context.Context) error {
	if err := checkSubnetFree(); err != nil {
		return err
	}
	if _, err := net.InterfaceByName(bridge); err != nil {
		if _, err := run(ctx, "ip", "link", "add", bridge, "type", "bridge"); err != nil {
			return err
		}
	}
	gw := netip.PrefixFrom(gateway(), Subnet.Bits()).String()
	if out, _ := run(ctx, "ip", "-o", "addr", "show", "dev", bridge); !strings.Contains(out, " "+gw+" ") {
		if _, err := run(ctx, "ip", "addr", "add", gw, "dev", bridge); err != nil {
			return err
		}
	}
	if _, err := run(ctx, "ip", "link", "set", bridge, "up"); err != nil {
		return err
	}
	fwd := "/proc/sys/net/ipv4/ip_forward"
	if data, _ := os.ReadFile(fwd); strings.TrimSpace(string(data)) != "1" {
		// remember the machine's setting so down can put it back
		if err := writeFile(filepath.Join(l.Dir, "ip_forward.orig"), strings.TrimSpace(string(data)), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(fwd, []byte("1\n"), 0o644); err != nil {
			return fmt.Errorf("enable IPv4 forwarding: %w", err)
		}
	}
	out, err := run(ctx, "ip", "-o", "route", "show", "default")
	if err != nil {
		return err
	}
	f := strings.Fields(out)
	dev := ""
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "dev" {
			dev = f[i+1]
			break
		}
	}
	if dev == "" {
		return errors.New("no default route: the lab's hosts need one for apt")
	}
	_, _ = run(ctx, "nft", "delete", "table", "ip", nftName)
	rules := fmt.Sprintf("table ip %s {\n\tchain postrouting {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n\t\tip saddr %s oifname %q masquerade\n\t}\n}\n", nftName, Subnet, dev)
	rulesFile := filepath.Join(l.Dir, "nft.rules")
	if err := os.WriteFile(rulesFile, []byte(rules), 0o644); err != nil {
		return err
	}
	_, err = run(ctx, "nft", "-f", rulesFile)
	return err
}

// checkSubnetFree refuses a lab subnet that another interface already uses.
func checkSubnetFree() error {
	ifaces, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, ifc := range ifaces {
		if strings.HasPrefix(ifc.Name, Prefix) {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Overlaps(Subnet) {
				return fmt.Errorf("the lab's subnet %s overlaps %s on %s", Subnet, p, ifc.Name)
			}
		}
	}
	return nil
}

// running reports whether the host's nspawn process is alive.
func (l *Lab) running(name string) bool {
	data, err := os.ReadFile(l.pidFile(name))
	if err != nil {
		return false
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return alive(pid) && sshAnswers(Address(l.board(name)), time.Second)
}

func (l *Lab) board(name string) Board {
	for _, b := range l.Fleet {
		if b.Name == name {
			return b
		}
	}
	return Board{Name: name}
}

// sshAnswers reports whether an SSH server greets on addr:22.
func sshAnswers(addr netip.Addr, timeout time.Duration) bool {
	c, err := net.DialTimeout("tcp", netip.AddrPortFrom(addr, 22).String(), timeout)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 4)
	n, _ := io.ReadFull(c, buf)
	return n == 4 && string(buf) == "SSH-"
}

// bootHost makes a pristine root for the board, its network and cgroups,
// starts it, makes its /proc and thermal files the board's, and waits until
// sshd answers.
func (l *Lab) bootHost(ctx context.Context, b Board) error {
	if b.Octet < 2 || b.Octet > 254 || len(machineName(b.Name)) > 15 {
		return fmt.Errorf("bad board %q: octet %d, or a name too long for an interface", b.Name, b.Octet)
	}
	l.logf("%s: copying the base image", b.Name)
	if err := l.prepareRoot(ctx, b); err != nil {
		return err
	}
	if err := l.setupNetns(ctx, b); err != nil {
		return err
	}
	if err := l.setupCgroups(b); err != nil {
		return err
	}
	l.logf("%s: booting %s at %s", b.Name, b.Model, Address(b))
	pid, err := l.startNspawn(b)
	if err != nil {
		return err
	}
	// the container's init is nspawn's child once it has exec'd systemd
	var initPID int
	deadline := time.Now().Add(30 * time.Second)
	for initPID == 0 {
		if !alive(pid) {
			return fmt.Errorf("systemd-nspawn exited; see %s", l.consoleLog(b.Name))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no init under systemd-nspawn after 30s; see %s", l.consoleLog(b.Name))
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
		initPID = childOf(pid, "systemd")
	}
	for src, dst := range map[string]string{"/etc/pisim/cpuinfo": "/proc/cpuinfo", "/etc/pisim/meminfo": "/proc/meminfo", "/etc/pisim/thermal": "/sys/class/thermal"} {
		if _, err := run(ctx, "nsenter", "-t", strconv.Itoa(initPID), "-m", "--", "mount", "--bind", src, dst); err != nil {
			return fmt.Errorf("bind %s over %s: %w", src, dst, err)
		}
	}
	deadline = time.Now().Add(90 * time.Second)
	for !sshAnswers(Address(b), time.Second) {
		if !alive(pid) {
			return fmt.Errorf("the host stopped while booting; see %s", l.consoleLog(b.Name))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sshd did not answer within 90s; see %s", l.consoleLog(b.Name))
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	l.logf("%s: up", b.Name)
	return nil
}

// prepareRoot copies the base image and gives the copy the board's identity.
func (l *Lab) prepareRoot(ctx context.Context, b Board) error {
	root := l.rootfs(b.Name)
	if err := os.MkdirAll(l.hostDir(b.Name), 0o755); err != nil {
		return err
	}
	tmp := root + ".tmp"
	_ = os.RemoveAll(tmp)
	if _, err := run(ctx, "cp", "-a", "--reflink=auto", l.baseDir(), tmp); err != nil {
		return err
	}
	pub, err := os.ReadFile(l.KeyPath() + ".pub")
	if err != nil {
		return err
	}
	mid := make([]byte, 16)
	if _, err := rand.Read(mid); err != nil {
		return err
	}
	files := map[string]string{
		"etc/hostname":                           b.Name + "\n",
		"etc/hosts":                              "127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\nff02::1\t\tip6-allnodes\nff02::2\t\tip6-allrouters\n\n127.0.1.1\t" + b.Name + "\n",
		"etc/machine-id":                         hex.EncodeToString(mid) + "\n",
		"etc/apt/apt.conf.d/00pidblab-proxy":     aptProxyConf(),
		"etc/pisim/cpuinfo":                      b.CPUInfo(),
		"etc/pisim/meminfo":                      b.MemInfo(),
		"etc/pisim/board":                        fmt.Sprintf("name=%s\nmodel=%s\nrevision=%s\nram_bytes=%d\n", b.Name, b.Model, b.Revision, b.RAMBytes),
		"etc/pisim/thermal/thermal_zone0/type":   "cpu-thermal\n",
		"etc/pisim/thermal/thermal_zone0/temp":   strconv.Itoa(b.IdleTempMC) + "\n",
		"etc/pisim/thermal/thermal_zone0/policy": "step_wise\n",
	}
	for name, data := range files {
		if err := writeFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return err
		}
	}
	for _, home := range []struct{ dir, user string }{{"root", "root"}, {"home/pi", "pi"}} {
		uid, gid, err := lookupUser(tmp, home.user)
		if err != nil {
			return err
		}
		sshDir := filepath.Join(tmp, home.dir, ".ssh")
		if err := writeFile(filepath.Join(sshDir, "authorized_keys"), string(pub), 0o600); err != nil {
			return err
		}
		if err := os.Chmod(sshDir, 0o700); err != nil {
			return err
		}
		for _, p := range []string{sshDir, filepath.Join(sshDir, "authorized_keys")} {
			if err := os.Lchown(p, uid, gid); err != nil {
				return err
			}
		}
	}
	// its own host keys, so known_hosts means something
	if _, err := run(ctx, "ssh-keygen", "-A", "-f", tmp); err != nil {
		return err
	}
	// the boot target: Raspberry Pi OS with desktop boots to graphical.target
	// with lightdm as the display manager; Lite boots to multi-user.target
	target := "multi-user.target"
	if b.Desktop {
		target = "graphical.target"
		stub := map[string]string{
			"usr/sbin/lightdm": "#!/bin/sh\n# pidb lab: a display manager that needs no X\nexec sleep infinity\n",
			"lib/systemd/system/lightdm.service": "[Unit]\nDescription=Light Display Manager (pidb lab stub)\nAfter=systemd-user-sessions.service\n\n" +
				"[Service]\nExecStart=/usr/sbin/lightdm\nRestart=always\n\n[Install]\nAlias=display-manager.service\n",
			"etc/X11/default-display-manager": "/usr/sbin/lightdm\n",
		}
		for name, data := range stub {
			mode := os.FileMode(0o644)
			if strings.HasPrefix(name, "usr/sbin/") {
				mode = 0o755
			}
			if err := writeFile(filepath.Join(tmp, name), data, mode); err != nil {
				return err
			}
		}
		if err := os.Symlink("/lib/systemd/system/lightdm.service", filepath.Join(tmp, "etc/systemd/system/display-manager.service")); err != nil {
			return err
		}
	}
	def := filepath.Join(tmp, "etc/systemd/system/default.target")
	_ = os.Remove(def)
	if err := os.Symlink("/lib/systemd/system/"+target, def); err != nil {
		return err
	}
	return os.Rename(tmp, root)
}

// lookupUser reads a user's uid and gid from the image's /etc/passwd.
func lookupUser(root, user string) (int, int, error) {
	data, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 4 && f[0] == user {
			uid, err1 := strconv.Atoi(f[2])
			gid, err2 := strconv.Atoi(f[3])
			if err1 == nil && err2 == nil {
				return uid, gid, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("no user %q in the image", user)
}

// setupNetns makes the host's network namespace: a veth whose inside end is
// eth0 with the board's address, the other end on the lab bridge.
func (l *Lab) setupNetns(ctx context.Context, b Board) error {
	ns, veth := machineName(b.Name), machineName(b.Name)
	peer := Prefix + "-tmp" + strconv.Itoa(b.Octet)
	addr := netip.PrefixFrom(Address(b), Subnet.Bits()).String()
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", veth, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", ns},
		{"ip", "-n", ns, "link", "set", peer, "name", "eth0"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "-n", ns, "addr", "add", addr, "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
		{"ip", "-n", ns, "route", "add", "default", "via", gateway().String()},
		{"ip", "link", "set", veth, "master", bridge},
		{"ip", "link", "set", veth, "up"},
	}
	for _, s := range steps {
		if _, err := run(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// setupCgroups makes the host's groups and limits its memory to the board's RAM.
func (l *Lab) setupCgroups(b Board) error {
	group := machineName(b.Name)
	for _, h := range cgroupHierarchies {
		if err := os.MkdirAll(cgroupDir(h, group), 0o755); err != nil {
			return fmt.Errorf("make cgroup: %w", err)
		}
	}
	limit := filepath.Join(cgroupDir("memory", group), "memory.limit_in_bytes")
	if err := os.WriteFile(limit, []byte(strconv.FormatUint(b.RAMBytes, 10)), 0o644); err != nil {
		return fmt.Errorf("limit memory: %w", err)
	}
	return nil
}

// startNspawn starts the container detached, inside the host's cgroups, and
// records nspawn's pid.
func (l *Lab) startNspawn(b Board) (int, error) {
	group := machineName(b.Name)
	var join strings.Builder
	for _, h := range cgroupHierarchies {
		fmt.Fprintf(&join, "echo $$ > %s/cgroup.procs && ", cgroupDir(h, group))
	}
	args := []string{
		"-D", l.rootfs(b.Name), "--boot",
		"--machine=" + group, "--hostname=" + b.Name,
		"--register=no", "--keep-unit",
		"--network-namespace-path=" + netnsPath(b.Name),
		"--resolv-conf=copy-host", "--console=read-only",
	}
	if b.OneCore {
		args = append(args, "--cpu-affinity=0")
	}
	script := join.String() + "exec systemd-nspawn " + strings.Join(args, " ")
	logf, err := os.OpenFile(l.consoleLog(b.Name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	// reap it if it exits while this process lives; it outlives us otherwise
	go func() { _ = cmd.Wait() }()
	if err := os.WriteFile(l.pidFile(b.Name), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return 0, err
	}
	return pid, nil
}

// removeHost stops a host and removes everything it had on the machine.
func (l *Lab) removeHost(ctx context.Context, name string) error {
	group := machineName(name)
	for _, pid := range processesMatching("--machine=" + group + " ") {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, h := range cgroupHierarchies {
		if err := removeCgroup(ctx, cgroupDir(h, group)); err != nil {
			return err
		}
	}
	if fileExists(netnsPath(name)) {
		if _, err := run(ctx, "ip", "netns", "delete", group); err != nil {
			return err
		}
	}
	if err := deleteLink(ctx, group); err != nil {
		return err
	}
	return os.RemoveAll(l.hostDir(name))
}

// Down stops every lab host and removes everything the lab made on the
// machine. The base image, the package cache and the lab key stay for the
// next Up.
func (l *Lab) Down(ctx context.Context) error {
	if err := checkHost(); err != nil {
		return err
	}
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	var errs []error
	names := map[string]bool{}
	for _, b := range l.Fleet {
		names[b.Name] = true
	}
	// hosts a different fleet left behind, found by their cgroups and roots
	found, _ := filepath.Glob(filepath.Join(cgroupRoot, "memory", Prefix+"-*"))
	for _, p := range found {
		names[strings.TrimPrefix(filepath.Base(p), Prefix+"-")] = true
	}
	dirs, _ := os.ReadDir(filepath.Join(l.Dir, "hosts"))
	for _, d := range dirs {
		names[d.Name()] = true
	}
	for name := range names {
		if err := l.removeHost(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	for _, pid := range processesMatching("--machine=" + Prefix + "-") {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	l.stopSimulator()
	_ = os.Remove(l.thermalConfigPath())
	l.stopAptProxy()
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if strings.HasPrefix(ifc.Name, Prefix) {
			if err := deleteLink(ctx, ifc.Name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	nss, _ := filepath.Glob("/run/netns/" + Prefix + "-*")
	for _, ns := range nss {
		if _, err := run(ctx, "ip", "netns", "delete", filepath.Base(ns)); err != nil {
			errs = append(errs, err)
		}
	}
	if out, _ := run(ctx, "nft", "list", "tables"); containsTable(out, nftName) {
		if _, err := run(ctx, "nft", "delete", "table", "ip", nftName); err != nil {
			errs = append(errs, err)
		}
	}
	orig := filepath.Join(l.Dir, "ip_forward.orig")
	if data, err := os.ReadFile(orig); err == nil {
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", append(data, '\n'), 0o644); err != nil {
			errs = append(errs, err)
		}
		_ = os.Remove(orig)
	}
	for _, f := range []string{l.InventoryPath(), l.KnownHostsPath(), filepath.Join(l.Dir, "nft.rules")} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(filepath.Join(l.Dir, "hosts")) // only when empty
	return errors.Join(errs...)
}

// HostStatus is one lab host as Status reports it.
type HostStatus struct {
	Name    string `json:"host"`
	Address string `json:"address"`
	Model   string `json:"model"`
	RAM     uint64 `json:"ram_bytes"`
	Engine  string `json:"engine"`
	State   string `json:"state"` // up, down, broken (left by a killed run)
}

// Status reports every board of the fleet.
func (l *Lab) Status() []HostStatus {
	var out []HostStatus
	for _, b := range l.Fleet {
		s := HostStatus{Name: b.Name, Address: Address(b).String(), Model: b.Model, RAM: b.RAMBytes, Engine: b.Engine, State: "down"}
		switch {
		case l.running(b.Name):
			s.State = "up"
		case fileExists(l.hostDir(b.Name)) || fileExists(netnsPath(b.Name)) || fileExists(cgroupDir("memory", machineName(b.Name))):
			s.State = "broken"
		}
		out = append(out, s)
	}
	return out
}

// SetTemp sets the temperature the host's thermal zone reports, in
// millidegrees Celsius, as /sys/class/thermal/thermal_zone0/temp does. The
// file is replaced atomically, so a reader never sees half a number.
func (l *Lab) SetTemp(name string, milliC int) error {
	dir := filepath.Join(l.rootfs(name), "etc/pisim/thermal/thermal_zone0")
	if !fileExists(dir) {
		return fmt.Errorf("%s: no such lab host", name)
	}
	return writeAtomic(filepath.Join(dir, "temp"), strconv.Itoa(milliC)+"\n")
}

// CPUTime returns the CPU time the host's processes have used since it booted.
func (l *Lab) CPUTime(name string) (time.Duration, error) {
	data, err := os.ReadFile(filepath.Join(cgroupDir("cpuacct", machineName(name)), "cpuacct.usage"))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: cpuacct.usage: %w", name, err)
	}
	return time.Duration(ns), nil
}

// MemoryLimit returns the memory limit of the host's cgroup, in bytes.
func (l *Lab) MemoryLimit(name string) (uint64, error) {
	data, err := os.ReadFile(filepath.Join(cgroupDir("memory", machineName(name)), "memory.limit_in_bytes"))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}

// Leftovers lists what the lab has on this machine: processes, interfaces,
// network namespaces, the nft table and cgroups carrying the lab's prefix.
// After Down it is empty.
func Leftovers() []string {
	var out []string
	for _, pat := range []string{"--machine=" + Prefix + "-", Prefix + "-apt-proxy", simulatorProcess + " "} {
		for _, pid := range processesMatching(pat) {
			out = append(out, fmt.Sprintf("process %d", pid))
		}
	}
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if strings.HasPrefix(ifc.Name, Prefix) {
			out = append(out, "interface "+ifc.Name)
		}
	}
	nss, _ := filepath.Glob("/run/netns/" + Prefix + "*")
	for _, ns := range nss {
		out = append(out, "network namespace "+filepath.Base(ns))
	}
	if tables, err := exec.Command("nft", "list", "tables").Output(); err == nil {
		for _, line := range strings.Split(string(tables), "\n") {
			if f := strings.Fields(line); len(f) == 3 && strings.HasPrefix(f[2], Prefix) {
				out = append(out, "nft "+line)
			}
		}
	}
	for _, h := range cgroupHierarchies {
		groups, _ := filepath.Glob(filepath.Join(cgroupRoot, h, Prefix+"*"))
		for _, g := range groups {
			out = append(out, "cgroup "+g)
		}
	}
	return out
}

// containsTable reports whether `nft list tables` output lists "table ip NAME".
func containsTable(list, name string) bool {
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "ip" && f[2] == name {
			return true
		}
	}
	return false
}

// deleteLink removes a network interface if it exists. A veth goes away by
// itself, a moment later, when its peer's namespace is deleted, so one that
// vanishes while being deleted is not an error.
func deleteLink(ctx context.Context, name string) error {
	if _, err := net.InterfaceByName(name); err != nil {
		return nil
	}
	if _, err := run(ctx, "ip", "link", "delete", name); err != nil {
		if _, gone := net.InterfaceByName(name); gone != nil {
			return nil
		}
		return err
	}
	return nil
}
