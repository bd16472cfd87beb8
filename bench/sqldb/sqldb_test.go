package sqldb

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestErrorKind(t *testing.T) {
	for _, tc := range []struct {
		err       error
		kind      string
		reconnect bool
	}{
		{fmt.Errorf("query: %w", &mysql.MySQLError{Number: 1213, Message: "Deadlock"}), "mysql 1213", false},
		{&pgconn.PgError{Severity: "ERROR", Code: "40001"}, "sqlstate 40001", false},
		{&pgconn.PgError{Severity: "FATAL", Code: "57P01"}, "sqlstate 57P01", true},
		{errors.New("read tcp: connection reset by peer"), "connection", true},
	} {
		if k, re := ErrorKind(tc.err); k != tc.kind || re != tc.reconnect {
			t.Errorf("%v: %q %v, want %q %v", tc.err, k, re, tc.kind, tc.reconnect)
		}
	}
}

func TestDialects(t *testing.T) {
	pg, my := DB{Postgres: &pgx.ConnConfig{}}, DB{MySQL: mysql.NewConfig()}
	q := "SELECT c FROM t WHERE id BETWEEN ? AND ?"
	if got := pg.Rebind(q); got != "SELECT c FROM t WHERE id BETWEEN $1 AND $2" {
		t.Errorf("postgres: %q", got)
	}
	if got := my.Rebind(q); got != q {
		t.Errorf("mysql: %q", got)
	}
	if pg.Quote("user") != `"user"` || my.Quote("user") != "`user`" || pg.Engine() != "postgres" || my.Engine() != "mysql" {
		t.Errorf("quote or engine")
	}
}

func TestBadPassword(t *testing.T) {
	for err, want := range map[error]bool{
		fmt.Errorf("connect: %w", &pgconn.PgError{Code: "28P01", Message: "password authentication failed for user \"pidb\""}): true,
		fmt.Errorf("connect: %w", &mysql.MySQLError{Number: 1045, Message: "Access denied for user 'pidb'@'10.213.41.1'"}):     true,
		&pgconn.PgError{Code: "3D000"}:               false,
		errors.New("password authentication failed"): false, // only the server's own code counts
	} {
		if got := BadPassword(err); got != want {
			t.Errorf("BadPassword(%v) = %v, want %v", err, got, want)
		}
	}
}
