package oltp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"pidb/bench/sqldb"
	"pidb/bench/wire/pgwire"
	"pidb/dbms"
	"pidb/internal/sqlrec"
	"pidb/internal/wiretest"
)

// TestPrepareLoadsWhatIsMissing: sbtest1 is empty and is loaded as
// sysbench does (drop, create, rows in batches of 1,000, then the index on
// k); sbtest2 already holds its rows and is left alone.
func TestPrepareLoadsWhatIsMissing(t *testing.T) {
	for _, dialect := range []string{"postgres", "mysql"} {
		rec := &sqlrec.Recorder{Counts: map[string]int64{"sbtest2": 2500}}
		w := &Workload{DB: sqldb.DB{Connector: rec, Dialect: dbms.Family(dialect)}, Tables: 2, TableSize: 2500}
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

// fakeClient records each request and answers it at once.
type fakeClient struct {
	calls []string // "BEGIN", or "t k lo hi"
	fail  int      // the call (from 1) that gets a server error
}

func (f *fakeClient) Send() error { return nil }
func (f *fakeClient) Receive() (bool, error) {
	if len(f.calls) == f.fail {
		return true, errors.New("ERROR: canceling statement due to user request")
	}
	return true, nil
}
func (f *fakeClient) Broken() bool     { return false }
func (f *fakeClient) Fd() int          { return -1 }
func (f *fakeClient) Interrupt()       {}
func (f *fakeClient) Close() error     { return nil }
func (f *fakeClient) Query(sql string) { f.calls = append(f.calls, sql) }
func (f *fakeClient) Execute(t, k int, lo, hi int64) {
	f.calls = append(f.calls, fmt.Sprintf("%d %d %d %d", t, k, lo, hi))
}

// TestTransaction is sysbench's oltp_read_only on one table: BEGIN, ten
// point selects, the four ranges of 100 rows in sysbench's order, COMMIT,
// each on the transaction's table, the ids inside it; a statement the
// server refuses rolls the transaction back and ends it with the error.
func TestTransaction(t *testing.T) {
	f := &fakeClient{}
	wk := &worker{c: f, rnd: rand.New(rand.NewPCG(1, 2)), size: 10000, n: 2}
	tables := map[int]bool{}
	for range 20 {
		f.calls = nil
		out, err := wk.Do(context.Background())
		if err != nil || out.Queries != 16 || out.Op != "oltp_read_only" {
			t.Fatalf("Do: %+v, %v", out, err)
		}
		if len(f.calls) != 16 || f.calls[0] != "BEGIN" || f.calls[15] != "COMMIT" {
			t.Fatalf("%d calls: %q", len(f.calls), f.calls)
		}
		var table int
		for i, c := range f.calls[1:15] {
			var tb, k int
			var lo, hi int64
			if _, err := fmt.Sscanf(c, "%d %d %d %d", &tb, &k, &lo, &hi); err != nil {
				t.Fatalf("call %d %q", i+1, c)
			}
			if i == 0 {
				table = tb
			}
			switch {
			case tb != table:
				t.Errorf("call %d on table %d, the transaction's is %d", i+1, tb, table)
			case i < 10 && (k != kPoint || lo < 1 || lo > 10000):
				t.Errorf("point select %d: %q", i, c)
			case i >= 10 && (k != kSimple+i-10 || hi-lo != 99 || lo < 1 || hi > 10000):
				t.Errorf("range %d: %q", i, c)
			}
		}
		tables[table] = true
	}
	if len(tables) != 2 { // 20 transactions on one of two tables: odds 2^-19
		t.Errorf("tables used: %v, want both", tables)
	}
	f.calls, f.fail = nil, 4
	if _, err := wk.Do(context.Background()); err == nil || f.calls[len(f.calls)-1] != "ROLLBACK" || len(f.calls) != 5 {
		t.Errorf("a refused statement: %v after %q, want its error after a ROLLBACK", err, f.calls)
	}
}

// TestPGStatements: on PostgreSQL each table's five statements are
// prepared under names of their own, in PostgreSQL's placeholders, and a
// range is executed with both its ends as text.
func TestPGStatements(t *testing.T) {
	if got := pgName(1, kSum); got != "sbtest2_2" {
		t.Errorf("name %q", got)
	}
	tr := wiretest.NewTrickle(nil, 64)
	c := &pgClient{Conn: pgwire.New(tr, 'I')}
	c.Execute(1, kSum, 5, 104)
	if err := c.Send(); err != nil {
		t.Fatal(err)
	}
	want := wiretest.PGMessage('B', "\x00sbtest2_2\x00\x00\x00\x00\x02\x00\x00\x00\x015\x00\x00\x00\x03104\x00\x00")
	if got := tr.Sent.Bytes(); !bytes.HasPrefix(got, want) {
		t.Errorf("sent %q, want it to begin %q", got, want)
	}
}
