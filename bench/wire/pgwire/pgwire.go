// Package pgwire speaks the few messages of PostgreSQL's protocol that a
// benchmark's round trips need, on a connection that pgconn opened and
// authenticated and then handed over (Hijack): the simple protocol's Query
// and the extended protocol's Bind/Execute/Sync of a prepared statement.
package pgwire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"pidb/bench/wire/netx"
	"pidb/bench/wire/rows"
)

// Conn is a hijacked connection (where the statements were prepared). Each
// round trip is one write of the whole request and reads into one reused
// buffer up to ReadyForQuery: no allocation, timer or context watch per
// statement. A server error comes back as a *pgconn.PgError, as from pgconn.
type Conn struct {
	conn   net.Conn
	out    []byte // the request being sent
	in     *netx.Frames
	tx     byte      // transaction status of the last ReadyForQuery: 'I', 'T' or 'E'
	first  error     // the request's first error, while its answer comes in
	broken bool      // a read or write failed: the connection is finished
	keep   *rows.Set // where the answer's rows go (Keep); nil: read through
}

// New takes over conn, whose transaction status (pgconn's TxStatus) is tx.
func New(conn net.Conn, tx byte) *Conn {
	return &Conn{conn: conn, out: make([]byte, 0, 512), in: netx.NewFrames(8192, 5, messageSize), tx: tx}
}

// Statement is a statement to prepare on a new connection, by name.
type Statement struct{ Name, SQL string }

// Connect opens a client's connection with cfg on a blocking socket
// (package netx: one system call per send and per answer, as libpq's),
// logging in by SCRAM-SHA-256 only (RequireSCRAM, whatever cfg says; an
// *AuthError otherwise), prepares stmts on it, and takes it over.
func Connect(ctx context.Context, cfg *pgconn.Config, stmts []Statement) (*Conn, error) {
	c := cfg.Copy()
	c.DialFunc = netx.Dial
	RequireSCRAM(c)
	pc, err := pgconn.ConnectConfig(ctx, c)
	if err != nil {
		return nil, AuthErrorOf(err)
	}
	for _, st := range stmts {
		if _, err := pc.Prepare(ctx, st.Name, st.SQL, nil); err != nil {
			pc.Close(ctx)
			return nil, fmt.Errorf("prepare %q: %w", st.SQL, err)
		}
	}
	if err := pc.SyncConn(ctx); err != nil {
		pc.Close(ctx)
		return nil, err
	}
	hj, err := pc.Hijack()
	if err != nil {
		pc.Close(ctx)
		return nil, err
	}
	return New(hj.Conn, hj.TxStatus), nil
}

// SetQuery makes the request sql with the simple protocol (a Query
// message), as pgbench's default.
func (w *Conn) SetQuery(sql []byte) {
	o := append(w.out[:0], 'Q', 0, 0, 0, 0)
	o = append(o, sql...)
	o = append(o, 0)
	binary.BigEndian.PutUint32(o[1:], uint32(len(o)-1))
	w.out = o
}

// SetExecPrepared makes the request a prepared statement with text
// parameters, as libpq's PQexecPrepared sends it (pgbench -M prepared):
// Bind, Describe, Execute and Sync in one write.
func (w *Conn) SetExecPrepared(name string, params [][]byte) {
	o := append(w.out[:0], 'B', 0, 0, 0, 0, 0) // the unnamed portal
	o = append(o, name...)
	o = append(o, 0, 0, 0) // the statement's name; every parameter in text
	o = binary.BigEndian.AppendUint16(o, uint16(len(params)))
	for _, p := range params {
		o = binary.BigEndian.AppendUint32(o, uint32(len(p)))
		o = append(o, p...)
	}
	o = append(o, 0, 0) // every result column in text
	binary.BigEndian.PutUint32(o[1:], uint32(len(o)-1))
	o = append(o, 'D', 0, 0, 0, 6, 'P', 0)        // Describe the portal
	o = append(o, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0) // Execute it, all rows
	o = append(o, 'S', 0, 0, 0, 4)                // Sync
	w.out = o
}

// Send writes the request in w.out.
func (w *Conn) Send() error {
	if w.broken {
		return errors.New("pgwire: the connection to the server is broken")
	}
	w.first = nil
	if w.keep != nil {
		w.keep.Reset()
	}
	if err := netx.WriteAll(w.conn, w.out); err != nil {
		w.broken = true
		return err
	}
	return nil
}

// Receive reads what the server sent and takes the complete messages,
// reading on until the answer is complete or a non-blocking socket has
// nothing more (a blocking one waits for it): under TLS a read can leave
// whole records in the TLS connection's buffer, which no readiness of the
// socket would announce. It reports done once
// ReadyForQuery came, with the request's first error, or when the
// connection broke, with what broke it.
func (w *Conn) Receive() (done bool, err error) {
	for {
		for {
			msg, ok, err := w.in.Next()
			if err != nil {
				w.broken = true
				return true, err
			}
			if !ok {
				break
			}
			switch body := msg[5:]; msg[0] {
			case 'D':
				if w.keep != nil {
					if err := keepRow(w.keep, body); err != nil {
						w.broken = true
						return true, err
					}
				}
			case 'E':
				if w.first == nil {
					var m pgproto3.ErrorResponse
					if err := m.Decode(body); err != nil {
						w.broken = true
						return true, err
					}
					w.first = pgconn.ErrorResponseToPgError(&m)
				}
			case 'Z':
				if len(body) > 0 {
					w.tx = body[0]
				}
				return true, w.first
			}
		}
		if again, err := w.in.Read(w.conn); again {
			return false, nil
		} else if err != nil {
			w.broken = true
			if w.first != nil {
				return true, w.first // a FATAL error, then the server closed the connection
			}
			return true, err
		}
	}
}

// Keep makes every answer's rows go into s, from the next Send on (nil:
// read through them, the default). The values are in text, as both
// protocols here ask for them.
func (w *Conn) Keep(s *rows.Set) { w.keep = s }

// keepRow adds a DataRow's values to s.
func keepRow(s *rows.Set, b []byte) error {
	if len(b) < 2 {
		return errors.New("pgwire: a short DataRow")
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	s.Row(n)
	for range n {
		if len(b) < 4 {
			return errors.New("pgwire: a short DataRow")
		}
		size := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if size < 0 {
			s.AddNull()
			continue
		}
		if int(size) > len(b) {
			return errors.New("pgwire: a DataRow's value runs past its end")
		}
		s.Add(b[:size])
		b = b[size:]
	}
	return nil
}

// messageSize reads a message header: a type byte, then the length of the
// rest, itself included.
func messageSize(h []byte) (int, error) {
	size := 1 + int(binary.BigEndian.Uint32(h[1:]))
	if size < 5 {
		return 0, fmt.Errorf("pgwire: a message of length %d from the server: not PostgreSQL's protocol", size-1)
	}
	return size, nil
}

// Close says goodbye to the server (Terminate) and closes the connection.
func (w *Conn) Close() error {
	if !w.broken {
		_, _ = w.conn.Write([]byte{'X', 0, 0, 0, 4})
	}
	return w.conn.Close()
}

// Tx is the transaction status of the last ReadyForQuery: 'I' idle, 'T'
// in a transaction, 'E' in a failed one.
func (w *Conn) Tx() byte { return w.tx }

// Broken reports whether a read or write failed: the connection is finished.
func (w *Conn) Broken() bool { return w.broken }

// Fd is the socket's descriptor, for a driver that multiplexes clients;
// -1 when it has none.
func (w *Conn) Fd() int { return netx.Fd(w.conn) }

// Interrupt ends a wait on the server, from another goroutine.
func (w *Conn) Interrupt() { netx.Interrupt(w.conn) }
