// Package filecap reads a file on the controller whole, up to a size: a
// file an inventory names (/dev/zero, a disk image) must not take the
// controller's memory.
package filecap

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// TooBigError is a file larger than what pidb reads of its kind.
type TooBigError struct {
	Path string
	Max  int64
}

func (e *TooBigError) Error() string {
	return fmt.Sprintf("%s is larger than %s: pidb reads no more of such a file", e.Path, size(e.Max))
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Read returns the contents of the file at path, or a *TooBigError where
// it holds more than max bytes; it reads no more than max+1 of them. A
// missing file wraps fs.ErrNotExist, as os.ReadFile's does.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		return nil, &TooBigError{Path: path, Max: max}
	} else if err == nil && fi.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("is a directory")}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooBigError{Path: path, Max: max}
	}
	return data, nil
}
