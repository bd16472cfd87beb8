// Package mysqlx holds what the MySQL-family workloads share: opening a
// database from a driver config, and naming errors for the counts.
package mysqlx

import (
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
