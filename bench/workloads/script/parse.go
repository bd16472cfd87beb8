// Package script reads a user's SQL script as pidb bench's sql workload
// runs it: pgbench's script format, the subset a Pi's application needs.
// A script is one transaction, run again and again by every client: SQL
// statements, each ended by a semicolon (and may span lines), with
// :name standing for a variable's value, and \set lines that give the
// variables their values before the statements that use them:
//
//	\set aid random(1, 100000 * :scale)
//	\set delta random(-5000, 5000)
//	UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
//	SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
//
// An expression is whole numbers, :variables (:scale and :client_id are
// given), + - * / % and parentheses, and random(lo, hi), both ends in it.
// Other meta-commands (\sleep, \if, \gset...) and other functions are
// refused, each at its line, before any host is touched.
package script

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"unicode/utf8"

	"pidb/internal/filecap"
)

// Script is a parsed script: its steps in order.
type Script struct {
	Name   string // the file, for errors
	Steps  []Step
	Digest string // the SHA-256 of its text, in hex: saved runs of other text are other work
}

// Step is one line's \set, or one SQL statement.
type Step struct {
	Line int    // where it begins
	Set  string // the variable a \set gives a value; "" for a statement
	Expr Expr   // a \set's expression
	// SQL is a statement's text, without its semicolon, with each :name
	// in it; Vars are those names, in order
	SQL  string
	Vars []string
}

// Given are the variables every script has: the scale (--scale) and the
// client's number, from 1.
func Given() []string { return []string{"scale", "client_id"} }

var setLine = regexp.MustCompile(`^\\set\s+([A-Za-z_][A-Za-z0-9_]*)\s+(.+)$`)

// metaEnd is a line that ends with (or is) pgbench's \gset or \aset.
var metaEnd = regexp.MustCompile(`(?:^|\s)(\\[ag]set)(?:\s+[A-Za-z_][A-Za-z0-9_]*)?\s*$`)

// split cuts a statement at its variables: the text around them
// (one more piece than there are variables) and each :name, in order,
// where PostgreSQL's casts (::int) are not one, as pgbench reads them.
func split(sql string) (lits, vars []string) {
	start := 0
	for i := 0; i < len(sql); i++ {
		if sql[i] != ':' {
			continue
		}
		if i+1 < len(sql) && sql[i+1] == ':' {
			i++ // a cast
			continue
		}
		j := i + 1
		for j < len(sql) && (sql[j] == '_' || sql[j] >= 'a' && sql[j] <= 'z' || sql[j] >= 'A' && sql[j] <= 'Z' || j > i+1 && sql[j] >= '0' && sql[j] <= '9') {
			j++
		}
		if j > i+1 {
			lits = append(lits, sql[start:i])
			vars = append(vars, sql[i+1:j])
			start = j
		}
		i = j - 1
	}
	return append(lits, sql[start:]), vars
}

// Parse reads a script; name is its file, for the errors, which each name
// the line (FILE:LINE).
func Parse(name, src string) (*Script, error) {
	sum := sha256.Sum256([]byte(src))
	s := &Script{Name: name, Digest: hex.EncodeToString(sum[:])}
	known := map[string]bool{}
	for _, g := range Given() {
		known[g] = true
	}
	errf := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	// text, in UTF-8: a byte-order mark at its start (an editor's on
	// Windows) is dropped, a NUL is a binary file, and bytes that are no
	// UTF-8 are refused at their line, before any statement is read
	src = strings.TrimPrefix(src, "\ufeff")
	for i, raw := range strings.Split(src, "\n") {
		if strings.IndexByte(raw, 0) >= 0 {
			return nil, errf(i+1, "a NUL byte: this is a binary file, not a script of SQL text")
		}
		if !utf8.ValidString(raw) {
			return nil, errf(i+1, "bytes that are not UTF-8: save the script as UTF-8 text")
		}
	}
	var stmt strings.Builder
	stmtLine := 0
	for i, raw := range strings.Split(src, "\n") {
		line := i + 1
		text := strings.TrimSpace(raw)
		if stmt.Len() == 0 && (text == "" || strings.HasPrefix(text, "--")) {
			continue
		}
		// pgbench's meta-commands that end a statement instead of its
		// semicolon, or that follow one
		if m := metaEnd.FindStringSubmatch(text); m != nil {
			return nil, errf(line, `%s: pidb does not run \gset or \aset (a query's result into variables); end the statement with a semicolon, and give variables their values with \set`, m[1])
		}
		if stmt.Len() == 0 && strings.HasPrefix(text, `\`) {
			m := setLine.FindStringSubmatch(text)
			if m == nil {
				word := strings.Fields(text)[0]
				if word == `\set` {
					return nil, errf(line, `\set wants a name and an expression, like \set aid random(1, 100000)`)
				}
				return nil, errf(line, `%s: pidb runs \set and SQL; not %s`, word, word)
			}
			e, err := parseExpr(m[2], known)
			if err != nil {
				return nil, errf(line, `\set %s: %v`, m[1], err)
			}
			known[m[1]] = true
			s.Steps = append(s.Steps, Step{Line: line, Set: m[1], Expr: e})
			continue
		}
		if stmt.Len() == 0 {
			stmtLine = line
		} else {
			stmt.WriteString("\n")
		}
		stmt.WriteString(raw)
		if strings.HasSuffix(text, ";") {
			sql := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stmt.String()), ";"))
			stmt.Reset()
			_, vars := split(sql)
			for _, v := range vars {
				if !known[v] {
					return nil, errf(stmtLine, "the statement uses :%s, which no \\set before it gives a value (and pidb gives only :scale and :client_id)", v)
				}
			}
			s.Steps = append(s.Steps, Step{Line: stmtLine, SQL: sql, Vars: vars})
		}
	}
	if stmt.Len() > 0 {
		return nil, errf(stmtLine, "the statement has no semicolon at its end")
	}
	statements := 0
	for _, st := range s.Steps {
		if st.Set == "" {
			statements++
		}
	}
	if statements == 0 {
		return nil, fmt.Errorf("%s: no SQL statement: a script is the statements of one transaction, each ended by a semicolon", name)
	}
	return s, nil
}

// MaxSize is the largest script pidb reads: the statements of one
// transaction, and a schema to make, take a few KiB.
const MaxSize = 1 << 20

// Read reads and parses the script in the file at path (its errors name
// path, as given).
func Read(path string) (*Script, error) {
	src, err := filecap.Read(path, MaxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist", path)
	}
	if err != nil {
		return nil, err
	}
	return Parse(path, string(src))
}
