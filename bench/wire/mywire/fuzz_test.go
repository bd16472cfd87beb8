package mywire

import (
	"testing"

	"pidb/bench/wire/rows"
	"pidb/internal/wiretest"
)

// FuzzReceive: whatever bytes come back to a prepare, an execute or a
// query, in pieces of any size, Receive ends (the answer, a server error,
// or a broken connection when the bytes run out) without a panic, within
// one call per byte.
func FuzzReceive(f *testing.F) {
	f.Add(packets(prepareOK(7, 1, 2), paramDef, paramDef, eof, colDef, eof), uint8(2), uint8(0))
	f.Add(packets([]byte{1}, colDef, eof, row, row, eof), uint8(5), uint8(1))
	f.Add(packets([]byte{2}, colDef, colDef, eof, []byte{3, 'a', 'b', 'c', 0xfb}, eof), uint8(4), uint8(10))
	f.Add(packets(ok), uint8(0), uint8(2))
	f.Add([]byte{0xff, 0xff, 0xff, 1, 0}, uint8(3), uint8(2))
	f.Fuzz(func(t *testing.T, server []byte, n, kind uint8) {
		c := &Conn{out: make([]byte, 0, 64), in: newFrames(64), eof: kind&4 == 0}
		c.conn = wiretest.NewTrickle(server, 1+int(n%16))
		var kept rows.Set
		if kind&8 != 0 {
			c.Keep(&kept) // a text query's rows decoded
		}
		var s Stmt
		switch kind % 3 {
		case 0:
			c.SetPrepare("SELECT c FROM sbtest1 WHERE id = ?", &s)
		case 1:
			c.SetExecute(&Stmt{ID: 7, Params: 1, Columns: 1}, 5)
		default:
			c.SetQuery("COMMIT")
		}
		if err := c.Send(); err != nil {
			t.Fatal(err)
		}
		for calls := 0; ; calls++ {
			if calls > len(server)+2 {
				t.Fatalf("no end after %d calls on %d bytes", calls, len(server))
			}
			if done, _ := c.Receive(); done {
				return
			}
		}
	})
}
