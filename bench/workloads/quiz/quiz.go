// Package quiz is the MySQL write-up's own workload: a four-table quiz
// schema (user, question, answer, attempt) in its proportions (per user, two
// questions, two answers and twenty attempts), filled with deterministic
// synthetic text, and clients that loop over point selects on the four
// tables. It reports queries per second. It runs on PostgreSQL, MySQL and
// MariaDB.
package quiz

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"pidb/bench"
	"pidb/bench/sqldb"
)

// Workload is the quiz benchmark.
type Workload struct {
	DB    sqldb.DB // pidb's database
	Scale int      // users; default DefaultScale
	Seed  uint64   // for the synthetic text; default 42
	Log   func(string)
}

// table is one of the four tables: its rows per user, its columns (in SQL
// both engines read; DATETIME is TIMESTAMP on PostgreSQL), its secondary
// index, and a row of it.
type table struct {
	name    string
	perUser int
	columns string
	index   string // the column of its secondary index, if any
	row     func(r *rand.Rand, id, users int) string
}

var words = strings.Fields("pi raspberry database query index table row column sum average latency thermal fan case " +
	"cpu memory card disk commit rollback select update insert delete join order group limit scale client server")

func text(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = words[r.IntN(len(words))]
	}
	return strings.Join(w, " ")
}

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

var tables = []table{
	{"user", 1, "id INT NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL, email VARCHAR(128) NOT NULL, created DATETIME NOT NULL", "",
		func(r *rand.Rand, id, _ int) string {
			created := epoch.Add(time.Duration(r.IntN(500000)) * time.Minute).Format("2006-01-02 15:04:05")
			return fmt.Sprintf("(%d,'user %d','user%d@example.org','%s')", id, id, id, created)
		}},
	{"question", 2, "id INT NOT NULL PRIMARY KEY, user_id INT NOT NULL, title VARCHAR(200) NOT NULL, body TEXT NOT NULL", "user_id",
		func(r *rand.Rand, id, users int) string {
			return fmt.Sprintf("(%d,%d,'%s','%s')", id, r.IntN(users)+1, text(r, 6), text(r, 30))
		}},
	{"answer", 2, "id INT NOT NULL PRIMARY KEY, question_id INT NOT NULL, body TEXT NOT NULL, correct BOOLEAN NOT NULL", "question_id",
		func(r *rand.Rand, id, users int) string {
			return fmt.Sprintf("(%d,%d,'%s',%t)", id, r.IntN(2*users)+1, text(r, 12), r.IntN(2) == 1)
		}},
	{"attempt", 20, "id INT NOT NULL PRIMARY KEY, user_id INT NOT NULL, question_id INT NOT NULL, answer_id INT NOT NULL, score INT NOT NULL", "user_id",
		func(r *rand.Rand, id, users int) string {
			return fmt.Sprintf("(%d,%d,%d,%d,%d)", id, r.IntN(users)+1, r.IntN(2*users)+1, r.IntN(2*users)+1, r.IntN(101))
		}},
}

// create is the table's CREATE TABLE and CREATE INDEX on the database's engine.
func (w *Workload) create(t table) []string {
	cols := t.columns
	if w.DB.Engine() == "postgres" {
		cols = strings.ReplaceAll(cols, "DATETIME", "TIMESTAMP")
	}
	out := []string{"CREATE TABLE " + w.DB.Quote(t.name) + " (" + cols + ")" + w.DB.TableOptions()}
	if t.index != "" {
		out = append(out, "CREATE INDEX "+t.name+"_"+t.index+" ON "+w.DB.Quote(t.name)+" ("+t.index+")")
	}
	return out
}

// Rows is how many rows each table holds at a scale.
func Rows(scale int) map[string]int {
	m := map[string]int{}
	for _, t := range tables {
		m[t.name] = t.perUser * scale
	}
	return m
}

// Name is the workload's name.
func (w *Workload) Name() string { return Name }

// Name is the workload's name, as the command line and the inventory give it.
const Name = "quiz"

// DefaultScale is the users the write-up's populate script made.
const DefaultScale = 1000

func (w *Workload) defaults() {
	if w.Scale < 1 {
		w.Scale = DefaultScale
	}
	if w.Seed == 0 {
		w.Seed = 42
	}
}

func (w *Workload) open() (*sql.DB, error) { return w.DB.Open() }

// Prepare creates and fills the four tables unless they hold the scale's rows.
func (w *Workload) Prepare(ctx context.Context) error {
	w.defaults()
	db, err := w.open()
	if err != nil {
		return err
	}
	defer db.Close()
	ok := true
	for _, t := range tables {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+w.DB.Quote(t.name)).Scan(&n); err != nil || n != t.perUser*w.Scale {
			ok = false
		}
	}
	if ok {
		return nil
	}
	if w.Log != nil {
		w.Log(fmt.Sprintf("quiz: loading %d users", w.Scale))
	}
	r := rand.New(rand.NewPCG(w.Seed, 7))
	for _, t := range tables {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+w.DB.Quote(t.name)); err != nil {
			return err
		}
		for _, stmt := range w.create(t) {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("quiz: %w", err)
			}
		}
		n := t.perUser * w.Scale
		for start := 1; start <= n; start += 500 {
			var b strings.Builder
			b.WriteString("INSERT INTO " + w.DB.Quote(t.name) + " VALUES ")
			for id := start; id < start+500 && id <= n; id++ {
				if id > start {
					b.WriteByte(',')
				}
				b.WriteString(t.row(r, id, w.Scale))
			}
			if _, err := db.ExecContext(ctx, b.String()); err != nil {
				return fmt.Errorf("quiz: load %s: %w", t.name, err)
			}
		}
	}
	return nil
}

// ErrorKind names server errors by number or SQLSTATE; a lost connection reconnects.
func (w *Workload) ErrorKind(err error) (string, bool) { return w.DB.ErrorKind(err) }

type worker struct {
	db    *sql.DB
	conn  *sql.Conn
	stmts []*sql.Stmt
	rows  []int
	rnd   *rand.Rand
}

// NewWorker connects one client and prepares a point select per table.
func (w *Workload) NewWorker(ctx context.Context, id int) (bench.Worker, error) {
	w.defaults()
	db, conn, err := w.DB.Connect(ctx)
	if err != nil {
		return nil, err
	}
	wk := &worker{db: db, conn: conn, rnd: rand.New(rand.NewPCG(rand.Uint64(), uint64(id)))}
	for _, t := range tables {
		st, err := conn.PrepareContext(ctx, w.DB.Rebind("SELECT * FROM "+w.DB.Quote(t.name)+" WHERE id = ?"))
		if err != nil {
			wk.Close()
			return nil, err
		}
		wk.stmts = append(wk.stmts, st)
		wk.rows = append(wk.rows, t.perUser*w.Scale)
	}
	return wk, nil
}

// Do runs one point select on a table chosen at random.
func (wk *worker) Do(ctx context.Context) (bench.Outcome, error) {
	i := wk.rnd.IntN(len(wk.stmts))
	if err := sqldb.Drain(wk.stmts[i].QueryContext(ctx, wk.rnd.IntN(wk.rows[i])+1)); err != nil {
		return bench.Outcome{}, err
	}
	return bench.Outcome{Op: tables[i].name, Queries: 1}, nil
}

func (wk *worker) Close() error {
	for _, s := range wk.stmts {
		s.Close()
	}
	wk.conn.Close()
	return wk.db.Close()
}
