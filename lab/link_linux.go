//go:build linux

package lab

import (
	"net"
	"net/netip"

	"golang.org/x/sys/unix"
)

// originalDst is where a connection the link's rule turned to the relay
// was sent: conntrack keeps it (SO_ORIGINAL_DST).
func originalDst(c *net.TCPConn) (netip.AddrPort, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, err
	}
	var (
		mreq *unix.IPv6Mreq
		gerr error
	)
	if err := rc.Control(func(fd uintptr) {
		// a sockaddr_in, in the 16 bytes of an IPv6Mreq
		mreq, gerr = unix.GetsockoptIPv6Mreq(int(fd), unix.IPPROTO_IP, unix.SO_ORIGINAL_DST)
	}); err != nil {
		return netip.AddrPort{}, err
	}
	if gerr != nil {
		return netip.AddrPort{}, gerr
	}
	a := mreq.Multiaddr
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{a[4], a[5], a[6], a[7]}), uint16(a[2])<<8|uint16(a[3])), nil
}

// setMark marks a socket's packets (SO_MARK), which nft rules can match.
func setMark(fd, mark int) error {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_MARK, mark)
}
