// Package quiz is the MySQL write-up's own workload: a four-table quiz
// schema (user, question, answer, attempt) in its proportions (per user, two
// questions, two answers and twenty attempts), filled with deterministic
// synthetic text, and clients that loop over point selects on the four
// tables. It reports queries per second. This version runs on MySQL and
// MariaDB.
package quiz

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/go-sql-driver/mysql"

	"pidb/bench"
	"pidb/bench/mysqlx"
)

// Workload is the quiz benchmark.
type Workload struct {
	Config *mysql.Config // a connection to pidb's database
	Scale  int           // users; default 1000, as in the write-up
	Seed   uint64        // for the synthetic text; default 42
	Log    func(string)
}

// table is one of the four tables, its rows per user and its columns.
type table struct {
	name    string
	perUser int
	create  string
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

var tables = []table{
	{"user", 1, "CREATE TABLE `user` (id INT NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL, email VARCHAR(128) NOT NULL, created DATETIME NOT NULL) ENGINE=InnoDB",
		func(r *rand.Rand, id, _ int) string {
			return fmt.Sprintf("(%d,'user %d','user%d@example.org','2024-01-01 00:00:00' + INTERVAL %d MINUTE)", id, id, id, r.IntN(500000))
		}},
	{"question", 2, "CREATE TABLE question (id INT NOT NULL PRIMARY KEY, user_id INT NOT NULL, title VARCHAR(200) NOT NULL, body TEXT NOT NULL, KEY (user_id)) ENGINE=InnoDB",
		func(r *rand.Rand, id, users int) string {
			return fmt.Sprintf("(%d,%d,'%s','%s')", id, r.IntN(users)+1, text(r, 6), text(r, 30))
		}},
	{"answer", 2, "CREATE TABLE answer (id INT NOT NULL PRIMARY KEY, question_id INT NOT NULL, body TEXT NOT NULL, correct BOOL NOT NULL, KEY (question_id)) ENGINE=InnoDB",
		func(r *rand.Rand, id, users int) string {
			return fmt.Sprintf("(%d,%d,'%s',%d)", id, r.IntN(2*users)+1, text(r, 12), r.IntN(2))
		}},
	{"attempt", 20, "CREATE TABLE attempt (id INT NOT NULL PRIMARY KEY, user_id INT NOT NULL, question_id INT NOT NULL, answer_id INT NOT NULL, score INT NOT NULL, KEY (user_id)) ENGINE=InnoDB",
		func(r *rand.Rand, id, users int) string {
			return fmt.Sprintf("(%d,%d,%d,%d,%d)", id, r.IntN(users)+1, r.IntN(2*users)+1, r.IntN(2*users)+1, r.IntN(101))
		}},
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
func (w *Workload) Name() string { return "quiz" }

func (w *Workload) defaults() {
	if w.Scale < 1 {
		w.Scale = 1000
	}
	if w.Seed == 0 {
		w.Seed = 42
	}
}

func (w *Workload) open() (*sql.DB, error) { return mysqlx.Open(w.Config) }

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
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM `"+t.name+"`").Scan(&n); err != nil || n != t.perUser*w.Scale {
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
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS `"+t.name+"`"); err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, t.create); err != nil {
			return err
		}
		n := t.perUser * w.Scale
		for start := 1; start <= n; start += 500 {
			var b strings.Builder
			b.WriteString("INSERT INTO `" + t.name + "` VALUES ")
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

// ErrorKind names MySQL errors by number; anything else reconnects.
func (w *Workload) ErrorKind(err error) (string, bool) { return mysqlx.ErrorKind(err) }

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
	db, conn, err := mysqlx.Connect(ctx, w.Config)
	if err != nil {
		return nil, err
	}
	wk := &worker{db: db, conn: conn, rnd: rand.New(rand.NewPCG(rand.Uint64(), uint64(id)))}
	for _, t := range tables {
		st, err := conn.PrepareContext(ctx, "SELECT * FROM `"+t.name+"` WHERE id = ?")
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
	if err := mysqlx.Drain(wk.stmts[i].QueryContext(ctx, wk.rnd.IntN(wk.rows[i])+1)); err != nil {
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
