package pgwire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"pidb/internal/wiretest"
)

func TestWireReceive(t *testing.T) {
	errResp := "SERROR\x00VERROR\x00C40001\x00Mcould not serialize access\x00\x00"
	big := string(bytes.Repeat([]byte("x"), 20000)) // more than the read buffer
	for _, tc := range []struct {
		name   string
		server [][]byte
		code   string // the error's SQLSTATE, "" for none
		tx     byte
	}{
		{"update", [][]byte{wiretest.PGMessage('C', "UPDATE 1\x00"), wiretest.PGMessage('Z', "T")}, "", 'T'},
		{"select", [][]byte{wiretest.PGMessage('T', "\x00\x01abalance\x00"), wiretest.PGMessage('D', "\x00\x01\x00\x00\x00\x011"), wiretest.PGMessage('C', "SELECT 1\x00"), wiretest.PGMessage('Z', "T")}, "", 'T'},
		{"big row", [][]byte{wiretest.PGMessage('D', big), wiretest.PGMessage('C', "SELECT 1\x00"), wiretest.PGMessage('Z', "I")}, "", 'I'},
		{"serialization failure", [][]byte{wiretest.PGMessage('E', errResp), wiretest.PGMessage('Z', "E")}, "40001", 'E'},
		{"notice first", [][]byte{wiretest.PGMessage('N', "SNOTICE\x00Mhello\x00\x00"), wiretest.PGMessage('C', "BEGIN\x00"), wiretest.PGMessage('Z', "T")}, "", 'T'},
	} {
		for _, n := range []int{1, 3, 7, 8192} {
			conn := wiretest.NewTrickle(bytes.Join(tc.server, nil), n)
			w := New(conn, 'I')
			w.SetQuery([]byte("SELECT 1"))
			if err := w.Send(); err != nil {
				t.Fatal(err)
			}
			var err error
			for done := false; !done; {
				done, err = w.Receive()
			}
			var pe *pgconn.PgError
			switch {
			case tc.code == "" && err != nil, tc.code != "" && (!errors.As(err, &pe) || pe.Code != tc.code):
				t.Errorf("%s, reads of %d: error %v, want %q", tc.name, n, err, tc.code)
			case w.tx != tc.tx || w.broken:
				t.Errorf("%s, reads of %d: tx %q broken %v", tc.name, n, w.tx, w.broken)
			}
			if got := conn.Sent.String(); got != string(wiretest.PGMessage('Q', "SELECT 1\x00")) {
				t.Errorf("%s: sent %q", tc.name, got)
			}
		}
	}
}

func TestWireFatalThenClose(t *testing.T) {
	fatal := "SFATAL\x00VFATAL\x00C57P01\x00Mterminating connection due to administrator command\x00\x00"
	w := New(wiretest.NewTrickle(wiretest.PGMessage('E', fatal), 8192), 'I')
	w.SetQuery([]byte("END"))
	_ = w.Send()
	var err error
	for done := false; !done; {
		done, err = w.Receive()
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57P01" || !w.broken {
		t.Errorf("got %v, broken %v; want the FATAL error and a broken connection", err, w.broken)
	}
	if err := w.Send(); err == nil {
		t.Error("a broken connection sends")
	}
	w = New(wiretest.NewTrickle(nil, 8192), 'I')
	w.SetQuery([]byte("END"))
	_ = w.Send()
	if done, err := w.Receive(); !done || !errors.Is(err, io.EOF) {
		t.Errorf("a closed connection: done %v, %v", done, err)
	}
}

func TestWireExecPrepared(t *testing.T) {
	w := New(wiretest.NewTrickle(nil, 0), 'I')
	w.SetExecPrepared("P0_1", [][]byte{[]byte("-42"), []byte("7")})
	want := bytes.Join([][]byte{
		wiretest.PGMessage('B', "\x00P0_1\x00\x00\x00\x00\x02\x00\x00\x00\x03-42\x00\x00\x00\x017\x00\x00"),
		wiretest.PGMessage('D', "P\x00"),
		wiretest.PGMessage('E', "\x00\x00\x00\x00\x00"),
		wiretest.PGMessage('S', ""),
	}, nil)
	if !bytes.Equal(w.out, want) {
		t.Errorf("request\n%q\nwant\n%q", w.out, want)
	}
}
