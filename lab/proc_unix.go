//go:build unix

package lab

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// The lab's processes: it starts them in sessions of their own, outlives
// nothing it starts, and stops them with signals. The lab runs on Linux
// only (checkHost); these build wherever pidb does.

// detached is how a process the lab starts runs: in its own session, so
// it outlives the command that started it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func kill(pid int) error        { return syscall.Kill(pid, syscall.SIGKILL) }
func pause(pid int) error       { return syscall.Kill(pid, syscall.SIGSTOP) }
func cont(pid int) error        { return syscall.Kill(pid, syscall.SIGCONT) }
func signal0(pid int) error     { return syscall.Kill(pid, 0) }
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

// tryLockFile takes f's lock if it is free.
func tryLockFile(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// deviceOf is the number of the device the file system holding path is on.
func deviceOf(path string) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "", err
	}
	return strconv.FormatUint(uint64(st.Dev), 10), nil //nolint:unconvert // int32 on some systems
}
