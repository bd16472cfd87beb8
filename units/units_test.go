package units

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{
		"512MB": 512 << 20, "512MiB": 512 << 20, "512M": 512 << 20, "1GB": 1 << 30, "1G": 1 << 30,
		"64kB": 64 << 10, "8kb": 8 << 10, "1048576": 1048576, "2TB": 2 << 40, "100B": 100,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1MB", "1.5GB", "12XB", "99999999999TB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q): no error", in)
		}
	}
}

// TestClosest: a likely typo's name, and nothing for a name too far from
// any.
func TestClosest(t *testing.T) {
	known := []string{"shared_buffers", "work_mem", "max_connections"}
	for in, want := range map[string]string{"shared_bufers": "shared_buffers", "work_men": "work_mem", "checkpoint_timeout": "", "max_conections": "max_connections"} {
		if got := Closest(in, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}
