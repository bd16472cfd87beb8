package tpcc

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"strconv"

	"pidb/bench"
	"pidb/bench/sqldb"
	"pidb/bench/wire"
	"pidb/bench/wire/mywire"
	"pidb/bench/wire/netx"
	"pidb/bench/wire/pgwire"
	"pidb/bench/wire/rows"
	"pidb/dbms"
)

// conn is a client's connection: one statement per round trip, in the
// simple protocol, with the answer's rows kept. On a non-blocking socket
// Receive reads what has come and reports whether the answer is
// complete; on a blocking one it waits for all of it.
type conn interface {
	send(sql []byte) error
	rows() *rows.Set
	wire.Conn
}

// lean is a conn on either engine's lean wire client: set puts a
// statement's text in its request (pgwire's SetQuery, mywire's
// SetQueryBytes).
type lean struct {
	wire.Conn
	set func(sql []byte)
	rs  rows.Set
}

func (c *lean) send(sql []byte) error { c.set(sql); return c.Send() }
func (c *lean) rows() *rows.Set       { return &c.rs }

// dial connects a client with the lean wire client of db's engine.
func dial(ctx context.Context, db sqldb.DB) (conn, error) {
	if db.Engine() == dbms.PostgresFamily {
		c, err := pgwire.Connect(ctx, &db.Postgres.Config, nil)
		if err != nil {
			return nil, err
		}
		l := &lean{Conn: c, set: c.SetQuery}
		c.Keep(&l.rs)
		return l, nil
	}
	c, err := mywire.Connect(ctx, db.MySQL, netx.Dial)
	if err != nil {
		return nil, err
	}
	l := &lean{Conn: c, set: c.SetQueryBytes}
	c.Keep(&l.rs)
	return l, nil
}

// stmt is a statement's text, built with the values in it.
type stmt struct{ b []byte }

func (s *stmt) sql(x string) *stmt    { s.b = append(s.b[:0], x...); return s }
func (s *stmt) lit(x string) *stmt    { s.b = append(s.b, x...); return s }
func (s *stmt) int(n int64) *stmt     { s.b = strconv.AppendInt(s.b, n, 10); return s }
func (s *stmt) money(f float64) *stmt { s.b = strconv.AppendFloat(s.b, f, 'f', 2, 64); return s }
func (s *stmt) raw(b []byte) *stmt    { s.b = append(s.b, b...); return s }

// text appends b quoted (' doubled; the values here are letters, digits
// and spaces).
func (s *stmt) text(b []byte) *stmt {
	s.b = append(s.b, '\'')
	for _, c := range b {
		if c == '\'' {
			s.b = append(s.b, '\'')
		}
		s.b = append(s.b, c)
	}
	s.b = append(s.b, '\'')
	return s
}

// inputs are one transaction's random inputs, drawn before it runs so
// that a retry runs the same transaction.
type inputs struct {
	copy      int // the table copy
	w, d      int64
	c         int64 // customer id (when not by name)
	cw, cd    int64 // Payment: the customer's warehouse and district
	byName    bool
	last      []byte // a last name, for byName
	amount    float64
	n         int // New-Order: order lines
	item      [maxOrderLines]int64
	supply    [maxOrderLines]int64
	qty       [maxOrderLines]int64
	allLocal  int64
	carrier   int64 // Delivery
	threshold int64 // Stock-Level
}

// worker is one TPC-C client (a terminal, in the standard's words).
type worker struct {
	c      conn
	r      *rand.Rand
	k      Constants
	mix    Mix
	scale  int64
	tables int
	maxTry int
	names  []names
	s      stmt
	in     inputs
	sent   int // statements sent in this try
	// rolledBack says this try ended in New-Order's ROLLBACK of an unused item
	rolledBack bool
	keep       []byte // a value kept from one answer for a later statement
	// the coroutine that runs the transactions (see Begin), and its yield
	next  func() (state, bool)
	yield func(state) bool
}

// state is what the transactions' coroutine reports when it stops: a
// request is out and its answer awaited, or the transaction is done.
type state struct {
	done bool
	out  bench.Outcome
	err  error
}

// errStopped ends a transaction whose coroutine was stopped.
var errStopped = errors.New("tpcc: the client was stopped")

// Begin starts the client's next transaction and sends its first
// statement (bench.Async). The transactions are written as one goes,
// statement after statement; they run in a coroutine (iter.Pull) that
// gives control back to the driver each time a statement is out, so that
// one thread can wait on many clients' sockets at once, and goes on when
// the driver sees the answer come (Readable). The coroutine is made on
// the first Begin, on the thread that drives the client from then on (a
// coroutine must stay on a locked thread's).
func (wk *worker) Begin() error {
	if wk.next == nil {
		wk.next, _ = iter.Pull(func(yield func(state) bool) {
			wk.yield = yield
			for {
				out, err := wk.transaction()
				if err == errStopped || !yield(state{done: true, out: out, err: err}) {
					return
				}
			}
		})
	}
	st, ok := wk.next()
	switch {
	case !ok:
		return errStopped
	case st.done: // it ended before it waited: its first statement could not be sent
		if st.err == nil {
			return errors.New("tpcc: a transaction ended without a round trip")
		}
		return st.err
	}
	return nil
}

// Readable takes what the server sent and moves the transaction on to
// its next statement, or to its end (bench.Async).
func (wk *worker) Readable() (bool, bench.Outcome, error) {
	st, ok := wk.next()
	if !ok {
		return true, bench.Outcome{}, errStopped
	}
	return st.done, st.out, st.err
}

// Do runs one transaction on a blocking socket (bench.DoAsync).
func (wk *worker) Do(context.Context) (bench.Outcome, error) { return bench.DoAsync(wk) }

// Fd is the socket, for the driver's multiplexing (bench.Async).
func (wk *worker) Fd() int { return wk.c.Fd() }

// query sends one statement and waits for its answer: it hands control
// back to the driver until the answer is complete.
func (wk *worker) query(sql []byte) (*rows.Set, error) {
	if err := wk.c.send(sql); err != nil {
		return nil, err
	}
	for {
		if !wk.yield(state{}) {
			return nil, errStopped
		}
		if done, err := wk.c.Receive(); done {
			return wk.c.rows(), err
		}
	}
}

// transaction runs one transaction of a type the mix draws. A deadlock,
// lock wait timeout or serialization failure rolls it back and runs it
// again with the same inputs, up to MaxTry times; another error rolls it
// back and ends it.
func (wk *worker) transaction() (bench.Outcome, error) {
	t := wk.mix.pick(wk.r)
	wk.draw(t)
	out := bench.Outcome{Op: Types[t]}
	for try := 1; ; try++ {
		wk.sent, wk.rolledBack = 0, false
		err := wk.run(t)
		out.Queries += wk.sent
		if err == nil {
			out.RolledBack = wk.rolledBack
			return out, nil
		}
		if err == errStopped {
			return out, err
		}
		if wk.c.Broken() {
			return out, &txError{Types[t], err}
		}
		if _, rerr := wk.query(rollback); rerr != nil {
			return out, &txError{Types[t], rerr}
		}
		out.Queries++
		if retryable(err) && try < wk.maxTry {
			out.Retries++
			continue
		}
		return out, &txError{Types[t], err}
	}
}

var (
	begin    = []byte("BEGIN")
	commit   = []byte("COMMIT")
	rollback = []byte("ROLLBACK")
)

// do sends a statement whose answer has no rows to read (BEGIN, COMMIT,
// ROLLBACK), counted.
func (wk *worker) do(b []byte) error {
	wk.sent++
	_, err := wk.query(b)
	return err
}

// one checks that an answer has a row.
func one(rs *rows.Set, what string) error {
	if rs.Len() == 0 {
		return fmt.Errorf("tpcc: no %s", what)
	}
	return nil
}

// other is a warehouse other than w, when there is one.
func (wk *worker) other(w int64) int64 {
	if wk.scale == 1 {
		return w
	}
	x := uniform(wk.r, 1, wk.scale-1)
	if x >= w {
		x++
	}
	return x
}

// draw draws the inputs of a transaction of type t (clauses 2.4.1, 2.5.1,
// 2.6.1, 2.7.1 and 2.8.1).
func (wk *worker) draw(t int) {
	in := &wk.in
	in.copy = 1 + wk.r.IntN(wk.tables)
	in.w = uniform(wk.r, 1, wk.scale)
	in.d = uniform(wk.r, 1, DistrictsPerWarehouse)
	in.c = NURand(wk.r, 1023, wk.k.C1023, 1, CustomersPerDistrict)
	in.byName = false
	switch t {
	case NewOrder:
		in.n = int(uniform(wk.r, 5, maxOrderLines))
		rbk := uniform(wk.r, 1, 100)
		in.allLocal = 1
		for i := range in.n {
			in.item[i] = NURand(wk.r, 8191, wk.k.C8191, 1, Items)
			in.supply[i] = in.w
			if wk.scale > 1 && uniform(wk.r, 1, 1000) <= remoteItemPerMil {
				in.supply[i] = wk.other(in.w)
				in.allLocal = 0
			}
			in.qty[i] = uniform(wk.r, 1, 10)
		}
		if rbk == 1 {
			in.item[in.n-1] = Items + 1 // an unused item: the order is rolled back
		}
	case Payment, OrderStatus:
		in.cw, in.cd = in.w, in.d
		if t == Payment && uniform(wk.r, 1, 100) > 85 {
			in.cw, in.cd = wk.other(in.w), uniform(wk.r, 1, DistrictsPerWarehouse)
		}
		if uniform(wk.r, 1, 100) <= 60 {
			in.byName = true
			in.last = AppendLastName(in.last[:0], int(NURand(wk.r, 255, wk.k.C255, 0, lastNameCount-1)))
		}
		in.amount = float64(uniform(wk.r, 100, 500000)) / 100
	case Delivery:
		in.carrier = uniform(wk.r, 1, 10)
	case StockLevel:
		in.threshold = uniform(wk.r, 10, 20)
	}
}

func (wk *worker) run(t int) error {
	switch t {
	case NewOrder:
		return wk.newOrder()
	case Payment:
		return wk.payment()
	case OrderStatus:
		return wk.orderStatus()
	case Delivery:
		return wk.delivery()
	default:
		return wk.stockLevel()
	}
}

// Interrupt ends a wait on the server, from another goroutine (bench.Interrupter).
func (wk *worker) Interrupt() { wk.c.Interrupt() }

// Close closes the connection. A coroutine waiting on it is left to
// wait (stopping it from here could be from another thread than its
// own): one small goroutine a client, for the rest of the process.
func (wk *worker) Close() error { return wk.c.Close() }
