package pgwire

import (
	"bytes"
	"testing"

	"pidb/bench/wire/rows"
	"pidb/internal/wiretest"
)

// TestKeep: a kept answer's rows are its DataRows' values, NULLs apart,
// whatever pieces they come in; the next request starts afresh.
func TestKeep(t *testing.T) {
	answer := bytes.Join([][]byte{
		wiretest.PGMessage('T', "\x00\x02"), // a RowDescription: read through
		wiretest.PGMessage('D', "\x00\x02\x00\x00\x00\x043001\x00\x00\x00\x040.07"),
		wiretest.PGMessage('D', "\x00\x02\x00\x00\x00\x00\xff\xff\xff\xff"),
		wiretest.PGMessage('C', "SELECT 2\x00"),
		wiretest.PGMessage('Z', "T"),
	}, nil)
	for _, piece := range []int{1, 3, 1000} {
		w := New(wiretest.NewTrickle(append(bytes.Clone(answer), answer...), piece), 'I')
		var s rows.Set
		w.Keep(&s)
		for range 2 { // the second answer replaces the first
			w.SetQuery([]byte("SELECT d_next_o_id, d_tax FROM district1"))
			if err := w.Send(); err != nil {
				t.Fatal(err)
			}
			for {
				done, err := w.Receive()
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
			}
			n, err := s.Int(0, 0)
			f, err2 := s.Float(0, 1)
			if s.Len() != 2 || s.Cols() != 2 || err != nil || err2 != nil || n != 3001 || f != 0.07 || len(s.Bytes(1, 0)) != 0 || s.Null(1, 0) || !s.Null(1, 1) {
				t.Fatalf("pieces of %d: %d rows of %d: %d %v %v %v", piece, s.Len(), s.Cols(), n, f, err, err2)
			}
		}
	}
}
