package remote

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

var hostile = []string{
	"plain",
	"",
	"it's",
	`"double" quotes`,
	"$(touch /tmp/pwned)",
	"`id`",
	"a\nnewline",
	"semi; rm -rf /",
	"back\\slash",
	"'",
	"''",
	"glob * ?",
	"$HOME ${PATH}",
	"tab\there",
	"-n",
}

// TestQuoteSurvivesTheShell runs each quoted value through a real sh and
// checks it arrives as one unchanged word.
func TestQuoteSurvivesTheShell(t *testing.T) {
	for _, s := range hostile {
		out, err := exec.Command("/bin/sh", "-c", "for a in "+Quote(s)+"; do printf '[%s]' \"$a\"; done").Output()
		if err != nil {
			t.Fatalf("sh: %v", err)
		}
		if string(out) != "["+s+"]" {
			t.Errorf("Quote(%q) = %s: the shell split it into %q", s, Quote(s), out)
		}
	}
}

func TestQuoteExact(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"/etc/postgresql":    "/etc/postgresql",
		"":                   "''",
		"it's":               `'it'\''s'`,
		"$(id)":              "'$(id)'",
		"a b":                "'a b'",
		"x\ny":               "'x\ny'",
		"shared_buffers=1GB": "shared_buffers=1GB",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCommandStrings(t *testing.T) {
	if got, want := Command("systemctl", "is-active", "postgresql"), "systemctl is-active postgresql"; got != want {
		t.Errorf("Command = %q, want %q", got, want)
	}
	if got, want := Command("cat", "--", "/tmp/a b"), "cat -- '/tmp/a b'"; got != want {
		t.Errorf("Command = %q, want %q", got, want)
	}
	if got, want := SudoCommand("systemctl set-default multi-user.target"), "sudo -n -- sh -c 'systemctl set-default multi-user.target'"; got != want {
		t.Errorf("SudoCommand = %q, want %q", got, want)
	}
	if got, want := SudoCommand("echo 'x'"), `sudo -n -- sh -c 'echo '\''x'\'''`; got != want {
		t.Errorf("SudoCommand = %q, want %q", got, want)
	}
	// the sudo wrapper runs the command unchanged (checked with sh standing in for sudo)
	for _, s := range hostile {
		cmd := strings.Replace(SudoCommand("printf '%s' "+Quote(s)), "sudo -n -- ", "", 1)
		out, err := exec.Command("/bin/sh", "-c", cmd).Output()
		if err != nil || string(out) != s {
			t.Errorf("through the wrapper %q arrived as %q (%v)", s, out, err)
		}
	}
}

func TestErrorMessages(t *testing.T) {
	e := &ExitError{Host: "pi4", Cmd: "systemctl restart postgresql", Code: 5, Stderr: []byte("Failed to restart postgresql.service: Unit not found.\n")}
	if got, want := e.Error(), "pi4: systemctl restart postgresql: exit status 5: Failed to restart postgresql.service: Unit not found."; got != want {
		t.Errorf("ExitError = %q, want %q", got, want)
	}
	var sp error = &SudoPasswordError{Host: "pi3", User: "admin", Err: e}
	var ee *ExitError
	if !errors.As(sp, &ee) || ee.Code != 5 {
		t.Errorf("SudoPasswordError does not unwrap to the ExitError")
	}
	if !strings.Contains(sp.Error(), "pi3: sudo needs a password for admin") {
		t.Errorf("SudoPasswordError = %q", sp.Error())
	}
}

func newKey(t *testing.T, kind string) ssh.PublicKey {
	t.Helper()
	var pub any
	switch kind {
	case "ed25519":
		p, _, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pub = p
	case "ecdsa":
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pub = &k.PublicKey
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestHostKeys(t *testing.T) {
	dir := t.TempDir()
	addr := "10.213.41.40:22"
	remote := &net.TCPAddr{IP: net.ParseIP("10.213.41.40"), Port: 22}
	good, other := newKey(t, "ed25519"), newKey(t, "ed25519")
	ecKey := newKey(t, "ecdsa")

	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte(knownhosts.Line([]string{"10.213.41.40"}, good)+"\n"), 0o600)
	hashed := filepath.Join(dir, "hashed")
	os.WriteFile(hashed, []byte(knownhosts.Line([]string{knownhosts.HashHostname("10.213.41.40")}, good)+"\n"), 0o600)
	ecOnly := filepath.Join(dir, "ec")
	os.WriteFile(ecOnly, []byte(knownhosts.Line([]string{"10.213.41.40"}, ecKey)+"\n"), 0o600)

	for _, file := range []string{plain, hashed} {
		cb, algos, err := hostKeyChecker("pi4", addr, file, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := cb(addr, remote, good); err != nil {
			t.Errorf("%s: the known key was refused: %v", filepath.Base(file), err)
		}
		if len(algos) != 1 || algos[0] != ssh.KeyAlgoED25519 {
			t.Errorf("%s: algorithms %v, want ed25519 only", filepath.Base(file), algos)
		}
		// a changed key is refused, even with accept-new
		for _, acceptNew := range []bool{false, true} {
			cb, _, _ := hostKeyChecker("pi4", addr, file, acceptNew)
			err := cb(addr, remote, other)
			var hk *HostKeyError
			if !errors.As(err, &hk) || !hk.Changed {
				t.Fatalf("%s: changed key (accept-new %v): %v", filepath.Base(file), acceptNew, err)
			}
			for _, want := range []string{"pi4: HOST KEY CHANGED for 10.213.41.40", ssh.FingerprintSHA256(other), ssh.FingerprintSHA256(good), "ssh-keygen -R 10.213.41.40"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("changed-key error %q lacks %q", err, want)
				}
			}
		}
	}

	// ECDSA only: ask for ECDSA, so the host does not offer a key we cannot check
	if _, algos, _ := hostKeyChecker("pi4", addr, ecOnly, false); len(algos) != 1 || algos[0] != ssh.KeyAlgoECDSA256 {
		t.Errorf("ecdsa-only algorithms = %v", algos)
	}

	// ECDSA listed before Ed25519 (as the lab's known_hosts, and many
	// others, have them): Ed25519 is asked for first all the same, as
	// OpenSSH asks, so a changed Ed25519 key cannot hide behind the ECDSA line
	both := filepath.Join(dir, "both")
	os.WriteFile(both, []byte(knownhosts.Line([]string{"10.213.41.40"}, ecKey)+"\n"+knownhosts.Line([]string{"10.213.41.40"}, good)+"\n"), 0o600)
	if _, algos, _ := hostKeyChecker("pi4", addr, both, false); len(algos) != 2 || algos[0] != ssh.KeyAlgoED25519 || algos[1] != ssh.KeyAlgoECDSA256 {
		t.Errorf("ecdsa then ed25519 in the file: algorithms %v, want ed25519 first", algos)
	}

	// unknown host: refused with its fingerprint; the file is not touched
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	cb, algos, _ := hostKeyChecker("pi4", addr, empty, false)
	if algos != nil {
		t.Errorf("unknown host algorithms = %v, want the defaults", algos)
	}
	err := cb(addr, remote, good)
	var hk *HostKeyError
	if !errors.As(err, &hk) || hk.Changed || !strings.Contains(err.Error(), ssh.FingerprintSHA256(good)) || !strings.Contains(err.Error(), "--accept-new-host-keys") {
		t.Errorf("unknown host error: %v", err)
	}
	if data, _ := os.ReadFile(empty); len(data) != 0 {
		t.Errorf("refusing wrote to known_hosts: %q", data)
	}

	// accept-new records it (into a file that did not exist), then it is known
	fresh := filepath.Join(dir, "sub", "known_hosts")
	cb, _, _ = hostKeyChecker("pi4", addr, fresh, true)
	if err := cb(addr, remote, good); err != nil {
		t.Fatalf("accept-new: %v", err)
	}
	cb, _, _ = hostKeyChecker("pi4", addr, fresh, false)
	if err := cb(addr, remote, good); err != nil {
		t.Errorf("after accept-new the key is not known: %v", err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o600 {
		t.Errorf("known_hosts mode %v, want 0600", st.Mode().Perm())
	}

	// a file of hashed entries gets a hashed one: it names no host in clear
	hashedNew := filepath.Join(dir, "hashed-new")
	os.WriteFile(hashedNew, []byte(knownhosts.Line([]string{knownhosts.HashHostname("10.213.41.30")}, other)+"\n"), 0o600)
	cb, _, _ = hostKeyChecker("pi4", addr, hashedNew, true)
	if err := cb(addr, remote, good); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(hashedNew); strings.Contains(string(data), "10.213.41.40") || strings.Count(string(data), "|1|") != 2 {
		t.Errorf("accept-new into a hashed file:\n%s", data)
	}
	if cb, _, _ = hostKeyChecker("pi4", addr, hashedNew, false); cb(addr, remote, good) != nil {
		t.Errorf("the hashed entry written does not match")
	}
	if data, _ := os.ReadFile(fresh); !strings.Contains(string(data), "10.213.41.40") {
		t.Errorf("accept-new into a plain file wrote no plain entry:\n%s", data)
	}

	// an address that is no plain one (an IPv6 zone holding a line end, a
	// pattern, a list) writes nothing: a line "* KEY" would vouch for
	// every host
	for _, bad := range []string{"[fe80::1%x\n* " + knownhosts.Line([]string{"*"}, other) + "]:22", "[fe80::1%a,*]:22", "[*]:22", "[10.0.0.1 @cert-authority]:22"} {
		file := filepath.Join(dir, "zoned")
		cb, _, _ := hostKeyChecker("pi4", bad, file, true)
		if err := cb(bad, remote, good); err == nil || !strings.Contains(err.Error(), "is not a plain address or name") {
			t.Errorf("accept-new of %q: %v", bad, err)
		}
		if data, _ := os.ReadFile(file); len(data) != 0 {
			t.Errorf("accept-new of %q wrote:\n%s", bad, data)
		}
	}

	// a file without a final newline is not corrupted by the append
	nonl := filepath.Join(dir, "nonl")
	os.WriteFile(nonl, []byte(knownhosts.Line([]string{"10.213.41.30"}, other)), 0o600)
	cb, _, _ = hostKeyChecker("pi4", addr, nonl, true)
	if err := cb(addr, remote, good); err != nil {
		t.Fatal(err)
	}
	cb, _, _ = hostKeyChecker("pi3", "10.213.41.30:22", nonl, false)
	if err := cb("10.213.41.30:22", &net.TCPAddr{IP: net.ParseIP("10.213.41.30"), Port: 22}, other); err != nil {
		t.Errorf("the earlier last line was damaged: %v", err)
	}
}
