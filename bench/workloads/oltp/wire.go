package oltp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"pidb/bench"
	"pidb/bench/wire"
	"pidb/bench/wire/mywire"
	"pidb/bench/wire/netx"
	"pidb/bench/wire/pgwire"
)

// the statements of a transaction, in sysbench's order: BEGIN, the point
// selects, the four ranges, COMMIT
const (
	kPoint = iota
	kSimple
	kSum
	kOrder
	kDistinct
	nKinds
)

var kindSQL = [nKinds]string{
	kPoint:    "SELECT c FROM %s WHERE id=?",
	kSimple:   "SELECT c FROM %s WHERE id BETWEEN ? AND ?",
	kSum:      "SELECT SUM(k) FROM %s WHERE id BETWEEN ? AND ?",
	kOrder:    "SELECT c FROM %s WHERE id BETWEEN ? AND ? ORDER BY c",
	kDistinct: "SELECT DISTINCT c FROM %s WHERE id BETWEEN ? AND ? ORDER BY c",
}

const steps = 1 + pointSelects + 4 + 1

// client is one connection on either engine's wire, with the transaction's
// statements prepared on it.
type client interface {
	wire.Conn
	// Query puts a statement without parameters in the request (BEGIN,
	// COMMIT, ROLLBACK).
	Query(sql string)
	// Execute puts the prepared statement of kind k on table t (from 0) in
	// the request, with lo (a point select's id) and hi (a range's end).
	Execute(t, k int, lo, hi int64)
}

// myClient is a MySQL-family connection on mywire.
type myClient struct {
	*mywire.Conn
	stmts [][nKinds]mywire.Stmt // per table
}

func (c *myClient) Query(sql string) { c.SetQuery(sql) }

func (c *myClient) Execute(t, k int, lo, hi int64) {
	if k == kPoint {
		c.SetExecute(&c.stmts[t][k], lo)
		return
	}
	c.SetExecute(&c.stmts[t][k], lo, hi)
}

// pgClient is a PostgreSQL connection on pgwire: each statement prepared
// under a name of its own, its parameters sent as text, as libpq sends them
// for sysbench's pgsql driver.
type pgClient struct {
	*pgwire.Conn
	buf    []byte
	params [2][]byte
}

// pgName is the name a statement is prepared under.
func pgName(t, k int) string { return "sbtest" + strconv.Itoa(t+1) + "_" + strconv.Itoa(k) }

func (c *pgClient) Query(sql string) {
	c.buf = append(c.buf[:0], sql...)
	c.SetQuery(c.buf)
}

func (c *pgClient) Execute(t, k int, lo, hi int64) {
	c.params[0] = strconv.AppendInt(c.params[0][:0], lo, 10)
	n := 1
	if k != kPoint {
		c.params[1] = strconv.AppendInt(c.params[1][:0], hi, 10)
		n = 2
	}
	c.SetExecPrepared(pgName(t, k), c.params[:n])
}

// connect opens a client's connection and prepares the statements of
// every table on it.
func (w *Workload) connect(ctx context.Context) (client, error) {
	if w.DB.Postgres != nil {
		var stmts []pgwire.Statement
		for t := range w.Tables {
			for k, q := range kindSQL {
				stmts = append(stmts, pgwire.Statement{Name: pgName(t, k), SQL: w.DB.Rebind(fmt.Sprintf(q, fmt.Sprintf("sbtest%d", t+1)))})
			}
		}
		c, err := pgwire.Connect(ctx, &w.DB.Postgres.Config, stmts)
		if err != nil {
			return nil, err
		}
		return &pgClient{Conn: c, buf: make([]byte, 0, 16), params: [2][]byte{make([]byte, 0, 20), make([]byte, 0, 20)}}, nil
	}
	c, err := mywire.Connect(ctx, w.DB.MySQL, netx.Dial)
	if err != nil {
		return nil, err
	}
	mc := &myClient{Conn: c, stmts: make([][nKinds]mywire.Stmt, w.Tables)}
	for t := range mc.stmts {
		for k, q := range kindSQL {
			c.SetPrepare(fmt.Sprintf(q, fmt.Sprintf("sbtest%d", t+1)), &mc.stmts[t][k])
			if err := c.RoundTrip(); err != nil {
				c.Close()
				return nil, err
			}
		}
	}
	return mc, nil
}

// worker is one client: one transaction of oltp_read_only is a state
// machine over its 16 round trips.
type worker struct {
	c    client
	rnd  *rand.Rand
	size int
	n    int // tables
	// the transaction in progress
	t        int // its table
	step     int
	out      bench.Outcome
	rollback bool
	failed   error
}

// NewWorker connects one client and prepares its statements on its
// connection; then the client speaks to the server itself (package mywire
// or pgwire, on a socket outside Go's poller) and can be multiplexed
// (bench.Async), as sysbench's C client costs.
func (w *Workload) NewWorker(ctx context.Context, id int) (bench.Worker, error) {
	w.defaults()
	c, err := w.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("oltp-read-only: prepare: %w", err)
	}
	return &worker{c: c, rnd: rand.New(rand.NewPCG(rand.Uint64(), uint64(id))), size: w.TableSize, n: w.Tables}, nil
}

// request puts the transaction's next statement in the request.
func (wk *worker) request() {
	switch s := wk.step; {
	case s == 0:
		wk.c.Query("BEGIN")
	case s <= pointSelects:
		wk.c.Execute(wk.t, kPoint, int64(wk.rnd.IntN(wk.size)+1), 0)
	case s < steps-1:
		lo := int64(wk.rnd.IntN(max(wk.size-rangeSize, 1)) + 1)
		wk.c.Execute(wk.t, kSimple+s-pointSelects-1, lo, lo+rangeSize-1)
	default:
		wk.c.Query("COMMIT")
	}
}

// Begin starts a transaction on a table chosen at random (bench.Async).
func (wk *worker) Begin() error {
	wk.t = wk.rnd.IntN(wk.n)
	wk.step, wk.out, wk.rollback, wk.failed = 0, bench.Outcome{Op: "oltp_read_only"}, false, nil
	wk.request()
	return wk.c.Send()
}

// Readable takes what the server sent and sends the next statement when
// one is due (bench.Async); a server error rolls back and ends the
// transaction with it.
func (wk *worker) Readable() (bool, bench.Outcome, error) {
	done, err := wk.c.Receive()
	switch {
	case !done:
		return false, wk.out, nil
	case wk.c.Broken():
		return true, wk.out, err
	case wk.rollback:
		if err == nil {
			err = wk.failed
		}
		return true, wk.out, err
	case err != nil:
		wk.rollback, wk.failed = true, err
		wk.c.Query("ROLLBACK")
		return false, wk.out, wk.c.Send()
	}
	wk.out.Queries++
	if wk.step++; wk.step == steps {
		return true, wk.out, nil
	}
	wk.request()
	return false, wk.out, wk.c.Send()
}

// Do runs one transaction on a blocking socket (bench.DoAsync).
func (wk *worker) Do(context.Context) (bench.Outcome, error) { return bench.DoAsync(wk) }

// Fd is the socket, for the driver's multiplexing (bench.Async).
func (wk *worker) Fd() int { return wk.c.Fd() }

// Interrupt ends a wait on the server (bench.Interrupter).
func (wk *worker) Interrupt() { wk.c.Interrupt() }

func (wk *worker) Close() error { return wk.c.Close() }
