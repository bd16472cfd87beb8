package quiz

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTheWriteUpsSchema: each table's columns, their types and the keys
// are the write-up's own, as its schema.sql in ../shared/peers/quiz has
// them, on MySQL and MariaDB word for word; on PostgreSQL the same columns
// in the same order; and the columns the loader fills are those, in order.
func TestTheWriteUpsSchema(t *testing.T) {
	path := filepath.Join("..", "..", "..", "..", "shared", "peers", "quiz", "schema.sql")
	src, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the write-up's schema: %v", err)
		}
		t.Skipf("the write-up's schema is not here (%v): CI has it", err)
	}
	defs := parseTables(string(src))
	if len(defs) != 4 {
		t.Fatalf("%d tables in %s, want the write-up's four", len(defs), path)
	}
	for _, tb := range tables {
		want, ok := defs[tb.name]
		if !ok {
			t.Errorf("the write-up has no table %s", tb.name)
			continue
		}
		if got := split(tb.mysql); strings.Join(got, ",\n") != strings.Join(want, ",\n") {
			t.Errorf("%s on MySQL:\n%s\nthe write-up's:\n%s", tb.name, strings.Join(got, ",\n"), strings.Join(want, ",\n"))
		}
		var names, pgNames []string
		for _, d := range want {
			if !strings.HasPrefix(d, "primary key") {
				names = append(names, strings.Fields(d)[0])
			}
		}
		for _, d := range split(tb.pg) {
			if !strings.HasPrefix(d, "primary key") {
				pgNames = append(pgNames, strings.Fields(d)[0])
			}
		}
		if strings.Join(tb.columns, ",") != strings.Join(names, ",") || strings.Join(pgNames, ",") != strings.Join(names, ",") {
			t.Errorf("%s: columns loaded %v, on PostgreSQL %v; the write-up's %v", tb.name, tb.columns, pgNames, names)
		}
	}
}

var createTable = regexp.MustCompile(`(?is)CREATE TABLE\s+(\w+)\s*\((.*?)\)\s*;`)

// parseTables reads schema.sql's CREATE TABLEs: each table's column and key
// definitions, normalized.
func parseTables(sql string) map[string][]string {
	out := map[string][]string{}
	for _, m := range createTable.FindAllStringSubmatch(sql, -1) {
		out[m[1]] = split(m[2])
	}
	return out
}

// split cuts a CREATE TABLE's body into its definitions at the commas
// outside parentheses, each in lower case with single spaces.
func split(body string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range body + "," {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				if d := strings.Join(strings.Fields(strings.ToLower(body[start:min(i, len(body))])), " "); d != "" {
					out = append(out, d)
				}
				start = i + 1
			}
		}
	}
	return out
}
