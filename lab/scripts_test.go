package lab

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pidb/internal/shtest"
)

// TestScriptsTakeValuesAsData: the supervisor's script takes the lab's
// paths (--dir chooses them) as parameters: under sh with its commands
// stubbed, a lab folder with hostile names joins each cgroup file named
// and boots nspawn with its arguments, each as it was, and runs none.
func TestScriptsTakeValuesAsData(t *testing.T) {
	sb := shtest.New(t)
	for _, dir := range shtest.Hostile(t.TempDir() + "/lab") {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		procs := []string{filepath.Join(dir, "cpu.procs"), filepath.Join(dir, "memory.procs")}
		binds := filepath.Join(dir, "binds")
		sb.Print("cat", "--bind=/dev/loop7:/dev/sda") // the binds file's words

		args := []string{"-D", filepath.Join(dir, "rootfs"), "--boot", "--machine=pisim-pi4"}
		r := sb.Run(supervisorScript, "", append(append([]string{binds}, procs...), append([]string{"--"}, args...)...)...)
		r.Check(t, "supervisorScript", "", args[1], binds)
		if len(r.Calls) != 2 || r.Calls[0].Name != "cat" || !slices.Equal(r.Calls[1].Args, append(args, "--bind=/dev/loop7:/dev/sda")) {
			t.Errorf("nspawn: %v", r.Calls)
		}
		for _, p := range procs {
			if b, err := os.ReadFile(p); err != nil || len(b) == 0 {
				t.Errorf("%s: joined no cgroup: %q %v", p, b, err)
			}
		}
	}
}
