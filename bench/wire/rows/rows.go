// Package rows keeps the rows of one answer as a wire client reads them:
// every value's bytes copied into one reused buffer, in order, so that a
// workload whose next statement depends on what came back (TPC-C's) can
// read them without an allocation per row.
package rows

import (
	"fmt"
	"strconv"
)

// Set is the rows of one answer, in text. The zero Set is empty and ready.
type Set struct {
	data  []byte
	cells []cell
	cols  int
	rows  int
}

// cell is one value: where its bytes are in data, and how many (-1: NULL).
type cell struct{ off, n int32 }

// Reset empties the set for the next answer, keeping its memory.
func (s *Set) Reset() { s.data, s.cells, s.cols, s.rows = s.data[:0], s.cells[:0], 0, 0 }

// Row starts a row of cols values; Add and AddNull give them, in order.
func (s *Set) Row(cols int) {
	s.cols = cols
	s.rows++
}

// Add adds the current row's next value (copied).
func (s *Set) Add(v []byte) {
	s.cells = append(s.cells, cell{off: int32(len(s.data)), n: int32(len(v))})
	s.data = append(s.data, v...)
}

// AddNull adds a NULL as the current row's next value.
func (s *Set) AddNull() { s.cells = append(s.cells, cell{n: -1}) }

// Len is how many rows came.
func (s *Set) Len() int { return s.rows }

// Cols is how many values each row has (the last row's count).
func (s *Set) Cols() int { return s.cols }

func (s *Set) at(r, c int) (cell, bool) {
	i := r*s.cols + c
	if r < 0 || c < 0 || c >= s.cols || i >= len(s.cells) {
		return cell{}, false
	}
	return s.cells[i], true
}

// Bytes is the value at row r, column c (both from 0); nil for a NULL or
// a value that is not there. It is valid until the next Reset.
func (s *Set) Bytes(r, c int) []byte {
	x, ok := s.at(r, c)
	if !ok || x.n < 0 {
		return nil
	}
	return s.data[x.off : x.off+x.n]
}

// Null reports whether the value at row r, column c is NULL (or missing).
func (s *Set) Null(r, c int) bool {
	x, ok := s.at(r, c)
	return !ok || x.n < 0
}

// Int is the value at row r, column c as an integer.
func (s *Set) Int(r, c int) (int64, error) {
	if s.Null(r, c) {
		return 0, fmt.Errorf("rows: no integer at row %d, column %d of %d x %d", r+1, c+1, s.rows, s.cols)
	}
	b := s.Bytes(r, c)
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, d := range b {
		if d < '0' || d > '9' || n > (1<<62)/10 {
			return strconv.ParseInt(string(s.Bytes(r, c)), 10, 64) // its error, or a value this loop does not take
		}
		n = n*10 + int64(d-'0')
	}
	if len(b) == 0 {
		return 0, fmt.Errorf("rows: an empty integer at row %d, column %d", r+1, c+1)
	}
	if neg {
		n = -n
	}
	return n, nil
}

// Float is the value at row r, column c as a number (a DECIMAL's text).
func (s *Set) Float(r, c int) (float64, error) {
	if s.Null(r, c) {
		return 0, fmt.Errorf("rows: no number at row %d, column %d of %d x %d", r+1, c+1, s.rows, s.cols)
	}
	return strconv.ParseFloat(string(s.Bytes(r, c)), 64)
}
