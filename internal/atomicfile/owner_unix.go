//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// KeepOwner gives f the owner and group of the file fi describes, where
// they are not this process's own: a file rewritten under sudo stays its
// user's.
func KeepOwner(f *os.File, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || (int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid()) {
		return nil
	}
	return f.Chown(int(st.Uid), int(st.Gid))
}
