package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// DefaultMaxOutput is the most a command's standard output, or its
// standard error, may print for pidb to keep it (Config.MaxOutput): what
// it reads from a host is a setting, a file of the server's, a listing,
// never more. Stream's out takes any amount.
const DefaultMaxOutput = 32 << 20

// capped keeps what is written up to max bytes; past it, it calls full
// and takes the rest without keeping it.
type capped struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	full func()
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf.Len()+len(p) > c.max {
		c.full()
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Bytes()
}

// Run runs cmd (as root through sudo -n on an AsRoot view).
func (c *Client) Run(ctx context.Context, cmd string) (Result, error) {
	return c.RunInput(ctx, cmd, nil)
}

// RunInput runs cmd with stdin as its standard input: the way to hand a
// command a secret, which then appears in no command line.
func (c *Client) RunInput(ctx context.Context, cmd string, stdin []byte) (Result, error) {
	var in io.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	return c.Stream(ctx, cmd, in, nil)
}

// Stream runs cmd with its standard input read from in (nil: none) and
// its standard output written to out as it comes: for data too large to
// hold, such as a dump piped from one host into another (Pipe). The
// Result holds what it wrote to stderr, and its output where out is nil.
func (c *Client) Stream(ctx context.Context, cmd string, in io.Reader, out io.Writer) (Result, error) {
	full := cmd
	if c.sudo() {
		full = SudoCommand(cmd)
	}
	return c.run(ctx, cmd, full, in, out)
}

// run runs full (cmd as given, for errors); its output is kept unless
// stdout is given, where it goes instead.
func (c *Client) run(ctx context.Context, cmd, full string, stdin io.Reader, stdout io.Writer) (Result, error) {
	if c.cfg.Trace != nil {
		c.cfg.Trace(cmd)
	}
	sess, err := c.conn.ssh.NewSession()
	if err != nil {
		return Result{}, c.lost(err, "")
	}
	defer sess.Close()
	over := make(chan struct{})
	var once sync.Once
	full1 := func() { once.Do(func() { close(over) }) }
	limit := c.cfg.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	out, errb := &capped{max: limit, full: full1}, &capped{max: limit, full: full1}
	sess.Stdout, sess.Stderr, sess.Stdin = out, errb, stdin
	if stdout != nil {
		sess.Stdout = stdout
	}
	done := make(chan error, 1)
	go func() { done <- sess.Run(full) }()
	// kill stops the command and waits for Run to return (only then is
	// the output ours), 5 s at most; false where it did not return
	kill := func() bool {
		_ = sess.Signal(ssh.SIGKILL)
		sess.Close()
		select {
		case <-done:
			return true
		case <-time.After(5 * time.Second):
			return false
		}
	}
	tooMuch := func() error {
		return fmt.Errorf("%s: %s: printed more than %d bytes, which pidb does not read", c.cfg.Name, shorten(cmd, 120), limit)
	}
	select {
	case <-over:
		// a host that prints without end (cat of /dev/zero) is stopped,
		// not held in the controller's memory
		kill()
		return Result{}, tooMuch()
	case <-ctx.Done():
		ctxErr := fmt.Errorf("%s: %s: %w", c.cfg.Name, shorten(cmd, 120), ctx.Err())
		if !kill() {
			return Result{}, ctxErr
		}
		return Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}, ctxErr
	case err = <-done:
	}
	select {
	case <-over:
		// it ended as it went past the cap: what was kept is not all of it
		return Result{}, tooMuch()
	default:
	}
	res := Result{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	if err == nil {
		return res, nil
	}
	var exit *ssh.ExitError
	if errors.As(err, &exit) {
		ee := &ExitError{Host: c.cfg.Name, Cmd: cmd, Code: exit.ExitStatus(), Stderr: res.Stderr}
		if c.sudo() && full != sudoProbe && (bytes.Contains(res.Stderr, []byte("sudo: a password is required")) || c.sudoRefuses(ctx, res.Stderr)) {
			return res, &SudoPasswordError{Host: c.cfg.Name, User: c.cfg.User, Err: ee}
		}
		return res, ee
	}
	return res, c.lost(err, cmd)
}

// sudoProbe is a command that fails only where sudo refuses to run it.
const sudoProbe = "sudo -n true"

// sudoRefuses reports whether a failed command's standard error is sudo's
// own refusal, in whatever language the Pi's locale gives it or in
// sudo-rs's words (Ubuntu 26.04's sudo): its first line begins with
// sudo's name, and sudo -n true, which cannot fail otherwise, fails too.
// A command whose own error merely begins so is not taken for it.
func (c *Client) sudoRefuses(ctx context.Context, stderr []byte) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(string(stderr)), "\n")
	if !strings.HasPrefix(first, "sudo:") && !strings.HasPrefix(first, "sudo-rs:") {
		return false
	}
	_, err := c.run(ctx, sudoProbe, sudoProbe, nil, nil)
	var ee *ExitError
	return errors.As(err, &ee)
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
