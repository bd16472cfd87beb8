// Package shtest runs the shell text pidb builds under the real /bin/sh,
// with every command it calls replaced by a stub that records its
// arguments, for the tests that feed each script builder hostile values:
// a value spliced into a script's text runs Canary or reaches its command
// changed, and the test sees either.
package shtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Canary is the command a hostile value tries to run. Its stub records
// its call like any other, so a test sees it ran.
const Canary = "pidb_injected"

// Hostile are values that run Canary, end a quoted word, or pass for an
// option wherever a script splices them into its text instead of taking
// them as data. Each starts with prefix (a path's folder, say).
func Hostile(prefix string) []string {
	return []string{
		prefix + "$(" + Canary + ")",
		prefix + "`" + Canary + "`",
		prefix + "';" + Canary + ";'",
		prefix + `";` + Canary + `;"`,
		prefix + ";" + Canary,
		prefix + "\n" + Canary + "\n",
		prefix + " --pidb-option",
		prefix + `\"$HOME%s*`,
	}
}

// AllInOne is every hostile form in one value.
func AllInOne(prefix string) string { return strings.Join(Hostile(prefix), "") }

// Option is a value that a command takes for an option if it comes where
// its options do.
const Option = "--pidb-option"

// wrappers are stubs that record their call, then run the command they
// are given: runuser -u U -- CMD, sudo -n -- CMD, env [NAME=V]... CMD,
// timeout [-k D] D CMD, nsenter [-OPTS]... CMD.
var wrappers = map[string]string{
	"runuser": `[ "$1" = -u ] && export STUB_AS="$2"; while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done; shift; exec "$@"`,
	"sudo":    `while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done; shift; exec "$@"`,
	"env":     `while [ $# -gt 0 ]; do case $1 in -*|*=*) shift ;; *) break ;; esac; done; exec "$@"`,
	"timeout": `while [ $# -gt 0 ]; do case $1 in -k) shift 2 ;; -*) shift ;; *) shift; break ;; esac; done; exec "$@"`,
}

// Commands are the commands the stubs stand for: whatever pidb's scripts
// run on a host. A script that calls one not here fails the test, naming
// it, so a builder that calls a new command adds it here.
var Commands = []string{
	"apt-get", "awk", "basename", "blkid", "cat", "chmod", "chown", "cmp", "cp", "date", "dirname", "dpkg", "dpkg-query",
	"find", "findmnt", "grep", "head", "id", "install", "ln", "mariadb", "mariadb-admin", "mariadb-dump", "mkdir", "mktemp",
	"mount", "mountpoint", "mv", "my_print_defaults", "mysql", "mysqladmin", "mysqldump", "openssl", "pg_basebackup",
	"pg_ctlcluster", "pg_isready", "pg_lsclusters", "psql", "readlink", "rm", "rmdir", "sed", "sha256sum", "sleep", "sort",
	"stat", "sync", "systemctl", "systemd-nspawn", "systemd-run", "mknod", "chgrp", "tail", "tee", "touch", "tr", "ufw", "wc", "xargs",
	Canary,
}

// Call is one command a script ran: its name and arguments, and the
// user it ran as (runuser -u USER; else root).
type Call struct {
	Name string
	Args []string
	As   string
	Env  map[string]string // the variables Sandbox.Env names, where set
}

func (c Call) String() string { return strings.Join(append([]string{c.Name}, c.Args...), " ") }

// Sandbox is a folder of stubs, and their record.
type Sandbox struct {
	t    testing.TB
	dir  string
	log  string
	fail []string
	envs []string
	// prelude defines the stubs as functions of the script's own shell
	prelude string
}

// New makes a sandbox in a test's temporary folder.
func New(t testing.TB) *Sandbox {
	t.Helper()
	s := &Sandbox{t: t, dir: t.TempDir()}
	s.log = filepath.Join(s.dir, "calls")
	bin := filepath.Join(s.dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sh := range []string{"sh", "bash"} {
		if err := os.Symlink("/bin/"+sh, filepath.Join(bin, sh)); err != nil {
			t.Fatal(err)
		}
	}
	names := slices.Clone(Commands)
	for w := range wrappers {
		names = append(names, w)
	}
	var prelude strings.Builder
	// sleep waits for nothing and records nothing: a script's wait loops
	// end at once
	prelude.WriteString("sleep() { :; }\n")
	for _, name := range names {
		// one write a call: the stubs of a pipeline record at once
		body := `n=$(($# + 2)); as=${STUB_AS:-root}; r="${#as}:$as
` + strconv.Itoa(len(name)) + ":" + name + `
"; for a in "$@"; do r="$r${#a}:$a
"; done; for v_ in $STUB_ENVS; do eval "if [ -n \"\${$v_+x}\" ]; then a=\"env:$v_=\$$v_\"; r=\"\$r\${#a}:\$a
\"; n=\$((n + 1)); fi"; done; printf 'call %d\n%s' "$n" "$r" >> "$STUB_LOG"` + "\n" +
			`case " $STUB_FAIL " in *" ` + name + ` "*) exit 1 ;; esac` + "\n" +
			`if [ -f "$STUB_OUT/` + name + `" ]; then while IFS= read -r l || [ -n "$l" ]; do printf '%s\n' "$l"; done < "$STUB_OUT/` + name + `"; fi` + "\n"
		if w, ok := wrappers[name]; ok {
			body += w + "\n"
		}
		body += "exit 0\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		// the script's own shell calls a function in a subshell, the same
		// stub without a program's start (a shell's function names take
		// no "-"; those run the stub above)
		if !strings.Contains(name, "-") && name != "sleep" {
			fmt.Fprintf(&prelude, "%s() (\n%s)\n", name, body)
		}
	}
	s.prelude = prelude.String()
	if err := os.Mkdir(filepath.Join(s.dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

// Env makes the stubs record these variables of their environment,
// where set (Call.Env).
func (s *Sandbox) Env(names ...string) { s.envs = names }

// Fail makes the named commands fail (exit 1) from now on; none, again
// with no names.
func (s *Sandbox) Fail(names ...string) { s.fail = names }

// Print makes the named command print out (a line each) from now on.
func (s *Sandbox) Print(name, out string) {
	if err := os.WriteFile(filepath.Join(s.dir, "out", name), []byte(out), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// Result is what a run printed and the commands it called.
type Result struct {
	Code           int
	Stdout, Stderr string
	Calls          []Call
}

// Run runs script under /bin/sh with args as its positional parameters,
// stdin as its input, only the stubs on its PATH, in an empty folder. A
// command the stubs do not stand for fails the test.
func (s *Sandbox) Run(script string, stdin string, args ...string) Result {
	s.t.Helper()
	if err := os.WriteFile(s.log, nil, 0o644); err != nil {
		s.t.Fatal(err)
	}
	work := filepath.Join(s.dir, "work")
	_ = os.RemoveAll(work)
	if err := os.Mkdir(work, 0o755); err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", s.prelude + script, "sh"}, args...)...)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + filepath.Join(s.dir, "bin"), "LC_ALL=C", "HOME=" + work, "STUB_LOG=" + s.log,
		"STUB_OUT=" + filepath.Join(s.dir, "out"), "STUB_FAIL=" + strings.Join(s.fail, " "), "STUB_ENVS=" + strings.Join(s.envs, " ")}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatal(err)
	}
	raw, err := os.ReadFile(s.log)
	if err != nil {
		s.t.Fatal(err)
	}
	r.Calls, err = parseCalls(raw)
	if err != nil {
		s.t.Fatalf("the stubs' record: %v", err)
	}
	for _, line := range strings.Split(r.Stderr, "\n") {
		if strings.HasSuffix(line, ": not found") {
			s.t.Errorf("the script calls a command the stubs do not stand for (add it to shtest.Commands): %s\nin:\n%s", line, script)
		}
	}
	return r
}

func parseCalls(raw []byte) ([]Call, error) {
	var calls []Call
	for len(raw) > 0 {
		var n int
		if _, err := fmt.Sscanf(string(raw), "call %d\n", &n); err != nil {
			return nil, err
		}
		raw = raw[bytes.IndexByte(raw, '\n')+1:]
		var words []string
		for range n {
			colon := bytes.IndexByte(raw, ':')
			l, err := strconv.Atoi(string(raw[:max(colon, 0)]))
			if colon < 0 || err != nil || colon+1+l+1 > len(raw) {
				return nil, fmt.Errorf("a broken word at %q", raw[:min(len(raw), 40)])
			}
			words = append(words, string(raw[colon+1:colon+1+l]))
			raw = raw[colon+1+l+1:]
		}
		if len(words) < 2 {
			return nil, fmt.Errorf("a call of %d words", len(words))
		}
		c := Call{As: words[0], Name: words[1], Env: map[string]string{}}
		for _, w := range words[2:] {
			if e, ok := strings.CutPrefix(w, "env:"); ok {
				k, v, _ := strings.Cut(e, "=")
				c.Env[k] = v
			} else {
				c.Args = append(c.Args, w)
			}
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// Ran says whether a command of that name ran.
func (r Result) Ran(name string) bool {
	return slices.ContainsFunc(r.Calls, func(c Call) bool { return c.Name == name })
}

// Check fails the test where the run called Canary, or where a value
// reached no command whole: each value must be an argument, or a part
// of one, of a command that is not a wrapper (runuser, sudo, env,
// timeout), or be on the standard input of the run (stdin, given). An
// argument that is a value starting with "-" must come after a "--".
func (r Result) Check(t testing.TB, what string, stdin string, values ...string) {
	t.Helper()
	if r.Ran(Canary) {
		t.Errorf("%s: a value ran as a command:\n%s", what, r.calls())
		return
	}
	for _, v := range values {
		if v == "" || strings.Contains(stdin, v) {
			continue
		}
		found := false
		for _, c := range r.Calls {
			if _, ok := wrappers[c.Name]; ok {
				continue
			}
			for i, a := range c.Args {
				if a == v && strings.HasPrefix(v, "-") && !slices.Contains(c.Args[:i], "--") {
					t.Errorf("%s: %q is taken as an option by %s", what, v, c)
				}
				if strings.Contains(a, v) {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: %q reached no command whole; the commands run:\n%s\nstderr: %s", what, v, r.calls(), r.Stderr)
		}
	}
}

func (r Result) calls() string {
	var b strings.Builder
	for _, c := range r.Calls {
		fmt.Fprintf(&b, "  %q\n", append([]string{c.Name}, c.Args...))
	}
	return b.String()
}
