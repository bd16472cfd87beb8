package bench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// pairWorkload's workers are Async over a socketpair each, with an echo
// "server" goroutine on the other end: a transaction is two round trips of
// one byte. Every 40th transaction of a client breaks its connection (the
// server end closes), so the client connects again.
type pairWorkload struct {
	connects atomic.Int64
	answered atomic.Int64 // round trips the servers answered
	wg       sync.WaitGroup
}

var errClosed = errors.New("closed by the server")

func (p *pairWorkload) Name() string                  { return "pair" }
func (p *pairWorkload) Prepare(context.Context) error { return nil }
func (p *pairWorkload) ErrorKind(err error) (string, bool) {
	return "connection", errors.Is(err, errClosed)
}

func (p *pairWorkload) NewWorker(context.Context, int) (Worker, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	p.connects.Add(1)
	p.wg.Add(1)
	go func() { // the server: answers each byte with the same byte; 'q' closes
		defer p.wg.Done()
		defer syscall.Close(fds[1])
		b := make([]byte, 1)
		for {
			if n, err := syscall.Read(fds[1], b); n != 1 || err != nil || b[0] == 'q' {
				return
			}
			p.answered.Add(1)
			if _, err := syscall.Write(fds[1], b); err != nil {
				return
			}
		}
	}()
	return &pairWorker{fd: fds[0]}, nil
}

type pairWorker struct {
	fd     int
	tx     int // transactions begun
	step   int
	closed bool
}

func (w *pairWorker) Fd() int { return w.fd }

func (w *pairWorker) Begin() error {
	w.tx++
	w.step = 0
	c := byte('a')
	if w.tx%40 == 0 {
		c = 'q'
	}
	_, err := syscall.Write(w.fd, []byte{c})
	return err
}

func (w *pairWorker) Readable() (bool, Outcome, error) {
	b := make([]byte, 1)
	n, err := syscall.Read(w.fd, b)
	if err == syscall.EAGAIN {
		return false, Outcome{}, nil
	}
	if n == 0 || err != nil {
		return true, Outcome{}, errClosed
	}
	if w.step++; w.step < 2 {
		_, err := syscall.Write(w.fd, []byte{'b'})
		return false, Outcome{}, err
	}
	return true, Outcome{Op: "pair", Queries: 2}, nil
}

func (w *pairWorker) Do(context.Context) (Outcome, error) {
	return Outcome{}, errors.New("pairWorker runs multiplexed only")
}

func (w *pairWorker) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return syscall.Close(w.fd)
}

func TestRunMultiplexed(t *testing.T) {
	p := &pairWorkload{}
	sum, series, err := Run(context.Background(), p, Options{Clients: 5, Threads: 2, Duration: 600 * time.Millisecond, Warmup: 100 * time.Millisecond, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p.wg.Wait() // every server saw its client close
	// how many is the machine's load as much as the code's (52 in 0.6 s
	// beside a lab's provisioning): some, and what the servers counted
	if sum.Transactions == 0 || sum.Queries != 2*sum.Transactions {
		t.Errorf("%d transactions, %d queries", sum.Transactions, sum.Queries)
	}
	// every measured transaction was two answered round trips; the warm-up
	// and the cut-off ones add some
	if got := p.answered.Load(); got < 2*sum.Transactions {
		t.Errorf("the servers answered %d round trips for %d transactions", got, sum.Transactions)
	}
	// a connection for each client and one for each reconnect; whether a
	// client reached its 40th transaction (the server's break) in 0.7 s is
	// the machine's load: TestRunFixedWorkMultiplexed checks the breaks
	// on a fixed amount of work
	if p.connects.Load() != 5+sum.Reconnects {
		t.Errorf("reconnects %d, errors %v, connects %d", sum.Reconnects, sum.Errors, p.connects.Load())
	}
	if len(series) == 0 {
		t.Errorf("no points")
	}
}

// TestRunFixedWorkMultiplexed: multiplexed clients stop at their amount of
// work too, each connection closed when its client is done (every server
// sees its end), their broken transactions (every 40th) redone.
func TestRunFixedWorkMultiplexed(t *testing.T) {
	p := &pairWorkload{}
	sum, _, err := Run(context.Background(), p, Options{Clients: 5, Threads: 2, PerClient: 100, Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p.wg.Wait()
	if sum.Transactions != 500 || sum.Queries != 1000 || sum.Errors["connection"] < 5 {
		t.Errorf("%d transactions, %d queries, errors %v; want 500, 1,000 and the broken ones", sum.Transactions, sum.Queries, sum.Errors)
	}
	if got := p.answered.Load(); got < 1000 {
		t.Errorf("the servers answered %d round trips for 500 transactions of two", got)
	}
}
