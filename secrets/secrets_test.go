package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveLoad(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	h := Host{Pidb: Generate(), Databases: map[string]Database{"inventory": {Owner: "app", Password: Generate()}}}
	if err := Save("/srv/pis.toml", "pi4", h); err != nil {
		t.Fatal(err)
	}
	got, err := Load("/srv/pis.toml", "pi4")
	if err != nil || got.Pidb != h.Pidb || got.Databases["inventory"] != h.Databases["inventory"] {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	files, _ := filepath.Glob(filepath.Join(state, "pidb", "secrets", "pis-*", "pi4.json"))
	if len(files) != 1 {
		t.Fatalf("files: %v", files)
	}
	st, _ := os.Stat(files[0])
	dst, _ := os.Stat(filepath.Dir(files[0]))
	if st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Errorf("modes %v %v, want 0600 and 0700", st.Mode().Perm(), dst.Mode().Perm())
	}
	// another inventory with the same name elsewhere does not share
	if other, _ := Load("/home/x/pis.toml", "pi4"); other.Pidb != "" {
		t.Errorf("another inventory read pi4's secrets")
	}
}

func TestGenerate(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		p := Generate()
		if len(p) != 32 || strings.Trim(p, "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789") != "" || seen[p] {
			t.Fatalf("bad or repeated password %q", p)
		}
		seen[p] = true
	}
}

// cycle reads every byte value in turn, 0 to 255, again and again.
type cycle struct{ next byte }

func (c *cycle) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.next
		c.next++
	}
	return len(p), nil
}

// TestGenerateUniform: fed every byte value equally often, the generator
// makes every character of the alphabet equally often. A byte's plain
// modulo 57 would give the first 28 characters five bytes each and the
// others four.
func TestGenerateUniform(t *testing.T) {
	r := &cycle{}
	counts := map[rune]int{}
	// 57 passwords of 32 characters: 1824 characters, eight cycles of the 228 accepted bytes
	for i := 0; i < 57; i++ {
		p, err := generate(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p {
			counts[c]++
		}
	}
	if len(counts) != len(alphabet) {
		t.Fatalf("%d characters used, the alphabet has %d", len(counts), len(alphabet))
	}
	for c, n := range counts {
		if n != 32 {
			t.Errorf("%q drawn %d times of 1824, want 32 like every other", c, n)
		}
	}
}

// TestRelativeStateHomeIgnored: XDG_STATE_HOME must be absolute to count.
func TestRelativeStateHomeIgnored(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	t.Setenv("XDG_STATE_HOME", "relative/state")
	if d, err := Dir(); err != nil || d != "/home/someone/.local/state/pidb/secrets" {
		t.Errorf("Dir() = %q, %v; want the default under HOME", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "/var/state")
	if d, _ := Dir(); d != "/var/state/pidb/secrets" {
		t.Errorf("Dir() = %q with an absolute XDG_STATE_HOME", d)
	}
}
