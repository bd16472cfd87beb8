package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: the file is replaced whole with the mode asked; a fill that
// fails leaves the old file, and nothing beside it.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, 0o644, func(f *os.File) error { _, err := f.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Errorf("content %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	boom := errors.New("boom")
	if err := Write(p, 0o644, func(f *os.File) error { f.WriteString("half"); return boom }); !errors.Is(err, boom) {
		t.Errorf("a failed fill: %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Errorf("after a failed fill: %q", got)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("left beside it: %v", es)
	}
}
