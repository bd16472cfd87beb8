// Package tpcb is pgbench's TPC-B-like benchmark, native in Go: the same
// four tables and rows as `pgbench -i -s N`, and pgbench's built-in
// transaction sent as pgbench sends it by default (the simple protocol, one
// statement per round trip), so the numbers compare with pgbench's. A
// database initialised by pgbench runs here, and one initialised here runs
// under `pgbench -n`.
package tpcb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"pidb/bench"
)

// Workload is the TPC-B-like benchmark at a scale.
type Workload struct {
	Config *pgconn.Config // a connection to pidb's database
	Scale  int            // pgbench's scale: branches; 10 tellers and 100,000 accounts each
	MaxTry int            // tries of a transaction that hits a serialization failure or deadlock; default 10
	Log    func(string)   // progress of the load, for people
	Seed   uint64         // for the random numbers; 0 = random
}

const (
	tellersPerBranch  = 10
	accountsPerBranch = 100000
)

// Name is the workload's name.
func (w *Workload) Name() string { return "tpcb" }

// Rows is what `pgbench -i -s scale` loads.
func Rows(scale int) (branches, tellers, accounts int64) {
	return int64(scale), int64(scale * tellersPerBranch), int64(scale) * accountsPerBranch
}

func (w *Workload) connect(ctx context.Context) (*pgconn.PgConn, error) {
	return pgconn.ConnectConfig(ctx, w.Config)
}

// exec runs statements and reads every result.
func exec(ctx context.Context, c *pgconn.PgConn, sql string) error {
	_, err := c.Exec(ctx, sql).ReadAll()
	return err
}

// count returns the first column of a one-row query.
func count(ctx context.Context, c *pgconn.PgConn, sql string) (int64, error) {
	res, err := c.Exec(ctx, sql).ReadAll()
	if err != nil {
		return 0, err
	}
	if len(res) == 0 || len(res[0].Rows) == 0 {
		return 0, errors.New("no rows")
	}
	return strconv.ParseInt(string(res[0].Rows[0][0]), 10, 64)
}

// Prepare loads the tables unless they already hold pgbench's rows for the
// scale (loaded by pidb or by pgbench).
func (w *Workload) Prepare(ctx context.Context) error {
	if w.Scale < 1 {
		return fmt.Errorf("tpcb: scale must be at least 1")
	}
	c, err := w.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	nb, nt, na := Rows(w.Scale)
	if b, err := count(ctx, c, "SELECT count(*) FROM pgbench_branches"); err == nil && b == nb {
		t, err1 := count(ctx, c, "SELECT count(*) FROM pgbench_tellers")
		a, err2 := count(ctx, c, "SELECT count(*) FROM pgbench_accounts")
		if err1 == nil && err2 == nil && t == nt && a == na {
			w.log(fmt.Sprintf("tpcb: scale %d is loaded already", w.Scale))
			return nil
		}
	}
	w.log(fmt.Sprintf("tpcb: loading scale %d (%d accounts)", w.Scale, na))
	// pgbench -i: drop, create, generate (client side, COPY), vacuum, primary keys
	if err := exec(ctx, c, "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers"); err != nil {
		return err
	}
	if err := exec(ctx, c, `CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22));
CREATE TABLE pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84)) WITH (fillfactor=100);
CREATE TABLE pgbench_accounts (aid int not null, bid int, abalance int, filler char(84)) WITH (fillfactor=100);
CREATE TABLE pgbench_branches (bid int not null, bbalance int, filler char(88)) WITH (fillfactor=100)`); err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString("BEGIN;")
	for b := int64(1); b <= nb; b++ {
		fmt.Fprintf(&sb, "INSERT INTO pgbench_branches(bid,bbalance) VALUES(%d,0);", b)
	}
	for t := int64(1); t <= nt; t++ {
		fmt.Fprintf(&sb, "INSERT INTO pgbench_tellers(tid,bid,tbalance) VALUES (%d,%d,0);", t, (t-1)/tellersPerBranch+1)
	}
	sb.WriteString("COMMIT")
	if err := exec(ctx, c, sb.String()); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 0, 64<<10)
		for a := int64(1); a <= na; a++ {
			buf = strconv.AppendInt(buf, a, 10)
			buf = append(buf, '\t')
			buf = strconv.AppendInt(buf, (a-1)/accountsPerBranch+1, 10)
			buf = append(buf, "\t0\t\n"...)
			if len(buf) > 60<<10 {
				if _, err := pw.Write(buf); err != nil {
					return
				}
				buf = buf[:0]
			}
		}
		_, _ = pw.Write(buf)
		pw.Close()
	}()
	if _, err := c.CopyFrom(ctx, pr, "COPY pgbench_accounts FROM STDIN"); err != nil {
		pr.CloseWithError(err)
		return fmt.Errorf("tpcb: load accounts: %w", err)
	}
	w.log("tpcb: vacuum and primary keys")
	if err := exec(ctx, c, "VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history"); err != nil {
		return err
	}
	return exec(ctx, c, `ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid);
ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid);
ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid)`)
}

func (w *Workload) log(s string) {
	if w.Log != nil {
		w.Log(s)
	}
}

// NewWorker connects one client.
func (w *Workload) NewWorker(ctx context.Context, id int) (bench.Worker, error) {
	c, err := w.connect(ctx)
	if err != nil {
		return nil, err
	}
	seed := w.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	maxTry := w.MaxTry
	if maxTry < 1 {
		maxTry = 10
	}
	nb, nt, na := Rows(w.Scale)
	return &worker{c: c, rnd: rand.New(rand.NewPCG(seed, uint64(id))), nb: nb, nt: nt, na: na, maxTry: maxTry, buf: make([]byte, 0, 256)}, nil
}

// ErrorKind names errors by SQLSTATE; a broken connection reconnects.
func (w *Workload) ErrorKind(err error) (string, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return "sqlstate " + pe.Code, pe.Severity == "FATAL"
	}
	return "connection", true
}

type worker struct {
	c          *pgconn.PgConn
	rnd        *rand.Rand
	nb, nt, na int64
	maxTry     int
	buf        []byte
}

// the statements of pgbench's built-in tpcb-like script, split where the
// numbers go
var (
	sqlBegin  = "BEGIN"
	sqlEnd    = "END"
	updAcc    = [2]string{"UPDATE pgbench_accounts SET abalance = abalance + ", " WHERE aid = "}
	selAcc    = "SELECT abalance FROM pgbench_accounts WHERE aid = "
	updTell   = [2]string{"UPDATE pgbench_tellers SET tbalance = tbalance + ", " WHERE tid = "}
	updBranch = [2]string{"UPDATE pgbench_branches SET bbalance = bbalance + ", " WHERE bid = "}
	insHist   = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ("
)

func (wk *worker) run(ctx context.Context, sql []byte) error {
	mrr := wk.c.Exec(ctx, string(sql)) // the simple protocol, as pgbench's default

	for mrr.NextResult() {
		r := mrr.ResultReader()
		for r.NextRow() {
		}
		if _, err := r.Close(); err != nil {
			mrr.Close()
			return err
		}
	}
	return mrr.Close()
}

func (wk *worker) stmt(ctx context.Context, parts ...any) error {
	b := wk.buf[:0]
	for _, p := range parts {
		switch x := p.(type) {
		case string:
			b = append(b, x...)
		case int64:
			b = strconv.AppendInt(b, x, 10)
		}
	}
	wk.buf = b
	return wk.run(ctx, b)
}

// Do runs one TPC-B-like transaction; a serialization failure or deadlock
// rolls back and tries again, up to MaxTry times (pgbench --max-tries).
func (wk *worker) Do(ctx context.Context) (bench.Outcome, error) {
	aid := wk.rnd.Int64N(wk.na) + 1
	bid := wk.rnd.Int64N(wk.nb) + 1
	tid := wk.rnd.Int64N(wk.nt) + 1
	delta := wk.rnd.Int64N(10001) - 5000
	out := bench.Outcome{Op: "tpcb"}
	for try := 1; ; try++ {
		err := wk.tx(ctx, aid, bid, tid, delta, &out)
		if err == nil {
			return out, nil
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01") && try < wk.maxTry {
			out.Retries++
			if rbErr := wk.run(ctx, []byte("ROLLBACK")); rbErr != nil {
				return out, rbErr
			}
			continue
		}
		if !wk.c.IsClosed() && wk.c.TxStatus() != 'I' {
			_ = wk.run(ctx, []byte("ROLLBACK"))
		}
		return out, err
	}
}

func (wk *worker) tx(ctx context.Context, aid, bid, tid, delta int64, out *bench.Outcome) error {
	steps := [][]any{
		{sqlBegin},
		{updAcc[0], delta, updAcc[1], aid},
		{selAcc, aid},
		{updTell[0], delta, updTell[1], tid},
		{updBranch[0], delta, updBranch[1], bid},
		{insHist, tid, ", ", bid, ", ", aid, ", ", delta, ", CURRENT_TIMESTAMP)"},
		{sqlEnd},
	}
	for _, s := range steps {
		if err := wk.stmt(ctx, s...); err != nil {
			return err
		}
		out.Queries++
	}
	return nil
}

func (wk *worker) Close() error { return wk.c.Close(context.Background()) }
