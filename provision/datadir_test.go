package provision

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/internal/shtest"
)

// a probe of a Pi booted from its card with three drives: a blank USB SSD,
// one that came with an exFAT partition (mounted by the desktop), and an
// NVMe drive that holds pidb's filesystem, mounted where pidb mounts it
const probeOut = `root /dev/mmcblk0p2
disk /dev/sda
name /dev/disk/by-id/usb-Samsung_PSSD_T7_S6XBNS0W123456-0:0
name /dev/disk/by-path/platform-fd500000.pcie-pci-0000:01:00.0-usb-0:1:1.0-scsi-0:0:0:0
disk /dev/sdb
probe PTTYPE=dos
mount /dev/sdb1=/media/pi/SSD
disk /dev/nvme0n1
probe TYPE=ext4
probe LABEL=pidb-data
probe UUID=0a1b2c3d-1111-2222-3333-444455556666
mount /dev/nvme0n1=/srv/pidb-data
at /dev/nvme0n1 rw,noatime
`

func TestParseProbe(t *testing.T) {
	p := parseProbe(probeOut)
	if p.root != "/dev/mmcblk0p2" || len(p.disks) != 3 || p.at != "/dev/nvme0n1 rw,noatime" {
		t.Fatalf("%+v", p)
	}
	if d := p.disks[2]; !d.ours() || d.blank() || d.Probe["UUID"] != "0a1b2c3d-1111-2222-3333-444455556666" || len(d.Mounts) != 1 {
		t.Errorf("the NVMe drive: %+v", d)
	}
	if d := p.disks[1]; d.ours() || d.blank() || d.holds() != "a dos partition table" || d.Mounts[0] != "/dev/sdb1=/media/pi/SSD" {
		t.Errorf("the used SSD: %+v, holds %q", d, d.holds())
	}
	if !p.disks[0].blank() || len(p.disks[0].Names) != 2 || p.disks[0].Names[0] != "/dev/disk/by-id/usb-Samsung_PSSD_T7_S6XBNS0W123456-0:0" || len(p.disks[1].Names) != 0 {
		t.Errorf("the blank SSD: %+v", p.disks[0])
	}
}

// TestPickDrive: the drive the inventory names, or the first free one, and
// each refusal saying what is in the way.
func TestPickDrive(t *testing.T) {
	p := parseProbe(probeOut)
	for _, c := range []struct {
		want string
		wipe bool
		got  string // the drive, or the error's text
	}{
		{"auto", false, "/dev/sda"},
		{"/dev/sda", false, "/dev/sda"},
		// its stable names, as ls /dev/disk/by-id lists them
		{"/dev/disk/by-id/usb-Samsung_PSSD_T7_S6XBNS0W123456-0:0", false, "/dev/sda"},
		{"/dev/disk/by-path/platform-fd500000.pcie-pci-0000:01:00.0-usb-0:1:1.0-scsi-0:0:0:0", false, "/dev/sda"},
		{"/dev/disk/by-id/usb-Other_Drive-0:0", false, "data_device /dev/disk/by-id/usb-Other_Drive-0:0 is not there"},
		{"/dev/nvme0n1", false, "/dev/nvme0n1"}, // pidb's own, mounted where pidb mounts it
		{"/dev/sdb", true, "data_device /dev/sdb is in use: /dev/sdb1=/media/pi/SSD is mounted"},
		{"/dev/sdc", false, "data_device /dev/sdc is not there (the host has /dev/sda, /dev/sdb, /dev/nvme0n1): is the drive plugged in?"},
	} {
		d, err := p.pick(c.want, c.wipe)
		got := d.Path
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, c.got) {
			t.Errorf("%s (wipe %v): %q, want %q", c.want, c.wipe, got, c.got)
		}
	}
	// a drive with something on it: only with data_device_wipe
	p.disks[1].Mounts = nil
	if _, err := p.pick("/dev/sdb", false); err == nil || err.Error() != "data_device /dev/sdb holds a dos partition table: pidb erases a drive only with data_device_wipe = true on the host" {
		t.Errorf("a used drive without wipe: %v", err)
	}
	if d, err := p.pick("/dev/sdb", true); err != nil || d.Path != "/dev/sdb" {
		t.Errorf("a used drive with wipe: %v", err)
	}
	// booted from a USB SSD: that disk is never the data's
	usb := parseProbe("root /dev/sda2\ndisk /dev/sda\nprobe PTTYPE=dos\nmount /dev/sda2=/\nmount /dev/sda1=/boot/firmware\n")
	if _, err := usb.pick("/dev/sda", true); err == nil || !strings.HasPrefix(err.Error(), "data_device /dev/sda holds the root filesystem (/dev/sda2)") {
		t.Errorf("the root's disk: %v", err)
	}
	if _, err := usb.pick("auto", false); err == nil || !strings.Contains(err.Error(), "no USB or NVMe disk here without a mounted filesystem (the host has /dev/sda, each the root's or in use)") {
		t.Errorf("auto with the root's disk only: %v", err)
	}
}

func TestDiskOf(t *testing.T) {
	for dev, want := range map[string]string{
		"/dev/sda2": "/dev/sda", "/dev/sda": "/dev/sda", "/dev/nvme0n1p2": "/dev/nvme0n1", "/dev/nvme0n1": "/dev/nvme0n1",
		"/dev/mmcblk0p2": "/dev/mmcblk0", "/dev/root": "/dev/root",
	} {
		if got := diskOf(dev); got != want {
			t.Errorf("diskOf(%s) = %s, want %s", dev, got, want)
		}
	}
}

// TestFstab: the drive's line replaces an earlier one for the mount point
// (and its comment), and leaves every other line as it was.
func TestFstab(t *testing.T) {
	fstab := "proc /proc proc defaults 0 0\nPARTUUID=abc-01 /boot/firmware vfat defaults 0 2\n"
	once := withFstabLine(fstab, fstabLine("1234-5678"))
	want := fstab + "# pidb: the database's data (data_device)\nUUID=1234-5678 /srv/pidb-data ext4 noatime,nofail 0 2\n"
	if once != want {
		t.Errorf("added:\n%s\nwant\n%s", once, want)
	}
	if again := withFstabLine(once, fstabLine("1234-5678")); again != once {
		t.Errorf("a second time:\n%s", again)
	}
	if other := withFstabLine(once, fstabLine("9999-0000")); strings.Count(other, "/srv/pidb-data") != 1 || !strings.Contains(other, "UUID=9999-0000 ") {
		t.Errorf("another drive's:\n%s", other)
	}
}

// TestPointed: PostgreSQL's postgresql.conf with its data_directory line
// replaced (only the first: a second would win), MariaDB's drop-in.
func TestPointed(t *testing.T) {
	pg, _ := engine.New(dbms.Postgres, "15.8")
	conf := "# comment\ndata_directory = '/var/lib/postgresql/15/main'\t\t# use data in another directory\nhba_file = '/etc/postgresql/15/main/pg_hba.conf'\n"
	file, got := pointedFile(pg), ""
	got, err := pointed(pg, conf, dataDirOn(pg))
	if err != nil || file != "/etc/postgresql/15/main/postgresql.conf" ||
		got != "# comment\ndata_directory = '/srv/pidb-data/postgresql/15/main'\t\t# moved by pidb (data_device)\nhba_file = '/etc/postgresql/15/main/pg_hba.conf'\n" {
		t.Errorf("%s: %q %v", file, got, err)
	}
	if _, err := pointed(pg, "port = 5432\n", dataDirOn(pg)); err == nil {
		t.Error("a postgresql.conf without data_directory")
	}
	maria, _ := engine.New(dbms.MariaDB, "10.11.6")
	file = pointedFile(maria)
	got, err = pointed(maria, "", dataDirOn(maria))
	if err != nil || file != "/etc/mysql/mariadb.conf.d/60-pidb-datadir.cnf" || !strings.Contains(got, "[mysqld]\ndatadir = /srv/pidb-data/mysql/data\n") {
		t.Errorf("%s: %q %v", file, got, err)
	}
}

// TestMoveScript: the move's script, run under sh with its commands
// stubbed, does its file work as the server's user, waits for pidb's go
// before it switches, says done; and whatever fails, and whatever its
// paths hold (the old one is the host's: the postgres user writes it),
// runs no path as a command and passes each to its commands unchanged.
func TestMoveScript(t *testing.T) {
	pg, _ := engine.New(dbms.Postgres, "15.8")
	maria, _ := engine.New(dbms.MariaDB, "10.11.6")
	for _, e := range []engine.Engine{pg, maria} {
		sb := shtest.New(t)
		state := t.TempDir()
		if err := os.WriteFile(filepath.Join(state, "go"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		old, dir, conf := "/var/lib/postgresql/15/main", dataDirOn(e), pointedFile(e)
		if e.Flavor != dbms.Postgres {
			old = "/var/lib/mysql"
		}
		confNew := conf + ".new"
		client := "psql"
		if e.Flavor == dbms.MariaDB {
			client = "mariadb"
		}
		sb.Print(client, dir)
		stateIs := func() string {
			b, _ := os.ReadFile(filepath.Join(state, "state.new")) // the stubbed mv leaves it there
			return strings.TrimSpace(string(b))
		}
		r := sb.Run(moveScript(e, time.Second), "", moveArgs(old, dir, conf, confNew, state)...)
		if r.Code != 0 || stateIs() != "done" {
			t.Fatalf("%s: the move ended %d at %q: %s\n%v", e.Flavor, r.Code, stateIs(), r.Stderr, r.Calls)
		}
		r.Check(t, string(e.Flavor), "", old, dir, conf, confNew)
		var names []string
		for _, c := range r.Calls {
			// the server's readiness is asked 600 times before it fails
			if !slices.Contains(names, c.Name) && c.Name != "runuser" && c.Name != "pg_isready" && c.Name != "mariadb-admin" {
				names = append(names, c.Name)
			}
			arg := strings.Join(c.Args, " ")
			if (c.Name == "cp" || c.Name == "find" || c.Name == "rm" && strings.Contains(arg, dir)) && c.As != serverUser(e) {
				t.Errorf("%s: root works on the data: %s", e.Flavor, c)
			}
		}
		if i, j := slices.IndexFunc(r.Calls, func(c shtest.Call) bool { return c.Name == "cp" }), slices.IndexFunc(r.Calls, func(c shtest.Call) bool { return c.Name == "systemctl" && c.Args[0] == "start" }); i < 0 || j < i {
			t.Errorf("%s: the server starts before the copy: %v", e.Flavor, r.Calls)
		}
		// no go from pidb: the server is put back on the old directory
		if err := os.Remove(filepath.Join(state, "go")); err != nil {
			t.Fatal(err)
		}
		r = sb.Run(moveScript(e, time.Second), "", moveArgs(old, dir, conf, confNew, state)...)
		if r.Code == 0 || !strings.HasPrefix(stateIs(), "failed: no go from pidb") || r.Ran("mv") && slices.ContainsFunc(r.Calls, func(c shtest.Call) bool { return c.Name == "mv" && slices.Contains(c.Args, confNew) }) {
			t.Errorf("%s: without a go: %d %q %v", e.Flavor, r.Code, stateIs(), r.Calls)
		}
		if err := os.WriteFile(filepath.Join(state, "go"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		// hostile paths, in each place, and each command failing
		v := shtest.AllInOne("/var/lib/postgresql/d")
		args := moveArgs(v, dir+v, conf+v, confNew+v, state)
		sb.Run(moveScript(e, time.Second), "", args...).Check(t, string(e.Flavor)+", hostile paths", "", args[:4]...)
		for _, name := range names {
			sb.Fail(name)
			r := sb.Run(moveScript(e, time.Second), "", args...)
			if r.Code == 0 || !strings.HasPrefix(stateIs(), "failed: ") {
				t.Errorf("%s: %s failing: the move ended %d at %q", e.Flavor, name, r.Code, stateIs())
			}
			r.Check(t, fmt.Sprintf("%s, %s failing", e.Flavor, name), "", args[0])
		}
		sb.Fail()
	}
}

// TestOSCheck: a Raspberry Pi OS host as it comes (ondemand, swappiness
// 60, dphys-swapfile's 100 MB) needs each part, with the commands that
// apply it; one that has them needs nothing; os_governor = "ondemand"
// takes pidb's unit away.
func TestOSCheck(t *testing.T) {
	ctx := context.Background()
	fresh := &fakerun.Runner{Files: map[string]string{swapConf: "# where we want the swapfile to be\nCONF_SWAPSIZE=100\n#CONF_MAXSWAP=2048\n"}}
	tg := target("postgres", facts.EngineState{}, fresh)
	tg.Facts.RAMBytes, tg.Facts.Governor, tg.Facts.Swappiness = 1<<30, "ondemand", 60
	ch, err := osStep{}.Check(ctx, tg)
	cmds := strings.Join(ch.Commands, "\n")
	if err != nil || !ch.Needed || !strings.Contains(cmds, "systemctl restart "+governorUnitName) || !strings.Contains(cmds, "sysctl -q -p /etc/sysctl.d/60-pidb.conf") ||
		!strings.Contains(cmds, "dphys-swapfile setup") || !strings.Contains(ch.Diff, "+CONF_SWAPSIZE=512  # pidb: sized for the board") || !strings.Contains(ch.Diff, "+SystemMaxUse=64M") {
		t.Fatalf("a fresh host: %+v %v", ch, err)
	}
	// what Apply writes, and the live values it leaves: nothing more to do
	done := &fakerun.Runner{Files: map[string]string{
		governorUnit: governorUnitFor("performance"), sysctlFile: sysctlContent, journaldFile: journaldContent,
		swapConf: withSwapSize(fresh.Files[swapConf], 512)}}
	done.Prefix("systemctl is-enabled "+governorUnitName, fakerun.Reply{Stdout: "enabled\n"})
	tg = target("postgres", facts.EngineState{}, done)
	tg.Facts.RAMBytes, tg.Facts.Governor, tg.Facts.Swappiness = 1<<30, "performance", 10
	if ch, err := (osStep{}).Check(ctx, tg); err != nil || ch.Needed {
		t.Errorf("a host that has them: %+v %v", ch, err)
	}
	// another tool set the governor back: the unit runs again
	tg.Facts.Governor = "powersave"
	if ch, _ := (osStep{}).Check(ctx, tg); !ch.Needed || !strings.Contains(strings.Join(ch.Commands, "\n"), "systemctl restart "+governorUnitName) {
		t.Errorf("a governor changed behind pidb's back: %+v", ch)
	}
	// the distribution's governor asked for: pidb's unit goes
	tg.Host.OSGovernor, tg.Facts.Governor = "ondemand", "performance"
	ch, _ = osStep{}.Check(ctx, tg)
	if cmds := strings.Join(ch.Commands, "\n"); !strings.Contains(cmds, "systemctl disable --now "+governorUnitName) || !strings.Contains(cmds, "rm -f "+governorUnit) {
		t.Errorf("os_governor = ondemand: %+v", ch)
	}
	// the journal in RAM only, where asked
	tg.Host.OSJournal = "volatile"
	if ch, _ := (osStep{}).Check(ctx, tg); !strings.Contains(ch.Diff, "+Storage=volatile") || !strings.Contains(strings.Join(ch.Commands, "\n"), "systemctl restart systemd-journald") {
		t.Errorf("os_journal = volatile: %+v", ch)
	}
	// an OS that swaps to zram: no swap file sized beside it
	zram := &fakerun.Runner{Files: map[string]string{swapConf: "CONF_SWAPSIZE=100\n",
		"/proc/swaps": "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0                              partition\t2097148\t\t0\t\t100\n"}}
	tg = target("postgres", facts.EngineState{}, zram)
	tg.Facts.RAMBytes = 1 << 30
	if ch, _ := (osStep{}).Check(ctx, tg); strings.Contains(ch.Diff, "CONF_SWAPSIZE") || !strings.Contains(ch.Note, "the OS swaps to zram") {
		t.Errorf("zram: %+v", ch)
	}
	if got := withSwapSize("CONF_SWAPFILE=/var/swap\n", 1024); got != "CONF_SWAPFILE=/var/swap\nCONF_SWAPSIZE=1024  # pidb: sized for the board\n" {
		t.Errorf("no CONF_SWAPSIZE line: %q", got)
	}
}

// TestRootNoatime: the root's fstab line gets noatime (in place of
// relatime), one that has it is left alone, and a file without one says so.
func TestRootNoatime(t *testing.T) {
	fstab := "proc /proc proc defaults 0 0\nPARTUUID=abc-02 / ext4 defaults,relatime 0 1\n"
	got, ok := withRootNoatime(fstab)
	if !ok || got != "proc /proc proc defaults 0 0\nPARTUUID=abc-02 / ext4 defaults,noatime 0 1\n" {
		t.Errorf("%q %v", got, ok)
	}
	if again, ok := withRootNoatime(got); !ok || again != got {
		t.Errorf("a second time: %q", again)
	}
	if _, ok := withRootNoatime("# UNCONFIGURED FSTAB FOR BASE SYSTEM\n"); ok {
		t.Error("no root line")
	}
}

// TestMoveState: the service is asked whether it runs before its state is
// read, so that a move that ends between the two reads as done, not as
// one that stopped half way; and the answer is read back as said.
func TestMoveState(t *testing.T) {
	r := (&fakerun.Runner{Files: map[string]string{}}).Prefix("a=$(systemctl is-active", fakerun.Reply{Stdout: "done|inactive"})
	tg := target("postgres", facts.EngineState{}, r)
	state, running, err := moveState(context.Background(), tg)
	if err != nil || state != "done" || running {
		t.Errorf("%q %v %v", state, running, err)
	}
	cmd := r.Ran()[0]
	if strings.Index(cmd, "systemctl is-active") > strings.Index(cmd, "cat ") {
		t.Errorf("the state is read before the service is asked: %s", cmd)
	}
}

// TestStrictOvercommit: the ratio is the smallest (in steps of 5, from 50)
// whose limit holds the server's worst case and 256 MB for the rest, and
// none where 90% of RAM and the swap cannot. The figures are worked out by
// hand in MiB.
func TestStrictOvercommit(t *testing.T) {
	const m = 1 << 20
	for _, c := range []struct {
		name              string
		mem, swap, budget uint64
		ok                bool
		ratio, limitMiB   int
	}{
		// 1024 + 65% of 3800 = 3494 >= 3200 + 256; 60% gives 3304
		{"a Pi 4 with dphys-swapfile's 1 GB", 3800 * m, 1024 * m, 3200 * m, true, 65, 3494},
		// 512 + 50% of 430 = 727 >= 420 + 256
		{"a Zero with 512 MB of swap", 430 * m, 512 * m, 420 * m, true, 50, 727},
		// 100 + 90% of 3800 = 3520 < 3481 + 256
		{"a Pi 4 with 100 MB of swap, the worst case filling RAM", 3800 * m, 100 * m, 3481 * m, false, 90, 3520},
	} {
		st := strictOvercommit(c.mem, c.swap, c.budget)
		if st.ok != c.ok || st.ratio != c.ratio || st.limit/m != uint64(c.limitMiB) {
			t.Errorf("%s: %+v, want ok %v, ratio %d, limit %d MiB", c.name, st, c.ok, c.ratio, c.limitMiB)
		}
	}

	// through the step, on PostgreSQL: a Zero on Raspberry Pi OS (its swap
	// to be 512 MB) gets it; pidb's file with it, on a host where it no
	// longer fits, goes back to the kernel's defaults; MariaDB never has it
	ctx := context.Background()
	zero := func(r *fakerun.Runner) *Target {
		tg := target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.8", Running: true}, r)
		tg.Facts.RAMBytes, tg.Facts.MemBytes, tg.Facts.CPUs, tg.Facts.Swappiness = 512<<20, 430<<20, 1, 10
		tg.Preset = "balanced"
		return tg
	}
	r := &fakerun.Runner{Files: map[string]string{swapConf: "CONF_SWAPSIZE=100\n"}}
	ch, err := osStep{}.Check(ctx, zero(r))
	if err != nil || !strings.Contains(ch.Diff, "+vm.overcommit_memory = 2\n") || !strings.Contains(ch.Diff, "+vm.overcommit_ratio = ") ||
		!strings.Contains(ch.Note, "strict overcommit (vm.overcommit_memory 2, ratio ") {
		t.Errorf("a Zero with 512 MB of swap to be: %+v %v", ch, err)
	}
	strictFile := "vm.swappiness = 10\nvm.overcommit_memory = 2\nvm.overcommit_ratio = 50\n"
	r = &fakerun.Runner{Files: map[string]string{sysctlFile: strictFile}} // no dphys-swapfile: the swap stays 0
	ch, _ = osStep{}.Check(ctx, zero(r))
	if cmds := strings.Join(ch.Commands, "\n"); !strings.Contains(ch.Diff, "-vm.overcommit_memory = 2") || !strings.Contains(cmds, "sysctl -q -w vm.overcommit_memory=0 vm.overcommit_ratio=50") ||
		!strings.Contains(ch.Note, "the kernel's overcommit heuristic kept") {
		t.Errorf("strict overcommit that no longer fits: %+v", ch)
	}
	r = &fakerun.Runner{Files: map[string]string{swapConf: "CONF_SWAPSIZE=100\n"}}
	tg := target("mysql", facts.EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true}, r)
	if ch, _ := (osStep{}).Check(ctx, tg); strings.Contains(ch.Diff, "overcommit") || strings.Contains(ch.Note, "overcommit") {
		t.Errorf("MariaDB: %+v", ch)
	}
}

// TestMkfsInstalledWhereMissing: a minimal Debian 13 has no e2fsprogs
// (no longer a required package): the probe says mkfs.ext4 is missing,
// the plan installs e2fsprogs before it makes the filesystem, and Apply
// installs it (through apt, waiting for another apt's lock) before mkfs.
func TestMkfsInstalledWhereMissing(t *testing.T) {
	ctx := context.Background()
	if p := parseProbe("root /dev/mmcblk0p2\ndisk /dev/sda\nat \nnomkfs\n"); !p.noMkfs || len(p.disks) != 1 {
		t.Fatalf("%+v", p)
	}
	if p := parseProbe(probeOut); p.noMkfs {
		t.Errorf("a probe that found mkfs.ext4: %+v", p)
	}
	for _, missing := range []bool{true, false} {
		out := "root /dev/mmcblk0p2\ndisk /dev/sda\nat \n"
		if missing {
			out += "nomkfs\n"
		}
		r := (&fakerun.Runner{Files: map[string]string{}}).Contains("command -v mkfs.ext4", fakerun.Reply{Stdout: out})
		tg := target("postgres", facts.EngineState{}, r)
		tg.Host.DataDevice = "auto"
		ch, err := datadirStep{}.Check(ctx, tg)
		if err != nil || !ch.Needed {
			t.Fatalf("missing %v: %+v %v", missing, ch, err)
		}
		if got := strings.HasPrefix(ch.Commands[0], "apt-get -q install -y e2fsprogs"); got != missing {
			t.Errorf("missing %v: the plan %q", missing, ch.Commands)
		}
		// Apply: e2fsprogs before mkfs (the UUID read fails here, after both)
		_ = datadirStep{}.Apply(ctx, tg)
		ran := strings.Join(r.Ran(), "\n")
		apt, mkfs := strings.Index(ran, "apt-get -q install -y e2fsprogs"), strings.Index(ran, "mkfs.ext4 -q")
		if mkfs < 0 || (apt >= 0) != missing || (missing && apt > mkfs) {
			t.Errorf("missing %v: ran\n%s", missing, ran)
		}
	}
}
