// Package tpcc is TPC-C as sysbench-tpcc runs it (the MySQL write-up's
// first benchmark), native in Go, on PostgreSQL, MySQL and MariaDB: its
// nine tables in --tables copies of --scale warehouses each, with its
// secondary indexes and foreign keys, so that data loaded by either tool
// runs under the other; the standard's five transactions with its random
// inputs (NURand, last names, 1% of New-Orders rolled back, 60% of
// customers by last name, 1% of order lines and 15% of payments
// remote), in the standard mix or another; and the standard's
// consistency conditions 1-4 (Check).
//
// The clients speak the simple protocol with the values in each
// statement's text, as sysbench-tpcc's Lua sends them, on the lean wire
// clients (packages pgwire and mywire, their rows kept in a rows.Set),
// one goroutine per client: a transaction's next statement depends on
// what the last one returned. The load goes through COPY on PostgreSQL
// and multi-row INSERTs on MySQL and MariaDB, warehouses in parallel.
package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sync/errgroup"

	"pidb/bench"
	"pidb/bench/sqldb"
	"pidb/dbms"
	"pidb/results"
)

// Name is the workload's name, as the command line and the inventory give it.
const Name = "tpcc"

// The defaults: the write-up's `tpcc.lua --scale=1 --tables=1`.
const (
	DefaultScale  = 1
	DefaultTables = 1
)

// The transaction types, in the order a Mix gives their weights.
const (
	NewOrder = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
)

// Types are the transactions' names, as the run's counts have them.
var Types = [5]string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// Mix is the weights of the five transactions, in the order of Types.
type Mix [5]int

// StandardMix is the standard's: New-Order 45%, Payment 43%, and 4% each
// of Order-Status, Delivery and Stock-Level (the least of clause 5.2.3
// for the last three, and Payment's 43%).
var StandardMix = Mix{45, 43, 4, 4, 4}

// ParseMix reads a mix as five weights joined by colons, in the order
// new_order:payment:order_status:delivery:stock_level ("10:10:1:1:1" is
// sysbench-tpcc's); "" is the standard mix.
func ParseMix(s string) (Mix, error) {
	if s == "" {
		return StandardMix, nil
	}
	parts := strings.Split(s, ":")
	var m Mix
	if len(parts) != len(m) {
		return m, fmt.Errorf("want five weights joined by colons, %s (the standard's is %s), not %q", strings.Join(Types[:], ":"), StandardMix, s)
	}
	total := 0
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 || n > 1000000 {
			return m, fmt.Errorf("%s's weight in %q: want a whole number from 0, not %q", Types[i], s, p)
		}
		m[i] = n
		total += n
	}
	if total == 0 {
		return m, fmt.Errorf("every weight in %q is 0", s)
	}
	return m, nil
}

// String is the mix as ParseMix reads it.
func (m Mix) String() string {
	var parts []string
	for _, n := range m {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ":")
}

// pick draws a transaction type by the weights.
func (m Mix) pick(r *rand.Rand) int {
	total := 0
	for _, n := range m {
		total += n
	}
	x := r.IntN(total)
	for i, n := range m {
		if x < n {
			return i
		}
		x -= n
	}
	return len(m) - 1
}

// Workload is TPC-C on one server.
type Workload struct {
	DB     sqldb.DB
	Scale  int // warehouses in each copy; default DefaultScale
	Tables int // copies of the nine tables (sysbench-tpcc's --tables); default DefaultTables
	Mix    Mix // the zero Mix is the standard's
	// Reload drops and loads the tables even when they match.
	Reload bool
	// NoFK loads the tables without sysbench-tpcc's foreign keys (its
	// --use_fk=0); a load with them does not match one without.
	NoFK bool
	// MaxTry is how often a transaction that hits a deadlock or a
	// serialization failure is tried; default 10.
	MaxTry int
	Log    func(string)
	Seed   uint64 // for the loaded data and the clients' inputs; 0: the load's is fixed, the clients' random

	once sync.Once
	k    Constants // NURand's C values: the run's, drawn once
}

// Name is the workload's name.
func (w *Workload) Name() string { return Name }

func (w *Workload) defaults() {
	if w.Scale < 1 {
		w.Scale = DefaultScale
	}
	if w.Tables < 1 {
		w.Tables = DefaultTables
	}
	if w.Mix == (Mix{}) {
		w.Mix = StandardMix
	}
	if w.MaxTry < 1 {
		w.MaxTry = 10
	}
}

func (w *Workload) log(s string) {
	if w.Log != nil {
		w.Log(s)
	}
}

func (w *Workload) postgres() bool { return w.DB.Engine() == dbms.PostgresFamily }

// ErrorKind names a server error by number or SQLSTATE, after the
// transaction it ended ("payment: mysql 1213"); a lost connection
// reconnects.
func (w *Workload) ErrorKind(err error) (string, bool) {
	var te *txError
	if errors.As(err, &te) {
		kind, again := w.DB.ErrorKind(te.err)
		return te.op + ": " + kind, again
	}
	return w.DB.ErrorKind(err)
}

// txError is an error that ended a transaction of type op.
type txError struct {
	op  string
	err error
}

func (e *txError) Error() string { return e.op + ": " + e.err.Error() }
func (e *txError) Unwrap() error { return e.err }

// retryable reports whether err is a deadlock, a lock wait timeout or a
// serialization failure: the transaction is rolled back and tried again,
// as sysbench does with the errors it ignores by default
// (--mysql-ignore-errors=1213,1020,1205). MySQL's 1020, "Record has
// changed since last read", is MariaDB's serialization failure: 11.6.2
// and later turn innodb_snapshot_isolation on, and a New-Order or a
// Payment that read a district another one updated since gets it (on
// MariaDB 11.8, a quarter of them at 16 clients).
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205 || me.Number == 1020)
}

// Rows is what a copy of scale warehouses holds when loaded, by table
// (before any transaction: orders, new orders, order lines and history
// grow).
func Rows(scale int) map[string]int64 {
	w := int64(scale)
	return map[string]int64{"warehouse": w, "district": w * DistrictsPerWarehouse, "customer": w * DistrictsPerWarehouse * CustomersPerDistrict,
		"stock": w * Items, "item": Items}
}

// loaded reports whether every copy holds the tables a load makes at this
// scale: the fixed tables' row counts (those no transaction changes), and
// stock's two foreign keys, or none without them.
func (w *Workload) loaded(ctx context.Context, db *sql.DB) bool {
	want := Rows(w.Scale)
	fks := "SELECT COUNT(*) FROM information_schema.table_constraints WHERE constraint_type = 'FOREIGN KEY' AND table_schema = DATABASE() AND table_name = ?"
	if w.postgres() {
		fks = "SELECT COUNT(*) FROM pg_constraint WHERE contype = 'f' AND conrelid = to_regclass($1)"
	}
	wantFKs := int64(2) // stock's: to warehouse and to item
	if w.NoFK {
		wantFKs = 0
	}
	for c := 1; c <= w.Tables; c++ {
		var n int64
		if err := db.QueryRowContext(ctx, fks, "stock"+strconv.Itoa(c)).Scan(&n); err != nil || n != wantFKs {
			return false
		}
		for _, t := range []string{"warehouse", "district", "customer", "stock", "item"} {
			var n int64
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t+strconv.Itoa(c)).Scan(&n); err != nil || n != want[t] {
				return false
			}
		}
	}
	return true
}

// Prepare loads the tables unless each copy already holds a load at this
// scale (by pidb or by sysbench-tpcc's prepare), or Reload says to.
func (w *Workload) Prepare(ctx context.Context) error {
	w.defaults()
	db, err := w.DB.Open()
	if err != nil {
		return err
	}
	defer db.Close()
	if !w.Reload && w.loaded(ctx, db) {
		w.log(fmt.Sprintf("tpcc: %s in %s loaded already", plural(w.Scale, "warehouse", "warehouses"), plural(w.Tables, "table copy is", "table copies are")))
		return nil
	}
	start := time.Now()
	w.log(fmt.Sprintf("tpcc: loading %s in %s", plural(w.Scale, "warehouse", "warehouses"), plural(w.Tables, "table copy", "table copies")))
	if err := w.create(ctx, db); err != nil {
		return err
	}
	if err := w.fill(ctx, db); err != nil {
		return err
	}
	if err := w.keys(ctx, db); err != nil {
		return err
	}
	w.log(fmt.Sprintf("tpcc: loaded in %s", time.Since(start).Round(100*time.Millisecond)))
	return nil
}

// plural is n and the word for one or for more.
func plural(n int, one, more string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + more
}

// pinned runs statements on one connection, in order; on MySQL and MariaDB
// with the foreign keys unchecked (a drop in any order; keys added to
// rows that hold by construction).
func (w *Workload) pinned(ctx context.Context, db *sql.DB, stmts []string) error {
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if !w.postgres() {
		if _, err := c.ExecContext(ctx, "SET SESSION foreign_key_checks = 0"); err != nil {
			return err
		}
	}
	for _, s := range stmts {
		if _, err := c.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("tpcc: %s: %w", s, err)
		}
	}
	return nil
}

// create drops each copy's tables and makes them again.
func (w *Workload) create(ctx context.Context, db *sql.DB) error {
	var stmts []string
	for c := 1; c <= w.Tables; c++ {
		stmts = append(stmts, dropTables(c, w.postgres())...)
	}
	for c := 1; c <= w.Tables; c++ {
		stmts = append(stmts, createTables(c, !w.postgres(), w.DB.TableOptions())...)
	}
	return w.pinned(ctx, db, stmts)
}

// loaders is how many warehouses load at once.
const loaders = 4

// fill loads the rows: each copy's items and each of its warehouses, in
// parallel, each on a connection of its own.
func (w *Workload) fill(ctx context.Context, db *sql.DB) error {
	now := loadTime(time.Now())
	seed := w.Seed
	if seed == 0 {
		seed = 1
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(loaders)
	db.SetMaxOpenConns(loaders)
	with := func(f func(loader) error) error {
		if !w.postgres() {
			return f(myLoader{db: db, now: now})
		}
		c, err := pgconn.ConnectConfig(ctx, &w.DB.Postgres.Config)
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		return f(pgLoader{c: c, now: now})
	}
	for c := 1; c <= w.Tables; c++ {
		g.Go(func() error {
			return with(func(l loader) error { return loadItems(ctx, l, c, seed) })
		})
		for wh := int64(1); wh <= int64(w.Scale); wh++ {
			g.Go(func() error {
				err := with(func(l loader) error { return loadWarehouse(ctx, l, c, wh, seed) })
				if err == nil {
					w.log(fmt.Sprintf("tpcc: loaded warehouse %d of %d (table copy %d)", wh, w.Scale, c))
				}
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("tpcc: %w", err)
	}
	return nil
}

// keys adds the primary keys (PostgreSQL), the secondary indexes and the
// foreign keys, then has PostgreSQL analyze the tables.
func (w *Workload) keys(ctx context.Context, db *sql.DB) error {
	w.log("tpcc: indexes and foreign keys")
	var stmts []string
	for c := 1; c <= w.Tables; c++ {
		if w.postgres() {
			stmts = append(stmts, primaryKeys(c)...)
		}
		stmts = append(stmts, indexes(c)...)
		if !w.NoFK {
			stmts = append(stmts, foreignKeys(c)...)
		}
	}
	if w.postgres() {
		stmts = append(stmts, "ANALYZE")
	}
	return w.pinned(ctx, db, stmts)
}

// NewWorker connects one client.
func (w *Workload) NewWorker(ctx context.Context, id int) (bench.Worker, error) {
	w.defaults()
	c, err := dial(ctx, w.DB)
	if err != nil {
		return nil, fmt.Errorf("tpcc: %w", err)
	}
	seed := w.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	w.once.Do(func() { w.k = RunConstants(rand.New(rand.NewPCG(seed, 0))) })
	r := rand.New(rand.NewPCG(seed, uint64(id)+1))
	return &worker{c: c, r: r, k: w.k, mix: w.Mix, scale: int64(w.Scale), tables: w.Tables, maxTry: w.MaxTry, names: allNames(w.Tables)}, nil
}

func allNames(copies int) []names {
	out := make([]names, copies+1)
	for c := 1; c <= copies; c++ {
		out[c] = namesOf(c)
	}
	return out
}

// Figures are tpcc's own figures of a run: tpmC, the New-Orders completed
// per minute of the measured time the server was there (rolled-back ones
// included, as the standard counts them).
func Figures(s results.Summary) map[string]float64 {
	up := s.MeasuredS - s.DownS
	if up <= 0 {
		return nil
	}
	return map[string]float64{"tpmc": float64(s.Ops[Types[NewOrder]].Count) / up * 60}
}
