package oltp

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"pidb/bench/sqldb"
	"pidb/internal/sqlrec"
)

// TestPrepareLoadsWhatIsMissing: sbtest1 is empty and is loaded as
// sysbench does (drop, create, rows in batches of 1,000, then the index on
// k); sbtest2 already holds its rows and is left alone.
func TestPrepareLoadsWhatIsMissing(t *testing.T) {
	for _, dialect := range []string{"postgres", "mysql"} {
		rec := &sqlrec.Recorder{Counts: map[string]int64{"sbtest2": 2500}}
		w := &Workload{DB: sqldb.DB{Connector: rec, Dialect: dialect}, Tables: 2, TableSize: 2500}
		if err := w.Prepare(context.Background()); err != nil {
			t.Fatal(err)
		}
		execs := rec.Of("exec")
		if len(execs) != 6 {
			t.Fatalf("%s: %d statements, want drop, create, 3 inserts, index:\n%s", dialect, len(execs), strings.Join(execs, "\n"))
		}
		create := "CREATE TABLE sbtest1 (id SERIAL NOT NULL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))"
		if dialect == "mysql" {
			create = "CREATE TABLE sbtest1 (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB"
		}
		if execs[0] != "DROP TABLE IF EXISTS sbtest1" || execs[1] != create || execs[5] != "CREATE INDEX k_1 ON sbtest1(k)" {
			t.Errorf("%s: statements:\n%s", dialect, strings.Join(execs, "\n"))
		}
		// 1,000 + 1,000 + 500 rows, each (k, c, pad) with sysbench's c (119
		// characters) and pad (59)
		row := regexp.MustCompile(`\((\d+),'(\d{11}(?:-\d{11}){9})','(\d{11}(?:-\d{11}){4})'\)`)
		for i, want := range []int{1000, 1000, 500} {
			ins := execs[2+i]
			if !strings.HasPrefix(ins, "INSERT INTO sbtest1 (k, c, pad) VALUES (") || len(row.FindAllString(ins, -1)) != want {
				t.Errorf("%s: insert %d has %d rows, want %d", dialect, i, len(row.FindAllString(ins, -1)), want)
			}
		}
	}
}

// TestTransaction is sysbench's oltp_read_only on one table: BEGIN, ten
// point selects, the four ranges of 100 rows, COMMIT, with the statements
// prepared once per table in the engine's placeholders.
func TestTransaction(t *testing.T) {
	rec := &sqlrec.Recorder{}
	w := &Workload{DB: sqldb.DB{Connector: rec, Dialect: "postgres"}, Tables: 2, TableSize: 10000}
	wk, err := w.NewWorker(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer wk.Close()
	prepared := rec.Of("prepare")
	if len(prepared) != 10 {
		t.Errorf("%d statements prepared, want 5 per table:\n%s", len(prepared), strings.Join(prepared, "\n"))
	}
	want := map[string]bool{
		"SELECT c FROM sbtest2 WHERE id=$1":                                    true,
		"SELECT c FROM sbtest2 WHERE id BETWEEN $1 AND $2":                     true,
		"SELECT SUM(k) FROM sbtest2 WHERE id BETWEEN $1 AND $2":                true,
		"SELECT c FROM sbtest2 WHERE id BETWEEN $1 AND $2 ORDER BY c":          true,
		"SELECT DISTINCT c FROM sbtest2 WHERE id BETWEEN $1 AND $2 ORDER BY c": true,
	}
	for _, p := range prepared {
		delete(want, p)
	}
	if len(want) != 0 {
		t.Errorf("not prepared: %v\nprepared:\n%s", want, strings.Join(prepared, "\n"))
	}
	before := len(rec.Calls())
	out, err := wk.Do(context.Background())
	if err != nil || out.Queries != 16 || out.Op != "oltp_read_only" {
		t.Fatalf("Do: %+v, %v", out, err)
	}
	calls := rec.Calls()[before:]
	if len(calls) != 16 || calls[0].SQL != "BEGIN" || calls[15].SQL != "COMMIT" {
		t.Fatalf("%d calls: %+v", len(calls), calls)
	}
	table := regexp.MustCompile(`sbtest\d`).FindString(calls[1].SQL)
	for i, c := range calls[1:15] {
		if !strings.Contains(c.SQL, table) {
			t.Errorf("call %d on another table than the transaction's %s: %s", i+1, table, c.SQL)
		}
		switch {
		case i < 10:
			if !strings.HasSuffix(c.SQL, "WHERE id=$1") || len(c.Args) != 1 || c.Args[0].(int64) < 1 || c.Args[0].(int64) > 10000 {
				t.Errorf("point select %d: %+v", i, c)
			}
		default:
			lo, hi := c.Args[0].(int64), c.Args[1].(int64)
			if hi-lo != 99 || lo < 1 || hi > 10000 {
				t.Errorf("range %d: %+v", i, c)
			}
		}
	}
}
