package lab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// run runs a host command and returns its stdout; a failure carries the
// command line and its stderr.
func run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if len(msg) > 2000 {
			msg = "..." + msg[len(msg)-2000:]
		}
		return out.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return out.String(), nil
}

// cgroupRoot is where the cgroup v1 hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupHierarchies are the hierarchies every lab host joins: memory (the
// board's RAM as a limit), cpu (a quota the thermal simulator can lower),
// cpuacct (CPU time it can read), blkio (its card's limits, setStorage), freezer (held still while Snapshot copies
// its disk), and the systemd and unified hierarchies, so the container's own
// systemd makes its tree under the host's group instead of at the root,
// where two containers would collide.
var cgroupHierarchies = []string{"memory", "cpu", "cpuacct", "blkio", "freezer", "systemd", "unified"}

// cgroupDir returns the host's group in one hierarchy.
func cgroupDir(hierarchy, group string) string {
	return filepath.Join(cgroupRoot, hierarchy, group)
}

// pidsIn lists the processes in a cgroup and every group below it.
func pidsIn(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		data, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
		return nil
	})
	return pids
}

// removeCgroup kills every process in the group and removes it, deepest first.
func removeCgroup(ctx context.Context, dir string) error {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	if err := killAll(ctx, dir, 20*time.Second); err != nil {
		return err
	}
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		// a group can stay busy for a moment after its last process exits
		var err error
		for try := 0; try < 50; try++ {
			if err = syscall.Rmdir(dirs[i]); err == nil || os.IsNotExist(err) {
				err = nil
				break
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return err
			}
		}
		if err != nil {
			return fmt.Errorf("remove cgroup %s: %w", dirs[i], err)
		}
	}
	return nil
}

// killAll kills every process in the group and below it, again and again
// until none is left or within has passed.
func killAll(ctx context.Context, dir string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		pids := pidsIn(dir)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v in %s did not exit", pids, dir)
		}
		for _, p := range pids {
			_ = kill(p)
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// processesMatching returns the pids whose command line contains s.
func processesMatching(s string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// childOf returns the first process whose parent is ppid and whose command
// name is comm, or 0.
func childOf(ppid int, comm string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split at the last ')'
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(s[closing+1:])
		if len(fields) < 2 {
			continue
		}
		if p, _ := strconv.Atoi(fields[1]); p == ppid && s[open+1:closing] == comm {
			return pid
		}
	}
	return 0
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := signal0(pid); err != nil {
		return false
	}
	// a zombie is not alive
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z'
	}
	return true
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// writeFile writes data to path, making its folder.
func writeFile(path string, data string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(data), mode)
}
