package tpcb

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// trickle is a connection whose reads return at most n bytes of what the
// server "sent", to try every split of the messages; what the client sends
// is kept.
type trickle struct {
	in   *bytes.Reader
	n    int
	sent bytes.Buffer
}

func (t *trickle) Read(b []byte) (int, error) {
	if len(b) > t.n {
		b = b[:t.n]
	}
	return t.in.Read(b)
}
func (t *trickle) Write(b []byte) (int, error)      { return t.sent.Write(b) }
func (t *trickle) Close() error                     { return nil }
func (t *trickle) LocalAddr() net.Addr              { return nil }
func (t *trickle) RemoteAddr() net.Addr             { return nil }
func (t *trickle) SetDeadline(time.Time) error      { return nil }
func (t *trickle) SetReadDeadline(time.Time) error  { return nil }
func (t *trickle) SetWriteDeadline(time.Time) error { return nil }

func msg(typ byte, body string) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
	return append(b, body...)
}

func TestWireReceive(t *testing.T) {
	errResp := "SERROR\x00VERROR\x00C40001\x00Mcould not serialize access\x00\x00"
	big := string(bytes.Repeat([]byte("x"), 20000)) // more than the read buffer
	for _, tc := range []struct {
		name   string
		server [][]byte
		code   string // the error's SQLSTATE, "" for none
		tx     byte
	}{
		{"update", [][]byte{msg('C', "UPDATE 1\x00"), msg('Z', "T")}, "", 'T'},
		{"select", [][]byte{msg('T', "\x00\x01abalance\x00"), msg('D', "\x00\x01\x00\x00\x00\x011"), msg('C', "SELECT 1\x00"), msg('Z', "T")}, "", 'T'},
		{"big row", [][]byte{msg('D', big), msg('C', "SELECT 1\x00"), msg('Z', "I")}, "", 'I'},
		{"serialization failure", [][]byte{msg('E', errResp), msg('Z', "E")}, "40001", 'E'},
		{"notice first", [][]byte{msg('N', "SNOTICE\x00Mhello\x00\x00"), msg('C', "BEGIN\x00"), msg('Z', "T")}, "", 'T'},
	} {
		for _, n := range []int{1, 3, 7, 8192} {
			conn := &trickle{in: bytes.NewReader(bytes.Join(tc.server, nil)), n: n}
			w := newWire(conn, 'I')
			w.setQuery([]byte("SELECT 1"))
			if err := w.send(); err != nil {
				t.Fatal(err)
			}
			var err error
			for done := false; !done; {
				done, err = w.receive()
			}
			var pe *pgconn.PgError
			switch {
			case tc.code == "" && err != nil, tc.code != "" && (!errors.As(err, &pe) || pe.Code != tc.code):
				t.Errorf("%s, reads of %d: error %v, want %q", tc.name, n, err, tc.code)
			case w.tx != tc.tx || w.broken:
				t.Errorf("%s, reads of %d: tx %q broken %v", tc.name, n, w.tx, w.broken)
			}
			if got := conn.sent.String(); got != string(msg('Q', "SELECT 1\x00")) {
				t.Errorf("%s: sent %q", tc.name, got)
			}
		}
	}
}

func TestWireFatalThenClose(t *testing.T) {
	fatal := "SFATAL\x00VFATAL\x00C57P01\x00Mterminating connection due to administrator command\x00\x00"
	w := newWire(&trickle{in: bytes.NewReader(msg('E', fatal)), n: 8192}, 'I')
	w.setQuery([]byte("END"))
	_ = w.send()
	var err error
	for done := false; !done; {
		done, err = w.receive()
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57P01" || !w.broken {
		t.Errorf("got %v, broken %v; want the FATAL error and a broken connection", err, w.broken)
	}
	if err := w.send(); err == nil {
		t.Error("a broken connection sends")
	}
	w = newWire(&trickle{in: bytes.NewReader(nil), n: 8192}, 'I')
	w.setQuery([]byte("END"))
	_ = w.send()
	if done, err := w.receive(); !done || !errors.Is(err, io.EOF) {
		t.Errorf("a closed connection: done %v, %v", done, err)
	}
}

func TestWireExecPrepared(t *testing.T) {
	w := newWire(&trickle{}, 'I')
	w.setExecPrepared("P0_1", [][]byte{[]byte("-42"), []byte("7")})
	want := bytes.Join([][]byte{
		msg('B', "\x00P0_1\x00\x00\x00\x00\x02\x00\x00\x00\x03-42\x00\x00\x00\x017\x00\x00"),
		msg('D', "P\x00"),
		msg('E', "\x00\x00\x00\x00\x00"),
		msg('S', ""),
	}, nil)
	if !bytes.Equal(w.out, want) {
		t.Errorf("request\n%q\nwant\n%q", w.out, want)
	}
}

// canned answers every read with the same reply and forgets what is written.
type canned struct {
	trickle
	reply []byte
}

func (c *canned) Read(b []byte) (int, error)  { return copy(b, c.reply), nil }
func (c *canned) Write(b []byte) (int, error) { return len(b), nil }

// BenchmarkTransaction is the client's own work for one TPC-B-like
// transaction (7 statements built, sent and their answers parsed), without
// the network: what is left of its CPU once the system calls are paid.
func BenchmarkTransaction(b *testing.B) {
	for _, proto := range []string{"simple", "prepared"} {
		b.Run(proto, func(b *testing.B) {
			reply := append(msg('C', "UPDATE 1\x00"), msg('Z', "T")...)
			wk := &worker{w: newWire(&canned{reply: reply}, 'I'), prepared: proto == "prepared", rnd: newRand(1),
				nb: 10, nt: 100, na: 1000000, maxTry: 10, buf: make([]byte, 0, 256)}
			b.ReportAllocs()
			for b.Loop() {
				if out, err := wk.Do(context.Background()); err != nil || out.Queries != 7 {
					b.Fatal(out, err)
				}
			}
		})
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }
