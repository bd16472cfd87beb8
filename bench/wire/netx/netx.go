// Package netx gives a benchmark client a TCP connection whose reads and
// writes are plain blocking system calls on the socket, outside Go's
// network poller.
//
// A client that sends one statement and waits for its answer, over and
// over, pays for Go's poller on every round trip: a read that finds nothing
// yet (EAGAIN), a wait in epoll, a wake-up of the goroutine, often on
// another thread, and the read again. A blocking recv is one system call
// that the kernel ends when the answer is there, which is what pgbench and
// sysbench do per round trip. The price is one OS thread per connection
// while it waits, and that deadlines do not work: Interrupt (shutdown of the
// socket) ends a wait instead.
//
// The socket is made and connected with plain system calls, never through
// package net: a socket that has been in Go's poller stays in its epoll set
// for as long as any descriptor of it is open, and every answer would wake
// the poller for nothing. On systems other than Linux, Dial is net's.
package netx

import (
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Conn is a TCP connection in blocking mode. Its Read and Write may be
// called from one goroutine at a time each; Interrupt and Close from any.
type Conn struct {
	f             *os.File
	fd            int
	local, remote net.Addr
	once          sync.Once
}

// Read is one recv: blocking, or in non-blocking mode (a socket the
// driver multiplexes) ErrAgain when there is nothing yet.
func (c *Conn) Read(b []byte) (int, error) {
	n, err := c.f.Read(b)
	if err != nil && errors.Is(err, syscall.EAGAIN) {
		return n, ErrAgain
	}
	return n, err
}

// Write writes all of b; in non-blocking mode, when the socket's buffer is
// full (never with a benchmark's small requests, but possible), it waits a
// moment and goes on, so that a TLS connection above never sees a write
// cut short (which would end it).
func (c *Conn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := c.f.Write(b[done:])
		done += n
		if err != nil && errors.Is(err, syscall.EAGAIN) {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// ErrAgain is a Read on a non-blocking socket that has nothing yet. It is
// syscall.EAGAIN (errors.Is), and a temporary net.Error: crypto/tls keeps
// a connection whose read failed so, with what it read of a record, and
// reads on when asked again.
var ErrAgain error = again{}

type again struct{}

func (again) Error() string   { return "netx: nothing to read yet" }
func (again) Timeout() bool   { return true }
func (again) Temporary() bool { return true }
func (again) Unwrap() error   { return syscall.EAGAIN }

// Interrupt shuts the socket down: a Read or Write waiting on it returns,
// and the connection is finished.
func (c *Conn) Interrupt() {
	shutdown(c.fd)
}

// Close closes the socket.
func (c *Conn) Close() error {
	err := errors.New("closed already")
	c.once.Do(func() { err = c.f.Close() })
	return err
}

// Fd is the socket's descriptor, for a caller that waits on several
// sockets at once (epoll) and reads when they are ready, after putting it
// in non-blocking mode.
func (c *Conn) Fd() int { return c.fd }

// LocalAddr is the connection's own address.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr is the server's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// ErrNoDeadlines is what the deadline methods return.
var ErrNoDeadlines = errors.New("netx: a blocking connection has no deadlines; use Interrupt")

// SetDeadline is not supported; clearing a deadline (the zero time) is a no-op.
func (c *Conn) SetDeadline(t time.Time) error { return deadline(t) }

// SetReadDeadline is not supported; clearing (the zero time) is a no-op.
func (c *Conn) SetReadDeadline(t time.Time) error { return deadline(t) }

// SetWriteDeadline is not supported; clearing (the zero time) is a no-op.
func (c *Conn) SetWriteDeadline(t time.Time) error { return deadline(t) }

func deadline(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	return ErrNoDeadlines
}

// Fd is c's socket descriptor when c is a Conn, or a connection over one
// (TLS's, which has NetConn), else -1: a connection that cannot be
// multiplexed.
func Fd(c net.Conn) int {
	for {
		if x, ok := c.(*Conn); ok {
			return x.fd
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return -1
		}
		c = w.NetConn()
	}
}

// Interrupt ends a wait on c from another goroutine: a Conn is shut down,
// also under a connection that wraps it (TLS's, which has NetConn); any
// other connection gets a deadline in the past.
func Interrupt(c net.Conn) {
	for {
		if x, ok := c.(*Conn); ok {
			x.Interrupt()
			return
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = w.NetConn()
	}
	_ = c.SetDeadline(time.Unix(1, 0))
}
