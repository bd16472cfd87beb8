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
