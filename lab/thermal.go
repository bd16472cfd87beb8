package lab

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The lab's thermal simulation. A process beside the hosts (started by
// `pidb lab up`, stopped by down) turns each host's CPU use into a
// temperature with a first-order model, writes it to the host's thermal
// zone, answers the host's vcgencmd (a script that reads the simulator's
// state), and from 80 C on lowers the reported Arm clock in steps, with
// the host's CPU quota, and sets the throttling flags, now and since boot,
// so a hot host's throughput really falls. The lab's machine has fewer
// cores than the boards, so one core of it busy is a board's full load,
// and a throttled host's quota is its clock's share of that core. A host's
// load counts the time its processes waited for this machine's CPU as
// well as the time they ran, so that a host heats as its board would
// whatever else this machine runs beside it.

// Cooling is how a simulated Pi is cooled.
type Cooling string

// The ways a simulated Pi is cooled.
const (
	CoolingCase Cooling = "case" // the official case, no fan: the first write-up's Pi 4
	CoolingFan  Cooling = "fan"  // a fan: the default
)

// Coolings are the ways a simulated Pi can be cooled.
func Coolings() []string { return []string{string(CoolingCase), string(CoolingFan)} }

// ThermalConfig is what the simulator reads at every step: how fast
// simulated time runs and how each host is cooled. Up writes it.
type ThermalConfig struct {
	Speed float64            `json:"speed"` // simulated seconds per real second
	Hosts map[string]Cooling `json:"hosts"` // host name -> its cooling
	// CPU is each host's CPU speed: CPUBoard (its board's capacity as a
	// CPU quota) or CPUFull (none there too: the machine's full speed, a
	// quota only when the board throttles). Its "*" entry is the lab's
	// speed for a host without one of its own; without that, CPUBoard.
	CPU map[string]string `json:"cpu,omitempty"`
	// Latency is the round trip the lab's link adds to each host, as a
	// duration ("20ms"), with a "*" entry for the hosts without one of
	// their own, as CPU has; none without either.
	Latency map[string]string `json:"latency,omitempty"`
	// CoreMIPS is 7-Zip's rating of one of this machine's cores
	// (MachineSpeed), which the boards' quotas are in.
	CoreMIPS int `json:"core_mips,omitempty"`
}

// The CPU speeds a lab runs its hosts at (lab up --cpu).
const (
	CPUBoard = "board" // each board's capacity, as published (Compute)
	CPUFull  = "full"  // this machine's, shared
)

// thermalModel is a board's temperatures in one cooling: idle and under
// full load (where it would settle without throttling), how fast it gets
// there, and its clocks. Ambient is about 28 C, as in the first write-up;
// in a case a Pi 4 under full load passes 80 C within a few minutes, with a
// fan it stays near 55 C.
type thermalModel struct {
	idleC, fullC float64
	tau          time.Duration // time constant, in simulated time
	maxMHz       int
	softC        float64 // the soft limit (3B+: 60 C); 0: none
	softMHz      int
}

// modelFor is a board's model in a cooling; anything but a case is a fan.
func modelFor(b Board, cooling Cooling) thermalModel {
	h := b.Heat
	m := thermalModel{tau: 100 * time.Second, maxMHz: h.MaxMHz, idleC: h.FanIdleC, fullC: h.FanFull, softC: h.SoftLimitC, softMHz: h.SoftMHz}
	if cooling == CoolingCase {
		m.idleC, m.fullC = h.CaseIdleC, h.CaseFull
	}
	return m
}

// throttle steps: from 80 C the firmware lowers the Arm clock step by step
// (on the 4-series 1500, 1000, 750, 600 MHz); 85 C is the hard limit.
var throttleSteps = []struct {
	fromC  float64
	factor float64
}{{85, 0.4}, {82.5, 0.5}, {80, 2.0 / 3}}

func clockFactor(tempC float64) float64 {
	for _, s := range throttleSteps {
		if tempC >= s.fromC {
			return s.factor
		}
	}
	return 1
}

// vcgencmd flags the simulator sets
const (
	flagCapped         = 1 << 1
	flagThrottled      = 1 << 2
	flagCappedBoot     = 1 << 17
	flagThrottledBoot  = 1 << 18
	flagSoftLimit      = 1 << 3
	flagSoftLimitBoot  = 1 << 19
	cpuPeriodMicros    = 100000
	simulatorProcess   = Prefix + "-thermal"
	vcgencmdStubPath   = "usr/bin/vcgencmd"
	vcgencmdStateDir   = "etc/pisim/vcgencmd"
	thermalConfigFile  = "thermal.json"
	simulatorPIDFile   = "thermal-sim.pid"
	simulatorLogFile   = "thermal-sim.log"
	simulatorStepReal  = time.Second
	simulatorIdleLimit = 10 // steps without a running host before it exits
)

// vcgencmdStub answers the three vcgencmd commands pidb uses from the
// simulator's state, in vcgencmd's own output format.
const vcgencmdStub = `#!/bin/sh
# vcgencmd of the pidb lab: answers from the thermal simulator's state
s=/etc/pisim/vcgencmd
case "$1 $2" in
"measure_temp ") t=$(cat /sys/class/thermal/thermal_zone0/temp); echo "temp=$((t / 1000)).$((t % 1000 / 100))'C" ;;
"measure_clock arm") echo "frequency(48)=$(cat $s/arm_hz)" ;;
"get_throttled ") echo "throttled=$(cat $s/throttled)" ;;
*) echo "error=2 error_msg=\"Command not registered\""; exit 255 ;;
esac
`

func (l *Lab) thermalConfigPath() string { return filepath.Join(l.Dir, thermalConfigFile) }

// writeThermalConfig writes the simulator's configuration: the speed, and
// the boards' cooling; other hosts keep theirs.
func (l *Lab) writeThermalConfig(ctx context.Context, boards []Board) error {
	cfg, ok := l.readThermalConfig()
	setPerHost(cfg.Latency, l.Latency, boards)
	if setSpeeds(cfg.CPU, l.CPU, boards) {
		mips, err := l.MachineCoreMIPS(ctx)
		if err != nil {
			return err
		}
		cfg.CoreMIPS = mips
	}
	if l.ThermalSpeed > 0 { // else the speed the lab was brought up with
		if l.ThermalSpeed != 1 && (l.ThermalSpeed != cfg.Speed || !ok) {
			l.logf("simulated time runs %gx faster than real time: heat builds up in 1/%g of the time it takes on a Pi", l.ThermalSpeed, l.ThermalSpeed)
		}
		cfg.Speed = l.ThermalSpeed
	}
	for _, b := range boards {
		c := l.Cooling[b.Name]
		if c == "" {
			c = l.Cooling[AllHosts]
		}
		if c == "" {
			c = CoolingFan
		}
		cfg.Hosts[b.Name] = c
	}
	if err := l.saveThermalConfig(cfg); err != nil {
		return err
	}
	// the quotas now, not at the simulator's next step
	for _, b := range boards {
		if err := l.setCPU(b, cfg); err != nil {
			return fmt.Errorf("%s: CPU quota: %w", b.Name, err)
		}
		if err := l.setStorage(b, cfg); err != nil {
			return fmt.Errorf("%s: its card's limits: %w", b.Name, err)
		}
	}
	l.reportCPU(boards, cfg)
	return nil
}

// setSpeeds puts the speeds asked for (Lab.CPU) into the config's: a
// speed for all becomes the lab's, for these hosts and the hosts booted
// later; a host named gets its own. It reports whether any of boards
// runs at board speed.
func setSpeeds(cfg, asked map[string]string, boards []Board) (board bool) {
	setPerHost(cfg, asked, boards)
	c := ThermalConfig{CPU: cfg}
	for _, b := range boards {
		board = board || c.speed(b.Name) == CPUBoard
	}
	return board
}

// setPerHost puts what a per-host flag asked for (--cpu, --latency) into
// the config's map: a value for all becomes the lab's, for these hosts
// (whose own go) and the hosts booted later; a host named gets its own.
func setPerHost(cfg, asked map[string]string, boards []Board) {
	if all := asked[AllHosts]; all != "" {
		cfg[AllHosts] = all
		for _, b := range boards {
			delete(cfg, b.Name)
		}
	}
	for _, b := range boards {
		if v := asked[b.Name]; v != "" {
			cfg[b.Name] = v
		}
	}
}

// forgetThermal drops the named hosts' cooling and CPU speed from the
// simulation's config. Under the lab's lock.
func (l *Lab) forgetThermal(names []string) error {
	cfg, ok := l.readThermalConfig()
	if !ok {
		return nil // none, or none readable: the next up writes it whole
	}
	for _, n := range names {
		delete(cfg.Hosts, n)
		delete(cfg.CPU, n)
		delete(cfg.Latency, n)
	}
	return l.saveThermalConfig(cfg)
}

// readThermalConfig reads the simulator's configuration, with its maps
// made and speed 1 where it has none; ok says a file was there and read.
func (l *Lab) readThermalConfig() (cfg ThermalConfig, ok bool) {
	if data, err := os.ReadFile(l.thermalConfigPath()); err == nil {
		ok = json.Unmarshal(data, &cfg) == nil
	}
	if cfg.Hosts == nil {
		cfg.Hosts = map[string]Cooling{}
	}
	if cfg.CPU == nil {
		cfg.CPU = map[string]string{}
	}
	if cfg.Latency == nil {
		cfg.Latency = map[string]string{}
	}
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	return cfg, ok
}

// saveThermalConfig replaces the simulator's configuration whole.
func (l *Lab) saveThermalConfig(cfg ThermalConfig) error {
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(l.thermalConfigPath(), string(data))
}

// speed is the host's CPU speed: its own, else the lab's, else board
// speed, which is the default.
func (cfg ThermalConfig) speed(name string) string {
	return cmp.Or(cfg.CPU[name], cfg.CPU[AllHosts], CPUBoard)
}

// quota is the host's CPU quota at its full clock for its speed in cfg:
// its board's capacity at board speed, else -1 (none).
func (cfg ThermalConfig) quota(b Board) int {
	if cfg.speed(b.Name) != CPUBoard {
		return -1
	}
	return b.Compute.Quota(cfg.CoreMIPS)
}

// writeQuota sets the host's CPU quota (-1: none) per cpuPeriodMicros.
func writeQuota(name string, quota int) error {
	dir := cgroupDir("cpu", machineName(name))
	if err := os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte(strconv.Itoa(cpuPeriodMicros)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte(strconv.Itoa(quota)), 0o644)
}

// setVcgencmd gives the host its vcgencmd, or takes it away, and resets
// the simulator's state when asked (a fresh boot clears the since-boot flags).
func (l *Lab) setVcgencmd(b Board, reset bool) error {
	root := l.rootfs(b.Name)
	state := filepath.Join(root, vcgencmdStateDir)
	if reset || !fileExists(filepath.Join(state, "throttled")) {
		if err := writeFile(filepath.Join(state, "arm_hz"), strconv.Itoa(b.Heat.MaxMHz*1_000_000)+"\n", 0o644); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(state, "throttled"), "0x0\n", 0o644); err != nil {
			return err
		}
	}
	stub := filepath.Join(root, vcgencmdStubPath)
	if l.NoVcgencmd[b.Name] {
		if err := os.Remove(stub); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return writeFile(stub, vcgencmdStub, 0o755)
}

// ensureSimulator starts the thermal simulator unless it runs already. It
// needs SimulatorCommand; without one (in Go tests) it says so and goes on.
func (l *Lab) ensureSimulator() error {
	if pids := processesMatching(simulatorProcess + " "); len(pids) > 0 {
		return nil
	}
	if len(l.SimulatorCommand) == 0 {
		l.logf("no thermal simulator: this program cannot start one (temperatures stay as they are)")
		return nil
	}
	if err := l.startProcess(simulatorProcess, l.SimulatorCommand, simulatorLogFile, simulatorPIDFile); err != nil {
		return fmt.Errorf("start the thermal simulator: %w", err)
	}
	return nil
}

// stopSimulator kills the thermal simulator.
func (l *Lab) stopSimulator() { l.stopProcess(simulatorProcess, simulatorPIDFile) }

// startProcess starts one of the lab's own processes (the simulator, the
// link): command, named name (what processesMatching finds it by), in a
// session of its own, its output appended to logFile and its pid in
// pidFile, both in the lab's folder.
func (l *Lab) startProcess(name string, command []string, logFile, pidFile string) error {
	logf, err := os.OpenFile(filepath.Join(l.Dir, logFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := &exec.Cmd{Path: command[0], Args: append([]string{name}, command[1:]...), Stdout: logf, Stderr: logf, SysProcAttr: detached()}
	if err := cmd.Start(); err != nil {
		return err
	}
	_ = os.WriteFile(filepath.Join(l.Dir, pidFile), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	return cmd.Process.Release()
}

// stopProcess kills the lab's processes named name and removes pidFile.
func (l *Lab) stopProcess(name, pidFile string) {
	for _, pid := range processesMatching(name + " ") {
		_ = kill(pid)
	}
	_ = os.Remove(filepath.Join(l.Dir, pidFile))
}

// modelState is what one step of the model leaves a host with.
type modelState struct {
	tempC float64
	armHz int
	flags uint64 // vcgencmd get_throttled
	quota int    // the host's CPU quota per cpuPeriodMicros; -1: none
}

// step moves the model on by dt of simulated time at load (0 to 1 of the
// board's full load) from tempC: first order towards the load's
// temperature, then the firmware's answer to it. flags are get_throttled's
// before the step: the now-flags follow the temperature, the since-boot
// ones stay once set. base is the host's CPU quota at its full clock (its
// board's capacity; -1: none, the machine's full speed), which a lower
// clock scales by its share (750 of 1,500 MHz halves it; at full speed, of
// the one core that is full load). It does no I/O.
func (m thermalModel) step(tempC, load float64, dt time.Duration, flags uint64, base int) modelState {
	target := m.idleC + load*(m.fullC-m.idleC)
	tempC += (target - tempC) * (1 - math.Exp(-float64(dt)/float64(m.tau)))
	f := clockFactor(tempC)
	full := base
	if full < 0 {
		full = cpuPeriodMicros
	}
	st := modelState{tempC: tempC, armHz: int(float64(m.maxMHz)*f) * 1_000_000, flags: flags &^ (flagCapped | flagThrottled | flagSoftLimit), quota: base}
	if f < 1 {
		st.flags |= flagCapped | flagThrottled | flagCappedBoot | flagThrottledBoot
		st.quota = int(f * float64(full))
	}
	if m.softC > 0 && tempC >= m.softC {
		// the soft limit: flagged as such; below 80 C its clock is the
		// only cap, and get_throttled says nothing of throttling
		st.flags |= flagSoftLimit | flagSoftLimitBoot
		if f == 1 {
			st.armHz = m.softMHz * 1_000_000
			st.quota = m.softMHz * full / m.maxMHz
		}
	}
	return st
}

// simHost is the simulator's state of one host.
type simHost struct {
	tempC    float64
	lastCPU  time.Duration
	lastWait map[int]time.Duration // each thread's wait to run, at the last step
	lastAt   time.Time
	started  bool
	quota    int
}

// Simulate runs the thermal simulation until ctx ends or no lab host has
// run for a while. It is what `pidb lab simulate` runs, in its own process.
func (l *Lab) Simulate(ctx context.Context) error {
	hosts := map[string]*simHost{}
	idle := 0
	for {
		cfg, _ := l.readThermalConfig()
		anyRunning := false
		for _, b := range l.hosts() {
			// powered, not running: whether sshd answers is a connection
			// to every host every second, each a fork and exec of sshd
			// there, which on a busy machine took the simulator many
			// seconds a round (a Pi 4 heated past 80 C only after its
			// run had ended) and the machine a good part of a core
			if !l.powered(b.Name) {
				delete(hosts, b.Name)
				continue
			}
			anyRunning = true
			h := hosts[b.Name]
			if h == nil {
				h = &simHost{quota: -1}
				hosts[b.Name] = h
			}
			if err := l.simulateStep(b, h, cfg); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %s: %v\n", time.Now().Format(time.RFC3339), b.Name, err)
			}
		}
		if anyRunning {
			idle = 0
		} else if idle++; idle >= simulatorIdleLimit {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(simulatorStepReal):
		}
	}
}

// simulateStep moves one host on by one step of real time.
func (l *Lab) simulateStep(b Board, h *simHost, cfg ThermalConfig) error {
	cpu, err := l.CPUTime(b.Name)
	if err != nil {
		return err
	}
	waits := l.waitTimes(b.Name)
	now := time.Now()
	m := modelFor(b, cfg.Hosts[b.Name])
	if !h.started {
		h.started, h.lastCPU, h.lastWait, h.lastAt = true, cpu, waits, now
		h.tempC = m.idleC
		if data, err := os.ReadFile(filepath.Join(l.rootfs(b.Name), "etc/pisim/thermal/thermal_zone0/temp")); err == nil {
			if mc, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				h.tempC = float64(mc) / 1000
			}
		}
	}
	// load: the CPU the host's processes wanted over the step, the time
	// they ran and the time they waited to run, against one core of this
	// machine (the lab's machine has fewer cores than the boards' four),
	// and no more than the host's quota lets it have: a board's processor
	// is as busy whatever else this machine does beside it (the other lab
	// hosts, the tests), and a throttled one runs, and heats, only at its
	// clock's share
	elapsed := now.Sub(h.lastAt)
	if elapsed <= 0 {
		elapsed = simulatorStepReal
	}
	var waited time.Duration
	for tid, w := range waits {
		waited += w - h.lastWait[tid] // a new thread's whole wait is in this step
	}
	// at board speed the board's full load is its capacity (Compute), in
	// this machine's cores; at full speed, one core
	base, full := cfg.quota(b), 1.0
	if base >= 0 {
		full = float64(base) / cpuPeriodMicros
	}
	share := full
	if h.quota >= 0 {
		share = float64(h.quota) / cpuPeriodMicros
	}
	load := math.Min(share, math.Max(0, float64(cpu-h.lastCPU+waited)/float64(elapsed))) / full
	h.lastCPU, h.lastWait, h.lastAt = cpu, waits, now
	state := filepath.Join(l.rootfs(b.Name), vcgencmdStateDir)
	var flags uint64
	if data, err := os.ReadFile(filepath.Join(state, "throttled")); err == nil {
		flags, _ = strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(data)), "0x"), 16, 32)
	}
	st := m.step(h.tempC, load, time.Duration(float64(elapsed)*cfg.Speed), flags, base)
	h.tempC = st.tempC
	// the flags and the clock before the temperature: a sample reads the
	// temperature first (thermal.Script), so one that sees this step's
	// temperature sees its clock and flags too. The other way round, a
	// sample on a busy machine read 94.7 C beside the full clock the step
	// before had left, and the run ended before the next.
	if err := writeAtomic(filepath.Join(state, "throttled"), "0x"+strconv.FormatUint(st.flags, 16)+"\n"); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(state, "arm_hz"), strconv.Itoa(st.armHz)+"\n"); err != nil {
		return err
	}
	if err := l.SetTemp(b.Name, int(math.Round(st.tempC*1000))); err != nil {
		return err
	}
	quota := st.quota
	// against the file, not what this process wrote last: lab up writes
	// it too, when it sets a host's speed (setCPU)
	dir := cgroupDir("cpu", machineName(b.Name))
	if data, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us")); err == nil && strings.TrimSpace(string(data)) != strconv.Itoa(h.quota) {
		h.quota = math.MinInt
	}
	if quota != h.quota {
		// lab up may have set the host's speed since this round read
		// the config (and written its quota): the next round has it
		if now, ok := l.readThermalConfig(); ok && now.speed(b.Name) != cfg.speed(b.Name) {
			return nil
		}
		if err := writeQuota(b.Name, quota); err != nil {
			return err
		}
		h.quota = quota
	}
	return nil
}

// writeAtomic replaces a file by renaming a temporary one over it.
func writeAtomic(path, data string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// PauseSimulator holds the thermal simulator (SIGSTOP) until the returned
// function lets it go on, so that what SetTemp writes stays.
func PauseSimulator() (resume func()) {
	pids := processesMatching(simulatorProcess + " ")
	for _, pid := range pids {
		_ = pause(pid)
	}
	return func() {
		for _, pid := range pids {
			_ = cont(pid)
		}
	}
}
