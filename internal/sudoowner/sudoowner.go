// Package sudoowner says whom the files pidb makes on the controller
// belong to: run as root under sudo, the user who ran sudo (SUDO_UID,
// SUDO_GID), who can then read and remove them; otherwise whoever runs
// pidb, as files are.
package sudoowner

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// Owner is who the files and folders pidb makes belong to; the zero value
// leaves them to whoever runs pidb.
type Owner struct {
	UID, GID int // GID -1: the group left as it is
	Set      bool
}

// Current is the owner for this process (FromEnv of its environment).
func Current() Owner { return FromEnv(os.Getenv, os.Geteuid()) }

// FromEnv is the user who ran sudo, when pidb runs as root (euid 0) under
// it: SUDO_UID (not root's), with SUDO_GID, or the group left as it is
// where that is missing.
func FromEnv(getenv func(string) string, euid int) Owner {
	if euid != 0 {
		return Owner{}
	}
	uid, err := strconv.Atoi(getenv("SUDO_UID"))
	if err != nil || uid <= 0 {
		return Owner{}
	}
	gid, err := strconv.Atoi(getenv("SUDO_GID"))
	if err != nil || gid < 0 {
		gid = -1 // chown leaves the group as it is
	}
	return Owner{UID: uid, GID: gid, Set: true}
}

// Chown gives path (itself, not a link's target) to o; nothing when o is
// not set.
func (o Owner) Chown(path string) error {
	if !o.Set {
		return nil
	}
	return os.Lchown(path, o.UID, o.GID)
}

// MkdirAll makes dir and its missing parents with mode, each given to o;
// folders that are there already are left as they are.
func (o Owner) MkdirAll(dir string, mode fs.FileMode) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := o.MkdirAll(parent, mode); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, mode); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	return o.Chown(dir)
}
