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

	"pidb/inventory"
	"pidb/remote"
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
//     Pi OS: 100 MB by default): 512 MB on 1 GB or less, 1 GB above.
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
func (osStep) plan(ctx context.Context, t *Target) (files []osFile, notes []string, err error) {
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
			return nil, nil, err
		}
	}
	if err := add(sysctlFile, fixed(sysctlContent), "sysctl -q -p "+sysctlFile); err != nil {
		return nil, nil, err
	}
	if err := add(journaldFile, fixed(journaldFor(t.Host.OSJournal)), "systemctl restart systemd-journald"); err != nil {
		return nil, nil, err
	}
	// the data on the root filesystem (the card): noatime there too, as
	// Raspberry Pi OS has it; datadir mounts its drive with it
	if !strings.HasPrefix(t.Facts.DataDir, dataMount+"/") {
		fstab, _, err := read(ctx, t, "/etc/fstab")
		if err != nil {
			return nil, nil, err
		}
		if want, ok := withRootNoatime(fstab); !ok {
			notes = append(notes, "the root filesystem has no line in /etc/fstab: its atime is left as it is")
		} else {
			files = append(files, osFile{"/etc/fstab", fstab, want, []string{"mount -o remount,noatime /"}})
		}
	}
	conf, ok, err := read(ctx, t, swapConf)
	switch {
	case err != nil:
		return nil, nil, err
	case !ok:
		notes = append(notes, "no dphys-swapfile here: the swap is left as it is")
	default:
		files = append(files, osFile{swapConf, conf, withSwapSize(conf, swapSize(t.Facts.RAMBytes)), []string{"dphys-swapfile swapoff", "dphys-swapfile setup", "dphys-swapfile swapon"}})
	}
	return files, notes, nil
}

// change is what the step would do, given its plan: the files that differ
// and what runs after them, and what the live values still need (a unit
// disabled behind pidb's back, a governor another tool changed).
func (osStep) change(ctx context.Context, t *Target, files []osFile, notes []string) (Change, error) {
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
	if t.Facts.Swappiness >= 0 && t.Facts.Swappiness != 10 && !slices.Contains(ch.Commands, "sysctl -q -p "+sysctlFile) {
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
	files, notes, err := s.plan(ctx, t)
	if err != nil {
		return Change{}, err
	}
	return s.change(ctx, t, files, notes)
}

func (s osStep) Apply(ctx context.Context, t *Target) error {
	files, notes, err := s.plan(ctx, t)
	if err != nil {
		return err
	}
	ch, err := s.change(ctx, t, files, notes)
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
	return nil
}
