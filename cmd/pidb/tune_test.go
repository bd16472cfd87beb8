package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The "done when", through the command line.
func TestTuneShow(t *testing.T) {
	for mem, want := range map[string]float64{"4GiB": 1073741824, "1GiB": 268435456, "512MiB": 134217728} {
		code, out, errOut := runPidb(t, "tune", "show", "--engine", "postgres", "--mem", mem, "--cpus", "4", "--preset", "seed", "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var s []map[string]any
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		got := map[string]map[string]any{}
		for _, x := range s {
			got[x["name"].(string)] = x
		}
		if got["shared_buffers"]["bytes"] != want || got["max_parallel_workers_per_gather"]["value"] != "0" {
			t.Errorf("--mem %s: %v", mem, s)
		}
	}
	code, out, _ := runPidb(t, "tune", "show", "--engine", "mariadb", "--mem", "4GiB", "--cpus", "4", "--preset", "seed", "--format", "json")
	if code != 0 || !strings.Contains(out, `"bytes": 1073741824`) || !strings.Contains(out, `"name": "innodb_buffer_pool_size"`) {
		t.Errorf("mariadb json: exit %d\n%s", code, out)
	}
	// --json, as every other command takes it, is --format json
	if code, viaJSON, _ := runPidb(t, "tune", "show", "--engine", "mariadb", "--mem", "4GiB", "--cpus", "4", "--preset", "seed", "--json"); code != 0 || viaJSON != out {
		t.Errorf("--json: exit %d, and not what --format json printed:\n%s", code, viaJSON)
	}
	code, out, _ = runPidb(t, "tune", "show", "--engine", "mariadb", "--mem", "4GiB", "--cpus", "4", "--preset", "seed")
	if code != 0 || !strings.Contains(out, "\nskip-log-bin  # ") || !strings.HasPrefix(out, "# Managed by pidb: preset \"seed\" for MariaDB 11.8, 4096 MiB RAM, 4 CPUs") {
		t.Errorf("mariadb conf: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "shared_bufers=1GB"}, `did you mean "shared_buffers"?`},
		{[]string{"--set", "shared_buffers=plenty"}, "want a size"},
		{[]string{"--set", "novalue"}, "want name=value"},
		{[]string{"--preset", "turbo"}, "unknown preset"},
		{[]string{"--format", "yaml"}, "want conf or json"},
		{[]string{"--format", "conf", "--json"}, "give one"},
		{[]string{"--max-connections", "200", "--set", "max_connections=100"}, "the connections planned for are 200"},
		{[]string{"--bits", "16"}, "--bits 16: want 32"},
	} {
		args := append([]string{"tune", "show", "--engine", "postgres", "--mem", "4GiB", "--cpus", "4"}, c.args...)
		code, _, errOut := runPidb(t, args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	if code, _, errOut := runPidb(t, "tune", "show", "--engine", "postgres", "--cpus", "4"); code != 2 || !strings.Contains(errOut, "--mem") {
		t.Errorf("missing --mem: exit %d %q", code, errOut)
	}
	// a 32-bit server on an 8 GB board: sized within 3 GB, and said
	if code, out, errOut := runPidb(t, "tune", "show", "--engine", "postgres", "--mem", "8GiB", "--cpus", "4", "--bits", "32"); code != 0 || !strings.Contains(out, "shared_buffers = 768MB") ||
		!strings.Contains(errOut, "warning: a 32-bit server") {
		t.Errorf("--bits 32: exit %d\n%s%s", code, out, errOut)
	}
	// --engine as people write it: postgresql is PostgreSQL
	if code, out, errOut := runPidb(t, "tune", "show", "--engine", "PostgreSQL", "--mem", "4GiB", "--cpus", "4"); code != 0 || !strings.Contains(out, "for PostgreSQL 17") {
		t.Errorf("--engine PostgreSQL: exit %d\n%s%s", code, out, errOut)
	}
	// an override that trades durability: shown, and said on stderr with
	// what a power cut then loses; one that trades none, not
	code, out, errOut := runPidb(t, "tune", "show", "--engine", "postgres", "--mem", "4GiB", "--cpus", "4", "--set", "synchronous_commit=off", "--set", "checkpoint_timeout=10min")
	if code != 0 || !strings.Contains(out, "synchronous_commit = off") || strings.Count(errOut, "warning: ") != 1 ||
		!strings.Contains(errOut, "warning: --set synchronous_commit = off: a power cut or a crash of the Pi loses the last commits") {
		t.Errorf("--set synchronous_commit=off: exit %d\n%s\nstderr: %s", code, out, errOut)
	}
	// a board beyond any Pi: shown, with a word
	if code, out, errOut := runPidb(t, "tune", "show", "--engine", "postgres", "--mem", "64GiB", "--cpus", "128"); code != 0 || out == "" ||
		!strings.Contains(errOut, "warning: --mem 64 GiB is more than any Raspberry Pi has") || !strings.Contains(errOut, "warning: --cpus 128 is more than any Raspberry Pi has") {
		t.Errorf("--mem 64GiB --cpus 128: exit %d, stderr %q", code, errOut)
	}
	if _, _, errOut := runPidb(t, "tune", "show", "--engine", "postgres", "--mem", "16GiB", "--cpus", "4"); strings.Contains(errOut, "warning") {
		t.Errorf("a Pi 5 of 16 GB: %q", errOut)
	}
	// MySQL 8.0's innodb_log_file_size: refused for what it is, not as
	// a MariaDB setting
	if code, _, errOut := runPidb(t, "tune", "show", "--engine", "mysql", "--mem", "4GiB", "--cpus", "4", "--set", "innodb_log_file_size=256M"); code != 2 ||
		!strings.Contains(errOut, "deprecated (since 8.0.30)") || strings.Contains(errOut, "MariaDB setting") {
		t.Errorf("--set innodb_log_file_size on MySQL 8.0: exit %d %q", code, errOut)
	}
	if code, out, _ := runPidb(t, "tune", "presets"); code != 0 || !strings.Contains(out, "balanced") || !strings.Contains(out, "CAN BE LOST") {
		t.Errorf("presets: %d\n%s", code, out)
	}
}

// TestREADMETuneExamples runs every `pidb tune show` line of the README's
// examples: each must exit 0 (one did not, the budget check refusing the
// connections it asked for).
func TestREADMETuneExamples(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "pidb tune show ") {
			continue
		}
		cmd, _, _ := strings.Cut(line, "#") // the comment
		args := strings.Fields(cmd)[1:]
		n++
		if code, out, errOut := runPidb(t, args...); code != 0 || out == "" {
			t.Errorf("%s: exit %d\n%s", strings.TrimSpace(cmd), code, errOut)
		}
	}
	if n < 3 {
		t.Errorf("%d examples of pidb tune show in the README, want at least 3", n)
	}
}
