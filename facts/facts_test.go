package facts

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/internal/fakerun"
)

// The testdata files are the output of Script on real boards' formats:
// Raspberry Pi OS (32- and 64-bit) and Ubuntu, on a Pi 3B, 4B, 5 and Zero W.
// Raspberry Pi OS's Pi 5 kernel has 16 KiB pages, Ubuntu's 4 KiB; the
// oldest file predates the page size and leaves it unknown (0).
// The expected facts are written out by hand.
func TestParseBoards(t *testing.T) {
	cases := map[string]Facts{
		"pi4b-raspios-bookworm-arm64.txt": {
			Model: "Raspberry Pi 4 Model B Rev 1.4", Revision: "c03114", Arch: "aarch64", PageSize: 4096,
			OS:       OSRelease{ID: "debian", VersionID: "12", Codename: "bookworm", Pretty: "Debian GNU/Linux 12 (bookworm)"},
			MemBytes: 3884376 * 1024, RAMBytes: 4 << 30, CPUs: 4, Storage: "sd", Governor: "ondemand", SwapBytes: 102396 << 10, Swappiness: 60, BootTarget: "graphical.target",
			Overcommit: Overcommit{Mode: 0, Ratio: 50, Known: true},
			Desktop:    true, Thermal: true, Vcgencmd: true,
			Engine:  EngineState{Flavor: "postgres", Version: "15.8", Running: true},
			DataDir: "/var/lib/postgresql/15/main", DataDevice: "/dev/mmcblk0p2", DataStorage: "sd",
		},
		// 32-bit Raspberry Pi OS on a Pi 4: its kernel is 64-bit (uname
		// -m aarch64), its packages armhf
		"pi4b-raspios-trixie-armhf-on-arm64-kernel.txt": {
			Model: "Raspberry Pi 4 Model B Rev 1.4", Revision: "c03114", Arch: "aarch64", Userland: "armhf", PageSize: 4096,
			OS:       OSRelease{ID: "raspbian", VersionID: "13", Codename: "trixie", Pretty: "Raspbian GNU/Linux 13 (trixie)"},
			MemBytes: 3884376 * 1024, RAMBytes: 4 << 30, CPUs: 4, Storage: "sd", Governor: "ondemand", SwapBytes: 102396 << 10, Swappiness: 60, BootTarget: "graphical.target",
			Overcommit: Overcommit{Mode: 0, Ratio: 50, Known: true},
			Desktop:    true, Thermal: true, Vcgencmd: true,
			Engine:  EngineState{Flavor: "postgres", Version: "15.8", Running: true},
			DataDir: "/var/lib/postgresql/15/main", DataDevice: "/dev/mmcblk0p2", DataStorage: "sd",
		},
		"pi3b-raspios-bullseye-armhf.txt": {
			Model: "Raspberry Pi 3 Model B Rev 1.2", Revision: "a02082", Arch: "armv7l", PageSize: 4096,
			OS:       OSRelease{ID: "raspbian", VersionID: "11", Codename: "bullseye", Pretty: "Raspbian GNU/Linux 11 (bullseye)"},
			MemBytes: 944136 * 1024, RAMBytes: 1 << 30, CPUs: 4, Storage: "sd", Swappiness: -1, BootTarget: "graphical.target",
			Desktop: true, Thermal: true, Vcgencmd: true,
			Engine: EngineState{Flavor: "mariadb", Version: "10.5.23", Running: true},
			// /dev/root, as the root is named there: the root's kind
			DataDir: "/var/lib/mysql", DataDevice: "/dev/root", DataStorage: "sd",
		},
		"zerow-raspios-lite-bookworm-armhf.txt": {
			Model: "Raspberry Pi Zero W Rev 1.1", Revision: "9000c1", Arch: "armv6l", PageSize: 4096,
			OS:       OSRelease{ID: "raspbian", VersionID: "12", Codename: "bookworm", Pretty: "Raspbian GNU/Linux 12 (bookworm)"},
			MemBytes: 439884 * 1024, RAMBytes: 512 << 20, CPUs: 1, Storage: "sd", Swappiness: -1, BootTarget: "multi-user.target",
			Desktop: false, Thermal: true, Vcgencmd: true,
		},
		"pi5-ubuntu-2404-arm64.txt": {
			Model: "Raspberry Pi 5 Model B Rev 1.0", Revision: "d04170", Arch: "aarch64", PageSize: 4096,
			OS:       OSRelease{ID: "ubuntu", VersionID: "24.04", Codename: "noble", Pretty: "Ubuntu 24.04.1 LTS"},
			MemBytes: 8245856 * 1024, RAMBytes: 8 << 30, CPUs: 4, Storage: "nvme", Swappiness: -1, BootTarget: "multi-user.target",
			Desktop: false, Thermal: true, Vcgencmd: false,
			Engine: EngineState{Flavor: "mysql", Version: "8.0.39", Running: true},
		},
		"pi5-raspios-bookworm-arm64.txt": {
			Model: "Raspberry Pi 5 Model B Rev 1.0", Revision: "d04170", Arch: "aarch64", PageSize: 16384,
			OS:       OSRelease{ID: "debian", VersionID: "12", Codename: "bookworm", Pretty: "Debian GNU/Linux 12 (bookworm)"},
			MemBytes: 8245856 * 1024, RAMBytes: 8 << 30, CPUs: 4, Storage: "sd", Swappiness: -1, BootTarget: "graphical.target",
			Desktop: true, Thermal: true, Vcgencmd: true,
			Engine: EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true},
			// booted from the card, the data moved to a USB SSD
			DataDir: "/srv/pidb-data/mysql", DataDevice: "/dev/sda", DataStorage: "usb",
		},
		"pi4b-ubuntu-2204-usb.txt": {
			// no /proc/device-tree/model: the Model line of cpuinfo
			Model: "Raspberry Pi 4 Model B Rev 1.5", Revision: "d03115", Arch: "aarch64",
			OS:       OSRelease{ID: "ubuntu", VersionID: "22.04", Codename: "jammy", Pretty: "Ubuntu 22.04.4 LTS"},
			MemBytes: 7998000 * 1024, RAMBytes: 8 << 30, CPUs: 4, Storage: "usb", Swappiness: -1, BootTarget: "graphical.target",
			Desktop: true, Thermal: false, Vcgencmd: false,
			// postgresql.service is active (Debian's umbrella unit) but the cluster is down
			Engine: EngineState{Flavor: "postgres", Version: "14.13", Running: false},
		},
	}
	for file, want := range cases {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + file)
			if err != nil {
				t.Fatal(err)
			}
			if got := Parse(string(data)); got != want {
				t.Errorf("Parse:\n got  %+v\n want %+v", got, want)
			}
		})
	}
}

// Revision codes from the Raspberry Pi documentation, "Raspberry Pi revision
// codes" (new-style: NOQuuuWuFMMMCCCCPPPPTTTTTTTTRRRR), decoded by hand.
func TestDecodeRevision(t *testing.T) {
	cases := map[string]Board{
		"c03114":  {Type: "4B", Processor: "BCM2711", RAMBytes: 4 << 30},
		"b03115":  {Type: "4B", Processor: "BCM2711", RAMBytes: 2 << 30},
		"a03111":  {Type: "4B", Processor: "BCM2711", RAMBytes: 1 << 30},
		"d03114":  {Type: "4B", Processor: "BCM2711", RAMBytes: 8 << 30},
		"a02082":  {Type: "3B", Processor: "BCM2837", RAMBytes: 1 << 30},
		"a22082":  {Type: "3B", Processor: "BCM2837", RAMBytes: 1 << 30},
		"a020d3":  {Type: "3B+", Processor: "BCM2837", RAMBytes: 1 << 30},
		"9000c1":  {Type: "Zero W", Processor: "BCM2835", RAMBytes: 512 << 20},
		"900093":  {Type: "Zero", Processor: "BCM2835", RAMBytes: 512 << 20},
		"902120":  {Type: "Zero 2 W", Processor: "BCM2837", RAMBytes: 512 << 20},
		"c04170":  {Type: "5", Processor: "BCM2712", RAMBytes: 4 << 30},
		"d04170":  {Type: "5", Processor: "BCM2712", RAMBytes: 8 << 30},
		"e04171":  {Type: "5", Processor: "BCM2712", RAMBytes: 16 << 30},
		"c03130":  {Type: "400", Processor: "BCM2711", RAMBytes: 4 << 30},
		"0002":    {Type: "B", Processor: "BCM2835", RAMBytes: 256 << 20},
		"000e":    {Type: "B", Processor: "BCM2835", RAMBytes: 512 << 20},
		"1000002": {Type: "B", Processor: "BCM2835", RAMBytes: 256 << 20}, // overvoltage bit set
		"0010":    {Type: "B+", Processor: "BCM2835", RAMBytes: 512 << 20},
	}
	for code, want := range cases {
		got, ok := DecodeRevision(code)
		if !ok || got != want {
			t.Errorf("DecodeRevision(%s) = %+v, %v; want %+v", code, got, ok, want)
		}
	}
	for _, bad := range []string{"", "zz", "0001", "f03114"} {
		if b, ok := DecodeRevision(bad); ok {
			t.Errorf("DecodeRevision(%q) = %+v, want not ok", bad, b)
		}
	}
}

func TestRAMBytesWithoutRevision(t *testing.T) {
	// no revision code (not a Pi, or a kernel without the line): MemTotal rounded up
	for mem, want := range map[uint64]uint64{
		3884376 * 1024: 4 << 30,
		948304 * 1024:  1 << 30,
		1 << 30:        1 << 30,
		0:              0,
	} {
		if got := RAMBytes("", mem); got != want {
			t.Errorf("RAMBytes(%d) = %d, want %d", mem, got, want)
		}
	}
}

func TestStorage(t *testing.T) {
	cases := []struct {
		root   string
		blocks []string
		want   string
	}{
		{"/dev/mmcblk0p2", nil, "sd"},
		{"/dev/sda2", nil, "usb"},
		{"/dev/nvme0n1p2", nil, "nvme"},
		{"/dev/root", []string{"mmcblk0", "ram0"}, "sd"},
		{"/dev/root", []string{"mmcblk0", "sda"}, "unknown"},
		{"/dev/vda[/var/lib/pidb-lab/hosts/pi4/rootfs]", []string{"loop0", "vda", "zram0"}, "unknown"},
		{"overlay", nil, "unknown"},
	}
	for _, c := range cases {
		if got := Storage(c.root, c.blocks); got != c.want {
			t.Errorf("Storage(%q, %v) = %q, want %q", c.root, c.blocks, got, c.want)
		}
	}
}

func TestParseEngineBothInstalled(t *testing.T) {
	// both installed: the running one is the engine
	e := ParseEngine("postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)", "15 main 5432 down postgres /x /y",
		"/usr/sbin/mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu on aarch64 (Debian 12)", "postgresql active\nmariadb active\nmysql active")
	if e != (EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true}) {
		t.Errorf("engine = %+v", e)
	}
	// two PostgreSQL versions: the newest
	e = ParseEngine("postgres (PostgreSQL) 13.16 (Debian 13.16-0+deb11u1)\npostgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)", "", "", "")
	if e.Version != "15.8" {
		t.Errorf("version = %q, want 15.8", e.Version)
	}
	if e := ParseEngine("", "", "", "postgresql inactive"); e != (EngineState{}) {
		t.Errorf("nothing installed: %+v", e)
	}
	// an install cut off before its cluster was made: the binaries, the
	// umbrella unit "active (exited)", no cluster: installed, not running
	e = ParseEngine("postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)", "", "", "postgresql active\nmariadb inactive\nmysql inactive")
	if e != (EngineState{Flavor: "postgres", Version: "15.8"}) {
		t.Errorf("no cluster: %+v, want installed and not running", e)
	}
}

func TestJSONKeys(t *testing.T) {
	data, err := os.ReadFile("testdata/pi4b-raspios-bookworm-arm64.txt")
	if err != nil {
		t.Fatal(err)
	}
	f := Parse(string(data))
	f.Host, f.Address = "pi4", "192.0.2.40"
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Fields("host address model arch page_size os_id os_version mem_bytes ram_bytes cpus storage boot_target desktop thermal vcgencmd engine engine_version engine_running overcommit_memory overcommit_ratio") {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, out)
		}
	}
	if m["ram_bytes"] != float64(4<<30) || m["cpus"] != float64(4) || m["engine"] != "postgres" || m["engine_running"] != true || m["page_size"] != float64(4096) ||
		m["overcommit_memory"] != float64(0) || m["overcommit_ratio"] != float64(50) {
		t.Errorf("JSON values: %s", out)
	}
}

func TestParsePageSize(t *testing.T) {
	for in, want := range map[string]int{"4096": 4096, "16384\n": 16384, "65536": 65536, "": 0, "x": 0, "3000": 0, "2048": 0, "131072": 0, "-4096": 0} {
		if got := parsePageSize(in); got != want {
			t.Errorf("parsePageSize(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestGatherRefusesAHostileVersion: an engine version that is not one
// (it would reach /etc/postgresql/<major>/main, the unit's name and root's
// commands) stops Gather with an error that names the host and the value;
// a real board's answer passes.
func TestGatherRefusesAHostileVersion(t *testing.T) {
	data, err := os.ReadFile("testdata/pi4b-raspios-bookworm-arm64.txt")
	if err != nil {
		t.Fatal(err)
	}
	good := string(data)
	ctx := context.Background()
	f, err := Gather(ctx, (&fakerun.Runner{Name: "pi4"}).Exact(Script, fakerun.Reply{Stdout: good}))
	if err != nil || f.Engine.Version != "15.8" {
		t.Fatalf("a real board: %+v, %v", f.Engine, err)
	}
	for _, c := range []struct{ line, value string }{
		{"postgres (PostgreSQL) 15;reboot (Debian)", "15;reboot"},
		{"postgres (PostgreSQL) 15.8$(touch${IFS}/x) (Debian)", "15.8$(touch${IFS}/x)"},
		{"postgres (PostgreSQL) 1500.8 (Debian)", "1500.8"},
	} {
		out := strings.Replace(good, "postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)", c.line, 1)
		r := (&fakerun.Runner{Name: "pi4"}).Exact(Script, fakerun.Reply{Stdout: out})
		_, err := Gather(ctx, r)
		if err == nil || !strings.Contains(err.Error(), "pi4") || !strings.Contains(err.Error(), strconv.Quote(c.value)) {
			t.Errorf("version %q: %v; want an error naming pi4 and the value", c.value, err)
		}
	}
	mysql := strings.Replace(good, "@@pidb-facts:mysql\n", "@@pidb-facts:mysql\n/usr/sbin/mariadbd  Ver 10.11.6`id`-MariaDB for debian-linux-gnu\n", 1)
	mysql = strings.Replace(mysql, "mariadb inactive", "mariadb active", 1)
	mysql = strings.Replace(mysql, "online", "down", 1)
	if _, err := Gather(ctx, (&fakerun.Runner{Name: "pi3"}).Exact(Script, fakerun.Reply{Stdout: mysql})); err == nil || !strings.Contains(err.Error(), "10.11.6`id`") {
		t.Errorf("mariadb version 10.11.6`id`: %v", err)
	}
}

// TestSimulated: a board of pidb's lab says so, and at what CPU speed, in
// its facts and in their JSON; a real board says nothing, and a file pidb
// does not know is not taken for the lab's.
func TestSimulated(t *testing.T) {
	data, err := os.ReadFile("testdata/pi4b-raspios-bookworm-arm64.txt")
	if err != nil {
		t.Fatal(err)
	}
	for tail, want := range map[string]string{
		"":                                   "",
		"\n" + marker + "simulated\nboard\n": "board",
		"\n" + marker + "simulated\nfull\n":  "full",
		"\n" + marker + "simulated\nturbo\n": "",
	} {
		f := Parse(strings.TrimRight(string(data), "\n") + tail)
		if f.Simulated != want {
			t.Errorf("%q: simulated %q, want %q", tail, f.Simulated, want)
		}
		out, _ := json.Marshal(f)
		var back Facts
		err := json.Unmarshal(out, &back)
		back.OS.Pretty = f.OS.Pretty // not in the JSON
		if err != nil || back != f {
			t.Errorf("%q: JSON round trip: %s, %v", tail, out, err)
		}
		if has := strings.Contains(string(out), `"simulated":"`+want+`"`); has != (want != "") {
			t.Errorf("%q: JSON %s", tail, out)
		}
	}
}

// TestParseOvercommit: the two values, or unknown where either is missing
// or not the kernel's.
func TestParseOvercommit(t *testing.T) {
	for in, want := range map[string]Overcommit{
		"2\n80\n": {Mode: 2, Ratio: 80, Known: true},
		"0\n50\n": {Mode: 0, Ratio: 50, Known: true},
		"0\n":     {},
		"3\n50\n": {},
		"":        {},
	} {
		if got := parseOvercommit(in); got != want {
			t.Errorf("parseOvercommit(%q) = %+v, want %+v", in, got, want)
		}
	}
}

// TestWordBits: the packages' word size, not the kernel's: armhf on a
// 64-bit kernel is 32-bit; without dpkg's answer, the kernel's.
func TestWordBits(t *testing.T) {
	for _, c := range []struct {
		f    Facts
		want int
	}{
		{Facts{Arch: "aarch64", Userland: "armhf"}, 32},
		{Facts{Arch: "aarch64", Userland: "arm64"}, 64},
		{Facts{Arch: "x86_64", Userland: "amd64"}, 64},
		{Facts{Arch: "armv6l"}, 32},
		{Facts{Arch: "armv7l"}, 32},
		{Facts{Arch: "aarch64"}, 64},
		{Facts{}, 0},
	} {
		if got := c.f.WordBits(); got != c.want {
			t.Errorf("%+v: %d bits, want %d", c.f, got, c.want)
		}
	}
}

// TestUpgradedHost: a Pi upgraded in place (bookworm to trixie) keeps its
// PostgreSQL 15 cluster on 5432 beside the empty 17 one its new package
// made on 5433: pidb works on the one on 5432, its version, its data
// directory and its device, not the newest binary's; a host with the 17
// cluster alone on 5432 (after pg_upgradecluster) is 17's.
func TestUpgradedHost(t *testing.T) {
	versions := "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)\npostgres (PostgreSQL) 17.6 (Debian 17.6-0+deb13u1)\n"
	clusters := "15  main    5432 online postgres /var/lib/postgresql/15/main /var/log/postgresql/postgresql-15-main.log\n" +
		"17  main    5433 online postgres /var/lib/postgresql/17/main /var/log/postgresql/postgresql-17-main.log\n"
	e := ParseEngine(versions, clusters, "", "postgresql active\n")
	if e.Flavor != dbms.Postgres || e.Version != "15.14" || !e.Running {
		t.Errorf("upgraded in place: %+v, want 15.14, running", e)
	}
	// the 15 cluster stopped: still the one on 5432, not running
	if e := ParseEngine(versions, strings.Replace(clusters, "5432 online", "5432 down", 1), "", ""); e.Version != "15.14" || e.Running {
		t.Errorf("15 down: %+v", e)
	}
	after := "17  main    5432 online postgres /var/lib/postgresql/17/main /var/log/postgresql/postgresql-17-main.log\n"
	if e := ParseEngine(versions, after, "", ""); e.Version != "17.6" || !e.Running {
		t.Errorf("after pg_upgradecluster: %+v", e)
	}
	// no cluster yet (an install cut off): the newest binary's, not running
	if e := ParseEngine(versions, "", "", ""); e.Version != "17.6" || e.Running {
		t.Errorf("no cluster: %+v", e)
	}
	// the data directory and its device are the chosen cluster's
	out := "\n@@pidb-facts:postgres\n" + versions + "\n@@pidb-facts:clusters\n" + clusters +
		"\n@@pidb-facts:datadirs\npostgres /var/lib/postgresql/17/main /dev/mmcblk0p2\npostgres /srv/pidb-data/postgresql/15/main/ /dev/sda1\n"
	out = strings.Replace(out, "/var/lib/postgresql/15/main", "/srv/pidb-data/postgresql/15/main/", 1)
	f := Parse(out)
	if f.Engine.Version != "15.14" || f.DataDir != "/srv/pidb-data/postgresql/15/main" || f.DataDevice != "/dev/sda1" {
		t.Errorf("Parse: %s %s on %s", f.Engine.Version, f.DataDir, f.DataDevice)
	}
}

// TestDataDirOfTheCluster: the data directory is the engine family's
// first, or the one of the PostgreSQL cluster pidb works on where a host
// has several (an upgraded Pi: 15 on 5432, its new release's 17 beside
// it), trimmed of a trailing slash, with its device.
func TestDataDirOfTheCluster(t *testing.T) {
	lines := "mysql /var/lib/mysql/ /dev/mmcblk0p2\npostgres /var/lib/postgresql/17/main /dev/mmcblk0p2\npostgres /srv/pidb-data/postgresql/15/main/ /dev/sda\n"
	for _, c := range []struct {
		flavor      dbms.Flavor
		cluster     string
		dir, device string
	}{
		{dbms.Postgres, "", "/var/lib/postgresql/17/main", "/dev/mmcblk0p2"},
		{dbms.Postgres, "/srv/pidb-data/postgresql/15/main/", "/srv/pidb-data/postgresql/15/main", "/dev/sda"},
		{dbms.Postgres, "/var/lib/postgresql/16/main", "/var/lib/postgresql/17/main", "/dev/mmcblk0p2"}, // named by no line: the first
		{dbms.MariaDB, "", "/var/lib/mysql", "/dev/mmcblk0p2"},
		{"", "", "", ""},
	} {
		if dir, dev := dataDir(lines, c.flavor, c.cluster); dir != c.dir || dev != c.device {
			t.Errorf("%s %q: %q %q, want %q %q", c.flavor, c.cluster, dir, dev, c.dir, c.device)
		}
	}
	if dir, _ := dataDir("postgres / /dev/sda\n", dbms.Postgres, ""); dir != "/" {
		t.Errorf("the root: %q", dir)
	}
}
