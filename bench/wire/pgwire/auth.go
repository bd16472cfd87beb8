package pgwire

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// requireAuth is libpq's require_auth, as pgconn reads it: SCRAM-SHA-256
// and nothing else, not even a login let in without authentication.
const requireAuth = "scram-sha-256"

// RequireSCRAM makes cfg log in by SCRAM-SHA-256 only (pgconn's
// RequireAuth, libpq's require_auth): a server, or whatever answers in its
// place, that asks for the password in clear text or hashed with MD5 (or
// by GSS or SSPI), or lets the login in without any, gets nothing, and the
// login fails with an *AuthError (AuthErrorOf). Left alone, pgx answers a
// request for the password in clear text with the password, to whoever
// asks first on a connection without TLS. SCRAM gives who answers nothing
// to log in with elsewhere. pidb's servers keep SCRAM verifiers only
// (password_encryption and pg_hba.conf's scram-sha-256), so they never ask
// for anything else.
func RequireSCRAM(cfg *pgconn.Config) { cfg.RequireAuth = requireAuth }

// AuthError is a login that pidb broke off before it sent anything: the
// server at Addr asked for another authentication than SCRAM-SHA-256.
type AuthError struct {
	Addr   string
	Method string // what it asked for, as libpq names it: password (clear text), md5, gss, sspi; none: it let the login in without any
	Err    error  // pgconn's
}

func (e *AuthError) Error() string {
	asked := map[string]string{
		"password": "asked for the password in clear text",
		"md5":      "asked for the password hashed with MD5",
		"none":     "let pidb in without asking for the password",
	}[e.Method]
	if asked == "" {
		asked = "asked for " + e.Method + " authentication"
	}
	return fmt.Sprintf("the server at %s %s; pidb sends it only by SCRAM-SHA-256, as pidb's servers ask for it, and sent nothing: "+
		"something between this machine and the host may be answering in its place (TLS, or --via ssh, makes sure it is the host), "+
		"or the server's pg_hba.conf was changed by hand (pidb provision writes it back): %v", e.Addr, asked, e.Err)
}

func (e *AuthError) Unwrap() error { return e.Err }

// AuthErrorOf is err, from a connection attempt, as an *AuthError when
// pgconn broke the login off for RequireSCRAM; any other error as it is.
// pgconn says so only in its text, which the tests pin: a pgx that words
// it otherwise still refuses, with its own words.
func AuthErrorOf(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) || ce.Config == nil {
		return err
	}
	_, reason, ok := strings.Cut(err.Error(), "authentication method requirement "+strconv.Quote(requireAuth)+" failed: ")
	if !ok {
		return err
	}
	method := "none"
	if m, ok := strings.CutPrefix(reason, "server requested "); ok {
		method, _, _ = strings.Cut(m, " ")
	}
	return &AuthError{Addr: net.JoinHostPort(ce.Config.Host, strconv.Itoa(int(ce.Config.Port))), Method: method, Err: err}
}
