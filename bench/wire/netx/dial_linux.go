package netx

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// Dial connects to a TCP address with plain system calls, in blocking
// mode, with TCP_NODELAY and keepalives as package net sets them. It has
// the signature of pgconn's DialFunc; other networks (unix sockets) go to
// net.Dialer.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	pn, err := net.LookupPort("tcp", port)
	if err != nil {
		return nil, err
	}
	var last error
	for _, ip := range ips {
		c, err := dial(ctx, netip.AddrPortFrom(ip.Unmap(), uint16(pn)))
		if err == nil {
			return c, nil
		}
		last = err
	}
	if last == nil {
		last = fmt.Errorf("no address for %s", host)
	}
	return nil, &net.OpError{Op: "dial", Net: network, Err: last}
}

func dial(ctx context.Context, ap netip.AddrPort) (*Conn, error) {
	family, sa := syscall.AF_INET, syscall.Sockaddr(&syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()})
	if ap.Addr().Is6() {
		family, sa = syscall.AF_INET6, &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	fail := func(call string, err error) (*Conn, error) {
		syscall.Close(fd)
		return nil, os.NewSyscallError(call, err)
	}
	// connect(2) waits at most SO_SNDTIMEO: the context's deadline, else 10 s
	wait := 10 * time.Second
	if d, ok := ctx.Deadline(); ok {
		wait = max(time.Until(d), time.Millisecond)
	}
	tv := syscall.NsecToTimeval(wait.Nanoseconds())
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv); err != nil {
		return fail("setsockopt", err)
	}
	for {
		err = syscall.Connect(fd, sa)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		if err == syscall.EAGAIN || err == syscall.EINPROGRESS {
			err = syscall.ETIMEDOUT
		}
		return fail("connect", err)
	}
	tv = syscall.Timeval{}
	for _, o := range []struct {
		level, name, value int
	}{
		{syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1},
		{syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, 15},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, 15},
	} {
		if err := syscall.SetsockoptInt(fd, o.level, o.name, o.value); err != nil {
			return fail("setsockopt", err)
		}
	}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv); err != nil {
		return fail("setsockopt", err)
	}
	local := &net.TCPAddr{}
	if lsa, err := syscall.Getsockname(fd); err == nil {
		switch a := lsa.(type) {
		case *syscall.SockaddrInet4:
			local = &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
		case *syscall.SockaddrInet6:
			local = &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
		}
	}
	f := os.NewFile(uintptr(fd), "tcp:"+ap.String()) // blocking: not in the poller
	return &Conn{f: f, fd: fd, local: local, remote: net.TCPAddrFromAddrPort(ap)}, nil
}

// shutdown shuts a socket down both ways.
func shutdown(fd int) { _ = syscall.Shutdown(fd, syscall.SHUT_RDWR) }
