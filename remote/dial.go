package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Config is how to reach one host.
type Config struct {
	Name         string // the inventory's name, used in every error
	Address      string
	Port         int
	User         string
	IdentityFile string
	Auth         *Auth
	KnownHosts   string
	// AcceptNewHostKeys records the key of a host known_hosts does not know
	// yet (OpenSSH's accept-new). A changed key is refused all the same.
	AcceptNewHostKeys bool
	ConnectTimeout    time.Duration // default 10s
	KeepAlive         time.Duration // default 5s; three missed answers in a row close the connection
	Log               io.Writer     // notes for people, such as a recorded host key; may be nil
	// Trace, when set, gets every command before it runs on the host (as
	// given, without the sudo around it; what goes to its stdin, such as
	// a file's contents or SQL with a password's verifier, is not shown)
	Trace func(cmd string)
	// MaxOutput is the most a command may print on stdout, or on stderr,
	// for pidb to keep it (default DefaultMaxOutput): past it the command
	// is stopped and its run fails.
	MaxOutput int
}

// Client is one SSH connection to a host, reused for every command of a run.
// It is safe for concurrent use.
type Client struct {
	cfg  Config
	conn *conn
	root bool
}

// conn is the state shared by a Client and its AsRoot view.
type conn struct {
	ssh     *ssh.Client
	done    chan struct{}
	once    sync.Once
	sftpMu  sync.Mutex
	sftpCli *sftp.Client
	// why is what the keep-alive saw when it closed a dead connection
	whyMu sync.Mutex
	why   string
}

// dead closes a connection that stopped answering, and keeps why for the
// errors of the commands it cuts off.
func (c *conn) dead(why string) {
	c.whyMu.Lock()
	c.why = why
	c.whyMu.Unlock()
	c.ssh.Close()
}

func (c *conn) lostWhy() string {
	c.whyMu.Lock()
	defer c.whyMu.Unlock()
	return c.why
}

// Dial connects and logs in to a host.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Port == 0 {
		cfg.Port = 22
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = 5 * time.Second
	}
	if cfg.Auth == nil {
		return nil, fmt.Errorf("%s: no credentials", cfg.Name)
	}
	addr := net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.Port))
	accepted := false
	check, algos, err := hostKeyChecker(cfg.Name, addr, cfg.KnownHosts, cfg.AcceptNewHostKeys)
	if err != nil {
		return nil, err
	}
	sshCfg := &ssh.ClientConfig{
		User: cfg.User,
		Auth: cfg.Auth.methods(cfg.IdentityFile),
		HostKeyCallback: func(host string, remote net.Addr, key ssh.PublicKey) error {
			err := check(host, remote, key)
			if err == nil && cfg.AcceptNewHostKeys {
				accepted = true
			}
			return err
		},
		HostKeyAlgorithms: algos,
		Timeout:           cfg.ConnectTimeout,
	}
	d := net.Dialer{Timeout: cfg.ConnectTimeout}
	tcp, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, &ConnError{Host: cfg.Name, Address: addr, Op: "connect to", Err: unwrapOp(err), Hint: dialHint(err)}
	}
	// the handshake gets the connect timeout too; a context cancel ends it
	_ = tcp.SetDeadline(time.Now().Add(cfg.ConnectTimeout))
	stop := context.AfterFunc(ctx, func() { _ = tcp.SetDeadline(time.Now()) })
	said := &heard{Conn: tcp}
	c, chans, reqs, err := ssh.NewClientConn(said, addr, sshCfg)
	stop()
	if err != nil {
		tcp.Close()
		var hk *HostKeyError
		if errors.As(err, &hk) {
			return nil, hk
		}
		if strings.Contains(err.Error(), "unable to authenticate") {
			key := cfg.IdentityFile
			if key == "" {
				key = "the ssh-agent's keys"
			}
			return nil, &ConnError{Host: cfg.Name, Address: cfg.User + "@" + addr, Op: "log in as",
				Err: fmt.Errorf("the host refused %s: check identity_file and the user's ~/.ssh/authorized_keys on the Pi", key)}
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		hint := handshakeHint(err)
		if said.ssh() && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)) {
			hint = "the host's SSH server answered, then took longer than --connect-timeout (" + cfg.ConnectTimeout.String() + ") to finish the handshake (a busy Pi, or one on wifi): give it longer, --connect-timeout 30s or PIDB_CONNECT_TIMEOUT=30s"
		}
		return nil, &ConnError{Host: cfg.Name, Address: addr, Op: "connect to", Err: err, Hint: hint}
	}
	_ = tcp.SetDeadline(time.Time{})
	if accepted && cfg.Log != nil {
		fmt.Fprintf(cfg.Log, "%s: recorded the host key of %s in %s\n", cfg.Name, addr, cfg.KnownHosts)
	}
	cl := &Client{cfg: cfg, conn: &conn{ssh: ssh.NewClient(c, chans, reqs), done: make(chan struct{})}}
	go cl.keepAlive()
	return cl, nil
}

// unwrapOp drops net.OpError's repetition of the address, and the system
// call's name ("connect: connection refused").
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	var sc *os.SyscallError
	if errors.As(err, &sc) && sc.Err != nil {
		err = sc.Err
	}
	return err
}

func (c *Client) keepAlive() {
	t := time.NewTicker(c.cfg.KeepAlive)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-c.conn.done:
			return
		case <-t.C:
		}
		reply := make(chan error, 1)
		go func() {
			_, _, err := c.conn.ssh.SendRequest("keepalive@openssh.com", true, nil)
			reply <- err
		}()
		select {
		case <-c.conn.done:
			return
		case err := <-reply:
			if err != nil {
				c.conn.dead("the host stopped answering (" + err.Error() + ")")
				return
			}
			missed = 0
		case <-time.After(c.cfg.KeepAlive):
			missed++
			if missed >= 3 {
				c.conn.dead(fmt.Sprintf("no answer from the host for %s (the network, or the host, is down)", 4*c.cfg.KeepAlive))
				return
			}
		}
	}
}

// Close ends the connection.
func (c *Client) Close() error {
	var err error
	c.conn.once.Do(func() {
		close(c.conn.done)
		c.conn.sftpMu.Lock()
		if c.conn.sftpCli != nil {
			c.conn.sftpCli.Close()
		}
		c.conn.sftpMu.Unlock()
		err = c.conn.ssh.Close()
	})
	return err
}

// Host is the host's name in the inventory.
func (c *Client) Host() string { return c.cfg.Name }

// User is the login user.
func (c *Client) User() string { return c.cfg.User }

// AsRoot returns a view of the same connection whose commands and uploads
// run as root: through sudo -n unless the login user is root.
func (c *Client) AsRoot() *Client {
	return &Client{cfg: c.cfg, conn: c.conn, root: true}
}

func (c *Client) sudo() bool { return c.root && c.cfg.User != "root" }

// asRoot reports whether the view's commands run as root: an AsRoot view,
// or any view of a root login.
func (c *Client) asRoot() bool { return c.root || c.cfg.User == "root" }

// heard is a connection that notes whether the other end has said it is
// an SSH server: its first bytes, "SSH-" (RFC 4253's version line), which
// a handshake that then runs out of time has had.
type heard struct {
	net.Conn
	mu    sync.Mutex
	first []byte
}

func (h *heard) Read(p []byte) (int, error) {
	n, err := h.Conn.Read(p)
	h.mu.Lock()
	if need := 4 - len(h.first); need > 0 && n > 0 {
		h.first = append(h.first, p[:min(n, need)]...)
	}
	h.mu.Unlock()
	return n, err
}

// ssh reports whether the other end began as an SSH server does.
func (h *heard) ssh() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(h.first) == "SSH-"
}
