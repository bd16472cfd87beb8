package pgwire

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

const password = "s3cret-that-stays-home"

// fakeServer accepts one connection on loopback and answers it with serve,
// whose result comes on the channel once it is done; cfg logs in to it
// without TLS, as pgx does by default (no require_auth).
func fakeServer(t *testing.T, serve func(net.Conn) []byte) (cfg *pgconn.Config, addr string, result <-chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan []byte, 1)
	go func() {
		defer ln.Close()
		c, err := ln.Accept()
		if err != nil {
			res <- nil
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		res <- serve(c)
	}()
	t.Cleanup(func() { ln.Close() })
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	cfg, err = pgconn.ParseConfig(fmt.Sprintf("host=%s port=%s user=pidb database=pidb password=%s sslmode=disable connect_timeout=10", host, port, password))
	if err != nil {
		t.Fatal(err)
	}
	return cfg, ln.Addr().String(), res
}

// asking is a server that answers the startup message with ask and keeps
// what the client sends next, until it hangs up (or for a second).
func asking(ask pgproto3.BackendMessage) func(net.Conn) []byte {
	return func(c net.Conn) []byte {
		be := pgproto3.NewBackend(c, c)
		if _, err := be.ReceiveStartupMessage(); err != nil {
			return []byte("no startup message: " + err.Error())
		}
		be.Send(ask)
		if err := be.Flush(); err != nil {
			return nil
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		got, _ := io.ReadAll(c)
		return got
	}
}

// TestConnectRefusesPasswordInTheClear: a server without TLS (or whoever
// answers in its place) that asks for the password in clear text, or
// hashed with MD5, or lets the login in without any, gets nothing at all
// after the startup message, and the error says what it asked and where.
// pgx's default answers the first with the password itself.
func TestConnectRefusesPasswordInTheClear(t *testing.T) {
	for _, c := range []struct {
		ask          pgproto3.BackendMessage
		method, says string
	}{
		{&pgproto3.AuthenticationCleartextPassword{}, "password", "asked for the password in clear text"},
		{&pgproto3.AuthenticationMD5Password{Salt: [4]byte{1, 2, 3, 4}}, "md5", "asked for the password hashed with MD5"},
		{&pgproto3.AuthenticationOk{}, "none", "let pidb in without asking for the password"},
	} {
		t.Run(c.method, func(t *testing.T) {
			cfg, addr, got := fakeServer(t, asking(c.ask))
			conn, err := Connect(context.Background(), cfg, nil)
			if err == nil {
				conn.conn.Close()
			}
			sent := <-got
			if bytes.Contains(sent, []byte(password)) {
				t.Errorf("the password reached the server: %q", sent)
			}
			if len(sent) > 0 {
				t.Errorf("the client answered the server's %T with %q: want nothing", c.ask, sent)
			}
			var ae *AuthError
			if !errors.As(err, &ae) || ae.Method != c.method || ae.Addr != addr {
				t.Fatalf("error %v (%T): want an *AuthError, method %s, at %s", err, err, c.method, addr)
			}
			for _, want := range []string{"the server at " + addr + " " + c.says, "pidb sends it only by SCRAM-SHA-256", "--via ssh"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q: want %q in it", err, want)
				}
			}
		})
	}
}

// TestConnectSCRAM: a server that asks for SCRAM-SHA-256, as pidb's do,
// gets a proof of the password (checked here as PostgreSQL checks it, from
// the verifier's keys), never the password, and the login goes through.
func TestConnectSCRAM(t *testing.T) {
	cfg, _, got := fakeServer(t, scramServer)
	conn, err := Connect(context.Background(), cfg, nil)
	if err != nil {
		t.Fatalf("SCRAM login: %v", err)
	}
	conn.conn.Close()
	if res := string(<-got); res != "proof checked" {
		t.Errorf("server: %s", res)
	}
}

// TestRequireSCRAMIsPgconns: RequireSCRAM is pgconn's own require_auth,
// which ParseConfig accepts as libpq spells it.
func TestRequireSCRAMIsPgconns(t *testing.T) {
	want, err := pgconn.ParseConfig("require_auth=scram-sha-256")
	if err != nil {
		t.Fatal(err)
	}
	var cfg pgconn.Config
	RequireSCRAM(&cfg)
	if cfg.RequireAuth != want.RequireAuth {
		t.Errorf("RequireAuth %q, want %q", cfg.RequireAuth, want.RequireAuth)
	}
	if err := AuthErrorOf(errors.New("authentication method requirement \"scram-sha-256\" failed: server requested password authentication")); err == nil || errors.As(err, new(*AuthError)) {
		t.Errorf("an error that is not pgconn's connect error became %v", err)
	}
}

// scramServer logs the client in by SCRAM-SHA-256 without channel binding
// (RFC 5802, as PostgreSQL does without TLS) and says whether its proof
// held.
func scramServer(c net.Conn) []byte {
	be := pgproto3.NewBackend(c, c)
	if _, err := be.ReceiveStartupMessage(); err != nil {
		return []byte("no startup message: " + err.Error())
	}
	be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	if err := be.Flush(); err != nil {
		return []byte(err.Error())
	}
	_ = be.SetAuthType(pgproto3.AuthTypeSASL)
	m, err := be.Receive()
	first, ok := m.(*pgproto3.SASLInitialResponse)
	if err != nil || !ok || first.AuthMechanism != "SCRAM-SHA-256" {
		return fmt.Appendf(nil, "client-first: %T %v", m, err)
	}
	bare, ok := strings.CutPrefix(string(first.Data), "n,,")
	if !ok || bytes.Contains(first.Data, []byte(password)) {
		return fmt.Appendf(nil, "client-first %q", first.Data)
	}
	_, clientNonce, _ := strings.Cut(bare, "r=")
	salt := []byte("pidb-test-salt!!")
	serverFirst := "r=" + clientNonce + "fake-server-nonce,s=" + base64.StdEncoding.EncodeToString(salt) + ",i=4096"
	be.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := be.Flush(); err != nil {
		return []byte(err.Error())
	}
	_ = be.SetAuthType(pgproto3.AuthTypeSASLContinue)
	m, err = be.Receive()
	final, ok := m.(*pgproto3.SASLResponse)
	if err != nil || !ok || bytes.Contains(final.Data, []byte(password)) {
		return fmt.Appendf(nil, "client-final: %T %v", m, err)
	}
	withoutProof, proof64, _ := strings.Cut(string(final.Data), ",p=")
	proof, err := base64.StdEncoding.DecodeString(proof64)
	if err != nil {
		return []byte(err.Error())
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	salted, _ := pbkdf2.Key(sha256.New, password, salt, 4096, 32)
	clientKey := mac(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	authMessage := bare + "," + serverFirst + "," + withoutProof
	sig := mac(storedKey[:], authMessage)
	if len(proof) != len(sig) {
		return []byte("proof of the wrong length")
	}
	for i := range proof {
		proof[i] ^= sig[i]
	}
	if sha256.Sum256(proof) != storedKey {
		return []byte("proof does not hold")
	}
	be.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(mac(mac(salted, "Server Key"), authMessage)))})
	be.Send(&pgproto3.AuthenticationOk{})
	be.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 2}})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := be.Flush(); err != nil {
		return []byte(err.Error())
	}
	_, _ = io.ReadAll(c) // until the client hangs up
	return []byte("proof checked")
}
