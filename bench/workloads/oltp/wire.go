package oltp

import (
	"context"
	"fmt"
	"math/rand/v2"

	"pidb/bench"
	"pidb/bench/wire/mywire"
	"pidb/bench/wire/netx"
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

// wireWorker is a MySQL-family client on mywire: one transaction of
// oltp_read_only is a state machine over its 16 round trips.
type wireWorker struct {
	c     *mywire.Conn
	stmts [][nKinds]mywire.Stmt // per table
	rnd   *rand.Rand
	size  int
	// the transaction in progress
	st       *[nKinds]mywire.Stmt
	step     int
	out      bench.Outcome
	rollback bool
	failed   error
}

func (w *Workload) newWireWorker(ctx context.Context, id int) (bench.Worker, error) {
	c, err := mywire.Connect(ctx, w.DB.MySQL, netx.Dial)
	if err != nil {
		return nil, err
	}
	wk := &wireWorker{c: c, rnd: rand.New(rand.NewPCG(rand.Uint64(), uint64(id))), size: w.TableSize,
		stmts: make([][nKinds]mywire.Stmt, w.Tables)}
	for t := range wk.stmts {
		for k, q := range kindSQL {
			c.SetPrepare(fmt.Sprintf(q, fmt.Sprintf("sbtest%d", t+1)), &wk.stmts[t][k])
			if err := c.RoundTrip(); err != nil {
				c.Close()
				return nil, fmt.Errorf("oltp-read-only: prepare: %w", err)
			}
		}
	}
	return wk, nil
}

// request puts the transaction's next statement in the request.
func (wk *wireWorker) request() {
	switch s := wk.step; {
	case s == 0:
		wk.c.SetQuery("BEGIN")
	case s <= pointSelects:
		wk.c.SetExecute(&wk.st[kPoint], int64(wk.rnd.IntN(wk.size)+1))
	case s < steps-1:
		lo := int64(wk.rnd.IntN(max(wk.size-rangeSize, 1)) + 1)
		wk.c.SetExecute(&wk.st[kSimple+s-pointSelects-1], lo, lo+rangeSize-1)
	default:
		wk.c.SetQuery("COMMIT")
	}
}

// Begin starts a transaction on a table chosen at random (bench.Async).
func (wk *wireWorker) Begin() error {
	wk.st = &wk.stmts[wk.rnd.IntN(len(wk.stmts))]
	wk.step, wk.out, wk.rollback, wk.failed = 0, bench.Outcome{Op: "oltp_read_only"}, false, nil
	wk.request()
	return wk.c.Send()
}

// Readable takes what the server sent and sends the next statement when
// one is due (bench.Async); a server error rolls back and ends the
// transaction with it.
func (wk *wireWorker) Readable() (bool, bench.Outcome, error) {
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
		wk.c.SetQuery("ROLLBACK")
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
func (wk *wireWorker) Do(context.Context) (bench.Outcome, error) { return bench.DoAsync(wk) }

// Fd is the socket, for the driver's multiplexing (bench.Async).
func (wk *wireWorker) Fd() int { return wk.c.Fd() }

// Interrupt ends a wait on the server (bench.Interrupter).
func (wk *wireWorker) Interrupt() { wk.c.Interrupt() }

func (wk *wireWorker) Close() error { return wk.c.Close() }
