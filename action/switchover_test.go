//go:build unix

package action

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The switchover's rewrite of the inventory goes through a link to its
// target (the link stays one), keeps the file's mode and owner (a run
// under sudo leaves it the user's), and leaves a file edited meanwhile as
// it is, saying so.
func TestWriteLike(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.toml")
	link := filepath.Join(dir, "pidb.toml")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.toml", link); err != nil {
		t.Fatal(err)
	}
	owner := os.Geteuid()
	if owner == 0 { // as root, as under sudo: the file is another user's
		owner = 1000
		if err := os.Chown(target, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeLike(link, "old", "new"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer one: %v %v", fi.Mode(), err)
	}
	got, _ := os.ReadFile(target)
	st, _ := os.Stat(target)
	if string(got) != "new" || st.Mode().Perm() != 0o640 || int(st.Sys().(*syscall.Stat_t).Uid) != owner {
		t.Errorf("the target: %q, mode %v, owner %d; want new, 0640, %d", got, st.Mode().Perm(), st.Sys().(*syscall.Stat_t).Uid, owner)
	}
	// edited while the switchover ran: left as it is
	if err := writeLike(link, "old", "newer"); err == nil || !strings.Contains(err.Error(), "changed while the switchover ran") {
		t.Errorf("a file edited meanwhile: %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Errorf("a file edited meanwhile was rewritten: %q", got)
	}
}
