package facts

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: whatever a host answers to the facts script, Parse reads
// what it can and never panics; a revision it decodes says something.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, out string) {
		fs := Parse(out)
		if fs.CPUs < 0 {
			t.Fatalf("%d CPUs", fs.CPUs)
		}
		for _, s := range Sections(out) {
			_ = ParseCPUInfo(s)
			_ = ParseOSRelease(s)
			_ = ParseMemTotal(s)
			if b, ok := DecodeRevision(s); ok && b.Type == "" && b.Processor == "" && b.RAMBytes == 0 {
				t.Fatalf("revision %q decoded to nothing: %+v", s, b)
			}
		}
	})
}
