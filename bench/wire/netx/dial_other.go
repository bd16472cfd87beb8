//go:build !linux

package netx

import (
	"context"
	"net"
)

// Dial is net.Dialer's on systems other than Linux: the connection stays in
// Go's poller and has no Fd to multiplex.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// shutdown is never called here: Dial makes no Conn.
func shutdown(int) {}
