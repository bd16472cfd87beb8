package output

import (
	"bytes"
	"strings"
	"testing"
)

// TestTable: aligned columns, "-" for an empty cell, a host's control
// characters escaped before the columns are laid out, and with paint the
// verdicts coloured after.
func TestTable(t *testing.T) {
	var b bytes.Buffer
	rows := [][]string{{"pi4", "10.0.0.4", "PASS"}, {"zero", "", "\x1b[2Jok"}}
	if err := Table(&b, []string{"HOST", "ADDRESS", "VERDICT"}, rows, false); err != nil {
		t.Fatal(err)
	}
	want := "HOST  ADDRESS   VERDICT\npi4   10.0.0.4  PASS\nzero  -         \\x1b[2Jok\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}
	b.Reset()
	if err := Table(&b, []string{"HOST", "ADDRESS", "VERDICT"}, rows, true); err != nil {
		t.Fatal(err)
	}
	if want := "pi4   10.0.0.4  \x1b[32mPASS\x1b[0m\n"; !strings.Contains(b.String(), want) {
		t.Errorf("painted:\n%q\nwant %q in it", b.String(), want)
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, []map[string]any{{"host": "pi4", "cpus": 4}}); err != nil {
		t.Fatal(err)
	}
	want := "[\n  {\n    \"cpus\": 4,\n    \"host\": \"pi4\"\n  }\n]\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestPaint(t *testing.T) {
	got := Paint("HOST  VERDICT  REASONS\npi4   PASS     -\npi3   WARN     unstable_throughput\nzero  FAIL     throttled\nPASSED FAILING\n")
	want := "HOST  VERDICT  REASONS\npi4   \x1b[32mPASS\x1b[0m     -\npi3   \x1b[33mWARN\x1b[0m     unstable_throughput\nzero  \x1b[31mFAIL\x1b[0m     throttled\nPASSED FAILING\n"
	if got != want {
		t.Errorf("got %q", got)
	}
}
