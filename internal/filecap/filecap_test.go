package filecap

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A file up to the cap is read whole; one past it, a sparse file of a
// gigabyte and /dev/zero are refused, each at once and without their
// bytes in memory.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at")
	if err := os.WriteFile(at, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := Read(at, 4096); err != nil || len(data) != 4096 {
		t.Errorf("at the cap: %d bytes, %v", len(data), err)
	}
	sparse := filepath.Join(dir, "sparse")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, p := range []string{at, sparse, "/dev/zero"} {
		var tb *TooBigError
		if _, err := Read(p, 4095); !errors.As(err, &tb) || tb.Path != p {
			t.Errorf("%s past the cap: %v", p, err)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing took %d bytes", grew)
	}
	if _, err := Read(filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := Read(dir, 10); err == nil {
		t.Error("a directory")
	}
}
