//go:build !linux

package lab

import (
	"errors"
	"net"
	"net/netip"
)

// The lab's link needs Linux's conntrack and socket marks; checkHost
// refuses the lab first anywhere else.

func originalDst(*net.TCPConn) (netip.AddrPort, error) {
	return netip.AddrPort{}, errors.New("the lab's link needs Linux")
}

func setMark(int, int) error { return errors.New("the lab's link needs Linux") }
