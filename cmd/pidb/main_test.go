package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pidb/internal/cmdutil"
	"pidb/internal/labtest"
	"pidb/tables"

	"github.com/urfave/cli/v2"

	"pidb/facts"
	"pidb/fleet"
	"pidb/inventory"
	"pidb/remote"
)

// runPidb runs pidb with args, as a process of its own (this test binary
// as pidb, see TestMain), and returns its exit code and output. A process
// of its own: the tests run side by side, and pidb reads its environment
// (the password store's folder, SUDO_UID) and its flag library keeps state
// of its own (urfave/cli's help flag) as a program does, once a process.
func runPidb(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runPidbEnv(t, nil, args...)
}

// runPidbEnv is runPidb with env (NAME=value) added to the test's own.
func runPidbEnv(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := pidbCommand(args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	return exitOf(t, cmd.Run()), out.String(), errb.String()
}

// pidbCommand is pidb with args: this test binary, run as pidb, with the
// lab tests' connect timeout (labtest.ConnectTimeout).
func pidbCommand(args ...string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		panic(err) // the running test binary is always there
	}
	cmd := exec.Command(self, args...)
	cmd.Args[0] = "pidb"
	cmd.Env = append(os.Environ(), "PIDB_TEST_AS_PIDB=1", "PIDB_CONNECT_TIMEOUT="+labtest.ConnectTimeout.String())
	return cmd
}

// exitOf is the exit code of a finished pidb process.
func exitOf(t testing.TB, err error) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitCode()
	}
	t.Fatalf("pidb: %v", err)
	return -1
}

func writeInventory(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "inv.toml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const twoHosts = `[defaults]
allow_from = ["10.9.0.0/24"]

[[host]]
name = "pi4"
address = "10.9.0.40"

[[host]]
name = "pi3"
address = "10.9.0.30"
engine = "mariadb"
`

func TestInventoryCheckTable(t *testing.T) {
	inv := writeInventory(t, twoHosts)
	code, out, errOut := runPidb(t, "inventory", "check", "-i", inv)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "HOST") || !strings.HasPrefix(lines[1], "pi4 ") || !strings.Contains(lines[2], "mysql") {
		t.Errorf("table:\n%s", out)
	}
}

func TestInventoryCheckJSON(t *testing.T) {
	inv := writeInventory(t, twoHosts)
	code, out, errOut := runPidb(t, "inventory", "check", "-i", inv, "--limit", "pi3", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var hosts []map[string]any
	if err := json.Unmarshal([]byte(out), &hosts); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if len(hosts) != 1 || hosts[0]["host"] != "pi3" || hosts[0]["engine"] != "mysql" || hosts[0]["port"] != float64(22) {
		t.Errorf("json = %v", hosts)
	}
	// the table says detect where the inventory names no storage; so does the JSON
	if hosts[0]["storage"] != "detect" {
		t.Errorf("storage = %v, want detect", hosts[0]["storage"])
	}
	// no connections planned for: null, scaled to RAM (the table: "by RAM")
	if c, ok := hosts[0]["max_connections"]; !ok || c != nil {
		t.Errorf("max_connections = %v (present %v), want null", c, ok)
	}
	if allow, _ := hosts[0]["allow_from"].([]any); len(allow) != 1 || allow[0] != "10.9.0.0/24" {
		t.Errorf("allow_from = %v", hosts[0]["allow_from"])
	}
	// every value a command would take, and where it came from
	bench, _ := hosts[0]["bench"].(map[string]any)
	thermal, _ := hosts[0]["thermal"].(map[string]any)
	from, _ := hosts[0]["from"].(map[string]any)
	if bench["workload"] != "oltp-read-only" || bench["clients"] != float64(8) || bench["table_size"] != float64(10000) || thermal["interval"] != "5s" {
		t.Errorf("bench %v, thermal %v", bench, thermal)
	}
	if from["bench.workload"] != "the engine's default" || from["bench.clients"] != "default" || from["bench.table_size"] != "the workload's default" ||
		from["allow_from"] != inv+":2" || from["engine"] != inv+":11" || from["user"] != "default" {
		t.Errorf("from %v", from)
	}
}

// TestInventoryAsWritten: engine = "PostgreSQL" is PostgreSQL (it was
// read as MySQL's family, and provision would have installed MariaDB);
// a setting that trades durability is a warning on stderr at its line,
// with what a power cut then loses, and the check passes.
func TestInventoryAsWritten(t *testing.T) {
	inv := writeInventory(t, "[[host]]\nname = \"a\"\naddress = \"10.1.2.3\"\nengine = \"PostgreSQL\"\n[host.settings]\nfsync = \"off\"\n")
	code, out, errOut := runPidb(t, "inventory", "check", "-i", inv, "--json")
	var hosts []map[string]any
	if err := json.Unmarshal([]byte(out), &hosts); code != 0 || err != nil || len(hosts) != 1 || hosts[0]["engine"] != "postgres" {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, out, errOut)
	}
	if want := "warning: " + inv + ":6: host.settings.fsync: fsync = off: PostgreSQL no longer waits for its writes"; !strings.Contains(errOut, want) || strings.Count(errOut, "warning:") != 1 {
		t.Errorf("stderr %q, want one warning, %q", errOut, want)
	}
}

// TestInventoryCheckShowsAll: --json holds every key a command takes (the
// drive the data moves to, the OS step's, allow_public) and the values it
// takes where the inventory says nothing (max_lag's 30s, not 0s); the
// table's STORAGE says the drive, not "detect".
func TestInventoryCheckShowsAll(t *testing.T) {
	inv := writeInventory(t, "[validate]\nstrict = true\n[[host]]\nname = \"a\"\naddress = \"10.1.2.3\"\ndata_device = \"/dev/sda\"\ndata_device_wipe = true\n"+
		"os_governor = \"ondemand\"\nos_journal = \"volatile\"\nallow_from = [\"203.0.113.0/24\"]\nallow_public = true\n[[host]]\nname = \"b\"\naddress = \"10.1.2.4\"\n")
	code, out, errOut := runPidb(t, "inventory", "check", "-i", inv, "--json")
	var hosts []map[string]any
	if err := json.Unmarshal([]byte(out), &hosts); code != 0 || err != nil || len(hosts) != 2 {
		t.Fatalf("exit %d, %v: %s\n%s", code, err, out, errOut)
	}
	a, b := hosts[0], hosts[1]
	if a["data_device"] != "/dev/sda" || a["data_device_wipe"] != true || a["os_governor"] != "ondemand" || a["os_journal"] != "volatile" || a["allow_public"] != true || a["storage"] != "drive /dev/sda" {
		t.Errorf("host a: %v", a)
	}
	if b["data_device"] != nil || b["data_device_wipe"] != false || b["os_governor"] != "performance" || b["os_journal"] != "persistent" || b["allow_public"] != false || b["storage"] != "detect" {
		t.Errorf("host b (the defaults): %v", b)
	}
	from, _ := a["from"].(map[string]any)
	if from["data_device"] != inv+":6" || from["os_governor"] != inv+":8" {
		t.Errorf("from %v", from)
	}
	if v, _ := a["validate"].(map[string]any); v["max_lag"] != "30s" {
		t.Errorf("validate %v, want max_lag 30s, as validate takes it", v)
	}
	_, table, _ := runPidb(t, "inventory", "check", "-i", inv)
	if !regexp.MustCompile(`(?m)^a\s.*\sdrive /dev/sda\s`).MatchString(table) {
		t.Errorf("the table's STORAGE for a drive:\n%s", table)
	}
}

// TestClusterSelections: a --limit that leaves a replica without its
// primary is said at the check (provision refuses it); the check connects
// to no host, so the documentation's addresses are never reached.
// (action's TestReplicasWrite: a bench that writes on a replica alone.)
func TestClusterSelections(t *testing.T) {
	inv := writeInventory(t, "[[host]]\nname = \"pi4\"\naddress = \"192.0.2.40\"\n[[host]]\nname = \"pi3\"\naddress = \"192.0.2.30\"\n"+
		"[[cluster]]\nname = \"shop\"\nprimary = \"pi4\"\nreplicas = [\"pi3\"]\n")
	code, _, errOut := runPidb(t, "inventory", "check", "-i", inv, "--limit", "!pi4")
	if want := `warning: --limit selects pi3, a replica in cluster "shop", without its primary pi4, which it is seeded from: select pi4 too; pidb provision refuses it`; code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("check --limit '!pi4': exit %d, stderr %q; want 0 and %q", code, errOut, want)
	}
	if code, _, errOut := runPidb(t, "inventory", "check", "-i", inv); code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("check of the whole cluster: exit %d, stderr %q", code, errOut)
	}
	// a switchover to the primary: said so, before any host, and a
	// failed switchover writes nothing to stdout, table or JSON
	for _, json := range []bool{false, true} {
		args := []string{"cluster", "switchover", "-i", inv, "shop", "pi4"}
		if json {
			args = append(args, "--json")
		}
		code, out, errOut := runPidb(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, `cluster "shop": pi4 is already the primary: name one of its replicas (pi3)`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestBenchNeverRan: a host that failed before its run (nothing listens
// on loopback's port 1) is the clients asked for, its error, and null for
// every number never measured, the engine and TLS unknown too; one host
// failed is "the host failed", not "1 of 1 hosts".
func TestBenchNeverRan(t *testing.T) {
	inv := writeInventory(t, "[[host]]\nname = \"a\"\naddress = \"127.0.0.1\"\nport = 1\n")
	code, out, errOut := runPidbEnv(t, []string{"SSH_AUTH_SOCK="}, "bench", "-i", inv, "--clients", "8", "--json", "--connect-timeout", "5s")
	var res []map[string]any
	if err := json.Unmarshal([]byte(out), &res); code != 1 || err != nil || len(res) != 1 {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	r := res[0]
	if r["clients"] != float64(8) || r["error"] == nil || r["workload"] != "tpcb" {
		t.Errorf("the host that never ran: %v", r)
	}
	for _, k := range []string{"tps", "qps", "transactions", "p95_ms", "duration_s", "engine", "tls"} {
		if v, ok := r[k]; !ok || v != nil {
			t.Errorf("%s: %v (there: %v), want null", k, v, ok)
		}
	}
	if !strings.Contains(errOut, "pidb: the host failed:\n") {
		t.Errorf("stderr: %s", errOut)
	}
	// a CSV file that cannot be written: exit 2, before the host
	for file, want := range map[string]string{"/nonexistent/t.csv": "--csv /nonexistent/t.csv: no folder /nonexistent to write it in", t.TempDir(): "that is a folder: name the file to write"} {
		code, _, errOut := runPidbEnv(t, []string{"SSH_AUTH_SOCK="}, "thermal", "-i", inv, "--csv", file)
		if code != 2 || !strings.Contains(errOut, want) || strings.Contains(errOut, "connecting") {
			t.Errorf("thermal --csv %s: exit %d\n%s", file, code, errOut)
		}
	}
}

func TestExitCodes(t *testing.T) {
	good := writeInventory(t, twoHosts)
	bad := writeInventory(t, "[[host]]\nname = \"a\"\naddress = \"x\"\nengine = \"oracle\"\n")
	// settings the tuner does not have, or of the wrong type, on the host's engine
	badSettings := writeInventory(t, "[[host]]\nname = \"a\"\naddress = \"10.1.2.3\"\n[host.settings]\nshared_preload_libraries = \"evil\"\n"+
		"work_mem = \"lots\"\ninnodb_buffer_pool_size = \"1G\"\n\n[[host]]\nname = \"b\"\naddress = \"10.1.2.4\"\nengine = \"mysql\"\n[host.settings]\nskip-log-bin = true\ninnodb_buffer_pool_size = \"1G\"\n")
	noKey := writeInventory(t, "[[host]]\nname = \"a\"\naddress = \"127.0.0.1\"\n[[host]]\nname = \"b\"\naddress = \"127.0.0.2\"\nidentity_file = \"/nonexistent/pidb-key\"\n")
	conns := writeInventory(t, "[defaults]\nmax_connections = 200\n[[host]]\nname = \"a\"\naddress = \"10.1.2.3\"\n[host.settings]\nmax_connections = 50\n")
	// the public key named where the private one belongs, and a file that holds no key
	keys := t.TempDir()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(keys, "id_ed25519")).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(keys, "notes.txt"), []byte("not a key\n"), 0o600)
	pubKey := writeInventory(t, "[[host]]\nname = \"a\"\naddress = \"127.0.0.1\"\nidentity_file = \""+filepath.Join(keys, "id_ed25519.pub")+"\"\n"+
		"[[host]]\nname = \"b\"\naddress = \"127.0.0.2\"\nidentity_file = \""+filepath.Join(keys, "notes.txt")+"\"\n")
	withPort := writeInventory(t, "[[host]]\nname = \"a\"\naddress = \"127.0.0.1:2222\"\n")
	// the sql workload's scripts, named relative to the inventory's folder
	scripts := t.TempDir()
	for name, src := range map[string]string{"good.sql": "\\set id random(1, 10)\nSELECT :id;\n", "bad.sql": "SELECT 1;\n\\set id random(1)\nSELECT :id;\n"} {
		if err := os.WriteFile(filepath.Join(scripts, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scripted := func(bench string) string {
		p := filepath.Join(scripts, "inv"+strconv.Itoa(len(bench))+".toml")
		if err := os.WriteFile(p, []byte("[bench]\n"+bench+"\n[[host]]\nname = \"a\"\naddress = \"10.1.2.3\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	goodScript := scripted("workload = \"sql\"\nscript = \"good.sql\"")
	badScript := scripted("workload = \"sql\"\nscript = \"bad.sql\"")
	noScript := scripted("workload = \"sql\"")
	strayScript := scripted("workload = \"tpcb\"\nscript = \"good.sql\"\n")
	cases := []struct {
		args    []string
		code    int
		errText string
	}{
		{[]string{"inventory", "check", "-i", goodScript}, 0, ""},
		{[]string{"inventory", "check", "-i", badScript}, 2, badScript + ":3: bench.script: " + filepath.Join(scripts, "bad.sql") + ":2: \\set id: random wants two values"},
		{[]string{"inventory", "check", "-i", noScript}, 2, "a: workload sql runs your own script: name it with --script FILE.sql or [bench] script"},
		{[]string{"inventory", "check", "-i", strayScript}, 2, strayScript + `:3: host "a": script is for sql; tpcb runs its own transactions: set workload = "sql", or pass --workload sql`},
		{[]string{"inventory", "check", "-i", scripted("script = \"good.sql\"")}, 2, `:2: host "a": script is for sql; tpcb runs its own transactions: set workload = "sql", or pass --workload sql`},
		{[]string{"bench", "-i", good, "--limit", "pi4", "--workload", "sql"}, 2, "pi4: workload sql runs your own script"},
		{[]string{"bench", "-i", good, "--limit", "pi4", "--workload", "sql", "--script", filepath.Join(scripts, "none.sql")}, 2, "--script: " + filepath.Join(scripts, "none.sql") + " does not exist"},
		{[]string{"bench", "-i", good, "--limit", "pi4", "--workload", "sql", "--script", filepath.Join(scripts, "bad.sql")}, 2, filepath.Join(scripts, "bad.sql") + ":2: \\set id: random wants two values"},
		{[]string{"bench", "-i", good, "--limit", "pi4", "--script", filepath.Join(scripts, "good.sql")}, 2, "pi4: --script is for sql; tpcb runs its own transactions"},
		{[]string{"inventory", "check", "-i", badSettings}, 2, badSettings + ":5: host \"a\": setting shared_preload_libraries = \"evil\": pidb does not set shared_preload_libraries on PostgreSQL"},
		{[]string{"inventory", "check", "-i", badSettings}, 2, badSettings + ":6: host \"a\": setting work_mem = \"lots\": want a size"},
		{[]string{"inventory", "check", "-i", badSettings}, 2, badSettings + ":7: host \"a\": setting innodb_buffer_pool_size = \"1G\": PostgreSQL has no innodb_buffer_pool_size (it is a MySQL/MariaDB setting)"},
		{[]string{"inventory", "check", "-i", conns}, 2, conns + ":7: host \"a\": [host.settings] max_connections = 50, but max_connections = 200 plans the connections"},
		{[]string{"inventory", "check", "-i", noKey}, 2, noKey + ":7: host \"b\": identity_file /nonexistent/pidb-key does not exist"},
		{[]string{"facts", "-i", noKey}, 2, noKey + ":7: host \"b\": identity_file /nonexistent/pidb-key does not exist"},
		{[]string{"inventory", "check", "-i", pubKey}, 2, pubKey + ":4: host \"a\": identity_file: " + filepath.Join(keys, "id_ed25519.pub") + " is the public key: name the private one, " + filepath.Join(keys, "id_ed25519")},
		{[]string{"facts", "-i", pubKey}, 2, pubKey + ":8: host \"b\": identity_file: " + filepath.Join(keys, "notes.txt") + " is not a private key (ssh: no key found)"},
		{[]string{"inventory", "check", "-i", withPort}, 2, withPort + ":3: host.address: address \"127.0.0.1:2222\" has a port: put \"127.0.0.1\" in address and the port in port = 2222"},
		{[]string{"--version"}, 0, ""},
		{[]string{"inventory", "check", "-i", good}, 0, ""},
		{[]string{"inventory", "check", "-i", bad}, 2, bad + ":4: host.engine: unknown engine \"oracle\""},
		{[]string{"inventory", "check", "-i", good, "--limit", "pi5"}, 2, `no host named "pi5"`},
		{[]string{"inventory", "check", "-i", filepath.Join(t.TempDir(), "missing.toml")}, 2, "cannot read inventory"},
		{[]string{"inventory", "check"}, 2, "no inventory"},
		{[]string{"inventory", "check", "--no-such-flag"}, 2, "unknown flag --no-such-flag: see pidb inventory check --help"},
		{[]string{"provison"}, 2, `unknown command "provison" (did you mean "provision"?): see pidb --help`},
		{[]string{"provision", "-i", good, "--dryrun"}, 2, "unknown flag --dryrun (did you mean --dry-run?)"},
		{[]string{"bench", "-i", good, "--duration", "5"}, 2, `--duration "5": want a number and a unit, like "90s", "5m" or "1h"`},
		{[]string{"inventory", "chek"}, 2, `unknown command "chek"`},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"inventory", "check", "-i", good, "extra"}, 2, "unexpected argument"},
		// refused before any host is touched
		{[]string{"bench", "-i", good, "--workload", "tpcb"}, 2, "pi3: workload tpcb needs PostgreSQL"},
		{[]string{"bench", "-i", good, "--limit", "pi3", "--protocol", "simple"}, 2, "--protocol simple is not for oltp-read-only"},
		{[]string{"validate", "-i", good, "--workload", "tpc-h"}, 2, `unknown workload "tpc-h"`},
		{[]string{"bench", "-i", good, "--workload", "tpcc", "--mix", "1:2"}, 2, `pidb: --mix: want five weights joined by colons, new_order:payment:order_status:delivery:stock_level (the standard's is 45:43:4:4:4), not "1:2"`},
		{[]string{"bench", "-i", good, "--limit", "pi4", "--workload", "quiz", "--check"}, 2, "pi4: --check is for tpcb and tpcc, whose data has consistency conditions; quiz has none"},
		{[]string{"tune", "show", "--engine", "mysql", "--mem", "4GiB", "--cpus", "4", "--version", "8.0.39;evil"}, 2, `version "8.0.39;evil": want the server's version in dotted numbers`},
	}
	for _, c := range cases {
		code, _, errOut := runPidb(t, c.args...)
		if code != c.code {
			t.Errorf("pidb %s: exit %d, want %d (stderr: %s)", strings.Join(c.args, " "), code, c.code, errOut)
		}
		if c.errText != "" && !strings.Contains(errOut, c.errText) {
			t.Errorf("pidb %s: stderr %q, want it to contain %q", strings.Join(c.args, " "), errOut, c.errText)
		}
	}
}

func TestHelpEverywhere(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"inventory", "--help"}, {"inventory", "check", "--help"}} {
		code, out, _ := runPidb(t, args...)
		if code != 0 || !strings.Contains(out, "USAGE") {
			t.Errorf("pidb %s: exit %d, output %q", strings.Join(args, " "), code, out)
		}
	}
	// every command: `pidb help CMD [SUB]` is `pidb CMD [SUB] --help`, and
	// each flag's default is said once, never a bare zero
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden || c.Name == "help" {
				continue
			}
			p := append(append([]string{}, path...), c.Name)
			code, viaFlag, _ := runPidb(t, append(p, "--help")...)
			helpArgs := append([]string{"help"}, p...)
			code2, viaHelp, _ := runPidb(t, helpArgs...)
			if code != 0 || code2 != 0 || viaFlag != viaHelp || !strings.Contains(viaFlag, "USAGE") {
				t.Errorf("pidb %s --help (exit %d) and pidb %s (exit %d) differ:\n%s\n---\n%s", strings.Join(p, " "), code, strings.Join(helpArgs, " "), code2, viaFlag, viaHelp)
			}
			for _, line := range strings.Split(viaFlag, "\n") {
				if strings.Count(line, "(default:") > 1 || strings.Contains(line, "(default: 0)") || strings.Contains(line, "(default: 0s)") || strings.Contains(line, "(default: false)") {
					t.Errorf("pidb %s --help: %q", strings.Join(p, " "), strings.TrimSpace(line))
				}
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, newApp(io.Discard, io.Discard).Commands)
	if code, out, errOut := runPidb(t, "help", "facts"); code != 0 || !strings.Contains(out, "pidb facts -i FILE") {
		t.Errorf("pidb help facts: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runPidb(t, "nosuch"); code != 2 || !strings.Contains(errOut, `unknown command "nosuch": see pidb --help`) {
		t.Errorf("pidb nosuch: exit %d, %q", code, errOut)
	}
}

// TestMain lets the test binary be pidb itself, for the tests that run it
// from a shell (completion): with PIDB_TEST_AS_PIDB=1 it runs pidb's main.
// Otherwise the passwords pidb generates go to a state folder of the test
// binary's own, never the user's: the lab tests run side by side (pidb runs
// in their process, so none can set its own), each with an inventory of
// its own, and the store keeps each inventory's passwords apart.
func TestMain(m *testing.M) {
	if os.Getenv("PIDB_TEST_AS_PIDB") == "1" {
		os.Exit(run(append([]string{"pidb"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	os.Exit(labtest.Main(m))
}

// TestCompletion: the bash script, sourced in a real bash, completes
// pidb's commands and a command's flags by asking pidb (here the test
// binary as pidb); zsh's and fish's scripts come out too.
func TestCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	code, script, _ := runPidb(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash: exit %d", code)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) []string {
		t.Helper()
		q := make([]string, len(words))
		for i, w := range words {
			q[i] = "'" + w + "'"
		}
		sh := script + "\nCOMP_WORDS=('" + self + "' " + strings.Join(q, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)) +
			"\n_pidb_complete\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", sh)
		cmd.Env = append(os.Environ(), "PIDB_TEST_AS_PIDB=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash: %v", err)
		}
		return strings.Fields(string(out))
	}
	if got := complete("val"); strings.Join(got, " ") != "validate" {
		t.Errorf("pidb val<TAB>: %v, want validate", got)
	}
	if got := complete("validate", "--li"); strings.Join(got, " ") != "--limit" {
		t.Errorf("pidb validate --li<TAB>: %v, want --limit", got)
	}
	if got := complete("tune", ""); !slices.Contains(got, "show") || !slices.Contains(got, "apply") {
		t.Errorf("pidb tune <TAB>: %v, want its subcommands", got)
	}
	// a flag's value: the workloads, the inventory's hosts (the last of a
	// list), files after -i
	if got := complete("bench", "--workload", "tp"); strings.Join(got, " ") != "tpcb tpcc" {
		t.Errorf("pidb bench --workload tp<TAB>: %v, want tpcb tpcc", got)
	}
	inv := writeInventory(t, twoHosts)
	if got := complete("facts", "-i", inv, "--limit", "pi"); strings.Join(got, " ") != "pi4 pi3" {
		t.Errorf("pidb facts -i INV --limit pi<TAB>: %v, want the inventory's hosts", got)
	}
	if got := complete("facts", "-i", inv, "--limit", "pi4,pi"); strings.Join(got, " ") != "pi4,pi3" {
		t.Errorf("pidb facts -i INV --limit pi4,pi<TAB>: %v, want the list's last name completed, with a host not in it yet", got)
	}
	// a group's subcommands, and nothing after a command that has none:
	// never its "help h" (pidb help CMD is the top level's)
	if got := complete("cluster", ""); strings.Join(got, " ") != "status switchover" {
		t.Errorf("pidb cluster <TAB>: %v, want status switchover", got)
	}
	if got := complete("tune", "show", ""); slices.Contains(got, "help") || slices.Contains(got, "h") {
		t.Errorf("pidb tune show <TAB>: %v, want no help h", got)
	}
	if got := complete("he"); strings.Join(got, " ") != "help" {
		t.Errorf("pidb he<TAB>: %v, want help", got)
	}
	if got := complete("facts", "-i", strings.TrimSuffix(inv, "inv.toml")+"in"); len(got) != 1 || got[0] != inv {
		t.Errorf("pidb facts -i DIR/in<TAB>: %v, want %s", got, inv)
	}
	if got := complete("bench", "--workload", "sql", "--script", strings.TrimSuffix(inv, "inv.toml")+"in"); len(got) != 1 || got[0] != inv {
		t.Errorf("pidb bench --script DIR/in<TAB>: %v, want the file %s", got, inv)
	}
	for _, shell := range []string{"zsh", "fish"} {
		if code, out, errOut := runPidb(t, "completion", shell); code != 0 || !strings.Contains(out, "pidb") {
			t.Errorf("completion %s: exit %d\n%s%s", shell, code, out, errOut)
		}
	}
	if code, _, errOut := runPidb(t, "completion", "tcsh"); code != 2 || !strings.Contains(errOut, "want bash, zsh or fish") {
		t.Errorf("completion tcsh: exit %d %q", code, errOut)
	}
}

// TestManPage: the man page is made from the same definitions as the help:
// every command's usage line and every flag its help lists are in it.
func TestManPage(t *testing.T) {
	code, man, _ := runPidb(t, "man")
	if code != 0 || !strings.HasPrefix(man, ".nh\n.TH pidb 1") {
		t.Fatalf("man: exit %d\n%.200s", code, man)
	}
	page := strings.ReplaceAll(man, `\-`, "-")
	// the sections a man page has that help has no place for, after the commands
	last := strings.LastIndex(page, ".SH help")
	for _, section := range []string{`.SH "EXIT STATUS"`, ".SH ENVIRONMENT", ".SH FILES", ".SH EXAMPLES"} {
		if i := strings.Index(page, section); i < last {
			t.Errorf("man: %s at %d, want it after the commands (%d)", section, i, last)
		}
	}
	for _, want := range []string{"PIDB_INVENTORY", "NO_COLOR", "known_hosts", "pidb-results", "pidb inventory check -i pis.toml"} {
		if !strings.Contains(page, want) {
			t.Errorf("man: no %s", want)
		}
	}
	for _, cmd := range [][]string{{"validate"}, {"bench"}, {"tune", "show"}, {"lab", "up"}} {
		_, help, _ := runPidb(t, append(cmd, "--help")...)
		for _, f := range regexp.MustCompile(`(?m)^\s+(--[a-z-]+)`).FindAllStringSubmatch(help, -1) {
			if f[1] != "--help" && !strings.Contains(page, f[1]) {
				t.Errorf("pidb %s: flag %s is in the help, not in the man page", strings.Join(cmd, " "), f[1])
			}
		}
		usage := regexp.MustCompile(`(?m)^USAGE:\n\s+(.+)$`).FindStringSubmatch(help)
		if usage == nil || !strings.Contains(page, strings.ReplaceAll(usage[1], `\`, `\\`)) && !strings.Contains(page, usage[1]) {
			t.Errorf("pidb %s: the usage line is not in the man page: %v", strings.Join(cmd, " "), usage)
		}
	}
}

// hostile is what a hostile host can put in a failed command's stderr or
// in a fact: clear the screen, set the window's title, go back to the
// line's start and write over it.
const hostile = "\x1b[2J\x1b]0;pwned\x07\rall good"

// noControls fails the test if a control character other than newline
// (ESC, BEL, CR) reached the writer.
func noControls(t *testing.T, what, got string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\r"} {
		if strings.Contains(got, bad) {
			t.Errorf("%s: %q reached the writer: %q", what, bad, got)
		}
	}
	if !strings.Contains(got, `\x1b[2J\x1b]0;pwned\x07\x0dall good`) {
		t.Errorf("%s: the host's text is not shown escaped: %q", what, got)
	}
}

// TestHostErrorSanitized: a host's error, with what the host wrote on
// stderr, is printed with its control characters escaped.
func TestHostErrorSanitized(t *testing.T) {
	exit := &remote.ExitError{Host: "pi4", Cmd: "apt-get -q update", Code: 100, Stderr: []byte(hostile)}
	err := &fleet.Failed{Count: 1, Total: 2, Err: errors.Join(fmt.Errorf("pi4: install: %w", exit))}
	var out bytes.Buffer
	if code := exitCode(err, &out); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	noControls(t, "the error", out.String())
	if !strings.HasPrefix(out.String(), "pidb: 1 of 2 hosts failed:\npi4: install: pi4: apt-get -q update: exit status 100: ") {
		t.Errorf("the error's lines were changed: %q", out.String())
	}
}

// TestTableSanitized: a table's cells (here a facts table, whose model
// the host said) are printed with their control characters escaped.
func TestTableSanitized(t *testing.T) {
	var out bytes.Buffer
	app := &cli.App{Writer: &out}
	c := cli.NewContext(app, flag.NewFlagSet("facts", flag.ContinueOnError), nil)
	results := []fleet.Result[facts.Facts]{
		{Host: inventory.Host{Name: "pi4"}, Value: facts.Facts{Host: "pi4", Model: hostile, OS: facts.OSRelease{ID: "debian", VersionID: "12"}}},
		{Host: inventory.Host{Name: "pi3"}, Err: errors.New("gone")},
	}
	if err := cmdutil.Table(c, tables.Facts(results)); err != nil {
		t.Fatal(err)
	}
	noControls(t, "the table", out.String())
}

// TestCredentialsCAWithoutPassword: `credentials --ca` takes its flags,
// and for a host with no password yet says so before connecting to it or
// writing the file.
func TestCredentialsCAWithoutPassword(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("SUDO_UID", "")
	inv := writeInventory(t, twoHosts)
	file := filepath.Join(t.TempDir(), "pi4-ca.pem")
	code, out, errOut := runPidb(t, "credentials", "-i", inv, "--ca", file, "--connect-timeout", "1s", "-q", "pi4")
	if code != 1 || out != "" || !strings.Contains(errOut, "pi4: no password for pidb yet: run pidb provision first") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", file, err)
	}
}

// TestInventoryCheckWarnsTLSOffPublic: tls = false with an allow_from on a
// public network passes the check (exit 0) with a warning on stderr at the
// tls line, never on stdout, and every other command says it too; on a
// private network, no warning.
func TestInventoryCheckWarnsTLSOffPublic(t *testing.T) {
	inv := writeInventory(t, "[[host]]\nname = \"pi4\"\naddress = \"10.9.0.40\"\nallow_public = true\ntls = false\nallow_from = [\"203.0.113.0/24\"]\n")
	for _, args := range [][]string{{"inventory", "check", "-i", inv}, {"inventory", "check", "-i", inv, "--json"}} {
		code, out, errOut := runPidb(t, args...)
		if code != 0 {
			t.Fatalf("pidb %s: exit %d, want 0; stderr %s", strings.Join(args, " "), code, errOut)
		}
		if want := "warning: " + inv + ":5: host \"pi4\": tls = false"; !strings.Contains(errOut, want) {
			t.Errorf("pidb %s: stderr %q, want %q", strings.Join(args, " "), errOut, want)
		}
		if strings.Contains(out, "warning") {
			t.Errorf("pidb %s: the warning on stdout: %s", strings.Join(args, " "), out)
		}
	}
	// every command that reads the inventory says so, before any host (an
	// unknown --limit name stops this one there)
	if code, _, errOut := runPidb(t, "provision", "-i", inv, "--limit", "nosuch"); code != 2 || !strings.Contains(errOut, "warning: "+inv+":5: host \"pi4\": tls = false") {
		t.Errorf("provision: exit %d, stderr %q; want 2 and the warning", code, errOut)
	}
	private := writeInventory(t, strings.Replace(twoHosts, "[defaults]\n", "[defaults]\ntls = false\n", 1))
	if code, _, errOut := runPidb(t, "inventory", "check", "-i", private); code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("tls = false on a private network: exit %d, stderr %q", code, errOut)
	}
}

// TestInventoryCheckShowsAdopt: an owner pidb may take over is said so, in
// the table and in the JSON.
func TestInventoryCheckShowsAdopt(t *testing.T) {
	inv := writeInventory(t, "[[host]]\nname = \"pi4\"\naddress = \"10.9.0.40\"\n"+
		"[[host.database]]\nname = \"inventory\"\nowner = \"app\"\nadopt = true\n"+
		"[[host.database]]\nname = \"quiz\"\nowner = \"quizzer\"\n")
	code, out, errOut := runPidb(t, "inventory", "check", "-i", inv)
	if code != 0 || !strings.Contains(out, "inventory(app, adopted),quiz(quizzer)") {
		t.Errorf("table: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runPidb(t, "inventory", "check", "-i", inv, "--json")
	if code != 0 || !strings.Contains(out, `"owner": "app",`) || !strings.Contains(out, `"adopt": true`) || !strings.Contains(out, `"adopt": false`) {
		t.Errorf("json: exit %d\n%s\n%s", code, out, errOut)
	}
}
