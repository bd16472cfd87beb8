package remote_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/remote"
)

func dial(t *testing.T, h inventory.Host, mutate func(*remote.Config)) (*remote.Client, error) {
	t.Helper()
	auth, err := remote.NewAuth([]string{h.IdentityFile}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(auth.Close)
	cfg := remote.Config{Name: h.Name, Address: h.Address, Port: h.Port, User: h.User,
		IdentityFile: h.IdentityFile, Auth: auth, KnownHosts: h.KnownHosts, ConnectTimeout: 5 * time.Second}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := remote.Dial(context.Background(), cfg)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func mustDial(t *testing.T, h inventory.Host, mutate func(*remote.Config)) *remote.Client {
	t.Helper()
	c, err := dial(t, h, mutate)
	if err != nil {
		t.Fatalf("dial %s: %v", h.Name, err)
	}
	return c
}

func run(t *testing.T, r remote.Runner, cmd string) string {
	t.Helper()
	res, err := r.Run(context.Background(), cmd)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return strings.TrimSpace(string(res.Stdout))
}

func copyFile(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// The lab tests here run side by side with others: each takes a lease on
// the hosts it uses (labtest.Share when it only reads them, labtest.Lease
// when it changes them).

func TestPiThroughSudoAndRootDirectly(t *testing.T) {
	t.Parallel()
	inv := labtest.Share(t, "pi4")
	h := labtest.Host(t, inv, "pi4")
	c := mustDial(t, h, nil)
	if got := run(t, c, "id -un"); got != "pi" {
		t.Errorf("as the login user: %q", got)
	}
	if got := run(t, c.AsRoot(), "id -un; echo \"$SUDO_USER\""); got != "root\npi" {
		t.Errorf("as root through sudo: %q", got)
	}
	root := mustDial(t, h, func(c *remote.Config) { c.User = "root" })
	if got := run(t, root.AsRoot(), "id -un; echo \"${SUDO_USER:-none}\""); got != "root\nnone" {
		t.Errorf("as root directly: %q", got)
	}
	// one connection serves many commands, also at once
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			_, err := c.Run(context.Background(), "true")
			errs <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Errorf("concurrent command: %v", err)
		}
	}
}

func TestExitErrorAndHostileValues(t *testing.T) {
	t.Parallel()
	inv := labtest.Share(t, "pi3")
	c := mustDial(t, labtest.Host(t, inv, "pi3"), nil)
	_, err := c.Run(context.Background(), "echo oops >&2; exit 3")
	var ee *remote.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || strings.TrimSpace(string(ee.Stderr)) != "oops" || ee.Host != "pi3" {
		t.Errorf("exit 3: %#v", err)
	}
	for _, s := range []string{"it's", "$(touch /tmp/pwned)", "`touch /tmp/pwned`", "a\nb", "x; touch /tmp/pwned", `"\`} {
		if got, _ := c.Run(context.Background(), "printf '%s' "+remote.Quote(s)); string(got.Stdout) != s {
			t.Errorf("%q came back as %q", s, got.Stdout)
		}
		if got, _ := c.AsRoot().Run(context.Background(), "printf '%s' "+remote.Quote(s)); string(got.Stdout) != s {
			t.Errorf("through sudo %q came back as %q", s, got.Stdout)
		}
	}
	if out := run(t, c, "test -e /tmp/pwned && echo pwned || echo clean"); out != "clean" {
		t.Errorf("a hostile value ran: %s", out)
	}
}

// TestUploadAndReadFile leases zero alone: it writes in /etc and counts
// what is named pidb-* there and in /tmp, which another test's files would
// throw off.
func TestUploadAndReadFile(t *testing.T) {
	t.Parallel()
	inv := labtest.Lease(t, "zero")
	c := mustDial(t, labtest.Host(t, inv, "zero"), nil)
	ctx := context.Background()
	// as the user, into its home
	if err := c.Upload(ctx, "/home/pi/pidb-upload.txt", []byte("hello\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if got := run(t, c, "stat -c '%a %U' /home/pi/pidb-upload.txt; cat /home/pi/pidb-upload.txt"); got != "640 pi\nhello" {
		t.Errorf("user upload: %q", got)
	}
	// as root, over an existing root-owned file
	root := c.AsRoot()
	t.Cleanup(func() { root.Run(ctx, "rm -f /etc/pidb-upload-test.conf /home/pi/pidb-upload.txt") })
	for _, content := range []string{"first = 1\n", "second = 'it''s'\n"} {
		if err := root.Upload(ctx, "/etc/pidb-upload-test.conf", []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := root.ReadFile(ctx, "/etc/pidb-upload-test.conf")
		if err != nil || string(got) != content {
			t.Errorf("root upload read back %q, %v; want %q", got, err, content)
		}
	}
	if got := run(t, c, "stat -c '%a %U' /etc/pidb-upload-test.conf; ls -a /etc /tmp | grep -c pidb- || true"); got != "644 root\n1" {
		t.Errorf("mode, owner and leftover temp files: %q (want 644 root and only the file itself)", got)
	}
	// a file replaced keeps its owner and mode; a new one gets its
	// folder's owner and the mode asked: through sudo, and logged in as root
	asRoot := labtest.Host(t, inv, "zero")
	asRoot.User = "root"
	rootLogin := mustDial(t, asRoot, nil)
	t.Cleanup(func() { root.Run(ctx, "rm -rf /etc/pidb-owned.conf /etc/pidb-dir") })
	for name, r := range map[string]remote.Runner{"sudo": root, "root login": rootLogin} {
		run(t, c, "sudo -n sh -c 'rm -rf /etc/pidb-owned.conf /etc/pidb-dir && install -o nobody -g nogroup -m 0640 /dev/null /etc/pidb-owned.conf && install -d -o nobody -g nogroup /etc/pidb-dir'")
		if err := r.Upload(ctx, "/etc/pidb-owned.conf", []byte("x = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := r.Upload(ctx, "/etc/pidb-dir/new.conf", []byte("y = 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := run(t, c, "stat -c '%a %U:%G' /etc/pidb-owned.conf /etc/pidb-dir/new.conf; sudo -n cat /etc/pidb-owned.conf"); got != "640 nobody:nogroup\n644 nobody:nogroup\nx = 1" {
			t.Errorf("%s: replaced and new files: %q, want 640 nobody:nogroup (kept) and 644 nobody:nogroup (the folder's)", name, got)
		}
	}
	// the user cannot write /etc: the error says so, nothing is left
	if err := c.Upload(ctx, "/etc/pidb-nope.conf", []byte("x"), 0o644); err == nil {
		t.Errorf("a user upload into /etc succeeded")
	}
	_, err := c.ReadFile(ctx, "/etc/no-such-file")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

// TestHostKeysOnTheLab only reads pi4 and zero (their keys, from the lab's
// known_hosts, into files of the test's own): it shares them.
func TestHostKeysOnTheLab(t *testing.T) {
	t.Parallel()
	inv := labtest.Share(t, "pi4", "zero")
	h := labtest.Host(t, inv, "pi4")

	// unknown: refused with its fingerprint, nothing recorded
	empty := filepath.Join(t.TempDir(), "known_hosts")
	os.WriteFile(empty, nil, 0o600)
	_, err := dial(t, h, func(c *remote.Config) { c.KnownHosts = empty })
	var hk *remote.HostKeyError
	if !errors.As(err, &hk) || hk.Changed || !strings.Contains(err.Error(), "SHA256:") || !strings.Contains(err.Error(), "pi4: unknown host key for 10.213.41.40") {
		t.Fatalf("unknown host: %v", err)
	}
	// accept-new records it; the next run passes without it
	mustDial(t, h, func(c *remote.Config) { c.KnownHosts = empty; c.AcceptNewHostKeys = true })
	c := mustDial(t, h, func(c *remote.Config) { c.KnownHosts = empty })
	if run(t, c, "hostname") != "pi4" {
		t.Error("wrong host")
	}

	// hashed entries, as ssh-keygen -H writes them
	hashed := copyFile(t, h.KnownHosts)
	if out, err := exec.Command("ssh-keygen", "-H", "-f", hashed).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -H: %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(hashed); !strings.HasPrefix(string(data), "|1|") || strings.Contains(string(data), h.Address) {
		t.Fatalf("not hashed: %s", data)
	}
	mustDial(t, h, func(c *remote.Config) { c.KnownHosts = hashed })

	// changed: pi4's address with zero's keys, refused even with accept-new
	zero := labtest.Host(t, inv, "zero")
	data, _ := os.ReadFile(h.KnownHosts)
	var wrong strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == zero.Address {
			wrong.WriteString(h.Address + " " + f[1] + " " + f[2] + "\n")
		}
	}
	changed := filepath.Join(t.TempDir(), "known_hosts")
	os.WriteFile(changed, []byte(wrong.String()), 0o600)
	for _, accept := range []bool{false, true} {
		_, err := dial(t, h, func(c *remote.Config) { c.KnownHosts = changed; c.AcceptNewHostKeys = accept })
		if !errors.As(err, &hk) || !hk.Changed || !strings.Contains(err.Error(), "HOST KEY CHANGED") {
			t.Errorf("changed key (accept-new %v): %v", accept, err)
		}
	}
	if after, _ := os.ReadFile(changed); string(after) != wrong.String() {
		t.Errorf("a refused changed key altered known_hosts")
	}

	// only the Ed25519 key changed, the ECDSA line (first in the file)
	// still right: OpenSSH asks for the Ed25519 key and refuses, so pidb does
	var ecFirst strings.Builder
	zeroEd := ""
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == zero.Address && f[1] == "ssh-ed25519" {
			zeroEd = f[2]
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != h.Address {
			continue
		}
		if f[1] == "ssh-ed25519" {
			f[2] = zeroEd
		}
		ecFirst.WriteString(strings.Join(f, " ") + "\n")
	}
	if !strings.HasPrefix(ecFirst.String(), h.Address+" ecdsa-sha2-nistp256 ") || zeroEd == "" {
		t.Fatalf("the lab's known_hosts is not as this test expects:\n%s", ecFirst.String())
	}
	edChanged := filepath.Join(t.TempDir(), "known_hosts")
	os.WriteFile(edChanged, []byte(ecFirst.String()), 0o600)
	if _, err := dial(t, h, func(c *remote.Config) { c.KnownHosts = edChanged }); !errors.As(err, &hk) || !hk.Changed {
		t.Errorf("a changed Ed25519 key behind a matching ECDSA line: %v; want it refused as changed", err)
	}
	ssh := exec.Command("ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile="+edChanged, "-i", h.IdentityFile, "pi@"+h.Address, "true")
	if out, err := ssh.CombinedOutput(); err == nil || !strings.Contains(string(out), "HOST IDENTIFICATION HAS CHANGED") {
		t.Errorf("OpenSSH with the same file: %v\n%s (want it to refuse, as pidb does)", err, out)
	}

	// accept-new into a hashed known_hosts writes a hashed entry
	hashedOther := filepath.Join(t.TempDir(), "known_hosts")
	os.WriteFile(hashedOther, []byte(wrong.String()), 0o600) // some host's lines, then hashed
	if out, err := exec.Command("ssh-keygen", "-H", "-f", hashedOther).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -H: %v\n%s", err, out)
	}
	mustDial(t, zero, func(c *remote.Config) { c.KnownHosts = hashedOther; c.AcceptNewHostKeys = true })
	if after, _ := os.ReadFile(hashedOther); strings.Contains(string(after), zero.Address) || !strings.Contains(string(after), "|1|") {
		t.Errorf("accept-new into a hashed file wrote a plain entry:\n%s", after)
	}
	mustDial(t, zero, func(c *remote.Config) { c.KnownHosts = hashedOther })
}

// TestWrongKeyAndSudoPassword leases zero alone: it adds a user there.
func TestWrongKeyAndSudoPassword(t *testing.T) {
	t.Parallel()
	inv := labtest.Lease(t, "zero")
	h := labtest.Host(t, inv, "zero")
	other := filepath.Join(t.TempDir(), "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	h2 := h
	h2.IdentityFile = other
	_, err := dial(t, h2, nil)
	var ce *remote.ConnError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "zero: log in as pi@10.213.41.10:22") || !strings.Contains(err.Error(), other) {
		t.Errorf("wrong key: %v", err)
	}

	// a user whose sudo wants a password
	root := mustDial(t, h, func(c *remote.Config) { c.User = "root" })
	ctx := context.Background()
	t.Cleanup(func() { root.Run(ctx, "userdel -r pidbpw 2>/dev/null") })
	run(t, root, "id pidbpw >/dev/null 2>&1 || useradd -m -G sudo pidbpw && echo pidbpw:secret-"+time.Now().Format("150405")+" | chpasswd && "+
		"install -d -m 700 -o pidbpw /home/pidbpw/.ssh && install -m 600 -o pidbpw /root/.ssh/authorized_keys /home/pidbpw/.ssh/")
	c := mustDial(t, h, func(c *remote.Config) { c.User = "pidbpw" })
	_, err = c.AsRoot().Run(ctx, "true")
	var sp *remote.SudoPasswordError
	if !errors.As(err, &sp) || !strings.Contains(err.Error(), "zero: sudo needs a password for pidbpw") {
		t.Errorf("sudo with a password: %v", err)
	}
}

// TestLostConnectionAndCancel kills sshd processes on pi3, but only its own
// connection's: it shares pi3.
func TestLostConnectionAndCancel(t *testing.T) {
	t.Parallel()
	inv := labtest.Share(t, "pi3")
	h := labtest.Host(t, inv, "pi3")
	c := mustDial(t, h, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.Run(ctx, "sleep 300"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled command: %v", err)
	}
	// long before the command would have ended (a bound far from the
	// cancel's 0.5 s: a busy machine can stretch that)
	if time.Since(start) > time.Minute {
		t.Errorf("a cancelled command took %v to return", time.Since(start))
	}
	// the connection still works after a cancelled command
	run(t, c, "true")

	// kill this connection's sshd processes on the Pi (the session's and its
	// monitor): the next command is a ConnError, another connection lives on
	session := run(t, c, "echo $PPID")
	other := mustDial(t, h, nil)
	run(t, other.AsRoot(), "kill -KILL $(ps -o ppid= -p "+session+") "+session+" 2>/dev/null; true")
	time.Sleep(300 * time.Millisecond)
	_, err := c.Run(context.Background(), "true")
	var ce *remote.ConnError
	if !errors.As(err, &ce) || ce.Host != "pi3" {
		t.Errorf("after the connection died: %v", err)
	}
	run(t, other, "true")
}

// TestAgent logs in with a key that only a real ssh-agent holds.
func TestAgent(t *testing.T) {
	t.Parallel()
	inv := labtest.Share(t, "pi3")
	h := labtest.Host(t, inv, "pi3")
	sock := filepath.Join(t.TempDir(), "agent.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		t.Fatalf("ssh-agent: %v", err)
	}
	t.Cleanup(func() { agent.Process.Kill(); agent.Wait() })
	for i := 0; i < 50; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	add := exec.Command("ssh-add", h.IdentityFile)
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v: %s", err, out)
	}
	auth, err := remote.NewAuth(nil, sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	c, err := remote.Dial(context.Background(), remote.Config{Name: h.Name, Address: h.Address, Port: h.Port, User: h.User,
		Auth: auth, KnownHosts: h.KnownHosts})
	if err != nil {
		t.Fatalf("dial with the agent only: %v", err)
	}
	defer c.Close()
	if got := run(t, c, "hostname"); got != "pi3" {
		t.Errorf("hostname %q", got)
	}
}
