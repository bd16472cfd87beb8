package lab

import (
	"fmt"
	"strconv"
	"strings"

	"pidb/dbms"
)

// Board is one simulated Raspberry Pi: what its /proc files say, how much
// memory it really gets, how it heats, and how the lab inventory lists it.
type Board struct {
	Name       string // host name, also in the lab inventory
	Kind       string // the board's name in Boards ("pi4", "pi5-4gb"); numbered hosts are KIND-N
	Model      string // the Model line of /proc/cpuinfo
	Revision   string // new-style revision code (Raspberry Pi documentation, "Revision codes")
	Serial     string
	RAMBytes   uint64      // the board's nominal RAM: the memory cgroup's limit
	MemTotalKB uint64      // what the kernel shows: RAM less the GPU's share and the kernel's own
	CPUs       int         // processor entries in /proc/cpuinfo
	OneCore    bool        // pinned to one host core, so nproc prints 1
	Core       string      // cpuinfo style: "cortex-a76", "cortex-a72" (64-bit OS), "cortex-a53" (32-bit OS), "arm1176"
	PageSize   int         // the kernel's page size: 16384 under Raspberry Pi OS's Pi 5 kernel, else 4096
	Desktop    bool        // Raspberry Pi OS with desktop: graphical.target and a display manager
	Engine     dbms.Family // the lab inventory's engine for this host
	Octet      int         // last octet of the host's address in the lab subnet
	IdleTempMC int         // idle temperature in millidegrees Celsius
	Heat       Heat        // how the thermal simulation treats the board
	Compute    Compute     // its processing capacity, as published (see Compute)
}

// Heat is a board's thermal behaviour: its full Arm clock, where it settles
// idle and under full load in a case and with a fan (about 28 C ambient),
// and a soft temperature limit where it has one (the 3B+ drops from 1.4 to
// 1.2 GHz at 60 C and sets get_throttled's bit 3).
type Heat struct {
	MaxMHz              int
	CaseIdleC, CaseFull float64
	FanIdleC, FanFull   float64
	SoftLimitC          float64 // 0: none
	SoftMHz             int
}

// The boards the lab can simulate, each with the revision code of a real
// board (Raspberry Pi documentation, "Revision codes"; Sony UK): c03114 =
// 4B 4 GB rev 1.4; a02082 = 3B 1 GB rev 1.2; 9000c1 = Zero W 512 MB rev
// 1.1; d04170 and c04170 = 5 8 GB and 4 GB rev 1.0; b03114 = 4B 2 GB rev
// 1.4; a020d3 = 3B+ 1 GB rev 1.3; 902120 = Zero 2 W 512 MB rev 1.0;
// c03141 = CM4 4 GB rev 1.1. A board's single host takes its octet; its
// numbered hosts (KIND-1 ...) take octets from 100 + 15 x its place here.
var boards = []Board{
	{
		Kind: "pi4", Model: "Raspberry Pi 4 Model B Rev 1.4", Revision: "c03114", Serial: "10000000d4c3b2a1",
		RAMBytes: 4 << 30, MemTotalKB: 3884376, CPUs: 4, Core: "cortex-a72", Desktop: true,
		Engine: dbms.PostgresFamily, Octet: 40, IdleTempMC: 45277,
		Heat:    Heat{MaxMHz: 1500, CaseIdleC: 50, CaseFull: 95, FanIdleC: 36, FanFull: 56},
		Compute: Compute{AllMIPS: 5750, CoreMIPS: 1661},
	},
	{
		Kind: "pi3", Model: "Raspberry Pi 3 Model B Rev 1.2", Revision: "a02082", Serial: "00000000b3a29180",
		RAMBytes: 1 << 30, MemTotalKB: 948304, CPUs: 4, Core: "cortex-a53", Desktop: true,
		Engine: dbms.MySQLFamily, Octet: 30, IdleTempMC: 49388,
		Heat:    Heat{MaxMHz: 1200, CaseIdleC: 52, CaseFull: 86, FanIdleC: 38, FanFull: 55},
		Compute: Compute{AllMIPS: 2970, CoreMIPS: 977},
	},
	{
		Kind: "zero", Model: "Raspberry Pi Zero W Rev 1.1", Revision: "9000c1", Serial: "00000000a1b2c3d4",
		RAMBytes: 512 << 20, MemTotalKB: 443452, CPUs: 1, OneCore: true, Core: "arm1176",
		Engine: dbms.PostgresFamily, Octet: 10, IdleTempMC: 37932,
		Heat:    Heat{MaxMHz: 1000, CaseIdleC: 40, CaseFull: 62, FanIdleC: 33, FanFull: 47},
		Compute: Compute{AllMIPS: 460, CoreMIPS: 460},
	},
	{
		// without its active cooler a Pi 5 under load passes 80 C sooner than a Pi 4
		Kind: "pi5", Model: "Raspberry Pi 5 Model B Rev 1.0", Revision: "d04170", Serial: "e4a1b2c3d4e5f607",
		RAMBytes: 8 << 30, MemTotalKB: 8245856, CPUs: 4, Core: "cortex-a76", PageSize: 16384, Desktop: true,
		Engine: dbms.PostgresFamily, Octet: 50, IdleTempMC: 41150,
		Heat:    Heat{MaxMHz: 2400, CaseIdleC: 55, CaseFull: 100, FanIdleC: 38, FanFull: 60},
		Compute: Compute{AllMIPS: 10950, CoreMIPS: 3160},
	},
	{
		// MariaDB's Pi 5: booted with kernel=kernel8.img, 4K pages, as
		// MariaDB (jemalloc) needs; the pi5 has the default kernel's 16K
		Kind: "pi5-4gb", Model: "Raspberry Pi 5 Model B Rev 1.0", Revision: "c04170", Serial: "f5b2c3d4e5f60718",
		RAMBytes: 4 << 30, MemTotalKB: 4041568, CPUs: 4, Core: "cortex-a76", PageSize: 4096, Desktop: true,
		Engine: dbms.MySQLFamily, Octet: 55, IdleTempMC: 40600,
		Heat:    Heat{MaxMHz: 2400, CaseIdleC: 55, CaseFull: 100, FanIdleC: 38, FanFull: 60},
		Compute: Compute{AllMIPS: 10950, CoreMIPS: 3160},
	},
	{
		Kind: "pi4-2gb", Model: "Raspberry Pi 4 Model B Rev 1.4", Revision: "b03114", Serial: "10000000c3b2a190",
		RAMBytes: 2 << 30, MemTotalKB: 1867572, CPUs: 4, Core: "cortex-a72", Desktop: true,
		Engine: dbms.MySQLFamily, Octet: 45, IdleTempMC: 44790,
		Heat:    Heat{MaxMHz: 1500, CaseIdleC: 50, CaseFull: 95, FanIdleC: 36, FanFull: 56},
		Compute: Compute{AllMIPS: 5750, CoreMIPS: 1661},
	},
	{
		Kind: "pi3plus", Model: "Raspberry Pi 3 Model B Plus Rev 1.3", Revision: "a020d3", Serial: "00000000c4b3a291",
		RAMBytes: 1 << 30, MemTotalKB: 948292, CPUs: 4, Core: "cortex-a53",
		Engine: dbms.PostgresFamily, Octet: 35, IdleTempMC: 47236,
		Heat:    Heat{MaxMHz: 1400, CaseIdleC: 50, CaseFull: 82, FanIdleC: 38, FanFull: 56, SoftLimitC: 60, SoftMHz: 1200},
		Compute: Compute{AllMIPS: 3240, CoreMIPS: 914},
	},
	{
		Kind: "zero2", Model: "Raspberry Pi Zero 2 W Rev 1.0", Revision: "902120", Serial: "00000000d5c4b3a2",
		RAMBytes: 512 << 20, MemTotalKB: 427796, CPUs: 4, Core: "cortex-a53",
		Engine: dbms.PostgresFamily, Octet: 20, IdleTempMC: 39551,
		Heat:    Heat{MaxMHz: 1000, CaseIdleC: 45, CaseFull: 72, FanIdleC: 35, FanFull: 52},
		Compute: Compute{AllMIPS: 3030, CoreMIPS: 838},
	},
	{
		Kind: "cm4", Model: "Raspberry Pi Compute Module 4 Rev 1.1", Revision: "c03141", Serial: "10000000e6d5c4b3",
		RAMBytes: 4 << 30, MemTotalKB: 3881824, CPUs: 4, Core: "cortex-a72",
		Engine: dbms.MySQLFamily, Octet: 60, IdleTempMC: 43820,
		Heat:    Heat{MaxMHz: 1500, CaseIdleC: 48, CaseFull: 90, FanIdleC: 36, FanFull: 55},
		Compute: Compute{AllMIPS: 5750, CoreMIPS: 1661},
	},
}

// MaxNumbered is how many numbered hosts one board can have.
const MaxNumbered = 14

// Boards returns every board the lab can simulate, each as its single host
// (named as its kind).
func Boards() []Board {
	out := make([]Board, len(boards))
	for i, b := range boards {
		b.Name = b.Kind
		if b.PageSize == 0 {
			b.PageSize = 4096
		}
		out[i] = b
	}
	return out
}

// DefaultFleet is the first write-up's desk: a Pi 4B (4 GB), a Pi 3B and a
// Pi Zero W.
func DefaultFleet() []Board { return Boards()[:3] }

// BoardNamed returns the board behind a lab host's name: a board's kind
// ("pi5") or a numbered host of it ("pi5-3"). Each numbered host has its
// own address, serial and idle temperature.
func BoardNamed(name string) (Board, bool) {
	all := Boards()
	for _, b := range all {
		if b.Name == name {
			return b, true
		}
	}
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return Board{}, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 1 || n > MaxNumbered || name[i+1:] != strconv.Itoa(n) {
		return Board{}, false
	}
	for place, b := range all {
		if b.Kind != name[:i] {
			continue
		}
		b.Name = name
		b.Octet = 100 + 15*place + n
		b.Serial = b.Serial[:len(b.Serial)-4] + fmt.Sprintf("ff%02x", n)
		b.IdleTempMC += 137 * n
		return b, true
	}
	return Board{}, false
}

// Kinds are the lab's boards' names (pi4, pi3, zero...), in order.
func Kinds() []string {
	var out []string
	for _, b := range boards {
		out = append(out, b.Kind)
	}
	return out
}

// CPUInfo renders /proc/cpuinfo as the board shows it under Raspberry Pi OS:
// the per-core blocks, then Hardware, Revision, Serial and Model.
func (b Board) CPUInfo() string {
	var s strings.Builder
	for i := 0; i < b.CPUs; i++ {
		fmt.Fprintf(&s, "processor\t: %d\n", i)
		switch b.Core {
		case "cortex-a76": // Pi 5, 64-bit Raspberry Pi OS
			s.WriteString("BogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x4\nCPU part\t: 0xd0b\nCPU revision\t: 1\n\n")
		case "cortex-a72": // 64-bit Raspberry Pi OS
			s.WriteString("BogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n")
		case "cortex-a53": // 32-bit Raspberry Pi OS
			s.WriteString("model name\t: ARMv7 Processor rev 4 (v7l)\nBogoMIPS\t: 38.40\nFeatures\t: half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt vfpd32 lpae evtstrm crc32 \nCPU implementer\t: 0x41\nCPU architecture: 7\nCPU variant\t: 0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n\n")
		default: // arm1176, Pi Zero and Pi 1
			s.WriteString("model name\t: ARMv6-compatible processor rev 7 (v6l)\nBogoMIPS\t: 697.95\nFeatures\t: half thumb fastmult vfp edsp java tls \nCPU implementer\t: 0x41\nCPU architecture: 7\nCPU variant\t: 0x0\nCPU part\t: 0xb76\nCPU revision\t: 7\n\n")
		}
	}
	fmt.Fprintf(&s, "Hardware\t: BCM2835\nRevision\t: %s\nSerial\t\t: %s\nModel\t\t: %s\n", b.Revision, b.Serial, b.Model)
	return s.String()
}

// MemInfo renders /proc/meminfo with the board's MemTotal and plausible idle
// figures for the rest (free and top read more than MemTotal).
func (b Board) MemInfo() string {
	t := b.MemTotalKB
	free := t * 70 / 100
	cached := t * 12 / 100
	buffers := t * 2 / 100
	lines := []struct {
		k string
		v uint64
	}{
		{"MemTotal", t}, {"MemFree", free}, {"MemAvailable", free + cached + buffers},
		{"Buffers", buffers}, {"Cached", cached}, {"SwapCached", 0},
		{"Active", t * 8 / 100}, {"Inactive", t * 10 / 100},
		{"SwapTotal", 102396}, {"SwapFree", 102396}, {"Dirty", 0}, {"Writeback", 0},
		{"AnonPages", t * 4 / 100}, {"Mapped", t * 3 / 100}, {"Shmem", t / 100},
		{"Slab", t * 3 / 100}, {"KernelStack", 1424}, {"PageTables", 1876},
		{"CommitLimit", t/2 + 102396}, {"Committed_AS", t * 6 / 100},
		{"VmallocTotal", 245760}, {"VmallocUsed", 5196}, {"CmaTotal", 262144}, {"CmaFree", 223148},
	}
	var s strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&s, "%-16s%8d kB\n", l.k+":", l.v)
	}
	return s.String()
}
