// Package facts learns what a Pi is, in one round trip: its model, RAM,
// cores, OS, storage, boot target, desktop, thermal sensor, and which
// database engine it runs. Parse is pure and tested on files from real
// boards' formats; Gather runs the one command that collects them.
package facts

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"pidb/dbms"
	"pidb/internal/version"
	"pidb/inventory"
	"pidb/remote"
)

// OSRelease is the part of /etc/os-release pidb uses.
type OSRelease struct {
	ID        string // raspbian, debian, ubuntu
	VersionID string // "12", "24.04"
	Codename  string // bookworm, noble
	Pretty    string
}

// EngineState is the database engine found on a host.
type EngineState struct {
	Flavor  dbms.Flavor // "" when none is installed
	Version string      // "15.8", "10.11.6"
	Running bool
}

// Facts is what pidb knows about a host.
type Facts struct {
	Host     string
	Address  string
	Model    string // "Raspberry Pi 4 Model B Rev 1.4"
	Revision string // "c03114"
	Arch     string // uname -m
	// Userland is the packages' architecture (dpkg --print-architecture):
	// 32-bit Raspberry Pi OS runs armhf on a Pi 4's 64-bit kernel, whose
	// uname -m says aarch64
	Userland string
	PageSize int // the kernel's page size in bytes (16384 on a Pi 5 under Raspberry Pi OS's default kernel); 0: unknown
	OS       OSRelease
	MemBytes uint64 // MemTotal: what the kernel sees
	RAMBytes uint64 // the board's nominal RAM: what tuning scales on
	CPUs     int    // processor entries in /proc/cpuinfo
	Storage  string // sd, usb, nvme, unknown: what the root filesystem is on
	// DataDir is the engine's data directory, DataDevice the device of
	// the filesystem that holds it (/dev/sda, /dev/mmcblk0p2), and
	// DataStorage that device's kind (sd, usb, nvme, unknown): what the
	// tuner scales its I/O settings on; "" without an engine
	DataDir, DataDevice, DataStorage string
	// Governor is the CPU frequency governor (policy0's: ondemand on
	// Raspberry Pi OS, performance once pidb's os step ran); "" unknown
	Governor string
	// SwapBytes is the swap the kernel has (SwapTotal), Swappiness its
	// vm.swappiness (-1: unknown)
	SwapBytes  uint64
	Swappiness int
	// Overcommit is the kernel's vm.overcommit_memory and
	// vm.overcommit_ratio
	Overcommit Overcommit
	BootTarget string // systemctl get-default
	Desktop    bool   // a display manager installed and enabled
	Thermal    bool   // a readable thermal zone
	Vcgencmd   bool
	Engine     EngineState
	// Simulated is, on a board of pidb's lab, the CPU speed it runs at:
	// "board" (its board's published capacity) or "full" (the lab
	// machine's); "" on a real board. The lab writes /etc/pisim/speed.
	Simulated string
}

// Overcommit is how the kernel commits memory: Mode is vm.overcommit_memory
// (0 heuristic, the kernel's default; 2 strict: no more than swap + Ratio%
// of RAM is committed), Ratio vm.overcommit_ratio; Known is false where
// they could not be read.
type Overcommit struct {
	Mode, Ratio int
	Known       bool
}

// parseOvercommit reads vm.overcommit_memory and vm.overcommit_ratio, a
// line each.
func parseOvercommit(s string) Overcommit {
	f := strings.Fields(s)
	if len(f) != 2 {
		return Overcommit{}
	}
	mode, err1 := strconv.Atoi(f[0])
	ratio, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || mode < 0 || mode > 2 || ratio < 0 {
		return Overcommit{}
	}
	return Overcommit{Mode: mode, Ratio: ratio, Known: true}
}

// jsonFacts is Facts as `pidb facts --json` prints them and run.json keeps
// them: the keys of the command-line contract (ARCHITECTURE.md).
type jsonFacts struct {
	Host          string      `json:"host"`
	Address       string      `json:"address"`
	Model         string      `json:"model"`
	Revision      string      `json:"revision"`
	Arch          string      `json:"arch"`
	Userland      string      `json:"userland"`
	PageSize      int         `json:"page_size"`
	OSID          string      `json:"os_id"`
	OSVersion     string      `json:"os_version"`
	OSCodename    string      `json:"os_codename"`
	MemBytes      uint64      `json:"mem_bytes"`
	RAMBytes      uint64      `json:"ram_bytes"`
	CPUs          int         `json:"cpus"`
	Storage       string      `json:"storage"`
	DataDir       string      `json:"data_dir,omitempty"`
	DataDevice    string      `json:"data_device,omitempty"`
	DataStorage   string      `json:"data_storage,omitempty"`
	Governor      string      `json:"governor,omitempty"`
	SwapBytes     uint64      `json:"swap_bytes"`
	Swappiness    *int        `json:"swappiness"`
	Overcommit    *int        `json:"overcommit_memory"`
	OvercommitPct *int        `json:"overcommit_ratio"`
	BootTarget    string      `json:"boot_target"`
	Desktop       bool        `json:"desktop"`
	Thermal       bool        `json:"thermal"`
	Vcgencmd      bool        `json:"vcgencmd"`
	Simulated     string      `json:"simulated,omitempty"`
	Engine        dbms.Flavor `json:"engine"`
	EngineVersion string      `json:"engine_version"`
	EngineRunning bool        `json:"engine_running"`
}

// MarshalJSON writes the flat keys of the command-line contract.
func (f Facts) MarshalJSON() ([]byte, error) {
	var swappiness, overcommit, ratio *int
	if f.Swappiness >= 0 {
		swappiness = &f.Swappiness
	}
	if f.Overcommit.Known {
		overcommit, ratio = &f.Overcommit.Mode, &f.Overcommit.Ratio
	}
	return json.Marshal(jsonFacts{f.Host, f.Address, f.Model, f.Revision, f.Arch, f.Userland, f.PageSize, f.OS.ID, f.OS.VersionID, f.OS.Codename, f.MemBytes, f.RAMBytes,
		f.CPUs, f.Storage, f.DataDir, f.DataDevice, f.DataStorage, f.Governor, f.SwapBytes, swappiness, overcommit, ratio, f.BootTarget, f.Desktop, f.Thermal, f.Vcgencmd, f.Simulated, f.Engine.Flavor, f.Engine.Version, f.Engine.Running})
}

// UnmarshalJSON reads what MarshalJSON writes (a saved run's facts).
func (f *Facts) UnmarshalJSON(data []byte) error {
	var j jsonFacts
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	swappiness := -1
	if j.Swappiness != nil {
		swappiness = *j.Swappiness
	}
	var overcommit Overcommit
	if j.Overcommit != nil && j.OvercommitPct != nil {
		overcommit = Overcommit{Mode: *j.Overcommit, Ratio: *j.OvercommitPct, Known: true}
	}
	*f = Facts{Governor: j.Governor, SwapBytes: j.SwapBytes, Swappiness: swappiness, Overcommit: overcommit, Host: j.Host, Address: j.Address, Model: j.Model, Revision: j.Revision, Arch: j.Arch, Userland: j.Userland, PageSize: j.PageSize,
		OS: OSRelease{ID: j.OSID, VersionID: j.OSVersion, Codename: j.OSCodename}, MemBytes: j.MemBytes, RAMBytes: j.RAMBytes,
		CPUs: j.CPUs, Storage: j.Storage, DataDir: j.DataDir, DataDevice: j.DataDevice, DataStorage: j.DataStorage, BootTarget: j.BootTarget, Desktop: j.Desktop, Thermal: j.Thermal, Vcgencmd: j.Vcgencmd, Simulated: j.Simulated,
		Engine: EngineState{Flavor: j.Engine, Version: j.EngineVersion, Running: j.EngineRunning}}
	return nil
}

// Script is the one command Gather runs: every source, each after a marker
// line, read without root.
const Script = `m() { printf '\n` + marker + `%s\n' "$1"; }
m model; tr -d '\000' </proc/device-tree/model 2>/dev/null
m cpuinfo; cat /proc/cpuinfo
m meminfo; grep '^MemTotal:' /proc/meminfo
m os; cat /etc/os-release 2>/dev/null
m arch; uname -m
m userland; dpkg --print-architecture 2>/dev/null
m pagesize; getconf PAGESIZE 2>/dev/null
m root; findmnt -n -o SOURCE / 2>/dev/null || awk '$2 == "/" {print $1}' /proc/mounts
m blocks; ls /sys/block 2>/dev/null
m governor; cat /sys/devices/system/cpu/cpufreq/policy0/scaling_governor 2>/dev/null
m swap; awk '/^SwapTotal:/ {print $2}' /proc/meminfo; cat /proc/sys/vm/swappiness 2>/dev/null
m overcommit; cat /proc/sys/vm/overcommit_memory /proc/sys/vm/overcommit_ratio 2>/dev/null
m target; systemctl get-default 2>/dev/null
m dm; systemctl is-enabled display-manager.service 2>/dev/null
m thermal; for z in /sys/class/thermal/thermal_zone*; do [ -r "$z/temp" ] && echo "$(cat "$z/type" 2>/dev/null) $(cat "$z/temp" 2>/dev/null)"; done
m vcgencmd; command -v vcgencmd
m postgres; for b in /usr/lib/postgresql/*/bin/postgres; do [ -x "$b" ] && "$b" --version; done 2>/dev/null
m clusters; pgc=$(pg_lsclusters --no-header 2>/dev/null); [ -n "$pgc" ] && printf '%s\n' "$pgc"
m mysql; for b in /usr/sbin/mariadbd /usr/sbin/mysqld; do [ -x "$b" ] && "$b" --version && break; done 2>/dev/null
m datadirs; [ -n "$pgc" ] && printf '%s\n' "$pgc" | while read -r v c p s o d rest; do echo "postgres $d $(findmnt -n -o SOURCE -T "$d" 2>/dev/null)"; done; if command -v my_print_defaults >/dev/null 2>&1; then d=$(my_print_defaults --mysqld 2>/dev/null | sed -n 's/^--datadir=//p' | tail -n 1); d=${d:-/var/lib/mysql}; [ -d "$d" ] && echo "mysql $d $(findmnt -n -o SOURCE -T "$d" 2>/dev/null)"; fi
m active; for u in postgresql mariadb mysql; do echo "$u $(systemctl is-active "$u" 2>/dev/null)"; done
m simulated; cat /etc/pisim/speed 2>/dev/null
true`

const marker = "@@pidb-facts:"

// Gather collects the facts of the host behind r.
func Gather(ctx context.Context, r remote.Runner) (Facts, error) {
	res, err := r.Run(ctx, Script)
	if err != nil {
		return Facts{}, fmt.Errorf("gather facts: %w", err)
	}
	f := Parse(string(res.Stdout))
	f.Host = r.Host()
	if err := f.Check(); err != nil {
		return Facts{}, fmt.Errorf("%s: %w", r.Host(), err)
	}
	return f, nil
}

// Check reports a fact whose shape pidb cannot trust: the engine's version
// (CheckVersion) and the data directory and its device (CheckPath).
// Gather checks what a host answers; engine.New checks every version it is
// given the same way.
func (f Facts) Check() error {
	if f.DataDir != "" {
		if err := CheckPath(f.DataDir); err != nil {
			return fmt.Errorf("the host's data directory: %w", err)
		}
	}
	if f.DataDevice != "" {
		if err := CheckPath(f.DataDevice); err != nil {
			return fmt.Errorf("the device of the host's data directory: %w", err)
		}
	}
	if f.Engine.Flavor == "" {
		return nil
	}
	if err := CheckVersion(f.Engine.Flavor, f.Engine.Version); err != nil {
		return fmt.Errorf("the host's %w", err)
	}
	return nil
}

// CheckPath reports a path read from a host that pidb cannot trust: one
// that is not absolute, holds a control character or a ".." part, or is
// not in its clean form. Such a path comes from a file the host's other
// users can write (PostgreSQL's data_directory is the postgres user's),
// and pidb's root commands take it as an argument: it goes no further.
func CheckPath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q is not an absolute path: pidb takes no such path from a host", p)
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return fmt.Errorf("%q holds a control character: pidb takes no such path from a host", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return fmt.Errorf("%q holds a \"..\" part: pidb takes no such path from a host", p)
	case path.Clean(p) != p:
		return fmt.Errorf("%q is not a clean path (%s): pidb takes no such path from a host", p, path.Clean(p))
	}
	return nil
}

// CheckVersion reports a server version that is not one. The version goes
// into paths (/etc/postgresql/15/main), unit names (postgresql@15-main)
// and commands run as root, so it must be one to four dotted numbers
// ("15.8", "10.11.6"), and PostgreSQL's major one to three digits.
func CheckVersion(flavor dbms.Flavor, v string) error {
	major, _, _ := strings.Cut(v, ".")
	if !version.Valid(v) || (flavor == dbms.Postgres && len(major) > 3) {
		return fmt.Errorf("%s version %q is not a version (one to four dotted numbers, like 15.8; a PostgreSQL major of at most three digits): pidb puts it in paths and root's commands, so it goes no further", flavor, v)
	}
	return nil
}

// Collect gathers a host's facts and applies what its inventory entry says:
// the address, and storage where the inventory overrides detection.
func Collect(ctx context.Context, r remote.Runner, h inventory.Host) (Facts, error) {
	f, err := Gather(ctx, r)
	if err != nil {
		return f, err
	}
	f.Of(h)
	return f, nil
}

// Of makes f the facts of h as its inventory entry says: its name and
// address, and the storage where the inventory overrides detection (the
// root's and the data's).
func (f *Facts) Of(h inventory.Host) {
	f.Host, f.Address = h.Name, h.Address
	if h.Storage != "" {
		f.Storage = h.Storage
		if f.DataDir != "" {
			f.DataStorage = h.Storage
		}
	}
}

// WordBits is the word size of the host's packages, 32 or 64, from its
// userland's architecture (else its kernel's); 0 where neither is known.
func (f Facts) WordBits() int {
	arch := f.Userland
	if arch == "" {
		arch = f.Arch
	}
	switch arch {
	case "":
		return 0
	case "armhf", "armel", "i386", "armv6l", "armv7l", "i686":
		return 32
	}
	return 64
}

// DataOn is the kind of storage the database's data is on, which the
// tuner's I/O settings follow: the data directory's device where that is
// known, else the root filesystem's.
func (f Facts) DataOn() string {
	if f.DataStorage != "" && f.DataStorage != "unknown" {
		return f.DataStorage
	}
	return f.Storage
}

// Sections splits the script's output by marker.
func Sections(out string) map[string]string {
	secs := map[string]string{}
	parts := strings.Split(out, "\n"+marker)
	for _, p := range parts[1:] {
		name, body, _ := strings.Cut(p, "\n")
		secs[name] = strings.TrimRight(body, "\n")
	}
	return secs
}

// Parse reads the output of Script.
func Parse(out string) Facts {
	s := Sections(out)
	ci := ParseCPUInfo(s["cpuinfo"])
	f := Facts{
		Model:      strings.TrimSpace(s["model"]),
		Revision:   ci.Revision,
		Arch:       strings.TrimSpace(s["arch"]),
		Userland:   strings.TrimSpace(s["userland"]),
		PageSize:   parsePageSize(s["pagesize"]),
		OS:         ParseOSRelease(s["os"]),
		MemBytes:   ParseMemTotal(s["meminfo"]),
		CPUs:       ci.Processors,
		Storage:    Storage(firstLine(s["root"]), strings.Fields(s["blocks"])),
		Governor:   firstLine(s["governor"]),
		BootTarget: firstLine(s["target"]),
		Desktop:    DesktopEnabled(firstLine(s["dm"])),
		Thermal:    strings.TrimSpace(s["thermal"]) != "",
		Vcgencmd:   strings.TrimSpace(s["vcgencmd"]) != "",
		Engine:     ParseEngine(s[string(dbms.Postgres)], s["clusters"], s["mysql"], s["active"]),
		Simulated:  simulated(firstLine(s["simulated"])),
	}
	if f.Model == "" {
		f.Model = ci.Model
	}
	f.RAMBytes = RAMBytes(ci.Revision, f.MemBytes)
	f.SwapBytes, f.Swappiness = parseSwap(s["swap"])
	f.Overcommit = parseOvercommit(s["overcommit"])
	cluster := "" // the PostgreSQL cluster pidb works on, where the host has several
	if c, ok := PGCluster(s["clusters"]); ok && f.Engine.Flavor == dbms.Postgres {
		cluster = c.DataDir
	}
	f.DataDir, f.DataDevice = dataDir(s["datadirs"], f.Engine.Flavor, cluster)
	if f.DataDir != "" {
		f.DataStorage = storageKind(strings.TrimPrefix(f.DataDevice, "/dev/"))
		if f.DataStorage == "" {
			f.DataStorage = "unknown"
			if f.DataDevice == firstLine(s["root"]) {
				f.DataStorage = f.Storage // on the root filesystem, as its name says
			}
		}
	}
	return f
}

// parseSwap reads SwapTotal (kB) and vm.swappiness, a line each;
// swappiness -1 when it is not there.
func parseSwap(s string) (bytes uint64, swappiness int) {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	swappiness = -1
	if kb, err := strconv.ParseUint(strings.TrimSpace(lines[0]), 10, 64); err == nil {
		bytes = kb << 10
	}
	if len(lines) > 1 {
		if n, err := strconv.Atoi(strings.TrimSpace(lines[1])); err == nil && n >= 0 && n <= 200 {
			swappiness = n
		}
	}
	return bytes, swappiness
}

// dataDir reads the data directories the script found (a line each:
// "postgres DIR DEVICE", "mysql DIR DEVICE") and returns the engine
// flavor's family's: the one named cluster where a line names it
// (PostgreSQL's cluster pidb works on), else the first; with the device
// of the filesystem that holds it.
func dataDir(lines string, flavor dbms.Flavor, cluster string) (dir, device string) {
	if flavor == "" {
		return "", ""
	}
	found := false
	for _, line := range strings.Split(lines, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != string(flavor.Family()) || (found && f[1] != cluster) {
			continue
		}
		dir, device, found = f[1], "", true
		if len(dir) > 1 {
			dir = cmp.Or(strings.TrimRight(dir, "/"), "/") // datadir = /var/lib/mysql/ is that folder
		}
		if len(f) >= 3 {
			device = f[2]
		}
		if f[1] == cluster {
			break
		}
	}
	return dir, device
}

// simulated reads the lab's /etc/pisim/speed: "board" or "full", else ""
// (a real board, or a file pidb does not know).
func simulated(s string) string {
	if s == "board" || s == "full" {
		return s
	}
	return ""
}

// parsePageSize reads getconf PAGESIZE: a power of two from 4 KiB to
// 64 KiB, else 0 (unknown).
func parsePageSize(s string) int {
	n, err := strconv.Atoi(firstLine(s))
	if err != nil || n < 4096 || n > 65536 || n&(n-1) != 0 {
		return 0
	}
	return n
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}

// CPUInfo is what /proc/cpuinfo says.
type CPUInfo struct {
	Processors int
	Model      string // the Model line (Raspberry Pi kernels)
	Revision   string
	Hardware   string
}

// ParseCPUInfo reads /proc/cpuinfo: processor entries and the board lines
// Raspberry Pi kernels add at the end.
func ParseCPUInfo(s string) CPUInfo {
	var c CPUInfo
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			c.Processors++
		case "Model":
			c.Model = v
		case "Revision":
			c.Revision = v
		case "Hardware":
			c.Hardware = v
		}
	}
	return c
}

// ParseMemTotal reads MemTotal from /proc/meminfo, in bytes.
func ParseMemTotal(s string) uint64 {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// RAMBytes is the board's nominal RAM: from the revision code where there is
// one, else MemTotal rounded up to a power of two (a 4 GB board shows about
// 3.7 GiB).
func RAMBytes(revision string, memTotal uint64) uint64 {
	if b, ok := DecodeRevision(revision); ok && revision != "" {
		return b.RAMBytes
	}
	if memTotal == 0 {
		return 0
	}
	return 1 << bits.Len64(memTotal-1)
}

// ParseOSRelease reads /etc/os-release.
func ParseOSRelease(s string) OSRelease {
	var o OSRelease
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		} else {
			v = strings.Trim(v, `'"`)
		}
		switch k {
		case "ID":
			o.ID = v
		case "VERSION_ID":
			o.VersionID = v
		case "VERSION_CODENAME":
			o.Codename = v
		case "PRETTY_NAME":
			o.Pretty = v
		}
	}
	return o
}

// Storage tells the kind of storage the root filesystem is on, from its
// device: mmcblk is an SD card (or eMMC), sd* a USB drive, nvme an NVMe
// drive. When the source does not name a device (/dev/root on older Raspberry
// Pi OS), the machine's only kind of disk decides; else "unknown".
func Storage(rootSource string, blocks []string) string {
	if k := storageKind(strings.TrimPrefix(rootSource, "/dev/")); k != "" {
		return k
	}
	kinds := map[string]bool{}
	for _, b := range blocks {
		if k := storageKind(b); k != "" {
			kinds[k] = true
		}
	}
	if len(kinds) == 1 {
		for k := range kinds {
			return k
		}
	}
	return "unknown"
}

func storageKind(dev string) string {
	switch {
	case strings.HasPrefix(dev, "mmcblk"):
		return "sd"
	case strings.HasPrefix(dev, "nvme"):
		return "nvme"
	case strings.HasPrefix(dev, "sd") && len(dev) > 2 && dev[2] >= 'a' && dev[2] <= 'z':
		return "usb"
	}
	return ""
}

// DesktopEnabled reads `systemctl is-enabled display-manager.service`: the
// display manager's alias exists only while one is installed and enabled.
func DesktopEnabled(state string) bool {
	return state == "enabled" || state == "alias"
}

// Cluster is one PostgreSQL cluster as pg_lsclusters lists it.
type Cluster struct {
	Major, Name, Port, DataDir string
	Online                     bool
}

// PGCluster is the PostgreSQL cluster pidb works on, of pg_lsclusters'
// lines: the one on port 5432, where pidb and every client connect by
// default (online first, where two claim it), else the first online,
// else the first. A Pi upgraded in place (bookworm to trixie) has its
// old release's cluster on 5432 and the new release's, made empty by
// its package, on 5433: pidb works on the one that holds the data until
// pg_upgradecluster moves it. False where there is none.
func PGCluster(lines string) (Cluster, bool) {
	var all []Cluster
	for _, line := range strings.Split(lines, "\n") {
		// 15  main    5432 online postgres /var/lib/postgresql/15/main /var/log/...
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		all = append(all, Cluster{Major: f[0], Name: f[1], Port: f[2], Online: strings.HasPrefix(f[3], "online"), DataDir: f[5]})
	}
	for _, want := range []func(c Cluster) bool{
		func(c Cluster) bool { return c.Port == "5432" && c.Online },
		func(c Cluster) bool { return c.Port == "5432" },
		func(c Cluster) bool { return c.Online },
		func(Cluster) bool { return true },
	} {
		for _, c := range all {
			if want(c) {
				return c, true
			}
		}
	}
	return Cluster{}, false
}

// ParseEngine decides which engine a host runs from the postgres binaries'
// --version lines, pg_lsclusters, the MariaDB/MySQL server's --version and
// the services' states. A running engine wins over one that is only
// installed; PostgreSQL wins a tie.
func ParseEngine(pgVersions, clusters, myVersion, active string) EngineState {
	states := map[string]string{}
	for _, line := range strings.Split(active, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			states[f[0]] = f[1]
		}
	}
	var pg EngineState
	byMajor := map[string]string{} // major -> its binary's full version
	for _, line := range strings.Split(pgVersions, "\n") {
		// postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)
		if f := strings.Fields(line); len(f) >= 3 && f[1] == "(PostgreSQL)" {
			byMajor[dbms.Postgres.Major(f[2])] = f[2]
			if pg.Version == "" || version.Less(pg.Version, f[2]) {
				pg = EngineState{Flavor: dbms.Postgres, Version: f[2]}
			}
		}
	}
	if pg.Flavor != "" {
		// the cluster pidb works on (PGCluster), of its own major: a host
		// upgraded in place has the old release's beside the new one's
		c, ok := PGCluster(clusters)
		if v := byMajor[c.Major]; ok && v != "" {
			pg.Version = v
		}
		// that cluster online, or nothing runs: the "postgresql"
		// umbrella unit is "active (exited)" with no cluster at all (an
		// install cut off before its cluster was made)
		pg.Running = ok && c.Online
	}
	var my EngineState
	if f := strings.Fields(myVersion); len(f) >= 3 && f[1] == "Ver" {
		// /usr/sbin/mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)
		// /usr/sbin/mysqld  Ver 8.0.36-0ubuntu0.22.04.1 for Linux on aarch64 ((Ubuntu))
		v := f[2]
		my.Flavor = dbms.MySQL
		if strings.Contains(strings.ToLower(myVersion), "mariadb") {
			my.Flavor = dbms.MariaDB
		}
		if i := strings.IndexAny(v, "-+"); i > 0 {
			v = v[:i]
		}
		my.Version = v
		my.Running = states["mariadb"] == "active" || states["mysql"] == "active"
	}
	switch {
	case my.Running && !pg.Running:
		return my
	case pg.Flavor != "":
		return pg
	default:
		return my
	}
}
