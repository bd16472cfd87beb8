package version

import "testing"

func TestLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"8.0.9", "8.0.30", true},
		{"8.0.30", "8.0.9", false},
		{"15", "15.0", false},
		{"15.0", "15", false},
		{"13.16", "15.8", true},
		{"10.11", "11.0", true},
		{"8.0", "8.0.30", true},
		{"11.4", "11.4", false},
		{"10.5.23-MariaDB", "10.11", true},
	} {
		if got := Less(c.a, c.b); got != c.less {
			t.Errorf("Less(%q, %q) = %v, want %v", c.a, c.b, got, c.less)
		}
	}
}

func TestValid(t *testing.T) {
	for s, want := range map[string]bool{"15": true, "10.11.6": true, "8.0.39": true, "1.2.3.4": true,
		"": false, "x;y": false, "15.abc": false, "8.0.39-evil": false, "15.": false, ".15": false, "1.2.3.4.5": false, "1234567": false} {
		if Valid(s) != want {
			t.Errorf("Valid(%q) = %v", s, !want)
		}
	}
}
