//go:build !unix

package atomicfile

import "os"

// KeepOwner does nothing where files have no Unix owner.
func KeepOwner(f *os.File, fi os.FileInfo) error { return nil }
