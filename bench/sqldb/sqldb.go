// Package sqldb is where every workload connects, on PostgreSQL, MySQL
// and MariaDB: the server, the account and TLS (the wire clients' configs
// come from here), a database/sql handle for loading data and checking it,
// the engines' differences in SQL (placeholders, quoting, table options),
// and naming errors for the counts.
package sqldb

import (
	"bytes"
	"context"
	"crypto/tls"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"pidb/bench/wire/mywire"
	"pidb/bench/wire/pgwire"
	"pidb/dbms"
)

// DB is where a workload connects (every workload takes one): pidb's
// database on one server, with the engine's differences in SQL and its error
// classification. Exactly one of MySQL, Postgres and Connector is set.
type DB struct {
	MySQL    *mysql.Config   // MySQL or MariaDB
	Postgres *pgx.ConnConfig // PostgreSQL
	// Connector, when set instead, is what Open opens (a recorded
	// connection, in tests), speaking Dialect's SQL: postgres or mysql.
	Connector driver.Connector
	Dialect   dbms.Family
}

// Protocol is how a workload sends its statements.
type Protocol string

// The protocols.
const (
	// Simple sends each statement's text with its values in it:
	// pgbench's default, and load.py's through MySQLdb.
	Simple Protocol = "simple"
	// Prepared prepares each statement once and sends only its values
	// (pgbench -M prepared; sysbench always).
	Prepared Protocol = "prepared"
)

// Target is a server and an account to reach it with.
type Target struct {
	Engine   dbms.Family
	Host     string // an address, or 127.0.0.1 for an SSH forward
	Port     int
	User     string
	Password string
	Database string
	Timeout  time.Duration // to connect; default 10s
	// TLS makes every login use TLS (none falls back to the clear). The
	// server's certificate is not checked against a CA (a Pi's is
	// self-signed, or Debian's snakeoil); when ServerCert is given (DER),
	// it must be that one, else the login is refused.
	TLS        bool
	ServerCert []byte
}

// New makes the DB for a target.
func New(t Target) (DB, error) {
	if t.Timeout <= 0 {
		t.Timeout = 10 * time.Second
	}
	addr := net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
	if t.Engine == dbms.PostgresFamily {
		cfg, err := pgx.ParseConfig(map[bool]string{true: "sslmode=require", false: "sslmode=disable"}[t.TLS])
		if err != nil {
			return DB{}, err
		}
		// SCRAM-SHA-256 only: without TLS, pgx would answer a request for
		// the password in clear text with it (the workloads connect with
		// this config through pgconn too)
		pgwire.RequireSCRAM(&cfg.Config)
		cfg.Host, cfg.Port, cfg.User, cfg.Password, cfg.Database = t.Host, uint16(t.Port), t.User, t.Password, t.Database
		cfg.ConnectTimeout = t.Timeout
		if t.TLS {
			cfg.TLSConfig, cfg.Fallbacks = TLSConfig(t.ServerCert), nil
		}
		return DB{Postgres: cfg}, nil
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName, cfg.Timeout = t.User, t.Password, "tcp", addr, t.Database, t.Timeout
	if t.TLS {
		cfg.TLS = TLSConfig(t.ServerCert)
	}
	return DB{MySQL: cfg}, nil
}

// ErrNotTheServersCert is a login refused because the server presented
// another certificate than the one on the host.
var ErrNotTheServersCert = errors.New("the server presented another certificate than the one its host has (read over SSH): something between this machine and the host answers in its place")

// TLSConfig is TLS 1.2 or later with no CA: with pin (a DER certificate),
// the server's certificate must be pin; without, any (sslmode=require).
func TLSConfig(pin []byte) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // no CA signs a Pi's certificate: VerifyConnection checks the pin instead
		VerifyConnection: func(cs tls.ConnectionState) error {
			if pin == nil {
				return nil
			}
			if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, pin) {
				return ErrNotTheServersCert
			}
			return nil
		},
	}
}

// Engine is the server's family.
func (d DB) Engine() dbms.Family {
	if d.Connector != nil {
		return d.Dialect
	}
	if d.Postgres != nil {
		return dbms.PostgresFamily
	}
	return dbms.MySQLFamily
}

// Open returns a database handle. Its logins give the password away to
// nobody, whatever the config says: on PostgreSQL, SCRAM-SHA-256 only
// (pgwire.RequireSCRAM; a *pgwire.AuthError otherwise); on MySQL and
// MariaDB, as mywire.Connector logs in.
func (d DB) Open() (*sql.DB, error) {
	if d.Connector != nil {
		return sql.OpenDB(d.Connector), nil
	}
	if d.Postgres != nil {
		cfg := d.Postgres.Copy()
		pgwire.RequireSCRAM(&cfg.Config)
		return sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)}), nil
	}
	if d.MySQL == nil {
		return nil, errors.New("sqldb: no database configured")
	}
	c, err := mywire.Connector(d.MySQL)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// pgConnector is pgx's connector, whose refused logins are
// *pgwire.AuthError.
type pgConnector struct{ driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, pgwire.AuthErrorOf(err)
	}
	return conn, nil
}

// Rebind turns the ? placeholders of q into the engine's own ($1, $2... on
// PostgreSQL). The workloads' statements have no ? inside strings.
func (d DB) Rebind(q string) string {
	if d.Engine() != dbms.PostgresFamily {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Quote quotes an identifier (`user` on MySQL, "user" on PostgreSQL).
func (d DB) Quote(name string) string {
	if d.Engine() == dbms.PostgresFamily {
		return `"` + name + `"`
	}
	return "`" + name + "`"
}

// TableOptions is what goes after a CREATE TABLE's columns.
func (d DB) TableOptions() string {
	if d.Engine() == dbms.PostgresFamily {
		return ""
	}
	return " ENGINE=InnoDB"
}

// ErrorKind names an error for the run's counts; reconnect says the
// client's connection is gone (see the function ErrorKind).
func (d DB) ErrorKind(err error) (kind string, reconnect bool) { return ErrorKind(err) }

// MissingDatabase reports whether err says the database is not there
// (after `pidb bench cleanup`, say).
func MissingDatabase(err error) bool {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	return (errors.As(err, &pe) && pe.Code == "3D000") || (errors.As(err, &me) && me.Number == 1049)
}

// BadPassword reports whether the server refused the login's password
// (PostgreSQL 28P01, MySQL and MariaDB 1045).
func BadPassword(err error) bool {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	return (errors.As(err, &pe) && pe.Code == "28P01") || (errors.As(err, &me) && me.Number == 1045)
}

// Settings reads live server settings for a run's record: on PostgreSQL
// those taken from its configuration files, on MySQL and MariaDB the
// variables named (none: nothing is read).
func (d DB) Settings(ctx context.Context, mysqlNames []string) ([][2]string, error) {
	q := "SELECT name, current_setting(name) FROM pg_settings WHERE source = 'configuration file' ORDER BY name"
	if d.Engine() != dbms.PostgresFamily {
		if len(mysqlNames) == 0 {
			return nil, nil
		}
		q = "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('" + strings.Join(mysqlNames, "','") + "')"
	}
	db, err := d.Open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var kv [2]string
		if err := rows.Scan(&kv[0], &kv[1]); err != nil {
			return nil, err
		}
		out = append(out, kv)
	}
	return out, rows.Err()
}

// ErrorKind names a server error by its number ("mysql 1213") or SQLSTATE
// ("sqlstate 40001"); a PostgreSQL FATAL error or any other error leaves
// the connection in doubt, so the client connects again.
func ErrorKind(err error) (string, bool) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("mysql %d", me.Number), false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return "sqlstate " + pe.Code, pe.Severity == "FATAL"
	}
	return "connection", true
}
