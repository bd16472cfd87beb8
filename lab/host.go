package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A lab host's life: its root file system, its cgroups, its nspawn
// container, and Down, which removes every host.

func (l *Lab) ensureKey(ctx context.Context) error {
	if fileExists(l.KeyPath()) && fileExists(l.KeyPath()+".pub") {
		return nil
	}
	_ = os.Remove(l.KeyPath())
	_ = os.Remove(l.KeyPath() + ".pub")
	_, err := run(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "pidb-lab", "-f", l.KeyPath())
	return err
}

// running reports whether the host runs and its sshd answers.
func (l *Lab) running(name string) bool {
	return l.powered(name) && sshAnswers(Address(l.board(name)), time.Second)
}

// powered reports whether the host's supervisor lives: the host runs, or
// reboots.
func (l *Lab) powered(name string) bool { return alive(l.supervisor(name)) }

// supervisor is the pid of the host's supervisor, 0 when it has none.
func (l *Lab) supervisor(name string) int {
	data, err := os.ReadFile(l.pidFile(name))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

func (l *Lab) board(name string) Board {
	if b, ok := BoardNamed(name); ok {
		return b
	}
	return Board{Name: name}
}

// bootHost makes a pristine root for the board, its network and cgroups,
// starts it under a supervisor that boots it again when it reboots, waits
// until sshd answers, and checks that /proc shows the board.
func (l *Lab) bootHost(ctx context.Context, b Board, from string) error {
	if b.Octet < 2 || b.Octet > 254 || len(b.Name) > 63 {
		return fmt.Errorf("bad board %q: octet %d, or a name too long for a host name", b.Name, b.Octet)
	}
	if err := l.prepareRoot(ctx, b, from); err != nil {
		return err
	}
	// what the lab wrote is on the card, as an image flashed onto a card
	// is, before the host runs: a power cut (PowerCut) loses only what the
	// host wrote
	if _, err := run(ctx, "sync", "--file-system", l.rootfs(b.Name)); err != nil {
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
	if err := l.waitForSSH(ctx, b, pid, 90*time.Second); err != nil {
		return err
	}
	// the board's /proc files: pisim.service binds them at every boot
	initPID := childOf(childOf(pid, "systemd-nspawn"), "systemd")
	if out, err := run(ctx, "nsenter", "-t", strconv.Itoa(initPID), "-m", "--", "cat", "/proc/cpuinfo"); err != nil || !strings.Contains(out, "\nModel\t\t: "+b.Model+"\n") {
		return fmt.Errorf("the host's /proc/cpuinfo is not the board's (pisim.service; see %s): %v", l.consoleLog(b.Name), err)
	}
	l.logf("%s: up", b.Name)
	return nil
}

// consoleTail is the end of the host's console, for an error: a test's
// cleanup may remove the file before anyone reads it.
func (l *Lab) consoleTail(name string) string {
	data, _ := os.ReadFile(l.consoleLog(name))
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}

// waitForSSH waits until the host's sshd greets, while its supervisor pid
// lives.
func (l *Lab) waitForSSH(ctx context.Context, b Board, pid int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for !sshAnswers(Address(b), time.Second) {
		if !alive(pid) {
			return fmt.Errorf("the host stopped while booting; the end of its console (%s):\n%s", l.consoleLog(b.Name), l.consoleTail(b.Name))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sshd did not answer within %s; the end of its console (%s):\n%s", within, l.consoleLog(b.Name), l.consoleTail(b.Name))
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// prepareRoot copies the base image, or lays the host's own layer over the
// disk of the snapshot from (see mountSnapshot), and gives it the board's
// identity: its name, machine-id, host keys, /proc files and the lab's key.
// A snapshot's disk keeps the rest as it was (its boot target too: pidb may
// have turned the desktop off).
func (l *Lab) prepareRoot(ctx context.Context, b Board, from string) error {
	root := l.rootfs(b.Name)
	if err := os.MkdirAll(l.hostDir(b.Name), 0o755); err != nil {
		return err
	}
	tmp := root + ".tmp"
	_ = os.RemoveAll(tmp)
	var rel string
	var lower, what string
	if from != "" {
		rel, lower, what = l.snapshotRelease(from), l.snapshotRoot(from), "snapshot "+from
	} else {
		r, err := l.releaseFor(b.Name)
		if err != nil {
			return err
		}
		rel, lower, what = r.Name, l.baseDir(r.Name), "the "+r.Name+" image"
	}
	// what its disk lies over, before it does
	if err := writeFile(l.releaseMark(b.Name), rel+"\n", 0o644); err != nil {
		return err
	}
	card, err := l.mountDisk(ctx, b.Name, lower)
	layered := err == nil
	switch {
	case layered && card:
		l.logf("%s: its disk: %s, under a layer of its own on its card (%s)", b.Name, what, b.Card().Kind)
		tmp = root
	case layered:
		l.logf("%s: its disk: %s, under a layer of its own", b.Name, what)
		tmp = root
	default:
		l.logf("%s: copying %s (no layer over it here: %v)", b.Name, what, err)
		_ = os.Remove(l.snapshotMark(b.Name))
	}
	if !layered {
		if _, err := run(ctx, "cp", "-a", "--reflink=auto", lower, tmp); err != nil {
			return err
		}
	}
	if from != "" {
		// the snapshot's host keys are another host's: this one makes its own
		keys, _ := filepath.Glob(filepath.Join(tmp, "etc/ssh/ssh_host_*"))
		for _, k := range keys {
			if err := os.Remove(k); err != nil {
				return err
			}
		}
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
		"etc/pisim/pagesize":                     strconv.Itoa(b.PageSize) + "\n",
		// the board's CPU frequency policy, as Raspberry Pi OS's kernel
		// has it, and vm.swappiness: files the host can write, over
		// /sys and /proc/sys, which a container cannot
		"etc/pisim/cpufreq/policy0/scaling_governor":            "ondemand\n",
		"etc/pisim/cpufreq/policy0/scaling_available_governors": "conservative ondemand userspace powersave performance schedutil\n",
		"etc/pisim/cpufreq/policy0/affected_cpus":               cpuList(b.CPUs) + "\n",
		"etc/pisim/sysctl/swappiness":                           "60\n",
		"etc/pisim/sysctl/overcommit_memory":                    "0\n",
		"etc/pisim/sysctl/overcommit_ratio":                     "50\n",
	}
	files["etc/systemd/system/pisim.service"] = pisimUnit
	if b.PageSize != 0 && b.PageSize != os.Getpagesize() {
		// the board's kernel has other pages than this machine's: getconf
		// says the board's (a Pi 5 under Raspberry Pi OS runs 16K pages)
		files["usr/local/bin/getconf"] = pagesizeGetconf
	}
	for name, data := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "usr/local/bin/") {
			mode = 0o755
		}
		if err := writeFile(filepath.Join(tmp, name), data, mode); err != nil {
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
	if err := l.hostKeys(ctx, b.Name, tmp); err != nil {
		return err
	}
	wants := filepath.Join(tmp, "etc/systemd/system/sysinit.target.wants/pisim.service")
	if err := os.MkdirAll(filepath.Dir(wants), 0o755); err != nil {
		return err
	}
	_ = os.Remove(wants)
	if err := os.Symlink("/etc/systemd/system/pisim.service", wants); err != nil {
		return err
	}
	if from != "" {
		if layered {
			return nil
		}
		return os.Rename(tmp, root)
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
	if layered {
		return nil
	}
	return os.Rename(tmp, root)
}

// pisimUnit makes the host the board at every boot, before anything else
// reads it: the board's /proc/cpuinfo, /proc/meminfo and thermal zone bound
// over the machine's, and the firmware's since-boot throttling flags
// cleared, as a Pi's are when it boots; its CPU frequency policy (the
// kernel's ondemand at boot), vm.swappiness (60) and vm.overcommit_memory
// and _ratio (0 and 50) bound over the machine's as files the host may
// write (what the host sets there is its own: this machine's kernel
// neither swaps nor commits by them), and the sysctl.d files applied,
// as a Pi's systemd-sysctl does (a container skips it: /proc/sys is
// read-only there); and the fstab's ext4 filesystems
// mounted (a drive's, by UUID), as a Pi's udev and systemd mount them at
// boot: systemd skips a block device's fstab line in a container, and no
// udev names the drives here, so blkid reads them first.
const pisimUnit = `[Unit]
Description=pidb lab: this host's board (/proc/cpuinfo, /proc/meminfo, thermal zone)
DefaultDependencies=no
Before=sysinit.target
ConditionPathExists=/etc/pisim/cpuinfo

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/mount --bind /etc/pisim/cpuinfo /proc/cpuinfo
ExecStart=/bin/mount --bind /etc/pisim/meminfo /proc/meminfo
ExecStart=/bin/mount --bind /etc/pisim/thermal /sys/class/thermal
ExecStart=/bin/sh -c 'if [ -f /etc/pisim/vcgencmd/throttled ]; then echo 0x0 > /etc/pisim/vcgencmd/throttled; fi'
ExecStart=/bin/sh -c 'echo ondemand > /etc/pisim/cpufreq/policy0/scaling_governor; echo 60 > /etc/pisim/sysctl/swappiness; echo 0 > /etc/pisim/sysctl/overcommit_memory; echo 50 > /etc/pisim/sysctl/overcommit_ratio'
ExecStart=/bin/mount --bind /etc/pisim/cpufreq /sys/devices/system/cpu/cpufreq
ExecStart=/bin/mount --bind /etc/pisim/sysctl/swappiness /proc/sys/vm/swappiness
ExecStart=/bin/mount --bind /etc/pisim/sysctl/overcommit_memory /proc/sys/vm/overcommit_memory
ExecStart=/bin/mount --bind /etc/pisim/sysctl/overcommit_ratio /proc/sys/vm/overcommit_ratio
ExecStart=/bin/sh -c 'sysctl -q -e --system >/dev/null 2>&1; true'
ExecStart=/bin/sh -c 'for d in /dev/sd[a-z] /dev/nvme[0-9]n[0-9]; do [ -b "$d" ] && blkid "$d" >/dev/null; done; mount -a -t ext4 2>/dev/null; true'
`

// cpuList is the kernel's list of a board's cores: "0-3", "0".
func cpuList(n int) string {
	if n <= 1 {
		return "0"
	}
	return "0-" + strconv.Itoa(n-1)
}

// pagesizeGetconf answers getconf PAGESIZE with the board's page size and
// hands everything else to the real getconf.
const pagesizeGetconf = `#!/bin/sh
# pidb lab: the board's kernel page size, from /etc/pisim/pagesize
if [ $# -eq 1 ] && { [ "$1" = PAGESIZE ] || [ "$1" = PAGE_SIZE ]; }; then exec cat /etc/pisim/pagesize; fi
exec /usr/bin/getconf "$@"
`

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

// supervisorScript joins the host's cgroups (the files before "--"),
// then boots the host with systemd-nspawn's arguments (the rest) and the
// drives' binds the file in $1 lists, again after each reboot. The lab's
// paths, which --dir chooses, are its parameters, never its text.
const supervisorScript = `binds=$1; shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do echo $$ > "$1" || exit 1; shift; done; shift
while :; do systemd-nspawn "$@" $(cat "$binds" 2>/dev/null); rc=$?; [ $rc -eq 133 ] || exit $rc; echo 'pidb lab: the host rebooted'; done`

// startNspawn starts the container detached, inside the host's cgroups, and
// records nspawn's pid.
func (l *Lab) startNspawn(b Board) (int, error) {
	group := machineName(b.Name)
	var procs []string
	for _, h := range cgroupHierarchies {
		procs = append(procs, filepath.Join(cgroupDir(h, group), "cgroup.procs"))
	}
	args := []string{
		"-D", l.rootfs(b.Name), "--boot",
		"--machine=" + group, "--hostname=" + b.Name,
		"--register=no", "--keep-unit",
		"--network-namespace-path=" + netnsPath(b.Name),
		"--resolv-conf=copy-host", "--console=read-only",
		// the host's own firewall (ufw, nftables), as on a Pi: in the
		// host's own network namespace, never the lab machine's
		"--capability=CAP_NET_ADMIN",
	}
	if b.OneCore {
		args = append(args, "--cpu-affinity=0")
	}
	if dev := l.cardDev(b.Name); dev != "" {
		// its card, as the board's kernel names it, and its root partition
		args = append(args, "--bind="+dev+":/dev/mmcblk0", "--bind="+dev+":"+rootSource)
	}

	// the supervisor: a reboot inside ends nspawn with 133 (as
	// systemd-nspawn@.service's RestartForceExitStatus knows); boot the
	// same disk again, as a Pi does
	// and at every boot, the drives plugged in since (attachDrive)
	logf, err := os.OpenFile(l.consoleLog(b.Name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.Command("/bin/sh", append([]string{"-c", supervisorScript, "sh", l.bindsFile(b.Name)}, append(append(procs, "--"), args...)...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = detached()
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
		_ = kill(pid)
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
	if err := deleteCut(ctx, l.board(name)); err != nil {
		return err
	}
	if err := deleteLink(ctx, vethName(l.board(name))); err != nil {
		return err
	}
	if err := unmount(ctx, l.rootfs(name)); err != nil {
		return err
	}
	if err := l.detachDrive(ctx, name); err != nil {
		return err
	}
	if err := l.detachCard(ctx, name); err != nil {
		return err
	}
	return os.RemoveAll(l.hostDir(name))
}

// Remove stops the named hosts, removes what each had on the machine (its
// disk too), and writes the lab's inventory and known_hosts without them.
// The other hosts, the network and the simulator stay.
func (l *Lab) Remove(ctx context.Context, names []string) error {
	if err := checkHost(); err != nil {
		return err
	}
	for _, n := range names {
		if _, ok := BoardNamed(n); !ok {
			return fmt.Errorf("no lab host %q", n)
		}
	}
	// the hosts' own locks while they go, the lab's only for the files
	// all share: other hosts boot and go meanwhile
	unlockHosts, err := l.lockHosts(names)
	if err != nil {
		return err
	}
	defer unlockHosts()
	for _, n := range names {
		if err := l.removeHost(ctx, n); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		l.logf("%s: removed", n)
	}
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	// their cooling and CPU speed go with them: a host booted later under
	// the same name starts at the defaults, not at a removed one's
	if err := l.forgetThermal(names); err != nil {
		return err
	}
	if !fileExists(l.InventoryPath()) {
		return nil
	}
	return l.writeAccess()
}

// Down stops every lab host and removes everything the lab made on the
// machine. The base image, the package cache, the lab key and the hosts'
// SSH host keys (hostKeys) stay for the next Up.
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
		_ = kill(pid)
	}
	l.stopSimulator()
	l.stopLink()
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
	// the lab's table, and any host's cut (Cut)
	out, _ := run(ctx, "nft", "list", "tables")
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "ip" && strings.HasPrefix(f[2], Prefix) {
			if _, err := run(ctx, "nft", "delete", "table", "ip", f[2]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, name := range sysctls {
		orig := l.sysctlOrig(name)
		if data, err := os.ReadFile(orig); err == nil {
			if err := os.WriteFile(filepath.Join("/proc/sys", name), append(data, '\n'), 0o644); err != nil {
				errs = append(errs, err)
			}
			_ = os.Remove(orig)
		}
	}
	// as an older lab kept it
	if data, err := os.ReadFile(filepath.Join(l.Dir, "ip_forward.orig")); err == nil {
		_ = os.WriteFile("/proc/sys/net/ipv4/ip_forward", append(data, '\n'), 0o644)
		_ = os.Remove(filepath.Join(l.Dir, "ip_forward.orig"))
	}
	for _, f := range []string{l.InventoryPath(), l.KnownHostsPath(), filepath.Join(l.Dir, "nft.rules"), filepath.Join(l.Dir, "link.nft")} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(filepath.Join(l.Dir, "hosts")) // only when empty
	return errors.Join(errs...)
}

// hostKeys gives the host named name its own SSH host keys (RSA, ECDSA and
// Ed25519, as ssh-keygen -A makes them at a Pi's first boot), in root's
// /etc/ssh. They are made the first time the lab boots a host of that name
// and kept in the lab's folder (hostkeys/NAME, root's alone), so that the
// host booted again under its name (a test's numbered clone, a host taken
// down and up again) has them again, as a Pi keeps its card's: the RSA key
// takes ssh-keygen a second or more of CPU, and a run of the suite boots
// fifty hosts. Every host name has keys of its own.
func (l *Lab) hostKeys(ctx context.Context, name, root string) error {
	dir := filepath.Join(l.Dir, "hostkeys", name)
	kinds := []string{"rsa", "ecdsa", "ed25519"}
	have := func(d string) bool {
		for _, k := range kinds {
			for _, f := range []string{"ssh_host_" + k + "_key", "ssh_host_" + k + "_key.pub"} {
				if st, err := os.Lstat(filepath.Join(d, "etc/ssh", f)); err != nil || !st.Mode().IsRegular() {
					return false
				}
			}
		}
		return true
	}
	if !have(dir) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return err
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+name+"-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if err := os.MkdirAll(filepath.Join(tmp, "etc/ssh"), 0o755); err != nil {
			return err
		}
		if _, err := run(ctx, "ssh-keygen", "-A", "-f", tmp); err != nil {
			return err
		}
		if !have(tmp) {
			return fmt.Errorf("%s: ssh-keygen -A made no RSA, ECDSA and Ed25519 host keys", name)
		}
		_ = os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil {
			return err
		}
	}
	for _, k := range kinds {
		for _, f := range []string{"ssh_host_" + k + "_key", "ssh_host_" + k + "_key.pub"} {
			data, err := os.ReadFile(filepath.Join(dir, "etc/ssh", f))
			if err != nil {
				return err
			}
			mode := os.FileMode(0o600)
			if strings.HasSuffix(f, ".pub") {
				mode = 0o644
			}
			_ = os.Remove(filepath.Join(root, "etc/ssh", f))
			if err := writeFile(filepath.Join(root, "etc/ssh", f), string(data), mode); err != nil {
				return err
			}
		}
	}
	return nil
}
