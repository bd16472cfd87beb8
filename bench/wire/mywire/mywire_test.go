package mywire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"

	"pidb/internal/wiretest"
)

// packets frames payloads as the server does, with sequence numbers from 1.
func packets(payloads ...[]byte) []byte {
	var b []byte
	for i, p := range payloads {
		b = append(b, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), byte(i+1))
		b = append(b, p...)
	}
	return b
}

var (
	eof      = []byte{0xFE, 0, 0, 2, 0}
	okEOF    = []byte{0xFE, 0, 0, 2, 0, 0, 0} // the OK that replaces EOF (CLIENT_DEPRECATE_EOF)
	ok       = []byte{0x00, 0, 0, 2, 0, 0, 0}
	colDef   = append([]byte("\x03def\x04pidb\x07sbtest1\x07sbtest1\x01c\x01c\x0c"), make([]byte, 13)...)
	paramDef = append([]byte("\x03def\x00\x00\x00\x01?\x00\x0c"), make([]byte, 13)...)
	row      = append([]byte{0x00, 0x00, 119}, bytes.Repeat([]byte("7"), 119)...)
)

func prepareOK(id uint32, columns, params uint16) []byte {
	p := []byte{0}
	p = binary.LittleEndian.AppendUint32(p, id)
	p = binary.LittleEndian.AppendUint16(p, columns)
	p = binary.LittleEndian.AppendUint16(p, params)
	return append(p, 0, 0, 0)
}

func roundTrip(t *testing.T, c *Conn, server []byte, n int) error {
	t.Helper()
	c.conn = wiretest.NewTrickle(server, n)
	if err := c.Send(); err != nil {
		t.Fatal(err)
	}
	for {
		if done, err := c.Receive(); done {
			if n := c.in.Buffered(); n != 0 {
				t.Errorf("%d bytes left unread after the answer", n)
			}
			return err
		}
	}
}

func TestPrepareAndExecute(t *testing.T) {
	for _, mode := range []struct {
		name string
		eof  bool
	}{{"EOF packets", true}, {"CLIENT_DEPRECATE_EOF", false}} {
		var prep, exec []byte
		if mode.eof {
			prep = packets(prepareOK(7, 1, 2), paramDef, paramDef, eof, colDef, eof)
			exec = packets([]byte{1}, colDef, eof, row, row, row, eof)
		} else {
			prep = packets(prepareOK(7, 1, 2), paramDef, paramDef, colDef)
			exec = packets([]byte{1}, colDef, row, row, row, okEOF)
		}
		for _, n := range []int{1, 2, 5, 64 << 10} {
			c := &Conn{out: make([]byte, 0, 64), in: newFrames(64), eof: true} // a small buffer: it grows
			var s Stmt
			c.SetPrepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?", &s)
			if err := roundTrip(t, c, prep, n); err != nil || s.ID != 7 || s.Params != 2 || s.Columns != 1 || c.eof != mode.eof {
				t.Fatalf("%s, reads of %d: prepare: %v, %+v, eof %v", mode.name, n, err, s, c.eof)
			}
			c.SetExecute(&s, 5, 104)
			if err := roundTrip(t, c, exec, n); err != nil {
				t.Errorf("%s, reads of %d: execute: %v", mode.name, n, err)
			}
			c.SetQuery("COMMIT")
			if err := roundTrip(t, c, packets(ok), n); err != nil {
				t.Errorf("%s, reads of %d: commit: %v", mode.name, n, err)
			}
		}
	}
}

// TestPrepareWithoutColumns: a statement with parameters and no result
// (an UPDATE) is prepared in both modes, its answer ending after its
// parameters where the server sends no EOF (as Connect's probe learnt),
// and executed to its OK.
func TestPrepareWithoutColumns(t *testing.T) {
	for _, mode := range []struct {
		name string
		eof  bool
		prep []byte
	}{{"EOF packets", true, packets(prepareOK(8, 0, 1), paramDef, eof)}, {"CLIENT_DEPRECATE_EOF", false, packets(prepareOK(8, 0, 1), paramDef)}} {
		for _, n := range []int{1, 3, 64 << 10} {
			c := &Conn{out: make([]byte, 0, 64), in: newFrames(64), eof: mode.eof}
			var s Stmt
			c.SetPrepare("UPDATE counter SET n = n + 1 WHERE k = ?", &s)
			if err := roundTrip(t, c, mode.prep, n); err != nil || s.ID != 8 || s.Params != 1 || s.Columns != 0 {
				t.Fatalf("%s, reads of %d: prepare: %v, %+v", mode.name, n, err, s)
			}
			c.SetExecute(&s, 5)
			if err := roundTrip(t, c, packets(ok), n); err != nil {
				t.Errorf("%s, reads of %d: execute: %v", mode.name, n, err)
			}
		}
	}
}

func TestExecuteRequest(t *testing.T) {
	c := &Conn{out: make([]byte, 0, 64)}
	c.SetExecute(&Stmt{ID: 0x01020304, Params: 2}, 5, -1)
	want := []byte{0x17, 4, 3, 2, 1, 0, 1, 0, 0, 0, // COM_STMT_EXECUTE, id, no cursor, one iteration
		0, 1, 8, 0, 8, 0, // no NULLs, types follow: two signed BIGINTs
		5, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
	if !bytes.Equal(c.out[4:], want) {
		t.Errorf("request\n% x\nwant\n% x", c.out[4:], want)
	}
}

func TestServerError(t *testing.T) {
	c := &Conn{out: make([]byte, 0, 64), in: newFrames(1024), eof: true}
	c.SetQuery("SELEKT 1")
	errPacket := append([]byte{0xFF, 0x28, 0x04, '#', '4', '2', '0', '0', '0'}, "You have an error in your SQL syntax"...)
	err := roundTrip(t, c, packets(errPacket), 3)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1064 || string(me.SQLState[:]) != "42000" || c.Broken() {
		t.Errorf("got %v (broken %v), want error 1064 42000 on a working connection", err, c.Broken())
	}
	// an error in the middle of the rows ends the answer too
	c.SetQuery("SELECT 1")
	if err := roundTrip(t, c, packets([]byte{1}, colDef, eof, row, errPacket), 7); !errors.As(err, &me) {
		t.Errorf("an error after a row: %v", err)
	}
	// a closed connection
	c.SetQuery("SELECT 1")
	if err := roundTrip(t, c, packets([]byte{1}, colDef), 7); err == nil || !c.Broken() {
		t.Errorf("a connection closed mid-answer: %v, broken %v", err, c.Broken())
	}
}

// TestQueryInt: a statement with its value in the text, as MySQLdb sends
// it, and its text result set read as the server ends its columns, which
// the probe at connect (SELECT 1) learns: with an EOF packet, or without
// (CLIENT_DEPRECATE_EOF, the OK that replaces EOF after the rows); in
// pieces of every size, with one row and none.
func TestQueryInt(t *testing.T) {
	c := &Conn{out: make([]byte, 0, 16), in: newFrames(64)}
	c.SetQueryInt("SELECT username FROM user WHERE user_id = ", 731, ";")
	if got, want := string(c.out[4:]), "\x03SELECT username FROM user WHERE user_id = 731;"; got != want {
		t.Errorf("request %q, want %q", got, want)
	}
	one, textRow := []byte("\x011"), []byte("\x0bjohnmary17x")
	for _, mode := range []struct {
		name              string
		eof               bool
		probe, row, empty []byte
	}{
		{"EOF packets", true, packets([]byte{1}, colDef, eof, one, eof), packets([]byte{1}, colDef, eof, textRow, eof), packets([]byte{1}, colDef, eof, eof)},
		{"CLIENT_DEPRECATE_EOF", false, packets([]byte{1}, colDef, one, okEOF), packets([]byte{1}, colDef, textRow, okEOF), packets([]byte{1}, colDef, okEOF)},
	} {
		for _, n := range []int{1, 3, 64 << 10} {
			c := &Conn{out: make([]byte, 0, 16), in: newFrames(64), eof: !mode.eof}
			c.SetQuery("SELECT 1")
			c.resp.probe = true
			if err := roundTrip(t, c, mode.probe, n); err != nil || c.eof != mode.eof {
				t.Fatalf("%s, reads of %d: the probe: %v, eof %v", mode.name, n, err, c.eof)
			}
			c.SetQueryInt("SELECT username FROM user WHERE user_id = ", 731, ";")
			if err := roundTrip(t, c, mode.row, n); err != nil {
				t.Errorf("%s, reads of %d: %v", mode.name, n, err)
			}
			c.SetQueryInt("SELECT username FROM user WHERE user_id = ", 0, ";")
			if err := roundTrip(t, c, mode.empty, n); err != nil {
				t.Errorf("%s, reads of %d, no rows: %v", mode.name, n, err)
			}
		}
	}
}
