// Package sqlrec is a recorded database/sql connection for unit tests of
// the workloads: it keeps every statement prepared, executed or queried,
// with its arguments, and answers "SELECT COUNT(*) FROM t" with the count
// the test set for t (else 0), every other query with no rows.
package sqlrec

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Call is one statement sent: Kind is "prepare", "exec" or "query".
type Call struct {
	Kind string
	SQL  string
	Args []any
}

// Recorder is a driver.Connector; each connection it makes records into it.
type Recorder struct {
	Counts map[string]int64 // table -> what COUNT(*) answers
	mu     sync.Mutex
	calls  []Call
}

// Calls are the statements so far, in order.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// Of is the SQL of the calls of one kind.
func (r *Recorder) Of(kind string) []string {
	var out []string
	for _, c := range r.Calls() {
		if c.Kind == kind {
			out = append(out, c.SQL)
		}
	}
	return out
}

func (r *Recorder) record(kind, q string, args []driver.NamedValue) {
	c := Call{Kind: kind, SQL: q}
	for _, a := range args {
		c.Args = append(c.Args, a.Value)
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

// Connect makes a recording connection.
func (r *Recorder) Connect(context.Context) (driver.Conn, error) { return &conn{r}, nil }

// Driver is the connector's driver.
func (r *Recorder) Driver() driver.Driver { return drv{r} }

type drv struct{ r *Recorder }

func (d drv) Open(string) (driver.Conn, error) { return &conn{d.r}, nil }

type conn struct{ r *Recorder }

func (c *conn) Prepare(q string) (driver.Stmt, error) {
	c.r.record("prepare", q, nil)
	return &stmt{c: c, q: q}, nil
}
func (c *conn) Close() error              { return nil }
func (c *conn) Begin() (driver.Tx, error) { return tx{}, nil }

func (c *conn) ExecContext(_ context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	c.r.record("exec", q, args)
	return driver.RowsAffected(0), nil
}

func (c *conn) QueryContext(_ context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	c.r.record("query", q, args)
	return c.r.answer(q), nil
}

func (r *Recorder) answer(q string) driver.Rows {
	const count = "SELECT COUNT(*) FROM "
	if strings.HasPrefix(q, count) {
		t := strings.Trim(strings.TrimPrefix(q, count), "`\"")
		return &rows{cols: []string{"count"}, vals: [][]driver.Value{{r.Counts[t]}}}
	}
	return &rows{cols: []string{"x"}}
}

type tx struct{}

func (tx) Commit() error   { return nil }
func (tx) Rollback() error { return nil }

type stmt struct {
	c *conn
	q string
}

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return -1 }
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return nil, fmt.Errorf("sqlrec: Exec without context")
}
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return nil, fmt.Errorf("sqlrec: Query without context")
}

func (s *stmt) QueryContext(_ context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.c.r.record("query", s.q, args)
	return s.c.r.answer(s.q), nil
}

func (s *stmt) ExecContext(_ context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.c.r.record("exec", s.q, args)
	return driver.RowsAffected(0), nil
}

type rows struct {
	cols []string
	vals [][]driver.Value
}

func (r *rows) Columns() []string { return r.cols }
func (r *rows) Close() error      { return nil }
func (r *rows) Next(dest []driver.Value) error {
	if len(r.vals) == 0 {
		return io.EOF
	}
	copy(dest, r.vals[0])
	r.vals = r.vals[1:]
	return nil
}
