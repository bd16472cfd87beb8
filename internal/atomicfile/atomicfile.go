// Package atomicfile writes a file on the controller whole or not at all:
// a temporary file beside it, given its mode before anything is written,
// filled, closed and renamed over it. Readers see the old file or the new
// one; a failure leaves the old one and no temporary file.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with what fill writes to the temporary file, which
// has mode (and whatever else fill sets on it, an owner say) when it is
// renamed into place.
func Write(path string, mode os.FileMode, fill func(f *os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
