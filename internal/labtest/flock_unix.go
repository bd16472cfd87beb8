//go:build unix

package labtest

import (
	"errors"
	"os"
	"syscall"
)

// flock locks f, alone (exclusive) or shared; without wait it says whether
// it got the lock at once instead of waiting.
func flock(f *os.File, alone, wait bool) (bool, error) {
	how := syscall.LOCK_SH
	if alone {
		how = syscall.LOCK_EX
	}
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK) && !wait:
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		default:
			return false, err
		}
	}
}
