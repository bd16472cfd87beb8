// Package wiretest holds what the protocol clients' unit tests share: a
// connection that hands out what the "server" sent a few bytes at a time.
package wiretest

import (
	"bytes"
	"encoding/binary"
	"net"
	"time"
)

// Trickle is a connection whose reads return at most N bytes of In (what
// the server "sent"), to try every split of the messages; what the client
// writes is kept in Sent.
type Trickle struct {
	In   *bytes.Reader
	N    int
	Sent bytes.Buffer
}

// NewTrickle answers with in, at most n bytes per read.
func NewTrickle(in []byte, n int) *Trickle { return &Trickle{In: bytes.NewReader(in), N: n} }

// Read returns at most N bytes of In.
func (t *Trickle) Read(b []byte) (int, error) {
	if len(b) > t.N {
		b = b[:t.N]
	}
	return t.In.Read(b)
}

// Write keeps b in Sent.
func (t *Trickle) Write(b []byte) (int, error) { return t.Sent.Write(b) }

// Close does nothing; the other methods are net.Conn's, doing nothing.
func (t *Trickle) Close() error                     { return nil }
func (t *Trickle) LocalAddr() net.Addr              { return nil }
func (t *Trickle) RemoteAddr() net.Addr             { return nil }
func (t *Trickle) SetDeadline(time.Time) error      { return nil }
func (t *Trickle) SetReadDeadline(time.Time) error  { return nil }
func (t *Trickle) SetWriteDeadline(time.Time) error { return nil }

// PGMessage is one PostgreSQL protocol message as the server sends it: a
// type byte, the length, the body.
func PGMessage(typ byte, body string) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
	return append(b, body...)
}
