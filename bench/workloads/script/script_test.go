package script

import (
	"errors"
	"strings"
	"testing"
)

// TestParse: pgbench's built-in TPC-B-like script, as its users write
// their own: \set lines and statements over several lines, with the
// variables each statement uses in order.
func TestParse(t *testing.T) {
	s, err := Parse("tpcb.sql", `-- pgbench's tpcb-like
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts
   SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
END;
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Steps) != 7 {
		t.Fatalf("%d steps: %+v", len(s.Steps), s.Steps)
	}
	up := s.Steps[4]
	if up.Line != 6 || up.SQL != "UPDATE pgbench_accounts\n   SET abalance = abalance + :delta WHERE aid = :aid" || strings.Join(up.Vars, ",") != "delta,aid" {
		t.Errorf("the UPDATE: %+v", up)
	}
	if s.Steps[0].Set != "aid" || s.Steps[0].Line != 2 || s.Steps[3].SQL != "BEGIN" {
		t.Errorf("steps: %+v", s.Steps)
	}
	// PostgreSQL's casts are not variables; a variable ends at its name
	c, err := Parse("casts.sql", "SELECT :scale::int, '1'::text, :client_id+1;\n")
	if err != nil || strings.Join(c.Steps[0].Vars, ",") != "scale,client_id" {
		t.Errorf("casts: %+v, %v", c, err)
	}
}

// TestExpressions: the values \set gives, with random's ends in its range.
func TestExpressions(t *testing.T) {
	known := map[string]bool{"scale": true, "n": true}
	env := Env{Vars: map[string]int64{"scale": 10, "n": 7}, Random: func(lo, hi int64) int64 { return hi }} // the top end
	for src, want := range map[string]int64{
		"42":                         42,
		"100000 * :scale":            1000000,
		"random(1, 100000 * :scale)": 1000000,
		"-5000 + 2 * (3 + :n) % 4":   -5000 + 2*(3+7)%4,
		"(:n - 1) / 2":               3,
		"random(-5, -1)":             -1,
	} {
		e, err := parseExpr(src, known)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if got, err := e.Eval(env); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", src, got, err, want)
		}
	}
	e, _ := parseExpr(":n / (:scale - 10)", known)
	if _, err := e.Eval(env); err == nil || err.Error() != "division by zero" {
		t.Errorf("a division by zero: %v", err)
	}
}

// TestRefused: each mistake at its line, before anything runs.
func TestRefused(t *testing.T) {
	for src, want := range map[string]string{
		"SELECT 1":                              "my.sql:1: the statement has no semicolon at its end",
		"\\sleep 10 ms\nSELECT 1;":              `my.sql:1: \sleep: pidb runs \set and SQL; not \sleep`,
		"\\set aid\nSELECT 1;":                  `my.sql:1: \set wants a name and an expression`,
		"\\set aid random(1)\nSELECT 1;":        `my.sql:1: \set aid: random wants two values: random(lo, hi)`,
		"\\set aid exp(2)\nSELECT 1;":           `my.sql:1: \set aid: exp(): pidb's expressions have random() and + - * / %, not exp`,
		"\\set aid :bid + 1\nSELECT 1;":         `my.sql:1: \set aid: :bid has no value here`,
		"\n\nSELECT * FROM t\n WHERE id = :id;": "my.sql:3: the statement uses :id, which no \\set before it gives a value",
		"\\set a (1 + 2\nSELECT 1;":             `my.sql:1: \set a: a ( without its )`,
		"\\set a 1 2\nSELECT 1;":                `my.sql:1: \set a: "2" after the expression`,
		"-- nothing\n\\set a 1\n":               "my.sql: no SQL statement",
		// pgbench's \gset ends a statement instead of its semicolon (it
		// read as "no semicolon"), alone on its line or after the query
		"\\set a 1\nSELECT x FROM t\n\\gset\n": `my.sql:3: \gset: pidb does not run \gset or \aset`,
		"SELECT x FROM t \\gset p_\n":          `my.sql:1: \gset: pidb does not run \gset or \aset`,
		"SELECT 1 \\aset\n":                    `my.sql:1: \aset: pidb does not run`,
		"\\set a random(1, 10\nSELECT 1;":      `my.sql:1: \set a: random( without its ): random(lo, hi)`,
		// what fails at every run, whatever the variables, fails here
		"\\set x 10 / 0\nSELECT 1;":               `my.sql:1: \set x: division by zero`,
		"\\set x :scale % (2 - 2)\nSELECT 1;":     `my.sql:1: \set x: division by zero`,
		"\\set x random(10, 1)\nSELECT 1;":        `my.sql:1: \set x: random(10, 1): the upper end is below the lower`,
		"\\set x random(2 * 5, 3 - 2)\nSELECT 1;": `my.sql:1: \set x: random(10, 1): the upper end is below the lower`,
		// text, in UTF-8
		"SELECT 1;\nSELECT '\x00';\n":        "my.sql:2: a NUL byte: this is a binary file",
		"SELECT 1;\n-- caf\xe9\nSELECT 2;\n": "my.sql:2: bytes that are not UTF-8: save the script as UTF-8 text",
		// 8 MB of nesting crashed the parser's stack; each shape is
		// refused at its 65th level
		"\\set x " + strings.Repeat("-", 8<<20) + "1\nSELECT 1;":         `my.sql:1: \set x: nested more than 64 deep`,
		"\\set x " + strings.Repeat("(", 100000) + "1\nSELECT 1;":        `my.sql:1: \set x: nested more than 64 deep`,
		"\\set x " + strings.Repeat("random(1, ", 1000) + "1\nSELECT 1;": `my.sql:1: \set x: nested more than 64 deep`,
	} {
		if _, err := Parse("my.sql", src); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%.80q: %.200v\nwant it to begin %q", src, err, want)
		}
	}
	if _, err := Parse("my.sql", "\\set x "+strings.Repeat("-", 63)+"1\nSELECT 1;"); err != nil {
		t.Errorf("64 levels: %v", err)
	}
	// a byte-order mark at the start (an editor's on Windows) is no
	// statement's text; variables that may be zero, or may be the wrong
	// way round, are the run's to find
	for _, src := range []string{"\ufeffSELECT 1;\n", "\\set n random(0, 1)\n\\set x 10 / :n\n\\set y random(:n, 0)\nSELECT :x, :y;\n"} {
		s, err := Parse("my.sql", src)
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if last := s.Steps[len(s.Steps)-1]; strings.HasPrefix(last.SQL, "\ufeff") {
			t.Errorf("%q: the mark is in the statement %q", src, last.SQL)
		}
	}
}

// TestStatementsAsSent: each statement as the client sends it, in the
// simple protocol's text with the values the \set lines gave (a
// variable used twice, a cast left alone), and with each engine's
// placeholders; a \set between statements takes effect where it is.
func TestStatementsAsSent(t *testing.T) {
	s, err := Parse("app.sql", `\set id random(1, 10 * :scale)
\set two 2 * :id
SELECT name FROM item WHERE id = :id AND id <> :two AND '1'::int = 1;
\set id :id + 100
UPDATE item SET seen = :client_id WHERE id = :id;
`)
	if err != nil {
		t.Fatal(err)
	}
	p := compile(s)
	v := p.newVars(3, 7, nil)
	v.env.Random = func(lo, hi int64) int64 { return hi } // the top end: 30
	k, err := v.run(0)
	if err != nil || k != 2 {
		t.Fatalf("the first statement at step %d: %v", k, err)
	}
	if got := string(v.text(nil, k)); got != "SELECT name FROM item WHERE id = 30 AND id <> 60 AND '1'::int = 1" {
		t.Errorf("simple: %q", got)
	}
	if got := p.placeholders(k, true); got != "SELECT name FROM item WHERE id = $1 AND id <> $2 AND '1'::int = 1" {
		t.Errorf("PostgreSQL's placeholders: %q", got)
	}
	if got := p.placeholders(k, false); got != "SELECT name FROM item WHERE id = ? AND id <> ? AND '1'::int = 1" {
		t.Errorf("MySQL's placeholders: %q", got)
	}
	if k, err = v.run(k + 1); err != nil || k != 4 {
		t.Fatalf("the second statement at step %d: %v", k, err)
	}
	if got := string(v.text(nil, k)); got != "UPDATE item SET seen = 7 WHERE id = 130" {
		t.Errorf("after the second \\set: %q", got)
	}
	if k, err = v.run(k + 1); err != nil || k != len(p.steps) {
		t.Errorf("the end at step %d: %v", k, err)
	}
	if got := p.statements(); len(got) != 2 || got[0] != 2 || got[1] != 4 {
		t.Errorf("statements at steps %v", got)
	}
}

// TestEvalErrorAtItsLine: a \set that cannot be worked out while the
// script runs is the run's error at its line, counted by that line.
func TestEvalErrorAtItsLine(t *testing.T) {
	s, err := Parse("div.sql", "SELECT 1;\n\\set n 10 / (:scale - 1)\nSELECT :n;\n")
	if err != nil {
		t.Fatal(err)
	}
	v := compile(s).newVars(1, 1, nil)
	_, err = v.run(1)
	var ee *EvalError
	if !errors.As(err, &ee) || err.Error() != "div.sql:2: division by zero" {
		t.Fatalf("a division by zero: %v", err)
	}
	if kind, reconnect := (&Workload{}).ErrorKind(err); kind != `\set at line 2` || reconnect {
		t.Errorf("counted as %q, reconnect %v", kind, reconnect)
	}
}

// A script file past MaxSize is refused without being read whole:
// script = "/dev/zero" in an inventory took the controller's memory.
func TestReadCapped(t *testing.T) {
	if _, err := Read("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero is larger than 1 MiB") {
		t.Errorf("/dev/zero: %v", err)
	}
}
