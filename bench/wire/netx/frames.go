package netx

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// WriteAll writes all of b (a Conn's Write does; another net.Conn's may
// stop short on a non-blocking socket whose buffer is full, and then it
// waits a moment and goes on).
func WriteAll(c net.Conn, b []byte) error {
	for len(b) > 0 {
		n, err := c.Write(b)
		b = b[n:]
		if err != nil && errors.Is(err, syscall.EAGAIN) {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// MaxMessage is the largest message Frames takes: the workloads' answers
// are a few kilobytes; a length beyond this is not an answer but bytes
// that are not the protocol, which must not make the client allocate
// gigabytes.
const MaxMessage = 64 << 20

// Frames is a reused read buffer for a protocol of length-prefixed
// messages (PostgreSQL's, MySQL's): Read fills it with one read, Next takes
// the complete messages out, and what is left waits for the next read.
type Frames struct {
	in   []byte
	r, n int
	// Header is how many bytes a message's header has, and Size reads a
	// header's whole message length (header included), or an error.
	Header int
	Size   func(header []byte) (int, error)
}

// NewFrames makes a buffer of size bytes; it grows for a bigger message.
func NewFrames(size, header int, sizeOf func([]byte) (int, error)) *Frames {
	return &Frames{in: make([]byte, size), Header: header, Size: sizeOf}
}

// Next returns the next complete message, header included, valid until the
// next Read; ok is false when there is none yet, and then the buffer has
// room for more of it (it doubles, up to the message's size, when full).
func (f *Frames) Next() (msg []byte, ok bool, err error) {
	if f.n-f.r >= f.Header {
		size, err := f.Size(f.in[f.r : f.r+f.Header])
		if err != nil {
			return nil, false, err
		}
		if f.n-f.r >= size {
			msg = f.in[f.r : f.r+size]
			f.r += size
			return msg, true, nil
		}
		if size > MaxMessage {
			return nil, false, fmt.Errorf("a message of %d bytes from the server, more than a benchmark's client reads (%d MiB): not the server's protocol", size, MaxMessage>>20)
		}
		if size > len(f.in) && f.r == 0 && f.n == len(f.in) {
			// full, and the message is bigger: twice the room, up to the
			// message's size, so that what the buffer takes grows with
			// what came and not with what a header says
			in := make([]byte, min(size, 2*len(f.in)))
			f.n = copy(in, f.in[f.r:f.n])
			f.in, f.r = in, 0
		}
	}
	if f.r > 0 {
		f.n = copy(f.in, f.in[f.r:f.n])
		f.r = 0
	}
	return nil, false, nil
}

// Read reads once from c into the free space (on a blocking socket it waits
// for data). again says a non-blocking socket had nothing yet; err is what
// ended the connection.
func (f *Frames) Read(c net.Conn) (again bool, err error) {
	m, err := c.Read(f.in[f.n:])
	f.n += m
	switch {
	case err != nil && errors.Is(err, syscall.EAGAIN):
		return true, nil
	case err != nil && m == 0:
		return false, err
	}
	return false, nil
}

// Buffered is how many bytes wait to be taken.
func (f *Frames) Buffered() int { return f.n - f.r }
