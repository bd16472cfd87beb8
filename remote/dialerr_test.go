package remote

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDialErrorsSayWhatToCheck: a connection that fails says why in words
// a user can act on, after the cause: nothing listening on the port (SSH
// off on the Pi, or the wrong port), and a listener that is not an SSH
// server (it closes before the handshake).
func TestDialErrorsSayWhatToCheck(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close() // nothing listens there now

	hangUp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hangUp.Close()
	go func() {
		for {
			c, err := hangUp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	auth, err := NewAuth(nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	known := filepath.Join(t.TempDir(), "known_hosts")
	for _, c := range []struct {
		port int
		want []string
	}{
		{closedPort, []string{"pi4: connect to 127.0.0.1:" + strconv.Itoa(closedPort) + ": connection refused: nothing listens on that port", "is SSH enabled on the Pi"}},
		{hangUp.Addr().(*net.TCPAddr).Port, []string{"closed the connection before SSH began", "is that port the Pi's SSH server"}},
	} {
		_, err := Dial(context.Background(), Config{Name: "pi4", Address: "127.0.0.1", Port: c.port, User: "pi", Auth: auth, KnownHosts: known, ConnectTimeout: 5 * time.Second})
		if err == nil {
			t.Fatalf("port %d: connected", c.port)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("port %d: %q, want %q in it", c.port, err, w)
			}
		}
		if strings.Contains(err.Error(), "connect: connect") || strings.Contains(err.Error(), ": connect: ") {
			t.Errorf("the system call's name repeated: %q", err)
		}
	}
}

// TestDialHints: the hint by cause, for the causes a test cannot make on
// loopback alone (a name that does not resolve, a timeout).
func TestDialHints(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&net.DNSError{Err: "no such host", Name: "pi4.local", IsNotFound: true}, "a .local name needs mDNS"},
		{&net.OpError{Op: "dial", Err: &timeoutErr{}}, "no answer within --connect-timeout"},
		{context.DeadlineExceeded, "no answer within --connect-timeout"},
	} {
		if got := dialHint(c.err); !strings.Contains(got, c.want) {
			t.Errorf("dialHint(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if got := dialHint(net.ErrClosed); got != "" {
		t.Errorf("a cause with no hint got %q", got)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestSlowHandshakeSaysGiveItLonger: a server that says it is SSH (its
// version line) and then stalls past --connect-timeout is an SSH server
// too slow, not "is that port the Pi's SSH server?": the hint says to
// give it longer; one that says nothing at all keeps the question.
func TestSlowHandshakeSaysGiveItLonger(t *testing.T) {
	serve := func(banner string) int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write([]byte(banner))
				t.Cleanup(func() { c.Close() }) // held open, silent
			}
		}()
		return l.Addr().(*net.TCPAddr).Port
	}
	auth, err := NewAuth(nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	known := filepath.Join(t.TempDir(), "known_hosts")
	for _, c := range []struct {
		banner, want, not string
	}{
		{"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n", "the host's SSH server answered, then took longer than --connect-timeout (500ms)", "is that port the Pi's SSH server"},
		{"", "is that port the Pi's SSH server", "answered"},
	} {
		_, err := Dial(context.Background(), Config{Name: "pi4", Address: "127.0.0.1", Port: serve(c.banner), User: "pi", Auth: auth, KnownHosts: known, ConnectTimeout: 500 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.not) {
			t.Errorf("banner %q: %v; want %q", c.banner, err, c.want)
		}
	}
}
