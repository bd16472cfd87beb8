package remote

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// shellServer is an SSH server on loopback that takes any key and runs
// each command with sh on this machine, its stdin, stdout and stderr the
// session's, and its exit status sent back; a session closed by the
// client kills its command.
func shellServer(t *testing.T) (addr string, hostKey ssh.PublicKey) {
	t.Helper()
	return testServer(t, ssh.DiscardRequests, serveShell)
}

func serveShell(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for r := range reqs {
		if r.Type != "exec" {
			r.Reply(false, nil)
			continue
		}
		cmdline := string(r.Payload[4:])
		r.Reply(true, nil)
		cmd := exec.Command("sh", "-c", cmdline)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
		if err := cmd.Start(); err != nil {
			return
		}
		done := make(chan struct{})
		go func() {
			// the client's close (or signal) ends the command
			for range reqs {
			}
			select {
			case <-done:
			default:
				cmd.Process.Kill()
			}
		}()
		err := cmd.Wait()
		close(done)
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = max(ee.ExitCode(), 1)
		}
		status := make([]byte, 4)
		binary.BigEndian.PutUint32(status, uint32(code))
		ch.CloseWrite()
		ch.SendRequest("exit-status", false, status)
		return
	}
}

func TestPipe(t *testing.T) {
	addr, key := shellServer(t)
	primary, replica := dialTest(t, "pi4", addr, key, 0), dialTest(t, "pi3", addr, key, 0)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	ctx := context.Background()

	// a stream larger than any buffer on the way, with its head first
	if err := Pipe(ctx, primary, "seq 1 300000", replica, "cat > "+Quote(out), []byte("head\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if len(lines) != 300001 || lines[0] != "head" || lines[1] != "1" || lines[300000] != "300000" {
		t.Fatalf("the replica got %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}

	// the reader fails: its error, and the writer (which would never end) is stopped
	done := make(chan error, 1)
	go func() {
		done <- Pipe(ctx, primary, "yes", replica, "head -c 1000 >/dev/null; echo 'ERROR 1064 at line 1' >&2; exit 3", nil)
	}()
	select {
	case err := <-done:
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Host != "pi3" || ee.Code != 3 || !strings.Contains(err.Error(), "ERROR 1064") || !strings.HasPrefix(err.Error(), "pi3: ") {
			t.Errorf("a failing reader: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the writer was not stopped when the reader failed")
	}

	// the writer fails part way: its error, not the reader's
	err = Pipe(ctx, primary, "seq 1 10; echo 'mariadb-dump: Got error: 1045' >&2; exit 2", replica, "cat > "+Quote(out), nil)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Host != "pi4" || ee.Code != 2 || !strings.Contains(err.Error(), "1045") {
		t.Errorf("a failing writer: %v", err)
	}
}

// A command that prints without end (a server's ssl_cert_file =
// '/dev/zero', read back) is stopped past Config.MaxOutput (32 MiB, and
// 1 MiB here), on stdout or stderr,
// with an error that says so; what it printed is not kept. Output up to
// the cap is kept whole.
func TestRunOutputIsCapped(t *testing.T) {
	addr, key := shellServer(t)
	c := dialTest(t, "pi4", addr, key, 0)
	c.cfg.MaxOutput = 1 << 20
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, cmd := range []string{"cat /dev/zero", "cat /dev/zero >&2", "head -c 1048577 /dev/zero"} {
		res, err := c.Run(ctx, cmd)
		if err == nil || !strings.Contains(err.Error(), "printed more than 1048576 bytes") || len(res.Stdout)+len(res.Stderr) != 0 {
			t.Errorf("%s: %d bytes kept, %v", cmd, len(res.Stdout)+len(res.Stderr), err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("a command past the cap was not stopped")
	}
	res, err := c.Run(ctx, "head -c 1048576 /dev/zero")
	if err != nil || len(res.Stdout) != 1048576 {
		t.Errorf("a megabyte: %d bytes, %v", len(res.Stdout), err)
	}
}

// TestSudoRefusalInAnyWords: sudo's refusal for want of a password is
// known whatever words it is in (a German locale's, sudo-rs's), because
// sudo -n true fails too; a command whose own error begins with "sudo:"
// while sudo works is that command's failure, not sudo's.
func TestSudoRefusalInAnyWords(t *testing.T) {
	stubs := t.TempDir()
	t.Setenv("PATH", stubs+":"+os.Getenv("PATH"))
	sudo := func(script string) {
		if err := os.WriteFile(filepath.Join(stubs, "sudo"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	addr, key := shellServer(t)
	root := dialTest(t, "pi3", addr, key, 0).AsRoot()
	ctx := context.Background()
	for _, msg := range []string{"sudo: Ein Passwort ist notwendig", "sudo-rs: interactive authentication is required"} {
		sudo("echo '" + msg + "' >&2; exit 1\n")
		_, err := root.Run(ctx, "systemctl restart mariadb")
		var sp *SudoPasswordError
		if !errors.As(err, &sp) || !strings.Contains(err.Error(), "pi3: sudo needs a password for pi") {
			t.Errorf("%q: %v", msg, err)
		}
	}
	// sudo works; the command's own error begins with "sudo:"
	sudo(`[ "$2" = true ] && exit 0; echo 'sudo: unable to resolve host pi3' >&2; exit 1` + "\n")
	_, err := root.Run(ctx, "systemctl restart mariadb")
	var sp *SudoPasswordError
	var ee *ExitError
	if errors.As(err, &sp) || !errors.As(err, &ee) {
		t.Errorf("a command's own failure: %v", err)
	}
}

// TestReadFileInAnyLocale: a file that is not there is fs.ErrNotExist
// whatever language the host's locale speaks: cat is asked in C's words
// (the stand-in cat below says it in German unless LC_ALL is C).
func TestReadFileInAnyLocale(t *testing.T) {
	stubs := t.TempDir()
	t.Setenv("PATH", stubs+":"+os.Getenv("PATH"))
	cat := `#!/bin/sh
[ "$LC_ALL" = C ] && exec /bin/cat "$@"
echo "cat: $2: Datei oder Verzeichnis nicht gefunden" >&2; exit 1
`
	if err := os.WriteFile(filepath.Join(stubs, "cat"), []byte(cat), 0o755); err != nil {
		t.Fatal(err)
	}
	addr, key := shellServer(t)
	c := dialTest(t, "pi3", addr, key, 0)
	if _, err := c.ReadFile(context.Background(), filepath.Join(stubs, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if got, err := c.ReadFile(context.Background(), filepath.Join(stubs, "cat")); err != nil || string(got) != cat {
		t.Errorf("a file that is there: %q, %v", got, err)
	}
}
