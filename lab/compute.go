package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Compute is a board's processing capacity, as the 7-Zip benchmark (`7z
// b`) rates it: its total rating in MIPS (the mean of compression's and
// decompression's) on all of the board's cores, and on one. 7-Zip's
// benchmark is integer work bound by memory latency, as a database's is,
// and is published for every board and for PCs alike, unlike sysbench's
// `cpu` prime loop, which rates a 64-bit Arm core about like a PC's.
//
// The figures are Thomas Kaiser's sbc-bench results (github.com/
// ThomasKaiser/sbc-bench, Sorted-Results.md; each from its run's log under
// results/), all with p7zip 16.02, mostly on 32-bit Raspberry Pi OS:
//   - Pi Zero W: 460 (results/3Njz: a Pi Zero, the same BCM2835 at 1 GHz;
//     one core, so both figures are one)
//   - Pi 3B: 2970, one core 977 (results/4hOP: 1.2 GHz)
//   - Pi 3B+: 3240, one core 914 (results/1ism: 1.4 GHz, without a fan)
//   - Pi Zero 2 W: 3030, one core 838 (results/3E85: 1 GHz)
//   - Pi 4B, 4B 2 GB and CM4: 5750, one core 1661 (results/3EgS: a Pi 4B
//     at 1.5 GHz; the CM4 runs the same chip at the same clock)
//   - Pi 5, 8 and 4 GB: 10950, one core 3160 (results/4HDw: 2.4 GHz,
//     64-bit, 16K pages)
//
// For scale, the same tool rated an Intel Pentium G4600 (2 cores, 3.6
// GHz) 11810, one core 4448 (results/2jVw).
type Compute struct {
	AllMIPS  int // all of the board's cores
	CoreMIPS int // one of them
}

// Quota is the CPU quota (microseconds of CPU per cpuPeriodMicros, as
// cpu.cfs_quota_us takes it) that gives a host its board's capacity on a
// machine one of whose cores 7-Zip rates machineCoreMIPS: the board's
// all-core rating in the machine's cores. It is at least 1% of a core.
func (c Compute) Quota(machineCoreMIPS int) int {
	if machineCoreMIPS <= 0 {
		return -1
	}
	q := int(int64(c.AllMIPS) * databaseWorkPercent * cpuPeriodMicros / 100 / int64(machineCoreMIPS))
	return max(q, cpuPeriodMicros/100)
}

// databaseWorkPercent is how much of its 7-Zip rating a board does of a
// database's work, against this machine's core: 7-Zip's rating overstates
// a Pi's processor against a PC's for a database (an in-order or narrow
// Arm core with small caches and slow memory loses more on a database's
// branchy, cache-missing work than on 7-Zip's). One figure for every
// board, fitted on the first write-up's three TPC-B-like figures
// (scripts/calibrate, PostgreSQL 15 on each board's card, each run after
// an unmeasured one, as the write-up's hour-long runs were past their
// start): at 40% the lab's Pi 4 ran about 1,380 TPS and its Zero W 75,
// against the write-up's 750 and 54; at 30% each is within a quarter of
// the write-up's. BENCHMARKS.md has the table, with the figures
// the fit did not use.
const databaseWorkPercent = 30

// ParseSevenZipBench reads `7z b`'s "Tot:" line ("Tot:  Usage  R/U  Rating"):
// its rating, the mean of the compression and decompression ratings in
// MIPS (what sbc-bench publishes), and its rating for the CPU time it
// had (R/U: the rating at 100% usage), which a busy machine cannot lower.
func ParseSevenZipBench(out string) (rating, perUsage int, err error) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != "Tot:" {
			continue
		}
		ru, err1 := strconv.Atoi(f[len(f)-2])
		r, err2 := strconv.Atoi(f[len(f)-1])
		if err1 != nil || err2 != nil || r <= 0 || ru <= 0 {
			return 0, 0, fmt.Errorf("7z b: its Tot: line %q has no ratings in MIPS", strings.TrimSpace(line))
		}
		return r, ru, nil
	}
	return 0, 0, fmt.Errorf("7z b printed no Tot: line:\n%s", out)
}

// machineSpeedFile caches, in the lab's folder, 7-Zip's rating of one of
// this machine's cores, with the processor it was taken on.
func (l *Lab) machineSpeedFile() string { return filepath.Join(l.Dir, "machine-speed") }

// MachineCoreMIPS is 7-Zip's rating of one of this machine's cores: the
// unit the boards' quotas are in, so that a board gets the same capacity
// on a faster or a slower machine. It runs `7zz b -mmt1` (Debian's 7zip;
// `7z` where that is what there is) once, about a minute, and keeps the
// figure in the lab's folder for as long as the processor is the same. It
// takes the rating for the CPU time the benchmark had (R/U), so that a
// machine busy with other work rates its core as it is.
func (l *Lab) MachineCoreMIPS(ctx context.Context) (int, error) {
	model := cpuModel()
	if kv, err := readKV(l.machineSpeedFile()); err == nil {
		if n, err := strconv.Atoi(kv["core_mips"]); err == nil && n > 0 && kv["cpu"] == model {
			return n, nil
		}
	}
	bin := ""
	for _, b := range []string{"7zz", "7z"} {
		if p, err := exec.LookPath(b); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		return 0, errors.New("board speed rates this machine's cores with 7-Zip's benchmark, and there is no 7zz or 7z: apt-get install 7zip")
	}
	l.logf("rating one of this machine's cores with 7-Zip's benchmark (%s b -mmt1; once, about a minute): the boards' capacities are in it", filepath.Base(bin))
	out, err := run(ctx, bin, "b", "-mmt1")
	if err != nil {
		return 0, err
	}
	_, perUsage, err := ParseSevenZipBench(out)
	if err != nil {
		return 0, err
	}
	l.logf("one core of this machine (%s): %d MIPS", model, perUsage)
	return perUsage, writeFile(l.machineSpeedFile(), fmt.Sprintf("cpu=%s\ncore_mips=%d\nmeasured=%s\n", model, perUsage, time.Now().UTC().Format(time.RFC3339)), 0o644)
}

// cpuModel is /proc/cpuinfo's first "model name".
func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// setCPU writes the host's quota for its CPU speed in cfg: its board's
// capacity, or none. The simulator then keeps it, scaled while the board
// throttles. The host's /etc/pisim/speed says which ("board" or "full"),
// for pidb's facts: a run on the lab says it ran on a simulated board,
// and at what speed.
func (l *Lab) setCPU(b Board, cfg ThermalConfig) error {
	if err := writeAtomic(filepath.Join(l.rootfs(b.Name), "etc/pisim/speed"), cfg.speed(b.Name)+"\n"); err != nil {
		return err
	}
	return writeQuota(b.Name, cfg.quota(b))
}

// reportCPU says what board speed gives the hosts of boards, and, when the
// hosts at board speed need more cores than the machine has, by how much
// each falls short when all are busy at once.
func (l *Lab) reportCPU(boards []Board, cfg ThermalConfig) {
	cores := float64(runtime.NumCPU())
	var sum float64
	for _, b := range l.hosts() {
		if q := cfg.quota(b); q >= 0 && l.powered(b.Name) {
			sum += float64(q) / cpuPeriodMicros
		}
	}
	for _, b := range boards {
		q := cfg.quota(b)
		if q < 0 {
			continue
		}
		share := float64(q) / cpuPeriodMicros
		l.logf("%s: board speed: %.2f of this machine's cores (its board rates %d MIPS in 7-Zip's benchmark, a core here %d)", b.Name, share, b.Compute.AllMIPS, cfg.CoreMIPS)
		if share > cores {
			l.logf("%s: its board is faster than this whole machine (%.0f cores): it runs at %.0f%% of its board's speed", b.Name, cores, 100*cores/share)
		}
	}
	if sum > cores {
		l.logf("the hosts at board speed need %.2f cores together and this machine has %.0f: when all are busy at once, each gets about %.0f%% of its board's speed", sum, cores, 100*cores/sum)
	}
}

// Speed is the CPU speed the named host runs at, or would boot at:
// CPUBoard or CPUFull.
func (l *Lab) Speed(name string) string {
	cfg, _ := l.readThermalConfig()
	return cfg.speed(name)
}

// BoardCores is how many of this machine's cores the named hosts need to
// run each at its board's speed at once (a Pi 4 about two on a machine
// whose core rates 2,955 MIPS), and how many the machine has. It rates
// the machine if it was not yet.
func (l *Lab) BoardCores(ctx context.Context, names []string) (need float64, have int, err error) {
	mips, err := l.MachineCoreMIPS(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, n := range names {
		if q := l.board(n).Compute.Quota(mips); q > 0 {
			need += float64(q) / cpuPeriodMicros
		}
	}
	return need, runtime.NumCPU(), nil
}
