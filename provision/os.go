package provision

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/inventory"
	"pidb/remote"
	"pidb/tune"
)

// osStep sets the Pi up for a database, each part checked before it is
// applied and kept across reboots:
//   - the CPU frequency governor: performance (Raspberry Pi OS ships
//     ondemand, which lets a database's short queries run at the lowest
//     clock), by a unit of pidb's that sets it at every boot, after
//     raspi-config's; os_governor = "ondemand" keeps the distribution's;
//   - vm.swappiness 10: the server's memory stays in RAM while anything
//     else can go to swap (a sysctl.d file);
//   - noatime on the root filesystem where the data stays on the card (a
//     read is not a write);
//   - the journal bounded (64M on disk, 32M in RAM): the card is not
//     filled, nor worn, by logs; the servers' own logs go there
//     (MariaDB's) or are rotated by the distribution (PostgreSQL's);
//   - swap sized for the board where dphys-swapfile manages it (Raspberry
//     Pi OS: 100 MB by default): 512 MB on 1 GB or less, 1 GB above; left
//     as it is where the OS swaps to zram;
//   - on PostgreSQL, strict overcommit (vm.overcommit_memory 2, as
//     PostgreSQL's documentation advises: a backend that asks for more
//     than the kernel can give gets an error, where the OOM killer would
//     take the postmaster) where the preset's worst case and the rest of
//     the system fit in what the kernel then commits (strictOvercommit);
//     elsewhere the kernel's heuristic stays.
type osStep struct{}

func (osStep) Name() string { return "os" }

// The files the step writes.
const (
	governorUnitName = "pidb-cpu-governor.service"
	governorUnit     = "/etc/systemd/system/" + governorUnitName
	sysctlFile       = "/etc/sysctl.d/60-pidb.conf"
	journaldFile     = "/etc/systemd/journald.conf.d/60-pidb.conf"
	swapConf         = "/etc/dphys-swapfile"
	policies         = "/sys/devices/system/cpu/cpufreq/policy*/scaling_governor"
)

// governorUnitFor is the unit that sets the governor at every boot.
func governorUnitFor(governor string) string {
	return "# Managed by pidb: the CPU frequency governor for a database (os_governor).\n[Unit]\nDescription=pidb: CPU frequency governor " + governor +
		"\nAfter=raspi-config.service\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh -c 'for f in " + policies +
		"; do [ -w \"$f\" ] && echo " + governor + " > \"$f\"; done; true'\n\n[Install]\nWantedBy=multi-user.target\n"
}

const (
	sysctlContent   = "# Managed by pidb: the database's memory stays in RAM; the rest may go to swap.\nvm.swappiness = 10\n"
	journaldContent = "# Managed by pidb: logs bounded, so they neither fill nor wear the card.\n[Journal]\nSystemMaxUse=64M\nRuntimeMaxUse=32M\n"
)

// systemCommit is what strictOvercommit leaves for everything but the
// server's own memory: the OS's services, the SSH sessions, apt, the
// server's own code and stacks. Raspberry Pi OS Lite commits less than
// this at idle; strict accounting counts each thread's stack whole.
const systemCommit = 256 << 20

// Strict overcommit's ratio: the kernel's default (50) at least, 90 at
// most (swap + 90% of RAM: room for the kernel and the page cache).
const (
	minOvercommitRatio = 50
	maxOvercommitRatio = 90
)

// strict is strict overcommit on a host, decided by strictOvercommit.
type strict struct {
	ok    bool
	ratio int // vm.overcommit_ratio, in steps of 5
	// what it was decided on, in bytes: the server's worst case (the
	// preset's memory budget), the swap, the kernel's memory, and the
	// commit limit (swap + ratio% of mem; at maxOvercommitRatio where
	// not ok)
	budget, swap, mem, limit uint64
}

// strictOvercommit decides strict overcommit for a PostgreSQL host: the
// smallest ratio (from minOvercommitRatio, in steps of 5) whose commit
// limit, swap + ratio% of the kernel's memory, holds the server's worst
// case and systemCommit; not ok where even maxOvercommitRatio's does not
// (the worst case would be refused memory while it still fits in RAM).
func strictOvercommit(mem, swap, budget uint64) strict {
	st := strict{budget: budget, swap: swap, mem: mem}
	need := budget + systemCommit
	for r := minOvercommitRatio; r <= maxOvercommitRatio; r += 5 {
		st.ratio, st.limit = r, swap+mem*uint64(r)/100
		if st.limit >= need {
			st.ok = true
			return st
		}
	}
	return st
}

// live reports whether the kernel runs strict overcommit as decided
// (where it is ok and the kernel's values could be read; where it is not
// ok, the kernel's values are the user's or the kernel's).
func (st strict) live(have facts.Overcommit) bool {
	return !st.ok || !have.Known || (have.Mode == 2 && have.Ratio == st.ratio)
}

// sysctlFor is pidb's sysctl.d file: swappiness, and strict overcommit
// where it is ok.
func sysctlFor(st strict) string {
	if !st.ok {
		return sysctlContent
	}
	return sysctlContent + fmt.Sprintf("# PostgreSQL's advice: strict overcommit, so a backend gets an error where the OOM killer would take the server.\n"+
		"# swap %d MB + %d%% of %d MB = %d MB holds the preset's worst case (%d MB) and %d MB for the rest.\nvm.overcommit_memory = 2\nvm.overcommit_ratio = %d\n",
		st.swap>>20, st.ratio, st.mem>>20, st.limit>>20, st.budget>>20, systemCommit>>20, st.ratio)
}

// note says what the step decided on overcommit, for the step's note.
func (st strict) note() string {
	if st.ok {
		return fmt.Sprintf("strict overcommit (vm.overcommit_memory 2, ratio %d: swap %d MB + %d%% of %d MB = %d MB for the server's worst case, %d MB, and %d MB for the rest)",
			st.ratio, st.swap>>20, st.ratio, st.mem>>20, st.limit>>20, st.budget>>20, systemCommit>>20)
	}
	return fmt.Sprintf("the kernel's overcommit heuristic kept: strict overcommit would commit at most %d MB (swap %d MB + %d%% of %d MB), less than the server's worst case (%d MB) and %d MB for the rest",
		st.limit>>20, st.swap>>20, maxOvercommitRatio, st.mem>>20, st.budget>>20, systemCommit>>20)
}

// overcommitOf decides strict overcommit for t's host: only on
// PostgreSQL (whose documentation advises it; MariaDB's does not), once
// the server is installed; ok false and why "" elsewhere. swap is the swap
// the host will have after the step.
func overcommitOf(t *Target, swap uint64) (strict, error) {
	e, err := engine.Of(t.Facts)
	if err != nil || e.Flavor != dbms.Postgres {
		return strict{}, nil
	}
	in, s, err := t.settings(e)
	if err != nil {
		return strict{}, err
	}
	mem := t.Facts.MemBytes
	if mem == 0 {
		mem = t.Facts.RAMBytes * 85 / 100
	}
	st := strictOvercommit(mem, swap, tune.MemoryBudget(in, s))
	return st, nil
}

// journaldFor is the journal's drop-in: bounded, and in RAM only where
// the inventory asks (os_journal = "volatile": no log write reaches the
// card, and the logs are gone at a reboot).
func journaldFor(mode string) string {
	if mode == "volatile" {
		return journaldContent + "Storage=volatile\n"
	}
	return journaldContent
}

// swapSize is the swap file dphys-swapfile makes for a board, in MB.
func swapSize(ram uint64) int {
	if ram <= 1<<30 {
		return 512
	}
	return 1024
}

var swapSizeLine = regexp.MustCompile(`(?m)^[ \t]*#?[ \t]*CONF_SWAPSIZE[ \t]*=.*$`)

// withSwapSize is dphys-swapfile's configuration with CONF_SWAPSIZE set.
func withSwapSize(conf string, mb int) string {
	line := "CONF_SWAPSIZE=" + strconv.Itoa(mb) + "  # pidb: sized for the board"
	if loc := swapSizeLine.FindStringIndex(conf); loc != nil {
		return conf[:loc[0]] + line + conf[loc[1]:]
	}
	return strings.TrimRight(conf, "\n") + "\n" + line + "\n"
}

// withRootNoatime is fstab with noatime in the root filesystem's options;
// ok is false when fstab has no line for /.
func withRootNoatime(fstab string) (string, bool) {
	lines := strings.Split(fstab, "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 4 || strings.HasPrefix(f[0], "#") || f[1] != "/" {
			continue
		}
		opts := strings.Split(f[3], ",")
		if slices.Contains(opts, "noatime") {
			return fstab, true
		}
		opts = slices.DeleteFunc(opts, func(o string) bool { return o == "relatime" || o == "strictatime" || o == "atime" })
		f[3] = strings.Join(append(opts, "noatime"), ",")
		lines[i] = strings.Join(f, " ")
		return strings.Join(lines, "\n"), true
	}
	return fstab, false
}

// osFile is one file the step wants: what it holds now, what the step
// wants there, and what runs once that is written.
type osFile struct {
	path, have, want string
	then             []string
}

// governorOf is the governor the os step sets on h: os_governor, else
// performance.
func governorOf(h inventory.Host) string {
	if h.OSGovernor == "" {
		return "performance"
	}
	return h.OSGovernor
}

// read is a file's content now; "" where it is not there.
func read(ctx context.Context, t *Target, path string) (string, bool, error) {
	b, err := t.Root.ReadFile(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	return string(b), err == nil, err
}

// plan is what the step wants of the host: its files, each read once, and
// what it leaves alone, said as notes.
func (osStep) plan(ctx context.Context, t *Target) (files []osFile, notes []string, oc strict, err error) {
	add := func(path string, want func(have string) string, then ...string) error {
		have, _, err := read(ctx, t, path)
		if err == nil {
			files = append(files, osFile{path, have, want(have), then})
		}
		return err
	}
	fixed := func(content string) func(string) string { return func(string) string { return content } }
	if governor := governorOf(t.Host); governor != "ondemand" {
		if err := add(governorUnit, fixed(governorUnitFor(governor)), "systemctl daemon-reload", "systemctl enable "+governorUnitName, "systemctl restart "+governorUnitName); err != nil {
			return nil, nil, strict{}, err
		}
	}
	// the swap the host will have: dphys-swapfile's size for the board
	// where the step sets it, else what it has
	swap := t.Facts.SwapBytes
	conf, hasDphys, err := read(ctx, t, swapConf)
	if err != nil {
		return nil, nil, strict{}, err
	}
	swaps, _, err := read(ctx, t, "/proc/swaps")
	if err != nil {
		return nil, nil, strict{}, err
	}
	zram := zramSwap(swaps)
	if hasDphys && !zram {
		swap = uint64(swapSize(t.Facts.RAMBytes)) << 20
	}
	oc, err = overcommitOf(t, swap)
	if err != nil {
		return nil, nil, strict{}, err
	}
	sysctlHave, _, err := read(ctx, t, sysctlFile)
	if err != nil {
		return nil, nil, strict{}, err
	}
	sysctlThen := []string{"sysctl -q -p " + sysctlFile}
	if !oc.ok && strings.Contains(sysctlHave, "vm.overcommit_memory") {
		// strict overcommit taken back (the preset's worst case grew, or the
		// server is not PostgreSQL now): the kernel's defaults again
		sysctlThen = append([]string{"sysctl -q -w vm.overcommit_memory=0 vm.overcommit_ratio=50"}, sysctlThen...)
	}
	files = append(files, osFile{sysctlFile, sysctlHave, sysctlFor(oc), sysctlThen})
	if oc.budget > 0 {
		notes = append(notes, oc.note())
	}
	if err := add(journaldFile, fixed(journaldFor(t.Host.OSJournal)), "systemctl restart systemd-journald"); err != nil {
		return nil, nil, strict{}, err
	}
	// the data on the root filesystem (the card): noatime there too, as
	// Raspberry Pi OS has it; datadir mounts its drive with it
	if !strings.HasPrefix(t.Facts.DataDir, dataMount+"/") {
		fstab, _, err := read(ctx, t, "/etc/fstab")
		if err != nil {
			return nil, nil, strict{}, err
		}
		if want, ok := withRootNoatime(fstab); !ok {
			notes = append(notes, "the root filesystem has no line in /etc/fstab: its atime is left as it is")
		} else {
			files = append(files, osFile{"/etc/fstab", fstab, want, []string{"mount -o remount,noatime /"}})
		}
	}
	switch {
	case zram:
		// Raspberry Pi OS's newest releases swap to zram (compressed, in
		// RAM: no writes to the card); a swap file beside it is not added
		notes = append(notes, "the OS swaps to zram: the swap is left as it is")
	case !hasDphys:
		notes = append(notes, "no dphys-swapfile here: the swap is left as it is")
	default:
		files = append(files, osFile{swapConf, conf, withSwapSize(conf, swapSize(t.Facts.RAMBytes)), []string{"dphys-swapfile swapoff", "dphys-swapfile setup", "dphys-swapfile swapon"}})
	}
	return files, notes, oc, nil
}

// zramSwap reports whether /proc/swaps lists a zram device in use.
func zramSwap(swaps string) bool {
	for _, l := range strings.Split(swaps, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "/dev/zram") {
			return true
		}
	}
	return false
}

// change is what the step would do, given its plan: the files that differ
// and what runs after them, and what the live values still need (a unit
// disabled behind pidb's back, a governor another tool changed).
func (osStep) change(ctx context.Context, t *Target, files []osFile, notes []string, oc strict) (Change, error) {
	var ch Change
	var diffs []string
	for _, f := range files {
		if f.have != f.want {
			diffs = append(diffs, unified(f.path, f.have, f.want))
			ch.Commands = append(ch.Commands, f.then...)
		}
	}
	governor := governorOf(t.Host)
	if governor == "ondemand" {
		if _, there, err := read(ctx, t, governorUnit); err != nil {
			return Change{}, err
		} else if there {
			ch.Commands = append(ch.Commands, "systemctl disable --now "+governorUnitName, "rm -f "+governorUnit, "systemctl daemon-reload")
		}
		if t.Facts.Governor != "" && t.Facts.Governor != governor {
			ch.Commands = append(ch.Commands, `for f in `+policies+`; do echo ondemand > "$f"; done`)
		}
	} else {
		if t.Facts.Governor != "" && t.Facts.Governor != governor && !slices.Contains(ch.Commands, "systemctl restart "+governorUnitName) {
			ch.Commands = append(ch.Commands, "systemctl enable "+governorUnitName, "systemctl restart "+governorUnitName)
		}
		if !slices.Contains(ch.Commands, "systemctl enable "+governorUnitName) {
			// kept across reboots only while enabled
			out, err := t.run(ctx, "systemctl is-enabled "+governorUnitName+" 2>/dev/null || true")
			if err != nil {
				return Change{}, err
			}
			if strings.TrimSpace(out) != "enabled" {
				ch.Commands = append(ch.Commands, "systemctl enable "+governorUnitName)
			}
		}
	}
	if (t.Facts.Swappiness >= 0 && t.Facts.Swappiness != 10 || !oc.live(t.Facts.Overcommit)) && !slices.Contains(ch.Commands, "sysctl -q -p "+sysctlFile) {
		ch.Commands = append(ch.Commands, "sysctl -q -p "+sysctlFile)
	}
	if len(ch.Commands) == 0 && len(diffs) == 0 {
		return Change{}, nil
	}
	ch.Needed = true
	ch.Diff = strings.Join(diffs, "")
	ch.Note = fmt.Sprintf("CPU governor %s, vm.swappiness 10, the journal bounded to 64M", governor)
	if len(notes) > 0 {
		ch.Note += "; " + strings.Join(notes, "; ")
	}
	return ch, nil
}

func (s osStep) Check(ctx context.Context, t *Target) (Change, error) {
	files, notes, oc, err := s.plan(ctx, t)
	if err != nil {
		return Change{}, err
	}
	return s.change(ctx, t, files, notes, oc)
}

func (s osStep) Apply(ctx context.Context, t *Target) error {
	files, notes, oc, err := s.plan(ctx, t)
	if err != nil {
		return err
	}
	ch, err := s.change(ctx, t, files, notes, oc)
	if err != nil || !ch.Needed {
		return err
	}
	for _, f := range files {
		if f.have == f.want {
			continue
		}
		if _, err := t.run(ctx, "mkdir -p "+remote.Quote(path.Dir(f.path))); err != nil {
			return err
		}
		if err := t.Root.Upload(ctx, f.path, []byte(f.want), 0o644); err != nil {
			return err
		}
	}
	for _, cmd := range ch.Commands {
		if _, err := t.run(ctx, cmd); err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
	}
	if err := t.refresh(ctx); err != nil {
		return err
	}
	if governor := governorOf(t.Host); t.Facts.Governor != "" && t.Facts.Governor != governor {
		return fmt.Errorf("the CPU governor is %s after the step, not %s", t.Facts.Governor, governor)
	}
	if t.Facts.Swappiness >= 0 && t.Facts.Swappiness != 10 {
		return fmt.Errorf("vm.swappiness is %d after the step, not 10", t.Facts.Swappiness)
	}
	if !oc.live(t.Facts.Overcommit) {
		return fmt.Errorf("vm.overcommit_memory %d, vm.overcommit_ratio %d after the step, not 2 and %d", t.Facts.Overcommit.Mode, t.Facts.Overcommit.Ratio, oc.ratio)
	}
	return nil
}
