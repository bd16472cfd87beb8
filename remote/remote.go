// Package remote is pidb's only way onto a Pi: one SSH connection per host,
// host keys checked against known_hosts, commands as the login user or as
// root through sudo -n, atomic file uploads over SFTP, and typed errors.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"
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
