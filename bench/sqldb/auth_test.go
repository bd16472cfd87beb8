package sqldb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"pidb/bench/wire/pgwire"
)

// clearTextServer asks every login on loopback for the password in clear
// text; what the clients sent after their startup messages comes on the
// channel once the listener is closed.
func clearTextServer(t *testing.T) (host string, port int, sent func() string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan string, 1)
	go func() {
		var all strings.Builder
		defer func() { res <- all.String() }()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(time.Second))
			be := pgproto3.NewBackend(c, c)
			if _, err := be.ReceiveStartupMessage(); err == nil {
				be.Send(&pgproto3.AuthenticationCleartextPassword{})
				if be.Flush() == nil {
					got, _ := io.ReadAll(c)
					all.Write(got)
				}
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	a := ln.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port, func() string { ln.Close(); return <-res }
}

// TestOpenRefusesPasswordInTheClear: database/sql's logins (loading and
// checking data) without TLS never answer a request for the password in
// clear text, from New's config or from one made without require_auth,
// and say why with a *pgwire.AuthError. pgx alone sends the password.
func TestOpenRefusesPasswordInTheClear(t *testing.T) {
	const password = "s3cret-that-stays-home"
	for _, made := range []string{"New", "by hand"} {
		t.Run(made, func(t *testing.T) {
			host, port, sent := clearTextServer(t)
			db, err := New(Target{Engine: "postgres", Host: host, Port: port, User: "pidb", Password: password, Database: "pidb", Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if made == "by hand" {
				cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%d user=pidb password=%s dbname=pidb sslmode=disable", host, port, password))
				if err != nil {
					t.Fatal(err)
				}
				db = DB{Postgres: cfg}
			}
			sdb, err := db.Open()
			if err != nil {
				t.Fatal(err)
			}
			err = sdb.PingContext(context.Background())
			sdb.Close()
			if got := sent(); got != "" {
				t.Errorf("the server got %q after asking for the password in clear text", got)
			}
			var ae *pgwire.AuthError
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			if !errors.As(err, &ae) || ae.Method != "password" || !strings.Contains(err.Error(), "the server at "+addr+" asked for the password in clear text; pidb sends it only by SCRAM-SHA-256") {
				t.Errorf("error %v (%T): want a *pgwire.AuthError naming %s", err, err, addr)
			}
		})
	}
}

// TestNewRequiresSCRAM: New's PostgreSQL config, with TLS or without,
// asks pgconn for SCRAM-SHA-256 only.
func TestNewRequiresSCRAM(t *testing.T) {
	for _, tls := range []bool{false, true} {
		db, err := New(Target{Engine: "postgres", Host: "192.0.2.40", Port: 5432, TLS: tls})
		if err != nil || db.Postgres.RequireAuth != "scram-sha-256" {
			t.Errorf("TLS %v: require_auth %q, %v", tls, db.Postgres.RequireAuth, err)
		}
	}
}
