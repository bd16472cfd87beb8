package mywire

import (
	"bytes"
	"testing"

	"pidb/bench/wire/rows"
)

// TestKeep: a kept text query's rows are its values: length-encoded (one
// byte, or 0xFC and two for 251 bytes and more), 0xFB for NULL; with EOF
// packets or without, in pieces of any size. A prepared statement's
// binary rows are not kept.
func TestKeep(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 300)
	row1 := append([]byte{4}, "3001"...)
	row1 = append(append(row1, 0xFC, 44, 1), long...) // 300, little-endian
	row2 := []byte{0, 0xFB}
	for _, mode := range []struct {
		name           string
		eof            bool
		answer, binary []byte
	}{
		{"EOF packets", true, packets([]byte{2}, colDef, colDef, eof, row1, row2, eof), packets([]byte{1}, colDef, eof, row, eof)},
		{"CLIENT_DEPRECATE_EOF", false, packets([]byte{2}, colDef, colDef, row1, row2, okEOF), packets([]byte{1}, colDef, row, okEOF)},
	} {
		for _, n := range []int{1, 5, 64 << 10} {
			c := &Conn{out: make([]byte, 0, 16), in: newFrames(64), eof: mode.eof}
			var s rows.Set
			c.Keep(&s)
			c.SetQueryBytes([]byte("SELECT d_next_o_id, c_data FROM t"))
			if err := roundTrip(t, c, mode.answer, n); err != nil {
				t.Fatalf("%s, reads of %d: %v", mode.name, n, err)
			}
			id, err := s.Int(0, 0)
			if s.Len() != 2 || s.Cols() != 2 || err != nil || id != 3001 || !bytes.Equal(s.Bytes(0, 1), long) || s.Null(1, 0) || len(s.Bytes(1, 0)) != 0 || !s.Null(1, 1) {
				t.Fatalf("%s, reads of %d: %d rows of %d, id %d %v, %d bytes", mode.name, n, s.Len(), s.Cols(), id, err, len(s.Bytes(0, 1)))
			}
			c.SetExecute(&Stmt{ID: 7, Params: 1, Columns: 1}, 5)
			if err := roundTrip(t, c, mode.binary, n); err != nil || s.Len() != 0 {
				t.Errorf("%s, reads of %d: a binary answer kept %d rows (%v)", mode.name, n, s.Len(), err)
			}
		}
	}
}
