package script

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"pidb/bench"
	"pidb/bench/sqldb"
	"pidb/bench/wire"
	"pidb/bench/wire/mywire"
	"pidb/bench/wire/netx"
	"pidb/bench/wire/pgwire"
)

// Name is the workload's name, as the command line and the inventory give it.
const Name = "sql"

// DefaultScale is :scale's value when the run gives none.
const DefaultScale = 1

// Workload is a user's script as a benchmark: each client runs the
// script's steps in order as one transaction, again and again, as
// pgbench -f does. Statements go one at a time, as the script has them:
// a script that wants them in one transaction says BEGIN and COMMIT.
type Workload struct {
	DB     sqldb.DB // pidb's database
	Script *Script
	// Setup, when not nil, runs once before the run, on one connection,
	// with the simple protocol: the statements that make the tables the
	// script reads.
	Setup    *Script
	Scale    int            // :scale; default DefaultScale
	Protocol sqldb.Protocol // sqldb.Simple (the default, pgbench's) or sqldb.Prepared
	Log      func(string)
}

// Name is the workload's name.
func (w *Workload) Name() string { return Name }

func (w *Workload) defaults() {
	if w.Scale < 1 {
		w.Scale = DefaultScale
	}
	if w.Protocol == "" {
		w.Protocol = sqldb.Simple
	}
}

// EvalError is a \set whose expression could not be worked out while the
// script ran (a division by zero, random's ends the wrong way round).
type EvalError struct {
	File string
	Line int
	Err  error
}

func (e *EvalError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

// ErrorKind names server errors by number or SQLSTATE, and a script's own
// by its line; a lost connection reconnects.
func (w *Workload) ErrorKind(err error) (string, bool) {
	var ee *EvalError
	if errors.As(err, &ee) {
		return fmt.Sprintf("\\set at line %d", ee.Line), false
	}
	return w.DB.ErrorKind(err)
}

// program is a script made ready to run: its variables numbered, each
// statement cut at its variables.
type program struct {
	s     *Script
	index map[string]int // a variable's number
	steps []step
}

type step struct {
	*Step
	set  int      // the variable a \set gives a value, by number
	lits []string // the statement's text around its variables
	vars []int    // the variables in it, by number
}

func compile(s *Script) *program {
	p := &program{s: s, index: map[string]int{}}
	number := func(name string) int {
		if i, ok := p.index[name]; ok {
			return i
		}
		p.index[name] = len(p.index)
		return p.index[name]
	}
	for _, g := range Given() {
		number(g)
	}
	for i := range s.Steps {
		st := step{Step: &s.Steps[i]}
		if st.Set != "" {
			st.set = number(st.Set)
		} else {
			var names []string
			st.lits, names = split(st.SQL)
			for _, n := range names {
				st.vars = append(st.vars, number(n))
			}
		}
		p.steps = append(p.steps, st)
	}
	return p
}

// vars is one client's variables: their values, by number and by name (for
// the expressions).
type vars struct {
	p      *program
	values []int64
	env    Env
}

func (p *program) newVars(scale, client int, rnd *rand.Rand) *vars {
	v := &vars{p: p, values: make([]int64, len(p.index)), env: Env{Vars: map[string]int64{}}}
	v.env.Random = func(lo, hi int64) int64 {
		if n := hi - lo + 1; n > 0 {
			return lo + rnd.Int64N(n)
		}
		return lo + int64(rnd.Uint64()) // the whole range of int64: any value
	}
	v.put("scale", int64(scale))
	v.put("client_id", int64(client))
	return v
}

// put gives the variable name the value x.
func (v *vars) put(name string, x int64) {
	v.values[v.p.index[name]] = x
	v.env.Vars[name] = x
}

// run works out \set steps from k on and returns the next statement's
// index; len(steps) when none is left.
func (v *vars) run(k int) (int, error) {
	for ; k < len(v.p.steps); k++ {
		st := &v.p.steps[k]
		if st.Set == "" {
			return k, nil
		}
		x, err := st.Expr.Eval(v.env)
		if err != nil {
			return k, &EvalError{File: v.p.s.Name, Line: st.Line, Err: err}
		}
		v.values[st.set] = x // by number: this runs in every transaction
		v.env.Vars[st.Set] = x
	}
	return k, nil
}

// text appends statement k's text with its variables' values in it.
func (v *vars) text(b []byte, k int) []byte {
	st := &v.p.steps[k]
	for i, lit := range st.lits {
		b = append(b, lit...)
		if i < len(st.vars) {
			b = strconv.AppendInt(b, v.values[st.vars[i]], 10)
		}
	}
	return b
}

// placeholders is statement k with its variables as the engine's
// placeholders: $1, $2... (PostgreSQL) or ? (MySQL).
func (p *program) placeholders(k int, dollar bool) string {
	st := &p.steps[k]
	var b strings.Builder
	for i, lit := range st.lits {
		b.WriteString(lit)
		if i < len(st.vars) {
			if dollar {
				fmt.Fprintf(&b, "$%d", i+1)
			} else {
				b.WriteByte('?')
			}
		}
	}
	return b.String()
}

// Prepare runs the setup script, if there is one, and then has the server
// read every statement of the script as this run will send it, without
// running any: a statement it refuses (a table that is not there, a
// mistake in the SQL) ends the run before it starts, at its line.
func (w *Workload) Prepare(ctx context.Context) error {
	w.defaults()
	db, err := w.DB.Open()
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	rnd := rand.New(rand.NewPCG(1, 2))
	if w.Setup != nil {
		if w.Log != nil {
			w.Log(fmt.Sprintf("sql: running the setup script %s", w.Setup.Name))
		}
		p := compile(w.Setup)
		v := p.newVars(w.Scale, 0, rnd)
		for k := 0; ; k++ {
			if k, err = v.run(k); err != nil {
				return err
			}
			if k == len(p.steps) {
				break
			}
			if _, err := conn.ExecContext(ctx, string(v.text(nil, k))); err != nil {
				return fmt.Errorf("%s:%d: %w", w.Setup.Name, p.steps[k].Line, err)
			}
		}
	}
	return w.check(ctx, conn, rnd)
}

// check has the server prepare each of the script's statements, with
// values worked out once for the simple protocol's text.
func (w *Workload) check(ctx context.Context, conn *sql.Conn, rnd *rand.Rand) error {
	p := compile(w.Script)
	v := p.newVars(w.Scale, 1, rnd)
	pg := w.DB.Postgres != nil
	for k := 0; ; k++ {
		var err error
		if k, err = v.run(k); err != nil {
			return err
		}
		if k == len(p.steps) {
			return nil
		}
		text := string(v.text(nil, k))
		if w.Protocol == sqldb.Prepared {
			text = p.placeholders(k, pg)
		}
		st, err := conn.PrepareContext(ctx, text)
		if err == nil {
			st.Close()
			continue
		}
		if unpreparable(err) {
			continue // MySQL prepares only some statements; it runs the others as they are
		}
		return fmt.Errorf("%s:%d: %w", w.Script.Name, p.steps[k].Line, err)
	}
}

// unpreparable is MySQL's answer to a statement its prepared protocol
// does not take (ER_UNSUPPORTED_PS).
func unpreparable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1295
}

// worker is one client running the script.
type worker struct {
	p   *program
	v   *vars
	c   wire.Conn
	set func(k int) // puts statement k, with its values, in the request
	// rollback ends a transaction a failed statement left open, if it
	// did; false when no ROLLBACK was needed
	rollback func() bool
	// the transaction in progress
	k      int // the statement whose answer is awaited
	out    bench.Outcome
	failed error // what ends the transaction after its ROLLBACK
}

// NewWorker connects one client and, with the prepared protocol, prepares
// the script's statements on its connection.
func (w *Workload) NewWorker(ctx context.Context, id int) (bench.Worker, error) {
	w.defaults()
	p := compile(w.Script)
	wk := &worker{p: p, v: p.newVars(w.Scale, id+1, rand.New(rand.NewPCG(rand.Uint64(), uint64(id))))}
	var err error
	if w.DB.Postgres != nil {
		err = wk.pg(ctx, w)
	} else {
		err = wk.mysql(ctx, w)
	}
	if err != nil {
		return nil, fmt.Errorf("sql: %w", err)
	}
	return wk, nil
}

// statements are the indexes of the script's statements.
func (p *program) statements() []int {
	var out []int
	for k, st := range p.steps {
		if st.Set == "" {
			out = append(out, k)
		}
	}
	return out
}

// pg connects the worker on pgwire; prepared, each statement is
// pgbench's P0_k.
func (wk *worker) pg(ctx context.Context, w *Workload) error {
	var prepare []pgwire.Statement
	names := map[int]string{}
	if w.Protocol == sqldb.Prepared {
		for _, k := range wk.p.statements() {
			names[k] = "P0_" + strconv.Itoa(k)
			prepare = append(prepare, pgwire.Statement{Name: names[k], SQL: wk.p.placeholders(k, true)})
		}
	}
	c, err := pgwire.Connect(ctx, &w.DB.Postgres.Config, prepare)
	if err != nil {
		return err
	}
	wk.c = c
	wk.rollback = func() bool {
		if c.Tx() == 'I' {
			return false
		}
		c.SetQuery([]byte("ROLLBACK"))
		return true
	}
	if w.Protocol != sqldb.Prepared {
		buf := make([]byte, 0, 256)
		wk.set = func(k int) {
			buf = wk.v.text(buf[:0], k)
			c.SetQuery(buf)
		}
		return nil
	}
	var args [][]byte
	wk.set = func(k int) {
		st := &wk.p.steps[k]
		args = args[:0]
		for _, x := range st.vars {
			args = append(args, strconv.AppendInt(nil, wk.v.values[x], 10))
		}
		c.SetExecPrepared(names[k], args)
	}
	return nil
}

// mysql connects the worker on mywire; prepared, each statement the
// server's prepared protocol takes is prepared, and the others go as
// they are.
func (wk *worker) mysql(ctx context.Context, w *Workload) error {
	c, err := mywire.Connect(ctx, w.DB.MySQL, netx.Dial)
	if err != nil {
		return err
	}
	wk.c = c
	// the server keeps no transaction open after an error in autocommit,
	// and a ROLLBACK with none open does nothing: one after every error
	wk.rollback = func() bool { c.SetQuery("ROLLBACK"); return true }
	buf := make([]byte, 0, 256)
	text := func(k int) {
		buf = wk.v.text(buf[:0], k)
		c.SetQueryBytes(buf)
	}
	if w.Protocol != sqldb.Prepared {
		wk.set = text
		return nil
	}
	stmts := map[int]*mywire.Stmt{}
	for _, k := range wk.p.statements() {
		s := &mywire.Stmt{}
		c.SetPrepare(wk.p.placeholders(k, false), s)
		if err := c.RoundTrip(); err != nil {
			if unpreparable(err) && len(wk.p.steps[k].vars) == 0 {
				continue
			}
			c.Close()
			return fmt.Errorf("%s:%d: prepare: %w", w.Script.Name, wk.p.steps[k].Line, err)
		}
		stmts[k] = s
	}
	args := make([]int64, 0, 8)
	wk.set = func(k int) {
		s := stmts[k]
		if s == nil {
			text(k)
			return
		}
		args = args[:0]
		for _, x := range wk.p.steps[k].vars {
			args = append(args, wk.v.values[x])
		}
		c.SetExecute(s, args...)
	}
	return nil
}

// next works out the \set steps from k on and sends the next statement;
// done when the script has none left.
func (wk *worker) next(k int) (done bool, err error) {
	if wk.k, err = wk.v.run(k); err != nil {
		return true, err
	}
	if wk.k == len(wk.p.steps) {
		return true, nil
	}
	wk.set(wk.k)
	return false, wk.c.Send()
}

// Begin starts the script from its first step (bench.Async).
func (wk *worker) Begin() error {
	wk.out, wk.failed = bench.Outcome{Op: Name}, nil
	done, err := wk.next(0)
	if done && err == nil {
		return errors.New("sql: the script has no statement") // Parse refuses such a script
	}
	return err
}

// Readable takes what the server sent (bench.Async). When a statement's
// answer is complete it sends the next; a statement that fails ends the
// transaction, after a ROLLBACK when it left one open.
func (wk *worker) Readable() (bool, bench.Outcome, error) {
	done, err := wk.c.Receive()
	if !done {
		return false, wk.out, nil
	}
	if wk.c.Broken() {
		return true, wk.out, err
	}
	if wk.failed != nil { // the answer to the ROLLBACK
		return true, wk.out, wk.failed
	}
	if err != nil {
		if !wk.rollback() {
			return true, wk.out, err
		}
		wk.failed = err
		return false, wk.out, wk.c.Send()
	}
	wk.out.Queries++
	done, err = wk.next(wk.k + 1)
	var ee *EvalError
	if errors.As(err, &ee) && wk.rollback() {
		wk.failed = err
		return false, wk.out, wk.c.Send()
	}
	return done || err != nil, wk.out, err
}

// Do runs the script once on a blocking socket (bench.DoAsync).
func (wk *worker) Do(context.Context) (bench.Outcome, error) { return bench.DoAsync(wk) }

// Fd is the socket, for the driver's multiplexing (bench.Async).
func (wk *worker) Fd() int { return wk.c.Fd() }

// Interrupt ends a wait on the server (bench.Interrupter).
func (wk *worker) Interrupt() { wk.c.Interrupt() }

func (wk *worker) Close() error { return wk.c.Close() }
