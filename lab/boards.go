package lab

import (
	"fmt"
	"strings"
)

// Board is one simulated Raspberry Pi: what its /proc files say, how much
// memory it really gets, and how the lab inventory lists it.
type Board struct {
	Name       string // host name, also in the lab inventory
	Model      string // the Model line of /proc/cpuinfo
	Revision   string // new-style revision code (Raspberry Pi documentation, "Revision codes")
	Serial     string
	RAMBytes   uint64 // the board's nominal RAM: the memory cgroup's limit
	MemTotalKB uint64 // what the kernel shows: RAM less the GPU's share and the kernel's own
	CPUs       int    // processor entries in /proc/cpuinfo
	OneCore    bool   // pinned to one host core, so nproc prints 1
	Core       string // cpuinfo style: "cortex-a72" (64-bit OS), "cortex-a53" (32-bit OS), "arm1176"
	Desktop    bool   // Raspberry Pi OS with desktop: graphical.target and a display manager
	Engine     string // the lab inventory's engine for this host
	Octet      int    // last octet of the host's address in the lab subnet
	IdleTempMC int    // idle temperature in millidegrees Celsius
}

// DefaultFleet is the first write-up's desk: a Pi 4B (4 GB), a Pi 3B and a
// Pi Zero W. Revision codes: c03114 = 4 GB, Sony UK, 4B, rev 1.4; a02082 =
// 1 GB, Sony UK, 3B, rev 1.2; 9000c1 = 512 MB, Sony UK, Zero W, rev 1.1.
func DefaultFleet() []Board {
	return []Board{
		{
			Name: "pi4", Model: "Raspberry Pi 4 Model B Rev 1.4", Revision: "c03114", Serial: "10000000d4c3b2a1",
			RAMBytes: 4 << 30, MemTotalKB: 3884376, CPUs: 4, Core: "cortex-a72", Desktop: true,
			Engine: "postgres", Octet: 40, IdleTempMC: 45277,
		},
		{
			Name: "pi3", Model: "Raspberry Pi 3 Model B Rev 1.2", Revision: "a02082", Serial: "00000000b3a29180",
			RAMBytes: 1 << 30, MemTotalKB: 948304, CPUs: 4, Core: "cortex-a53", Desktop: true,
			Engine: "mysql", Octet: 30, IdleTempMC: 49388,
		},
		{
			Name: "zero", Model: "Raspberry Pi Zero W Rev 1.1", Revision: "9000c1", Serial: "00000000a1b2c3d4",
			RAMBytes: 512 << 20, MemTotalKB: 443452, CPUs: 1, OneCore: true, Core: "arm1176",
			Engine: "postgres", Octet: 10, IdleTempMC: 37932,
		},
	}
}

// SelectBoards returns the boards named in names (all when names is empty),
// in fleet order.
func SelectBoards(fleet []Board, names []string) ([]Board, error) {
	if len(names) == 0 {
		return fleet, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		found := false
		for _, b := range fleet {
			if b.Name == n {
				found = true
			}
		}
		if !found {
			var all []string
			for _, b := range fleet {
				all = append(all, b.Name)
			}
			return nil, fmt.Errorf("no lab host named %q (the lab has %s)", n, strings.Join(all, ", "))
		}
		want[n] = true
	}
	var out []Board
	for _, b := range fleet {
		if want[b.Name] {
			out = append(out, b)
		}
	}
	return out, nil
}

// CPUInfo renders /proc/cpuinfo as the board shows it under Raspberry Pi OS:
// the per-core blocks, then Hardware, Revision, Serial and Model.
func (b Board) CPUInfo() string {
	var s strings.Builder
	for i := 0; i < b.CPUs; i++ {
		fmt.Fprintf(&s, "processor\t: %d\n", i)
		switch b.Core {
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
