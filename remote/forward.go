package remote

import (
	"fmt"
	"io"
	"net"
	"sync"
)

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
