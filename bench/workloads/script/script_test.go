package script

import (
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
	if up.Line != 6 || up.SQL != "UPDATE pgbench_accounts\n   SET abalance = abalance + :delta WHERE aid = :aid;" || strings.Join(up.Vars, ",") != "delta,aid" {
		t.Errorf("the UPDATE: %+v", up)
	}
	if s.Steps[0].Set != "aid" || s.Steps[0].Line != 2 || s.Steps[3].SQL != "BEGIN;" {
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
	} {
		if _, err := Parse("my.sql", src); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v\nwant it to begin %q", src, err, want)
		}
	}
}
