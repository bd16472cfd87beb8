package rows

import "testing"

func TestSet(t *testing.T) {
	var s Set
	s.Row(3)
	s.Add([]byte("-42"))
	s.Add([]byte("12.50"))
	s.AddNull()
	s.Row(3)
	s.Add([]byte("9223372036854775807"))
	s.Add([]byte("x"))
	s.Add(nil)
	if s.Len() != 2 || s.Cols() != 3 {
		t.Fatalf("%d rows of %d", s.Len(), s.Cols())
	}
	if n, err := s.Int(0, 0); n != -42 || err != nil {
		t.Errorf("Int: %d %v", n, err)
	}
	if n, err := s.Int(1, 0); n != 9223372036854775807 || err != nil {
		t.Errorf("Int of the largest: %d %v", n, err)
	}
	if f, err := s.Float(0, 1); f != 12.5 || err != nil {
		t.Errorf("Float: %v %v", f, err)
	}
	if !s.Null(0, 2) || s.Null(1, 2) || s.Bytes(0, 2) != nil || string(s.Bytes(1, 1)) != "x" {
		t.Errorf("NULL and empty: %v %v %q", s.Null(0, 2), s.Null(1, 2), s.Bytes(1, 1))
	}
	for _, bad := range [][2]int{{0, 2}, {1, 1}, {1, 2}, {2, 0}, {0, 3}, {-1, 0}} {
		if _, err := s.Int(bad[0], bad[1]); err == nil {
			t.Errorf("Int(%d, %d) took it", bad[0], bad[1])
		}
	}
	s.Reset()
	if s.Len() != 0 || !s.Null(0, 0) {
		t.Errorf("after Reset: %d rows", s.Len())
	}
}
