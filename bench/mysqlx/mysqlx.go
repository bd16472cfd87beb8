// Package mysqlx holds what the MySQL-family workloads share: opening a
// database and a client connection from a driver config, reading a result
// through, and naming errors for the counts.
package mysqlx

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
)

// Open returns a database handle for cfg.
func Open(cfg *mysql.Config) (*sql.DB, error) {
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// ErrorKind names a server error by its number ("mysql 1213"); any other
// error leaves the connection in doubt, so the client connects again.
func ErrorKind(err error) (string, bool) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("mysql %d", me.Number), false
	}
	return "connection", true
}

// Connect opens a database handle for cfg and takes one connection from it:
// a client's own connection, on which its statements are prepared.
func Connect(ctx context.Context, cfg *mysql.Config) (*sql.DB, *sql.Conn, error) {
	db, err := Open(cfg)
	if err != nil {
		return nil, nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, conn, nil
}

// Drain reads every row of a query's result and closes it, returning the
// query's error, the rows' error, or the close's.
func Drain(rows *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}
