package lab_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/lab"
)

// board is what a host must show, written out by hand per board.
type board struct {
	model, revision string
	memTotalKB      [2]uint64 // MemTotal range: the RAM less the GPU's share
	processors      int
	oneCore         bool
	target          string
	ram             uint64
}

var boards = map[string]board{
	"pi4":  {"Raspberry Pi 4 Model B Rev 1.4", "c03114", [2]uint64{3700000, 3950000}, 4, false, "graphical.target", 4 << 30},
	"pi3":  {"Raspberry Pi 3 Model B Rev 1.2", "a02082", [2]uint64{900000, 980000}, 4, false, "graphical.target", 1 << 30},
	"zero": {"Raspberry Pi Zero W Rev 1.1", "9000c1", [2]uint64{420000, 470000}, 1, true, "multi-user.target", 512 << 20},
}

// labOf is the lab whose own inventory (labtest.Inventory) inv is. A leased
// inventory lives in the test's folder, not the lab's: those tests take
// labtest.Lab.
func labOf(inv *inventory.Inventory) *lab.Lab {
	return lab.New(filepath.Dir(inv.Path), nil)
}

// TestHostsLookLikeTheirBoards logs in to each host with the system's ssh
// client (the lab key, the lab's known_hosts, strict host-key checking) and
// reads what a user would. It only reads, so it shares the hosts with other
// tests that read them. The boot target and the desktop, which provisioning
// changes, are checked on pristine hosts by TestLabLifecycle.
func TestHostsLookLikeTheirBoards(t *testing.T) {
	t.Parallel()
	inv := labtest.Share(t, "pi4", "pi3", "zero")
	for name, want := range boards {
		t.Run(name, func(t *testing.T) {
			h := labtest.Host(t, inv, name)
			out := labtest.MustSSH(t, h, `sudo -n true && echo sudo=ok; echo hostname=$(hostname); echo nproc=$(nproc); `+
				`echo target=$(systemctl get-default); echo dm=$(systemctl is-active display-manager.service); `+
				`echo state=$(systemctl is-system-running); echo processors=$(grep -c ^processor /proc/cpuinfo); `+
				`sed -n 's/^Model\s*: /model=/p; s/^Revision\s*: /revision=/p' /proc/cpuinfo; `+
				`awk '/^MemTotal:/ {print "memtotal=" $2}' /proc/meminfo; echo freetotal=$(free -k | awk '/^Mem:/ {print $2}'); `+
				`echo temp=$(cat /sys/class/thermal/thermal_zone0/temp); echo user=$(id -un)`)
			got := map[string]string{}
			for _, line := range strings.Split(out, "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					got[k] = v
				}
			}
			check := func(key, want string) {
				if got[key] != want {
					t.Errorf("%s = %q, want %q", key, got[key], want)
				}
			}
			check("sudo", "ok")
			check("user", "pi")
			check("hostname", name)
			check("model", want.model)
			check("revision", want.revision)
			check("processors", strconv.Itoa(want.processors))
			// a host core cannot be conjured: nproc is the board's cores as far
			// as this machine has them, and 1 on the Zero, which is pinned
			nproc := min(want.processors, runtime.NumCPU())
			if want.oneCore {
				nproc = 1
			}
			check("nproc", strconv.Itoa(nproc))
			mem, _ := strconv.ParseUint(got["memtotal"], 10, 64)
			if mem < want.memTotalKB[0] || mem > want.memTotalKB[1] {
				t.Errorf("MemTotal %d kB, want %d-%d", mem, want.memTotalKB[0], want.memTotalKB[1])
			}
			check("freetotal", got["memtotal"]) // free reads the same file
			if temp, err := strconv.Atoi(got["temp"]); err != nil || temp < 20000 || temp > 90000 {
				t.Errorf("thermal_zone0/temp = %q, want millidegrees of an idle Pi", got["temp"])
			}
		})
	}
}

// TestMemoryIsLimitedToTheBoard checks the cgroup limits and that the limit
// is real inside: a process that grows past the board's RAM is killed. It
// leases zero alone, where the kernel's OOM killer may strike (it could
// kill another test's database); pi4's and pi3's limits it only reads.
func TestMemoryIsLimitedToTheBoard(t *testing.T) {
	t.Parallel()
	inv := labtest.Lease(t, "zero")
	l := labtest.Lab(t)
	for name, want := range boards {
		got, err := l.MemoryLimit(name)
		if err != nil || got != want.ram {
			t.Errorf("%s: memory limit %d (%v), want %d", name, got, err, want.ram)
		}
	}
	zero := labtest.Host(t, inv, "zero")
	hold := func(mb int) (string, error) {
		// read preallocates the buffer: the process holds mb MB, no more
		out, _, err := labtest.SSH(zero, "perl -e '$n = read(STDIN, $x, "+strconv.Itoa(mb)+" * 1048576); print $n' </dev/zero")
		return strings.TrimSpace(out), err
	}
	// 100 MB fits on a 512 MB board (beside a database other tests may have
	// left there); 700 MB does not, though this machine has plenty
	if out, err := hold(100); err != nil || out != strconv.Itoa(100<<20) {
		t.Errorf("zero could not hold 100 MB: %q, %v", out, err)
	}
	if out, err := hold(700); err == nil || out == strconv.Itoa(700<<20) {
		t.Errorf("zero held 700 MB with 512 MB of RAM: %q, %v", out, err)
	}
}

// TestEachHostHasItsOwnHostKeys checks known_hosts has one set of keys per
// host and that strict checking refuses a key that does not match. The
// lab's known_hosts has every host that is up, other tests' clones too: no
// two may share a key, and each of the hosts this test shares must have
// all three of its own.
func TestEachHostHasItsOwnHostKeys(t *testing.T) {
	t.Parallel()
	inv := labtest.Share(t, "pi4", "pi3", "zero")
	data, err := os.ReadFile(inv.Hosts[0].KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	types := map[string]map[string]bool{} // address: the key types it has
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("bad known_hosts line %q", line)
		}
		if other, dup := keys[f[2]]; dup {
			t.Errorf("%s and %s share a host key", other, f[0])
		}
		keys[f[2]] = f[0]
		if types[f[0]] == nil {
			types[f[0]] = map[string]bool{}
		}
		types[f[0]][f[1]] = true
	}
	for _, h := range inv.Hosts {
		for _, kind := range []string{"ssh-rsa", "ecdsa-sha2-nistp256", "ssh-ed25519"} {
			if !types[h.Address][kind] {
				t.Errorf("known_hosts has no %s key for %s (%s), want rsa, ecdsa and ed25519 for each host", kind, h.Name, h.Address)
			}
		}
	}
	// give pi4's address zero's keys: ssh must refuse
	pi4, zero := labtest.Host(t, inv, "pi4"), labtest.Host(t, inv, "zero")
	var wrong strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == zero.Address {
			wrong.WriteString(pi4.Address + " " + f[1] + " " + f[2] + "\n")
		}
	}
	bad := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(bad, []byte(wrong.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	pi4.KnownHosts = bad
	_, errOut, err := labtest.SSH(pi4, "true")
	if err == nil || !strings.Contains(errOut, "HOST IDENTIFICATION HAS CHANGED") {
		t.Errorf("ssh with the wrong host key: err %v, stderr %q; want a refusal", err, errOut)
	}
}

// TestThermalZoneIsDrivenFromTheHost writes a temperature on the host side
// and reads it inside, as the thermal simulator will. It holds the
// simulator still, so it leases it with pi3: no other test's heat moves
// meanwhile.
func TestThermalZoneIsDrivenFromTheHost(t *testing.T) {
	t.Parallel()
	inv := labtest.Lease(t, "pi3", labtest.Simulator)
	l := labtest.Lab(t)
	h := labtest.Host(t, inv, "pi3")
	// the thermal simulator writes the zone every second: hold it meanwhile
	t.Cleanup(lab.PauseSimulator())
	before := strings.TrimSpace(labtest.MustSSH(t, h, "cat /sys/class/thermal/thermal_zone0/temp"))
	t.Cleanup(func() {
		n, _ := strconv.Atoi(before)
		_ = l.SetTemp("pi3", n)
	})
	for _, mc := range []int{71234, 86012} {
		if err := l.SetTemp("pi3", mc); err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSpace(labtest.MustSSH(t, h, "cat /sys/class/thermal/thermal_zone0/temp /sys/class/thermal/thermal_zone0/type"))
		if got != strconv.Itoa(mc)+"\ncpu-thermal" {
			t.Errorf("inside: %q, want %d and cpu-thermal", got, mc)
		}
	}
}

// TestCPUTimeIsAccountedPerHost burns CPU on one host and checks that its
// own accounting group saw it and another host's did not. The work is a
// fixed count, measured by the host's own shell (times): a timed loop got
// less than half its time on a busy machine, so a bound in wall time said
// nothing. It leases both: another test working on zero would be charged
// to zero.
func TestCPUTimeIsAccountedPerHost(t *testing.T) {
	t.Parallel()
	inv := labtest.Lease(t, "pi4", "zero")
	l := labtest.Lab(t)
	h := labtest.Host(t, inv, "pi4")
	before, err := l.CPUTime("pi4")
	if err != nil {
		t.Fatal(err)
	}
	otherBefore, err := l.CPUTime("zero")
	if err != nil {
		t.Fatal(err)
	}
	// the shell's own user and system time, as times prints it: "0m1.234s 0m0.005s"
	out := labtest.MustSSH(t, h, `bash -c 'i=0; while [ $i -lt 450000 ]; do i=$((i+1)); done; times'`)
	after, _ := l.CPUTime("pi4")
	otherAfter, _ := l.CPUTime("zero")
	var work time.Duration
	for _, f := range strings.Fields(strings.SplitN(out, "\n", 2)[0]) {
		m, sec, ok := strings.Cut(strings.TrimSuffix(f, "s"), "m")
		mins, err1 := strconv.Atoi(m)
		secs, err2 := strconv.ParseFloat(sec, 64)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("times printed %q", out)
		}
		work += time.Duration((float64(mins)*60 + secs) * float64(time.Second))
	}
	if work < 200*time.Millisecond {
		t.Fatalf("the loop took %v of CPU by the host's own count: too little to tell hosts apart", work)
	}
	if used := after - before; used < work*95/100 {
		t.Errorf("pi4 was charged %v for a loop that used %v by its own count", used, work)
	}
	if other := otherAfter - otherBefore; other > work/2 {
		t.Errorf("zero was charged %v while pi4 worked %v", other, work)
	}
}

// TestAptInstallsInside installs a package on two hosts at once, each
// downloading it (their own archives are cleaned first) through the fleet's
// shared package cache, which keeps one copy. Other tests fill the cache at
// the same time with packages of their own, and hosts of other releases
// with their own hello: the count is of the version these two installed.
func TestAptInstallsInside(t *testing.T) {
	t.Parallel()
	inv := labtest.Lease(t, "pi3", "zero")
	var wg sync.WaitGroup
	for _, h := range inv.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, errOut, err := labtest.SSH(h, "sudo -n env DEBIAN_FRONTEND=noninteractive sh -c "+
				"'apt-get -o DPkg::Lock::Timeout=120 purge -y -qq hello >/dev/null && apt-get clean && apt-get update -qq && apt-get -o DPkg::Lock::Timeout=120 install -y -qq hello >/dev/null' && hello")
			if err != nil || strings.TrimSpace(out) != "Hello, world!" {
				t.Errorf("%s: apt-get install hello: %v, %q\n%s", h.Name, err, out, errOut)
			}
		}()
	}
	wg.Wait()
	ver := strings.TrimSpace(labtest.MustSSH(t, inv.Hosts[0], "dpkg-query -W -f '${Version}' hello"))
	debs, _ := filepath.Glob(filepath.Join(labtest.Lab(t).Dir, "cache/apt/*/*/pool/main/h/hello/hello_"+ver+"_*.deb"))
	if ver == "" || len(debs) != 1 {
		t.Errorf("the shared package cache holds %v of hello %q, want one", debs, ver)
	}
}

// TestUpIsIdempotent runs Up on a running lab: nothing reboots. Up writes
// the default fleet's cooling and vcgencmd anew, so the test leases all
// three hosts.
func TestUpIsIdempotent(t *testing.T) {
	t.Parallel()
	inv := labtest.Lease(t, "pi4", "pi3", "zero")
	l := labtest.Lab(t)
	h := labtest.Host(t, inv, "zero")
	bootID := labtest.MustSSH(t, h, "cat /proc/sys/kernel/random/boot_id; systemctl show -p ExecMainStartTimestampMonotonic --value sshd")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path, err := l.Up(ctx, nil)
	if err != nil {
		t.Fatalf("Up on a running lab: %v", err)
	}
	if want := labtest.Inventory(t).Path; path != want { // the lab's own, not the lease's
		t.Errorf("Up returned %q, want %q", path, want)
	}
	if again := labtest.MustSSH(t, h, "cat /proc/sys/kernel/random/boot_id; systemctl show -p ExecMainStartTimestampMonotonic --value sshd"); again != bootID {
		t.Errorf("zero restarted: %q then %q", bootID, again)
	}
	if _, err := inventory.Load(path); err != nil {
		t.Errorf("rewritten inventory: %v", err)
	}
}

// TestCloneLiesOverItsSnapshot: a host booted from a snapshot has the
// snapshot's disk under a layer of its own, not a copy: what it writes
// and deletes stays in its layer, the snapshot cannot be replaced or
// removed while the host lies over it, and removing the host takes its
// layer off. On two Pi Zero Ws of its own (the first clone of a lab may be
// the host the snapshot was taken of; the second is always one booted
// from it).
func TestCloneLiesOverItsSnapshot(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "zero", "zero")
	l := labtest.Lab(t)
	h := inv.Hosts[1]
	h.User = "root"
	snap := filepath.Join(l.Dir, "snapshots", "labtest-zero", "rootfs")
	root := filepath.Join(l.Dir, "hosts", h.Name, "rootfs")
	overlay := func() string {
		data, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[4] == root {
				return line
			}
		}
		return ""
	}
	if m := overlay(); !strings.Contains(m, " - overlay ") || !strings.Contains(m, "lowerdir="+snap+",") {
		t.Fatalf("%s's disk is not an overlay over %s: %q", h.Name, snap, m)
	}
	if _, err := os.Stat(filepath.Join(snap, "etc/motd")); err != nil {
		t.Fatalf("the snapshot has no /etc/motd to delete: %v", err)
	}
	labtest.MustSSH(t, h, "echo mine > /root/layer-test && rm /etc/motd && sync")
	if _, err := os.Stat(filepath.Join(snap, "root/layer-test")); !os.IsNotExist(err) {
		t.Errorf("the host's new file is in the snapshot (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(snap, "etc/motd")); err != nil {
		t.Errorf("the host's deletion reached the snapshot: %v", err)
	}
	if got := strings.TrimSpace(labtest.MustSSH(t, h, "cat /root/layer-test; test -e /etc/motd || echo gone")); got != "mine\ngone" {
		t.Errorf("the host sees %q, want its file and its deletion", got)
	}
	for what, err := range map[string]error{
		"remove":  l.RemoveSnapshot("labtest-zero"),
		"replace": l.Snapshot(context.Background(), inv.Hosts[0].Name, "labtest-zero"),
	} {
		if err == nil || !strings.Contains(err.Error(), "snapshot labtest-zero is the disk under") || !strings.Contains(err.Error(), h.Name) {
			t.Errorf("%s the snapshot under %s: %v; want it refused", what, h.Name, err)
		}
	}
	if err := l.Remove(context.Background(), []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	if m := overlay(); m != "" {
		t.Errorf("removed, its disk is still mounted: %s", m)
	}
	if _, err := os.Stat(filepath.Join(snap, "etc/motd")); err != nil {
		t.Errorf("removing the host took from the snapshot: %v", err)
	}
}

// TestBoardSpeedIsAQuota: a host brought to board speed gets its board's
// capacity as a CPU quota (Compute, in this machine's cores as 7-Zip rates
// them), never uses more than that however many loops it runs (an upper
// bound, which a busy machine cannot break), and back at full speed has
// no quota. On a Pi 3 of its own (a clone): board speed is a host's own.
func TestBoardSpeedIsAQuota(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "pi3")
	h := inv.Hosts[0]
	l := labtest.Lab(t)
	ctx := context.Background()
	quota := func() string {
		data, err := os.ReadFile("/sys/fs/cgroup/cpu/" + lab.Prefix + "-" + h.Name + "/cpu.cfs_quota_us")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(data))
	}
	l.CPU = map[string]string{h.Name: lab.CPUBoard}
	if _, err := l.Up(ctx, []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	mips, err := l.MachineCoreMIPS(ctx) // kept by the Up before
	if err != nil {
		t.Fatal(err)
	}
	b, _ := lab.BoardNamed(h.Name)
	want := b.Compute.Quota(mips)
	// lab up sets the quota at once; the simulator, which may be in a step
	// begun with the config before, sets it again at its next step (one a
	// second): what holds is the quota after that
	got := quota()
	for deadline := time.Now().Add(3 * time.Second); got != strconv.Itoa(want) && time.Now().Before(deadline); got = quota() {
		time.Sleep(100 * time.Millisecond)
	}
	if got != strconv.Itoa(want) {
		t.Errorf("at board speed the quota is %s, want %d (2970 MIPS of a Pi 3B against %d a core here)", got, want, mips)
	}
	// four busy loops for 3 s: at most the quota's share of the time
	before, err := l.CPUTime(h.Name)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	labtest.MustSSH(t, h, "for i in 1 2 3 4; do timeout 3 sh -c 'while :; do :; done' & done; wait; true")
	window := time.Since(began)
	after, _ := l.CPUTime(h.Name)
	share := float64(want) / 100000
	if used := after - before; used > time.Duration(share*float64(window)*1.1)+100*time.Millisecond {
		t.Errorf("four loops used %v of CPU in %v at a quota of %.2f cores", used, window, share)
	}
	l.CPU = map[string]string{h.Name: lab.CPUFull}
	if _, err := l.Up(ctx, []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	got = quota()
	for deadline := time.Now().Add(3 * time.Second); got != "-1" && time.Now().Before(deadline); got = quota() {
		time.Sleep(100 * time.Millisecond)
	}
	if got != "-1" {
		t.Errorf("back at full speed the quota is %s, want none (-1)", got)
	}
}

// TestCardIsThrottled: a host's data lives on a card of its own, a loop
// device the host sees as /dev/mmcblk0 with its root on /dev/mmcblk0p2 (as
// pidb's facts read a Pi's); at board speed the host's blkio group holds
// the card's limits (and the root group its writes' limits, for the
// kernel's writeback), and 4 KB direct writes and reads inside the host
// stay under them (an upper bound, which a busy machine cannot break);
// back at full speed the limits are gone, and removing the host detaches
// the card and leaves no limit behind. On a Pi 3B of its own: an A1 card,
// 500 write and 1,500 read IOPS.
func TestCardIsThrottled(t *testing.T) {
	t.Parallel()
	inv := labtest.Fresh(t, "pi3")
	h := inv.Hosts[0]
	h.User = "root"
	l := labtest.Lab(t)
	ctx := context.Background()
	if got := labtest.MustSSH(t, h, "findmnt -n -o SOURCE /; test -b /dev/mmcblk0 && echo card"); got != "/dev/mmcblk0p2\ncard\n" {
		t.Errorf("inside the host, its root and card: %q", got)
	}
	devFile, err := os.ReadFile(filepath.Join(l.Dir, "hosts", h.Name, "card.dev"))
	if err != nil {
		t.Fatal(err)
	}
	dev := strings.TrimSpace(string(devFile))
	num, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "dev"))
	if err != nil {
		t.Fatal(err)
	}
	card := strings.TrimSpace(string(num))
	rules := func(dir string) string {
		var out []string
		for _, f := range []string{"read_iops_device", "write_iops_device", "read_bps_device", "write_bps_device"} {
			data, _ := os.ReadFile(filepath.Join(dir, "blkio.throttle."+f))
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if strings.HasPrefix(line, card+" ") {
					out = append(out, f+" "+strings.TrimPrefix(line, card+" "))
				}
			}
		}
		return strings.Join(out, ", ")
	}
	group := "/sys/fs/cgroup/blkio/" + lab.Prefix + "-" + h.Name
	if got := rules(group); got != "" {
		t.Errorf("at full speed the card has limits: %s", got)
	}
	l.CPU = map[string]string{h.Name: lab.CPUBoard}
	if _, err := l.Up(ctx, []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	if got, want := rules(group), "read_iops_device 1500, write_iops_device 500, read_bps_device 22000000, write_bps_device 10000000"; got != want {
		t.Errorf("at board speed the host's limits on its card: %q, want %q", got, want)
	}
	if got, want := rules("/sys/fs/cgroup/blkio"), "write_iops_device 500, write_bps_device 10000000"; got != want {
		t.Errorf("at board speed the root group's limits on the card: %q, want %q", got, want)
	}
	// 4 KB direct writes over a laid-out file, then direct reads of it:
	// no more than the card's IOPS (a 20% margin for the throttle's first
	// slice)
	out := labtest.MustSSH(t, h, `f=/var/tmp/card-test; fallocate -l 12M $f && dd if=/dev/zero of=$f bs=4k count=3000 oflag=direct conv=notrunc 2>/dev/null && sync
a=$(date +%s%N); dd if=/dev/zero of=$f bs=4k count=1500 oflag=direct conv=notrunc 2>/dev/null; b=$(date +%s%N)
dd if=$f of=/dev/null bs=4k count=3000 iflag=direct 2>/dev/null; c=$(date +%s%N); echo $((b-a)) $((c-b)); rm $f`)
	var writeNs, readNs int64
	if _, err := fmt.Sscan(out, &writeNs, &readNs); err != nil || writeNs <= 0 || readNs <= 0 {
		t.Fatalf("dd's times: %q %v", out, err)
	}
	if iops := 1500 / (float64(writeNs) / 1e9); iops > 500*1.2 {
		t.Errorf("4 KB direct writes on an A1 card: %.0f a second, over its 500", iops)
	}
	if iops := 3000 / (float64(readNs) / 1e9); iops > 1500*1.2 {
		t.Errorf("4 KB direct reads on an A1 card: %.0f a second, over its 1,500", iops)
	}
	l.CPU = map[string]string{h.Name: lab.CPUFull}
	if _, err := l.Up(ctx, []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	if got := rules(group) + rules("/sys/fs/cgroup/blkio"); got != "" {
		t.Errorf("back at full speed the card has limits: %s", got)
	}
	l.CPU = map[string]string{h.Name: lab.CPUBoard} // for the removal to lift
	if _, err := l.Up(ctx, []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	if err := l.Remove(ctx, []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	if got := rules("/sys/fs/cgroup/blkio"); got != "" {
		t.Errorf("the host removed, the root group keeps limits on its card's device: %s", got)
	}
	if back, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop/backing_file")); err == nil && strings.Contains(string(back), h.Name) {
		t.Errorf("the host removed, %s is still over its card: %s", dev, back)
	}
}

// TestDriveBesideTheCard: lab up --storage NAME=usb-ssd plugs a blank
// drive into a running Pi 4, seen as /dev/sda, which the host can make a
// file system on and mount, as pidb will for a data directory; at board
// speed it has the USB SSD's limits, and the host keeps it across a
// reboot; another kind on the same host is refused; removing the host
// detaches it. On a Pi 4 of its own, pristine.
func TestDriveBesideTheCard(t *testing.T) {
	t.Parallel()
	inv := labtest.Fresh(t, "pi4")
	h := inv.Hosts[0]
	h.User = "root"
	l := labtest.Lab(t)
	ctx := context.Background()
	l.Drives = map[string]string{h.Name: "usb-ssd"}
	l.CPU = map[string]string{h.Name: lab.CPUBoard}
	if _, err := l.Up(ctx, []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	drive, err := os.ReadFile(filepath.Join(l.Dir, "hosts", h.Name, "drive"))
	if err != nil {
		t.Fatal(err)
	}
	dev := strings.TrimPrefix(strings.Fields(string(drive))[1], "dev=")
	num, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "dev"))
	if err != nil {
		t.Fatal(err)
	}
	if got := labtest.MustSSH(t, h, "test -b /dev/sda && mkfs.ext4 -q /dev/sda && mkdir -p /mnt/ssd && mount /dev/sda /mnt/ssd && echo data > /mnt/ssd/f && sync && findmnt -n -o SOURCE /mnt/ssd && cat /etc/pisim/storage"); got != "/dev/sda\nsd-a2 usb-ssd\n" {
		t.Errorf("the drive inside the host: %q", got)
	}
	group := "/sys/fs/cgroup/blkio/" + lab.Prefix + "-" + h.Name + "/blkio.throttle.write_iops_device"
	if data, _ := os.ReadFile(group); !strings.Contains(string(data), strings.TrimSpace(string(num))+" 7000") {
		t.Errorf("at board speed the drive's write IOPS limit is not a USB SSD's 7,000: %s", data)
	}
	for _, st := range l.Status() {
		if st.Name == h.Name && (st.Speed != "board" || st.Storage != "sd-a2 usb-ssd") {
			t.Errorf("lab status: %+v, want board speed and an A2 card with a USB SSD", st)
		}
	}
	l.Drives = map[string]string{h.Name: "nvme"}
	if _, err := l.Up(ctx, []string{h.Name}); err == nil || !strings.Contains(err.Error(), "no PCIe") {
		t.Errorf("a Pi 4 took an NVMe drive: %v", err)
	}
	l.Drives = nil
	labtest.Reboot(t, h)
	if got := labtest.MustSSH(t, h, "test -b /dev/sda && mount /dev/sda /mnt/ssd && cat /mnt/ssd/f"); got != "data\n" {
		t.Errorf("after a reboot the drive reads %q", got)
	}
	l.CPU = map[string]string{h.Name: lab.CPUFull}
	if err := l.Remove(ctx, []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	if back, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop/backing_file")); err == nil && strings.Contains(string(back), h.Name) {
		t.Errorf("the host removed, %s is still over its drive: %s", dev, back)
	}
	if data, _ := os.ReadFile("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device"); strings.Contains(string(data), strings.TrimSpace(string(num))+" ") {
		t.Errorf("the host removed, the root group keeps a limit on its drive's device: %s", data)
	}
}

// TestLinkHoldsTheRoundTrip: lab up --latency gives a host a network's
// round trip: a connection to its sshd hears the banner no sooner than
// the round trip (a lower bound, which a busy machine cannot break), SSH
// works through the link, and lab status shows it; --latency NAME=0 takes
// it away, and the link's rule lets the host's address by. On a Zero W of
// its own.
func TestLinkHoldsTheRoundTrip(t *testing.T) {
	t.Parallel()
	inv := labtest.Fresh(t, "zero")
	h := inv.Hosts[0]
	h.User = "root"
	l := labtest.Lab(t)
	l.LinkCommand = []string{labtest.Pidb(t), "lab", "link", "--dir", l.Dir}
	ctx := context.Background()
	const rtt = 100 * time.Millisecond
	l.Latency = map[string]string{h.Name: rtt.String()}
	if _, err := l.Up(ctx, []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		began := time.Now()
		c, err := net.DialTimeout("tcp", net.JoinHostPort(h.Address, "22"), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		banner, err := bufio.NewReader(c).ReadString('\n')
		took := time.Since(began)
		c.Close()
		if err != nil || !strings.HasPrefix(banner, "SSH-2.0-") {
			t.Fatalf("sshd's banner through the link: %q %v", banner, err)
		}
		if took < rtt {
			t.Errorf("sshd's banner came %v after the connection, within the link's round trip of %v", took, rtt)
		}
	}
	if got := labtest.MustSSH(t, h, "echo through"); got != "through\n" {
		t.Errorf("SSH through the link: %q", got)
	}
	for _, st := range l.Status() {
		if st.Name == h.Name && st.Latency != rtt.String() {
			t.Errorf("lab status: %+v, want a latency of %v", st, rtt)
		}
	}
	l.Latency = map[string]string{h.Name: "0s"}
	if _, err := l.Up(ctx, []string{h.Name}); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("nft", "list", "table", "ip", lab.Prefix+"-link").CombinedOutput()
	if strings.Contains(string(out), h.Address) {
		t.Errorf("at no latency the link's rule still holds %s:\n%s", h.Address, out)
	}
	if d := l.RoundTrip(h.Name); d != 0 {
		t.Errorf("at --latency %s=0 the lab gives it %v", h.Name, d)
	}
}
