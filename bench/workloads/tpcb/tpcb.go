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
	"pidb/bench/sqldb"
	"pidb/bench/wire/pgwire"
)

// Workload is the TPC-B-like benchmark at a scale.
type Workload struct {
	DB     sqldb.DB     // pidb's database, on PostgreSQL
	Scale  int          // pgbench's scale: branches; 10 tellers and 100,000 accounts each
	MaxTry int          // tries of a transaction that hits a serialization failure or deadlock; default 10
	Log    func(string) // progress of the load, for people
	Seed   uint64       // for the random numbers; 0 = random
	// Protocol is how statements are sent: sqldb.Simple (pgbench's default,
	// the statement's text with the values in it) or sqldb.Prepared (`pgbench
	// -M prepared`: each statement prepared once per connection, then bound
	// to its values and executed, one round trip each).
	Protocol sqldb.Protocol
	Reload   bool // load the tables even when they hold the scale's rows
}

const (
	tellersPerBranch  = 10
	accountsPerBranch = 100000
)

// Name is the workload's name.
func (w *Workload) Name() string { return Name }

// Name is the workload's name, as the command line and the inventory give it.
const Name = "tpcb"

// DefaultScale is pidb's default scale: 10 branches, so that the default 8
// clients do not queue on one branch row (pgbench advises no fewer
// branches than clients); pgbench's own default is 1.
const DefaultScale = 10

// Rows is what `pgbench -i -s scale` loads.
func Rows(scale int) (branches, tellers, accounts int64) {
	return int64(scale), int64(scale * tellersPerBranch), int64(scale) * accountsPerBranch
}

func (w *Workload) connect(ctx context.Context) (*pgconn.PgConn, error) {
	return pgconn.ConnectConfig(ctx, &w.DB.Postgres.Config)
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
		return 0, fmt.Errorf("%s: no rows", sql)
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
	if b, err := count(ctx, c, "SELECT count(*) FROM pgbench_branches"); err == nil && b == nb && !w.Reload {
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

// NewWorker connects one client (on a blocking socket, package netx) and,
// with the prepared protocol, prepares the script's statements on its
// connection; then the worker speaks to the server itself (wire).
func (w *Workload) NewWorker(ctx context.Context, id int) (bench.Worker, error) {
	prepared := false
	switch w.Protocol {
	case "", sqldb.Simple:
	case sqldb.Prepared:
		prepared = true
	default:
		return nil, fmt.Errorf("tpcb: protocol %q: want simple or prepared", w.Protocol)
	}
	var stmts []pgwire.Statement
	if prepared {
		for _, st := range script {
			stmts = append(stmts, pgwire.Statement{Name: st.pname, SQL: st.sql})
		}
	}
	c, err := pgwire.Connect(ctx, &w.DB.Postgres.Config, stmts)
	if err != nil {
		return nil, fmt.Errorf("tpcb: %w", err)
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
	wk := &worker{w: c, prepared: prepared, rnd: rand.New(rand.NewPCG(seed, uint64(id))),
		nb: nb, nt: nt, na: na, maxTry: maxTry, buf: make([]byte, 0, 256)}
	for i := range wk.args {
		wk.args[i] = make([]byte, 0, 20)
	}
	return wk, nil
}

// ErrorKind names errors by SQLSTATE; a FATAL one or a broken connection
// reconnects (sqldb.ErrorKind, which the other workloads use too).
func (w *Workload) ErrorKind(err error) (string, bool) { return w.DB.ErrorKind(err) }

// the variables of pgbench's script
const (
	vAid = iota
	vBid
	vTid
	vDelta
	nVars
)

// statement is one line of the script: for the simple protocol its text
// with the variables' values put in, for the prepared one its text with
// $1, $2... and the variables that go there.
type statement struct {
	parts []part // literal text and variables, in order
	sql   string // with $n placeholders
	args  []int  // the variable of each placeholder
	pname string // its name when prepared: pgbench's P0_n
}

type part struct {
	lit string
	v   int // a variable, when lit is ""
}

// appendSimple appends the statement's text with the values in it.
func (s *statement) appendSimple(b []byte, vars *[nVars]int64) []byte {
	for _, p := range s.parts {
		if p.lit != "" {
			b = append(b, p.lit...)
		} else {
			b = strconv.AppendInt(b, vars[p.v], 10)
		}
	}
	return b
}

// parseScript turns pgbench's script notation (:aid and so on) into statements.
func parseScript(lines []string) []statement {
	vars := map[string]int{"aid": vAid, "bid": vBid, "tid": vTid, "delta": vDelta}
	var out []statement
	for _, l := range lines {
		var st statement
		var sql strings.Builder
		for len(l) > 0 {
			i := strings.IndexByte(l, ':')
			if i < 0 {
				st.parts = append(st.parts, part{lit: l})
				sql.WriteString(l)
				break
			}
			if i > 0 {
				st.parts = append(st.parts, part{lit: l[:i]})
				sql.WriteString(l[:i])
			}
			j := i + 1
			for j < len(l) && l[j] >= 'a' && l[j] <= 'z' {
				j++
			}
			v, ok := vars[l[i+1:j]]
			if !ok {
				panic("tpcb: unknown variable in " + l) // the script is a constant
			}
			st.parts = append(st.parts, part{v: v})
			st.args = append(st.args, v)
			fmt.Fprintf(&sql, "$%d", len(st.args))
			l = l[j:]
		}
		st.sql = sql.String()
		st.pname = "P0_" + strconv.Itoa(len(out))
		out = append(out, st)
	}
	return out
}

// script is pgbench's built-in "tpcb-like" script.
var script = parseScript([]string{
	"BEGIN",
	"UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid",
	"SELECT abalance FROM pgbench_accounts WHERE aid = :aid",
	"UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid",
	"UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid",
	"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP)",
	"END",
})

type worker struct {
	w          *pgwire.Conn
	rnd        *rand.Rand
	nb, nt, na int64
	maxTry     int
	prepared   bool
	vars       [nVars]int64
	buf        []byte        // the simple protocol's statement
	args       [nVars][]byte // the prepared protocol's parameters, as text
	params     [nVars][]byte // the parameters of the statement being sent
	// the transaction in progress
	out      bench.Outcome
	step     int   // the statement waiting for its answer
	try      int   // 1 for the first try
	rollback bool  // a ROLLBACK is waiting for its answer
	failed   error // what ends the transaction after that ROLLBACK
}

// request puts statement i of the script, with the worker's variables,
// in the wire's request buffer.
func (wk *worker) request(i int) {
	st := &script[i]
	if !wk.prepared {
		wk.buf = st.appendSimple(wk.buf[:0], &wk.vars)
		wk.w.SetQuery(wk.buf)
		return
	}
	params := wk.params[:len(st.args)]
	for k, v := range st.args {
		wk.args[k] = strconv.AppendInt(wk.args[k][:0], wk.vars[v], 10)
		params[k] = wk.args[k]
	}
	wk.w.SetExecPrepared(st.pname, params)
}

// Begin starts a TPC-B-like transaction: new random values, and the
// script's first statement sent (bench.Async).
func (wk *worker) Begin() error {
	wk.vars[vAid] = wk.rnd.Int64N(wk.na) + 1
	wk.vars[vBid] = wk.rnd.Int64N(wk.nb) + 1
	wk.vars[vTid] = wk.rnd.Int64N(wk.nt) + 1
	wk.vars[vDelta] = wk.rnd.Int64N(10001) - 5000
	wk.out, wk.step, wk.try, wk.rollback, wk.failed = bench.Outcome{Op: "tpcb"}, 0, 1, false, nil
	wk.request(0)
	return wk.w.Send()
}

// Readable takes what the server sent (bench.Async). When a statement's
// answer is complete it sends the next; a serialization failure or
// deadlock rolls back and tries the transaction again, up to MaxTry times
// (pgbench --max-tries); another error rolls back and ends it.
func (wk *worker) Readable() (bool, bench.Outcome, error) {
	done, err := wk.w.Receive()
	if !done {
		return false, wk.out, nil
	}
	if wk.w.Broken() {
		return true, wk.out, err
	}
	if wk.rollback { // the answer to a ROLLBACK
		wk.rollback = false
		if err == nil {
			err = wk.failed
		}
		if err != nil {
			return true, wk.out, err
		}
		wk.step = 0 // try again, with the same values
		wk.request(0)
		return false, wk.out, wk.w.Send()
	}
	if err != nil {
		var pe *pgconn.PgError
		switch {
		case errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01") && wk.try < wk.maxTry:
			wk.out.Retries++
			wk.try++
		case wk.w.Tx() != 'I':
			wk.failed = err
		default:
			return true, wk.out, err
		}
		wk.rollback = true
		wk.w.SetQuery(rollback)
		return false, wk.out, wk.w.Send()
	}
	wk.out.Queries++
	if wk.step++; wk.step == len(script) {
		return true, wk.out, nil
	}
	wk.request(wk.step)
	return false, wk.out, wk.w.Send()
}

var rollback = []byte("ROLLBACK")

// Do runs one transaction on a blocking socket (bench.DoAsync). It does
// not watch ctx: the driver ends a wait with Interrupt.
func (wk *worker) Do(context.Context) (bench.Outcome, error) { return bench.DoAsync(wk) }

// Fd is the socket, for the driver's multiplexing (bench.Async); -1 when
// the connection has none.
func (wk *worker) Fd() int { return wk.w.Fd() }

// Interrupt ends a wait on the server, from another goroutine (bench.Interrupter).
func (wk *worker) Interrupt() { wk.w.Interrupt() }

func (wk *worker) Close() error { return wk.w.Close() }
