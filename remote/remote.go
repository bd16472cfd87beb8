// Package remote is pidb's only way onto a Pi: one SSH connection per host,
// host keys checked against known_hosts, commands as the login user or as
// root through sudo -n, atomic file uploads over SFTP, and typed errors.
package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Runner runs commands on one host and moves files to and from it. Commands
// are shell command lines; quote every value put into one with Quote.
type Runner interface {
	// Run runs cmd and waits for it. A non-zero exit is an *ExitError.
	Run(ctx context.Context, cmd string) (Result, error)
	// RunInput is Run with stdin as the command's standard input.
	RunInput(ctx context.Context, cmd string, stdin []byte) (Result, error)
	// Upload writes data to path with mode: a temp file in path's folder,
	// then a rename, so readers see the old file or the new one, never half.
	Upload(ctx context.Context, path string, data []byte, mode fs.FileMode) error
	// ReadFile returns a file's contents; a missing file wraps fs.ErrNotExist.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// Host is the host's name in the inventory.
	Host() string
}

// Result is what a command printed.
type Result struct {
	Stdout, Stderr []byte
}

// ExitError is a command that ran and failed.
type ExitError struct {
	Host   string
	Cmd    string // as the caller gave it (without the sudo wrapper)
	Code   int
	Stderr []byte
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(string(e.Stderr))
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 && len(msg) > 300 {
		msg = msg[i+1:]
	}
	if msg == "" {
		msg = "no error output"
	}
	return fmt.Sprintf("%s: %s: exit status %d: %s", e.Host, shorten(e.Cmd, 120), e.Code, msg)
}

// SudoPasswordError is a command that needed root where sudo asks for a password.
type SudoPasswordError struct {
	Host, User string
	Err        *ExitError
}

func (e *SudoPasswordError) Error() string {
	return fmt.Sprintf("%s: sudo needs a password for %s, and pidb only uses sudo -n: give %s passwordless sudo "+
		"(e.g. \"%s ALL=(ALL) NOPASSWD: ALL\" in /etc/sudoers.d/010_%s-nopasswd, as Raspberry Pi OS does) or connect as root",
		e.Host, e.User, e.User, e.User, e.User)
}

func (e *SudoPasswordError) Unwrap() error { return e.Err }

// ConnError is a host that could not be reached or whose connection was lost.
type ConnError struct {
	Host, Address string
	Op            string // "connect", "log in", "connection lost"
	Err           error
	Hint          string // what to check, when the cause says it
}

func (e *ConnError) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("%s: %s %s: %v: %s", e.Host, e.Op, e.Address, e.Err, e.Hint)
	}
	return fmt.Sprintf("%s: %s %s: %v", e.Host, e.Op, e.Address, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// dialHint says what to check for a TCP connection that failed, by its
// cause.
func dialHint(err error) string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &dns):
		return "the name does not resolve here: check the host's address (a .local name needs mDNS on this machine: avahi-daemon and libnss-mdns)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "nothing listens on that port: is SSH enabled on the Pi (raspi-config, or a file named ssh on the boot partition), and is the host's port right?"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no way to that address from this machine: is the Pi on and on this network, and is the host's address right?"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "no answer within --connect-timeout: is the Pi on, and is the host's address right?"
	}
	return ""
}

// handshakeHint says what to check for an SSH handshake that failed.
func handshakeHint(err error) string {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return "the other end closed the connection before SSH began: is that port the Pi's SSH server, and does its sshd allow this machine (MaxStartups, hosts.deny)?"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "no SSH answer within --connect-timeout: is that port the Pi's SSH server?"
	}
	return dialHint(err)
}

func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

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
	c, chans, reqs, err := ssh.NewClientConn(tcp, addr, sshCfg)
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
		return nil, &ConnError{Host: cfg.Name, Address: addr, Op: "connect to", Err: err, Hint: handshakeHint(err)}
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

// Run runs cmd (as root through sudo -n on an AsRoot view).
func (c *Client) Run(ctx context.Context, cmd string) (Result, error) {
	return c.RunInput(ctx, cmd, nil)
}

// RunInput runs cmd with stdin as its standard input: the way to hand a
// command a secret, which then appears in no command line.
func (c *Client) RunInput(ctx context.Context, cmd string, stdin []byte) (Result, error) {
	full := cmd
	if c.sudo() {
		full = SudoCommand(cmd)
	}
	var in io.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	return c.run(ctx, cmd, full, in)
}

func (c *Client) run(ctx context.Context, cmd, full string, stdin io.Reader) (Result, error) {
	if c.cfg.Trace != nil {
		c.cfg.Trace(cmd)
	}
	sess, err := c.conn.ssh.NewSession()
	if err != nil {
		return Result{}, c.lost(err, "")
	}
	defer sess.Close()
	var out, errb bytes.Buffer
	sess.Stdout, sess.Stderr, sess.Stdin = &out, &errb, stdin
	done := make(chan error, 1)
	go func() { done <- sess.Run(full) }()
	select {
	case <-ctx.Done():
		_ = sess.Signal(ssh.SIGKILL)
		sess.Close()
		// the output is only ours once Run has returned
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			return Result{}, fmt.Errorf("%s: %s: %w", c.cfg.Name, shorten(cmd, 120), ctx.Err())
		}
		return Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}, fmt.Errorf("%s: %s: %w", c.cfg.Name, shorten(cmd, 120), ctx.Err())
	case err = <-done:
	}
	res := Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	if err == nil {
		return res, nil
	}
	var exit *ssh.ExitError
	if errors.As(err, &exit) {
		ee := &ExitError{Host: c.cfg.Name, Cmd: cmd, Code: exit.ExitStatus(), Stderr: res.Stderr}
		if c.sudo() && bytes.Contains(res.Stderr, []byte("sudo: a password is required")) {
			return res, &SudoPasswordError{Host: c.cfg.Name, User: c.cfg.User, Err: ee}
		}
		return res, ee
	}
	return res, c.lost(err, cmd)
}

func (c *Client) lost(err error, cmd string) error {
	var missing *ssh.ExitMissingError
	switch why := c.conn.lostWhy(); {
	case why != "":
		err = errors.New(why)
	case errors.As(err, &missing) && cmd != "":
		// sshd ended the session: a reboot or shutdown stops it so
		err = fmt.Errorf("the host ended the session while %q ran: it rebooted or shut down, or its sshd was stopped", shorten(cmd, 80))
	}
	return &ConnError{Host: c.cfg.Name, Address: net.JoinHostPort(c.cfg.Address, strconv.Itoa(c.cfg.Port)), Op: "connection lost to", Err: err}
}

// ReadFile returns the contents of a file. On a view that runs as root it
// reads as the user who controls the file's folder (FolderUser), as Upload
// writes: a link that user planted cannot make root read, and pidb then
// write back where that user reads it, a file the user may not read.
func (c *Client) ReadFile(ctx context.Context, p string) ([]byte, error) {
	cmd := "cat -- " + Quote(p)
	if c.asRoot() {
		user, err := FolderUser(ctx, c, path.Dir(p))
		if err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", c.cfg.Name, p, err)
		}
		cmd = AsUser(user, cmd)
	}
	res, err := c.Run(ctx, cmd)
	var ee *ExitError
	if errors.As(err, &ee) && bytes.Contains(ee.Stderr, []byte("No such file or directory")) {
		return nil, fmt.Errorf("%s: %s: %w", c.cfg.Name, p, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	return res.Stdout, nil
}

func (c *Client) sftp() (*sftp.Client, error) {
	c.conn.sftpMu.Lock()
	defer c.conn.sftpMu.Unlock()
	if c.conn.sftpCli == nil {
		s, err := sftp.NewClient(c.conn.ssh)
		if err != nil {
			return nil, fmt.Errorf("%s: start sftp: %w", c.cfg.Name, err)
		}
		c.conn.sftpCli = s
	}
	return c.conn.sftpCli, nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Upload writes data to p with mode, atomically. As a login user other than
// root it writes a temp file in p's folder over SFTP and renames it into
// place. As root (an AsRoot view, or a root login) it hands the data to a
// command that writes a temp file in p's folder and renames it into place,
// run as the user who controls the folder (FolderUser): root never writes
// where another user could have planted a link. Nothing is staged in /tmp.
// A replaced file keeps its mode (and, written as root, its owner); a new
// one gets the mode asked, and belongs to whoever wrote it. A failure
// names a full disk as such.
func (c *Client) Upload(ctx context.Context, p string, data []byte, mode fs.FileMode) error {
	if !path.IsAbs(p) {
		return fmt.Errorf("%s: upload: %q is not an absolute path", c.cfg.Name, p)
	}
	dir, base := path.Split(p)
	if !c.asRoot() {
		s, err := c.sftp()
		if err != nil {
			return err
		}
		tmp := path.Join(dir, "."+base+".pidb-"+randomSuffix())
		if err := writeSFTP(s, tmp, data, mode); err != nil {
			_ = s.Remove(tmp)
			return c.uploadError(ctx, p, err)
		}
		if err := keepOwnerAndMode(s, tmp, p, dir); err != nil {
			_ = s.Remove(tmp)
			return fmt.Errorf("%s: upload %s: %w", c.cfg.Name, p, err)
		}
		if err := s.PosixRename(tmp, p); err != nil {
			_ = s.Remove(tmp)
			return fmt.Errorf("%s: upload %s: %w", c.cfg.Name, p, err)
		}
		return nil
	}
	user, err := FolderUser(ctx, c, path.Clean(dir))
	if err != nil {
		return fmt.Errorf("%s: upload %s: %w", c.cfg.Name, p, err)
	}
	if _, err := c.RunInput(ctx, AsUser(user, uploadScript(p, mode, user == "root")), data); err != nil {
		return c.uploadError(ctx, p, err)
	}
	return nil
}

// uploadScript writes its standard input to p (Replace). A regular file
// at p gives the new one its mode, and as root its owner.
func uploadScript(p string, mode fs.FileMode, root bool) string {
	qp := Quote(p)
	keep := `chmod "$(stat -c %a -- ` + qp + `)" "$t"`
	if root {
		keep += ` && chown "$(stat -c %u:%g -- ` + qp + `)" "$t"`
	}
	return Replace(p, "if [ -f "+qp+" ] && [ ! -h "+qp+" ]; then "+keep+"; else chmod "+fmt.Sprintf("%04o", uint32(mode.Perm()))+` "$t"; fi && cat > "$t"`)
}

// Replace is a shell script that replaces the file p whole: fill writes
// the new contents to "$t", a temp file beside p that mktemp makes
// (O_EXCL: never one that was there), which a rename then puts in p's
// place (replacing a link at p, never writing through it); the temp file
// is gone either way. The script exits with the first failure's status.
func Replace(p, fill string) string {
	dir, base := path.Split(p)
	return "umask 077 && t=$(mktemp " + Quote(path.Join(dir, "."+base+".pidb-XXXXXX")) + ") || exit 1; " +
		fill + ` && mv -f -- "$t" ` + Quote(p) + `; rc=$?; rm -f -- "$t"; exit $rc`
}

// uploadError names a failed upload, and a full disk as such: the free
// space of the file's folder, read after the failure.
func (c *Client) uploadError(ctx context.Context, p string, err error) error {
	dir := path.Dir(p)
	var ee *ExitError
	if errors.As(err, &ee) && len(bytes.TrimSpace(ee.Stderr)) > 0 {
		// what the command said, not the command
		err = errors.New(string(bytes.TrimSpace(ee.Stderr)))
	}
	res, dfErr := c.Run(ctx, "df -Pk "+Quote(dir)+" | tail -n 1")
	if f := strings.Fields(string(res.Stdout)); dfErr == nil && len(f) >= 6 {
		if free, perr := strconv.ParseInt(f[3], 10, 64); perr == nil && free < 64 {
			return fmt.Errorf("%s: upload %s: the disk that holds %s (%s, mounted on %s) is full: %d KiB free (%w)", c.cfg.Name, p, dir, f[0], f[5], free, err)
		}
	}
	return fmt.Errorf("%s: upload %s: %w", c.cfg.Name, p, err)
}

// keepOwnerAndMode gives tmp, which will replace p, p's owner and mode, or
// for a new file the owner of its folder (the mode is the one asked).
// Changing the owner needs root; as anyone else it is the same owner.
func keepOwnerAndMode(s *sftp.Client, tmp, p, dir string) error {
	like, err := s.Stat(p)
	replacing := err == nil
	if replacing {
		if err := s.Chmod(tmp, like.Mode().Perm()); err != nil {
			return err
		}
	} else if like, err = s.Stat(dir); err != nil {
		return err
	}
	st, ok := like.Sys().(*sftp.FileStat)
	if !ok {
		return nil
	}
	if have, err := s.Stat(tmp); err == nil {
		if hs, ok := have.Sys().(*sftp.FileStat); ok && hs.UID == st.UID && hs.GID == st.GID {
			return nil
		}
	}
	if err := s.Chown(tmp, int(st.UID), int(st.GID)); err != nil && replacing {
		return err // a new file in someone else's folder stays the writer's
	}
	return nil
}

func writeSFTP(s *sftp.Client, p string, data []byte, mode fs.FileMode) error {
	f, err := s.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_EXCL)
	if err != nil {
		return err
	}
	if err := f.Chmod(mode.Perm()); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Forward listens on a loopback port of this machine and carries each
// connection made to it through the SSH connection to addr on the host (as
// ssh -L does): how the controller reaches a database that listens on the
// Pi's localhost only. Clients get a real TCP socket, whose deadlines and
// cancellation work as usual. stop closes the listener and every forwarded
// connection.
func (c *Client) Forward(addr string) (local string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("%s: forward to %s: %w", c.cfg.Name, addr, err)
	}
	var mu sync.Mutex
	var open []net.Conn
	track := func(cs ...net.Conn) {
		mu.Lock()
		open = append(open, cs...)
		mu.Unlock()
	}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := c.conn.ssh.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			track(in, out)
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	stop = func() {
		l.Close()
		mu.Lock()
		for _, x := range open {
			x.Close()
		}
		mu.Unlock()
	}
	return l.Addr().String(), stop, nil
}
