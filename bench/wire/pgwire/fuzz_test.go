package pgwire

import (
	"bytes"
	"testing"

	"pidb/bench/wire/rows"
	"pidb/internal/wiretest"
)

// FuzzReceive: whatever bytes come back, in pieces of any size, Receive
// ends (the answer, a server error, or a broken connection when the bytes
// run out) without a panic, within one call per byte, and never holds
// more than the message cap.
func FuzzReceive(f *testing.F) {
	f.Add(bytes.Join([][]byte{wiretest.PGMessage('C', "UPDATE 1\x00"), wiretest.PGMessage('Z', "T")}, nil), uint8(3))
	f.Add(wiretest.PGMessage('E', "SERROR\x00C40001\x00Mx\x00\x00"), uint8(0))
	f.Add([]byte{'D', 0x7f, 0xff, 0xff, 0xff}, uint8(7))
	f.Add([]byte{'Z', 0, 0, 0, 1}, uint8(1))
	f.Add(bytes.Join([][]byte{wiretest.PGMessage('D', "\x00\x02\x00\x00\x00\x0242\xff\xff\xff\xff"), wiretest.PGMessage('Z', "I")}, nil), uint8(35))
	f.Fuzz(func(t *testing.T, server []byte, n uint8) {
		w := New(wiretest.NewTrickle(server, 1+int(n%16)), 'I')
		var kept rows.Set
		if n&32 != 0 {
			w.Keep(&kept) // the rows decoded
		}
		w.SetQuery([]byte("SELECT 1"))
		if err := w.Send(); err != nil {
			t.Fatal(err)
		}
		for calls := 0; ; calls++ {
			if calls > len(server)+2 {
				t.Fatalf("no end after %d calls on %d bytes", calls, len(server))
			}
			if done, _ := w.Receive(); done {
				return
			}
		}
	})
}
