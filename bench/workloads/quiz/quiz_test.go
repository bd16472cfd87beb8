package quiz

import (
	"context"
	"strings"
	"testing"

	"pidb/bench/sqldb"
	"pidb/internal/sqlrec"
)

func TestRows(t *testing.T) {
	got := Rows(1000)
	want := map[string]int{"user": 1000, "question": 2000, "answer": 2000, "attempt": 20000}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d rows at scale 1000, want %d", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("tables: %v", got)
	}
}

// TestPrepare: with a table short of its rows, all four are loaded again,
// each dropped, created (with its index) and filled in batches of 500.
func TestPrepare(t *testing.T) {
	for _, dialect := range []string{"postgres", "mysql"} {
		rec := &sqlrec.Recorder{Counts: map[string]int64{"user": 100, "question": 200, "answer": 200, "attempt": 1999}}
		w := &Workload{DB: sqldb.DB{Connector: rec, Dialect: dialect}, Scale: 100}
		if err := w.Prepare(context.Background()); err != nil {
			t.Fatal(err)
		}
		q := map[string]string{"postgres": `"`, "mysql": "`"}[dialect]
		execs := strings.Join(rec.Of("exec"), "\n")
		for _, want := range []string{
			"DROP TABLE IF EXISTS " + q + "user" + q,
			"CREATE INDEX question_user_id ON " + q + "question" + q + " (user_id)",
			"CREATE INDEX attempt_user_id ON " + q + "attempt" + q + " (user_id)",
		} {
			if !strings.Contains(execs, want) {
				t.Errorf("%s: no %q in\n%.2000s", dialect, want, execs)
			}
		}
		created := map[string]bool{"postgres": strings.Contains(execs, "created TIMESTAMP NOT NULL)"),
			"mysql": strings.Contains(execs, "created DATETIME NOT NULL) ENGINE=InnoDB")}[dialect]
		if !created {
			t.Errorf("%s: the user table's create", dialect)
		}
		// rows: 100 users, 200 questions and answers, 2,000 attempts (4 batches of 500)
		inserts := map[string]int{}
		for _, s := range rec.Of("exec") {
			if rest, ok := strings.CutPrefix(s, "INSERT INTO "+q); ok {
				name, _, _ := strings.Cut(rest, q)
				inserts[name] += strings.Count(s, "),(") + 1
			}
		}
		if inserts["user"] != 100 || inserts["question"] != 200 || inserts["answer"] != 200 || inserts["attempt"] != 2000 {
			t.Errorf("%s: rows inserted %v", dialect, inserts)
		}
	}
	// every table full: nothing is loaded
	rec := &sqlrec.Recorder{Counts: map[string]int64{"user": 100, "question": 200, "answer": 200, "attempt": 2000}}
	if err := (&Workload{DB: sqldb.DB{Connector: rec, Dialect: "mysql"}, Scale: 100}).Prepare(context.Background()); err != nil || len(rec.Of("exec")) != 0 {
		t.Errorf("full tables: %v, %d statements", err, len(rec.Of("exec")))
	}
}

// TestPointSelects: each Do is one point select, on a table chosen at
// random, for an id inside that table.
func TestPointSelects(t *testing.T) {
	rec := &sqlrec.Recorder{}
	w := &Workload{DB: sqldb.DB{Connector: rec, Dialect: "postgres"}, Scale: 10}
	wk, err := w.NewWorker(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer wk.Close()
	if p := rec.Of("prepare"); len(p) != 4 || p[0] != `SELECT * FROM "user" WHERE id = $1` {
		t.Errorf("prepared: %q", p)
	}
	before := len(rec.Calls())
	ops := map[string]int{}
	for i := 0; i < 400; i++ {
		out, err := wk.Do(context.Background())
		if err != nil || out.Queries != 1 {
			t.Fatalf("Do: %+v %v", out, err)
		}
		ops[out.Op]++
	}
	rows := Rows(10)
	for _, c := range rec.Calls()[before:] {
		name := strings.Split(c.SQL, `"`)[1]
		if id := c.Args[0].(int64); id < 1 || id > int64(rows[name]) {
			t.Errorf("%s: id %d outside 1-%d", name, id, rows[name])
		}
	}
	for _, name := range []string{"user", "question", "answer", "attempt"} {
		if ops[name] == 0 { // 400 picks of 4: a table never chosen has odds of 10^-50
			t.Errorf("table %s never queried: %v", name, ops)
		}
	}
}
