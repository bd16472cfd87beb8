// Package mywire speaks the few commands of the MySQL client/server
// protocol that a read-only benchmark's round trips need (COM_QUERY,
// COM_STMT_PREPARE, COM_STMT_EXECUTE with integer parameters), on a
// connection that go-sql-driver/mysql opened and authenticated. Each round
// trip is one write and reads into one reused buffer, parsed as it comes:
// no allocation per statement, and on a non-blocking socket the answer can
// arrive in pieces, so that one thread can serve several connections
// (bench.Async). Result rows are read through, not decoded.
package mywire

import (
	"context"
	"crypto/tls"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/go-sql-driver/mysql"

	"pidb/bench/wire/netx"
	"pidb/bench/wire/rows"
)

// Conn is one client connection.
type Conn struct {
	dc     driver.Conn // the driver's, kept to say goodbye (COM_QUIT) at Close
	conn   net.Conn
	out    []byte
	in     *netx.Frames
	resp   response
	broken bool
	eof    bool      // the server sends EOF packets after column definitions (no CLIENT_DEPRECATE_EOF); learnt by the probe at Connect
	keep   *rows.Set // where a text query's rows go (Keep); nil: read through
}

// response is the state of the answer being read.
type response struct {
	state   int // what the next packet is
	columns int // column definitions still to come
	err     error
	prepare *Stmt // a COM_STMT_PREPARE's statement, filled in as it comes
	params  int   // parameter definitions still to come (prepare)
	probe   bool  // SELECT 1, to learn whether EOF packets end the columns
	binary  bool  // a COM_STMT_EXECUTE's: rows in the binary protocol
	cols    int   // the result set's columns
}

const (
	stFirst      = iota // OK, ERR, a result set's column count, or STMT_PREPARE_OK
	stParams            // a prepare's parameter definitions
	stParamsEOF         // after them: EOF, or (CLIENT_DEPRECATE_EOF) the first column definition
	stColumns           // column definitions
	stColumnsEOF        // after them: EOF (without CLIENT_DEPRECATE_EOF)
	stProbe             // after the probe's column: EOF, or its row
	stRows              // rows until EOF/OK (0xFE) or ERR
	stDone
)

// Stmt is a prepared statement on one connection.
type Stmt struct {
	ID      uint32
	Params  int
	Columns int
}

// Connect opens and authenticates a connection with cfg's driver, on a
// socket that dial makes (netx.Dial, say), and takes it over. The login
// gives the password to nobody but the server, whatever cfg says (secure);
// without TLS, to another machine, a server that asks for it encrypted
// with a key of its own gets nothing: an *AuthError.
func Connect(ctx context.Context, cfg *mysql.Config, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*Conn, error) {
	cfg, err := secure(cfg)
	if err != nil {
		return nil, err
	}
	dc, raw, err := login(ctx, cfg, dial)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		dc.Close()
		return nil, errors.New("mywire: the driver did not dial")
	}
	conn := raw
	if cfg.TLS != nil {
		if conn, err = tlsConnOf(dc); err != nil {
			dc.Close()
			return nil, err
		}
	}
	c := &Conn{dc: dc, conn: conn, out: make([]byte, 0, 256), in: newFrames(64 << 10), eof: true}
	if err := c.probe(); err != nil {
		dc.Close()
		return nil, fmt.Errorf("mywire: SELECT 1: %w", err)
	}
	return c, nil
}

// probe learns how the server ends column definitions in a result set
// (with an EOF packet, or without: CLIENT_DEPRECATE_EOF, which the driver
// asks for): from SELECT 1, whose one column is followed by either an
// EOF or its one row. A text query's rows are read right only once this is
// known.
func (c *Conn) probe() error {
	c.SetQuery("SELECT 1")
	c.resp.probe = true
	return c.RoundTrip()
}

// tlsConnOf is the TLS connection the driver made over the socket for its
// login: go-sql-driver/mysql keeps it in its connection's netConn field
// and has no way to hand it out, so it is read from there. A version of
// the driver that keeps it elsewhere is an error here, and in this
// package's tests, not a client that writes in the clear under TLS.
func tlsConnOf(dc driver.Conn) (net.Conn, error) {
	v := reflect.ValueOf(dc)
	if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		if f := v.Elem().FieldByName("netConn"); f.IsValid() && f.Type() == reflect.TypeFor[net.Conn]() {
			c := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface()
			if tc, ok := c.(*tls.Conn); ok {
				return tc, nil
			}
		}
	}
	return nil, fmt.Errorf("mywire: go-sql-driver/mysql (%T) does not keep its TLS connection where this package reads it", dc)
}

func newFrames(size int) *netx.Frames { return netx.NewFrames(size, 4, packetSize) }

// Fd is the socket's descriptor, or -1.
func (c *Conn) Fd() int { return netx.Fd(c.conn) }

// Broken says a read or write failed: the connection is finished.
func (c *Conn) Broken() bool { return c.broken }

// Close says goodbye through the driver (COM_QUIT, when the connection
// still works) and closes the socket.
func (c *Conn) Close() error { return c.dc.Close() }

// Interrupt ends a wait on the server from another goroutine.
func (c *Conn) Interrupt() { netx.Interrupt(c.conn) }

func (c *Conn) begin(cmd byte) {
	c.out = append(c.out[:0], 0, 0, 0, 0, cmd) // length and sequence 0, filled in by send
	c.resp = response{}
}

// SetQuery makes the request a COM_QUERY.
func (c *Conn) SetQuery(sql string) {
	c.begin(0x03)
	c.out = append(c.out, sql...)
}

// SetQueryBytes makes the request a COM_QUERY of sql.
func (c *Conn) SetQueryBytes(sql []byte) {
	c.begin(0x03)
	c.out = append(c.out, sql...)
}

// Keep makes every text query's rows go into s, from the next Send on
// (nil: read through them, the default). A prepared statement's rows,
// in the binary protocol, are read through.
func (c *Conn) Keep(s *rows.Set) { c.keep = s }

// SetQueryInt makes the request a COM_QUERY of prefix, n in decimal and
// suffix: a statement with its value in the text, as a client library
// that interpolates on the client sends it (MySQLdb's cursor.execute).
// Its result set is read as Connect's probe found the server ends column
// definitions.
func (c *Conn) SetQueryInt(prefix string, n int64, suffix string) {
	c.begin(0x03)
	c.out = append(c.out, prefix...)
	c.out = strconv.AppendInt(c.out, n, 10)
	c.out = append(c.out, suffix...)
}

// SetPrepare makes the request a COM_STMT_PREPARE; the answer fills s.
func (c *Conn) SetPrepare(sql string, s *Stmt) {
	c.begin(0x16)
	c.out = append(c.out, sql...)
	c.resp.prepare = s
}

// SetExecute makes the request a COM_STMT_EXECUTE of s with integer
// parameters, sent as BIGINT in the binary protocol.
func (c *Conn) SetExecute(s *Stmt, args ...int64) {
	c.begin(0x17)
	c.resp.binary = true
	o := binary.LittleEndian.AppendUint32(c.out, s.ID)
	o = append(o, 0, 1, 0, 0, 0) // no cursor; one iteration
	if len(args) > 0 {
		for range (len(args) + 7) / 8 {
			o = append(o, 0) // no NULLs
		}
		o = append(o, 1) // types follow
		for range args {
			o = append(o, 0x08, 0) // MYSQL_TYPE_LONGLONG, signed
		}
		for _, a := range args {
			o = binary.LittleEndian.AppendUint64(o, uint64(a))
		}
	}
	c.out = o
}

// Send writes the request.
func (c *Conn) Send() error {
	if c.broken {
		return errors.New("mywire: the connection is broken")
	}
	n := len(c.out) - 4
	if n >= 1<<24-1 {
		return errors.New("mywire: a request too long for one packet")
	}
	c.out[0], c.out[1], c.out[2], c.out[3] = byte(n), byte(n>>8), byte(n>>16), 0
	if c.keep != nil {
		c.keep.Reset()
	}
	if err := netx.WriteAll(c.conn, c.out); err != nil {
		c.broken = true
		return err
	}
	return nil
}

// Receive reads what the server sent and takes the complete packets,
// reading on until the answer is complete or a non-blocking socket has
// nothing more (a blocking one waits for it): under TLS a read can leave
// whole records in the TLS connection's buffer, which no readiness of the
// socket would announce. It reports done once the
// answer is complete, with the server's error if it sent one (a
// *mysql.MySQLError), or when the connection broke, with what broke it.
func (c *Conn) Receive() (done bool, err error) {
	for {
		for {
			p, ok, err := c.in.Next()
			if err != nil {
				c.broken = true
				return true, err
			}
			if !ok {
				break
			}
			if err := c.take(p[4:]); err != nil {
				c.broken = true
				return true, err
			}
			if c.resp.state == stDone {
				return true, c.resp.err
			}
		}
		if again, err := c.in.Read(c.conn); again {
			return false, nil
		} else if err != nil {
			c.broken = true
			return true, err
		}
	}
}

// RoundTrip sends the request and waits for the whole answer.
func (c *Conn) RoundTrip() error {
	if err := c.Send(); err != nil {
		return err
	}
	for {
		if done, err := c.Receive(); done {
			return err
		}
	}
}

// packetSize reads a packet header: a 3-byte length of the payload, then
// the sequence number.
func packetSize(h []byte) (int, error) {
	n := int(uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16)
	if n == 1<<24-1 {
		return 0, errors.New("mywire: a packet of 16 MB or more")
	}
	return 4 + n, nil
}

func isEOF(p []byte) bool { return len(p) > 0 && p[0] == 0xFE && len(p) < 9 }

// take moves the answer's state on by one packet.
func (c *Conn) take(p []byte) error {
	if len(p) == 0 {
		return errors.New("mywire: an empty packet")
	}
	r := &c.resp
	if p[0] == 0xFF && r.state != stColumns && r.state != stParams {
		r.err = serverError(p)
		r.state = stDone
		return nil
	}
	switch r.state {
	case stFirst:
		switch {
		case r.prepare != nil:
			if p[0] != 0 || len(p) < 12 {
				return fmt.Errorf("mywire: not a STMT_PREPARE_OK (0x%02x)", p[0])
			}
			s := r.prepare
			s.ID = binary.LittleEndian.Uint32(p[1:])
			s.Columns = int(binary.LittleEndian.Uint16(p[5:]))
			s.Params = int(binary.LittleEndian.Uint16(p[7:]))
			r.params, r.columns = s.Params, s.Columns
			r.state = stParams
			c.afterParams()
		case p[0] == 0x00 || p[0] == 0xFE: // OK
			r.state = stDone
		default: // a result set: its column count
			n, _, ok := lenenc(p)
			if !ok || n == 0 {
				return errors.New("mywire: a bad column count")
			}
			r.columns, r.cols = int(n), int(n)
			r.state = stColumns
		}
	case stParams:
		r.params--
		c.afterParams()
	case stParamsEOF:
		// without CLIENT_DEPRECATE_EOF an EOF ends the parameters; with it
		// this is the first column definition (never 0xFE) or the next answer
		c.eof = isEOF(p)
		r.state = stColumns
		if r.columns == 0 {
			r.state = stDone
			if !c.eof {
				return errors.New("mywire: a packet after a prepare's answer")
			}
			return nil
		}
		if !c.eof {
			return c.take(p)
		}
	case stColumns:
		r.columns--
		if r.columns == 0 {
			switch {
			case r.prepare != nil && c.eof:
				r.state = stColumnsEOF
			case r.prepare != nil:
				r.state = stDone
			case r.probe:
				r.state = stProbe
			case c.eof:
				r.state = stColumnsEOF
			default:
				r.state = stRows
			}
		}
	case stColumnsEOF:
		if !isEOF(p) {
			return errors.New("mywire: no EOF after the column definitions")
		}
		r.state = stRows
		if r.prepare != nil {
			r.state = stDone
		}
	case stProbe:
		// an EOF here ends the column definitions; else it is the row
		c.eof = isEOF(p)
		r.state = stRows
	case stRows:
		if p[0] == 0xFE { // EOF, or the OK that replaces it (a row's first value is never 16 MB long)
			r.state = stDone
			return nil
		}
		if c.keep != nil && !r.binary && !r.probe {
			return keepRow(c.keep, p, r.cols)
		}
	}
	return nil
}

// keepRow adds a text row's values (each length-encoded, or 0xFB for
// NULL) to s.
func keepRow(s *rows.Set, p []byte, cols int) error {
	s.Row(cols)
	for range cols {
		if len(p) == 0 {
			return errors.New("mywire: a short row")
		}
		if p[0] == 0xFB {
			s.AddNull()
			p = p[1:]
			continue
		}
		n, h, ok := lenenc(p)
		if !ok {
			return errors.New("mywire: a bad value length in a row")
		}
		if uint64(len(p)-h) < n {
			return errors.New("mywire: a row's value runs past its end")
		}
		s.Add(p[h : h+int(n)])
		p = p[h+int(n):]
	}
	return nil
}

// afterParams moves a prepare on once its parameter definitions are read.
func (c *Conn) afterParams() {
	r := &c.resp
	if r.params > 0 {
		return
	}
	switch {
	case r.prepare.Params > 0 && (c.eof || r.columns > 0):
		// an EOF ends the parameters, or the columns follow (which tell
		// whether the server sends EOFs, should the probe not have run)
		r.state = stParamsEOF
	case r.columns > 0:
		r.state = stColumns
	default:
		r.state = stDone
	}
}

// lenenc reads a length-encoded integer at the start of p, and how many
// bytes it took.
func lenenc(p []byte) (n uint64, size int, ok bool) {
	switch {
	case p[0] < 0xFB:
		return uint64(p[0]), 1, true
	case p[0] == 0xFC && len(p) >= 3:
		return uint64(binary.LittleEndian.Uint16(p[1:])), 3, true
	case p[0] == 0xFD && len(p) >= 4:
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, 4, true
	case p[0] == 0xFE && len(p) >= 9:
		return binary.LittleEndian.Uint64(p[1:]), 9, true
	}
	return 0, 0, false
}

// serverError reads an ERR packet.
func serverError(p []byte) error {
	e := &mysql.MySQLError{}
	if len(p) >= 3 {
		e.Number = binary.LittleEndian.Uint16(p[1:])
	}
	msg := p[min(3, len(p)):]
	if len(msg) >= 6 && msg[0] == '#' {
		copy(e.SQLState[:], msg[1:6])
		msg = msg[6:]
	}
	e.Message = string(msg)
	return e
}

// Quiet returns a copy of cfg whose driver logs nothing: its log lines
// would repeat errors the run counts.
func Quiet(cfg *mysql.Config) *mysql.Config {
	c := cfg.Clone()
	c.Logger = discard{}
	return c
}

// discard is a mysql.Logger that drops what it is given.
type discard struct{}

func (discard) Print(...any) {}
