package mywire

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"pidb/internal/wiretest"
)

const password = "s3cret-that-stays-home"

// handshake is a server's first packet (protocol 10) offering plugin, with
// a 20-byte scramble.
func handshake(plugin string, scramble []byte) []byte {
	const caps = 1 | 4 | 8 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000 | 0x200000 // long password, long flag, with db, 4.1, transactions, secure conn, multi results, plugin auth (lenenc)
	p := append([]byte{10}, "8.0.39-fake\x00"...)
	p = binary.LittleEndian.AppendUint32(p, 7)
	p = append(p, scramble[:8]...)
	p = append(p, 0)
	p = binary.LittleEndian.AppendUint16(p, caps&0xffff)
	p = append(p, 255)
	p = binary.LittleEndian.AppendUint16(p, 2)
	p = binary.LittleEndian.AppendUint16(p, caps>>16)
	p = append(p, 21)
	p = append(p, make([]byte, 10)...)
	p = append(p, scramble[8:20]...)
	p = append(p, 0)
	p = append(p, plugin...)
	return append(p, 0)
}

var okPacket = []byte{0, 0, 0, 2, 0, 0, 0}

// fake is one side of the MySQL protocol's packets on a connection.
type fake struct {
	c   net.Conn
	seq byte
}

func (f *fake) send(payload []byte) error {
	h := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), f.seq}
	f.seq++
	_, err := f.c.Write(append(h, payload...))
	return err
}

func (f *fake) receive() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(f.c, h[:]); err != nil {
		return nil, err
	}
	f.seq = h[3] + 1
	p := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	_, err := io.ReadFull(f.c, p)
	return p, err
}

// keyServer is a server (or whoever answers in its place) that has the
// client log in with plugin and then answers as the script says:
// "full" (caching_sha2_password's "perform full authentication"), "fast"
// (fast authentication succeeded), "key" (its public key, when asked),
// "switch" (to sha256_password), "ok". Its result: the password, if it
// got it, or what came after the handshake response.
type keyServer struct {
	plugin string
	script []string
	key    *rsa.PrivateKey
}

func (s keyServer) serve(c net.Conn) string {
	scramble := []byte("0123456789abcdefghij")
	f := &fake{c: c}
	if err := f.send(handshake(s.plugin, scramble)); err != nil {
		return "handshake: " + err.Error()
	}
	resp, err := f.receive()
	if err != nil {
		return "handshake response: " + err.Error()
	}
	if bytes.Contains(resp, []byte(password)) {
		return "password in the handshake response"
	}
	var log []string
	var stolen string
	seed := scramble
	for _, step := range s.script {
		switch step {
		case "full":
			err = f.send([]byte{1, 4})
		case "fast":
			err = f.send([]byte{1, 3})
		case "ok":
			err = f.send(okPacket)
		case "switch":
			seed = []byte("klmnopqrstuvwxyz0123")
			err = f.send(append(append([]byte{0xfe}, "sha256_password\x00"...), append(seed, 0)...))
		case "key":
			der, _ := x509.MarshalPKIXPublicKey(&s.key.PublicKey)
			err = f.send(append([]byte{1}, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...))
		case "read":
			var p []byte
			p, err = f.receive()
			if err == nil {
				log = append(log, fmt.Sprintf("%x", p))
				if plain, derr := rsa.DecryptOAEP(sha1.New(), nil, s.key, p, nil); derr == nil {
					for i := range plain {
						plain[i] ^= seed[i%len(seed)]
					}
					stolen = strings.TrimSuffix(string(plain), "\x00")
				}
			}
		}
		if err != nil {
			break
		}
	}
	if stolen != "" {
		return "got the password: " + stolen
	}
	return "after the handshake response: " + strings.Join(log, " ")
}

// start serves one connection on loopback with s; dial reaches it,
// whatever address the client thinks it dials.
func (s keyServer) start(t *testing.T) (dial func(ctx context.Context, network, addr string) (net.Conn, error), addr string, result <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	res := make(chan string, 1)
	go func() {
		defer ln.Close()
		c, err := ln.Accept()
		if err != nil {
			res <- err.Error()
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		res <- s.serve(c)
	}()
	dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", ln.Addr().String())
	}
	return dial, ln.Addr().String(), res
}

func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// overNetwork is pidb's config for a direct run without TLS to a host on
// the network (a documentation address: the test's dial reaches the fake).
func overNetwork(dial func(context.Context, string, string) (net.Conn, error)) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName, cfg.Timeout = "pidb", password, "tcp", "192.0.2.40:3306", "pidb", 10*time.Second
	cfg.DialFunc = dial
	return cfg
}

// TestLoginRefusesKeyInTheClear: without TLS, to another machine, a
// server that asks for the password encrypted with a public key of its
// own gets nothing, through Connect (the workloads' clients) and Connector
// (database/sql): not as MySQL 8's caching_sha2_password full
// authentication, nor as sha256_password, nor after a MariaDB-like
// mysql_native_password handshake, switching (whoever answers chooses the
// plugin, whatever the host runs). The error names the address and says
// what to do. go-sql-driver/mysql alone hands the password over.
func TestLoginRefusesKeyInTheClear(t *testing.T) {
	key := rsaKey(t)
	for _, c := range []struct {
		name, plugin string
		script       []string
		says         string
	}{
		{"mysql 8 full authentication", "caching_sha2_password", []string{"full", "read", "key", "read"}, "caching_sha2_password's full authentication"},
		{"sha256_password", "sha256_password", []string{"key", "read"}, "handed out a public key"},
		{"native, switched to sha256_password", "mysql_native_password", []string{"switch", "read", "key", "read"}, "handed out a public key"},
	} {
		for _, path := range []string{"Connect", "Connector"} {
			t.Run(c.name+" "+path, func(t *testing.T) {
				dial, _, got := keyServer{plugin: c.plugin, script: c.script, key: key}.start(t)
				cfg := overNetwork(dial)
				var err error
				if path == "Connect" {
					var conn *Conn
					if conn, err = Connect(context.Background(), cfg, dial); err == nil {
						conn.Close()
					}
				} else {
					var conn io.Closer
					if conn, err = connectVia(cfg); err == nil {
						conn.Close()
					}
				}
				// a request for the key (01 after the switch) gives nothing away
				if res := <-got; strings.Contains(res, password) || !strings.HasPrefix(res, "after the handshake response: ") {
					t.Errorf("server: %s", res)
				}
				var ae *AuthError
				if !errors.As(err, &ae) || ae.Addr != "192.0.2.40:3306" {
					t.Fatalf("error %v (%T): want an *AuthError at 192.0.2.40:3306", err, err)
				}
				for _, want := range []string{"the server at 192.0.2.40:3306 ", c.says, "without TLS", "sent nothing", "--via ssh"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q: want %q in it", err, want)
					}
				}
			})
		}
	}
}

// connectVia logs in through Connector, as database/sql does.
func connectVia(cfg *mysql.Config) (io.Closer, error) {
	cn, err := Connector(cfg)
	if err != nil {
		return nil, err
	}
	return cn.Connect(context.Background())
}

// TestLoginsThatGiveNothingAway go through: in the clear, a proof of the
// password (mysql_native_password, caching_sha2_password's fast
// authentication); through an SSH forward (loopback), MySQL 8's full
// authentication too, with the key that comes through SSH from the server.
func TestLoginsThatGiveNothingAway(t *testing.T) {
	key := rsaKey(t)
	for _, c := range []struct {
		name, plugin string
		script       []string
		loopback     bool
		want         string
	}{
		{"native", "mysql_native_password", []string{"ok"}, false, "after the handshake response: "},
		{"fast", "caching_sha2_password", []string{"fast", "ok"}, false, "after the handshake response: "},
		{"full through a forward", "caching_sha2_password", []string{"full", "read", "key", "read"}, true, "got the password: " + password},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := keyServer{plugin: c.plugin, script: c.script, key: key}
			if c.loopback {
				s.script = append(s.script, "ok")
			}
			dial, addr, got := s.start(t)
			cfg := overNetwork(dial)
			if c.loopback {
				cfg.Addr = addr
			}
			conn, err := connectVia(cfg)
			if err != nil {
				t.Fatalf("login: %v", err)
			}
			conn.Close()
			if res := <-got; res != c.want {
				t.Errorf("server: %s, want %s", res, c.want)
			}
		})
	}
}

// TestSecure: whatever the config asks, no login in clear text, with the
// pre-4.1 hash, or with TLS that falls back to the clear; native
// passwords stay (MariaDB's accounts).
func TestSecure(t *testing.T) {
	cfg := mysql.NewConfig()
	cfg.AllowCleartextPasswords, cfg.AllowOldPasswords, cfg.AllowFallbackToPlaintext = true, true, true
	c, err := secure(cfg)
	if err != nil || c.AllowCleartextPasswords || c.AllowOldPasswords || c.AllowFallbackToPlaintext || !c.AllowNativePasswords {
		t.Errorf("secure: %+v %v", c, err)
	}
	if !cfg.AllowCleartextPasswords {
		t.Errorf("secure changed its argument")
	}
	cfg.TLSConfig = "preferred"
	if _, err := secure(cfg); err == nil {
		t.Errorf("tls=preferred (TLS or the clear) accepted")
	}
	cfg.TLS = &tls.Config{}
	if _, err := secure(cfg); err != nil {
		t.Errorf("a *tls.Config: %v", err)
	}
	for addr, want := range map[string]bool{"192.0.2.40:3306": true, "pi3.lan:3306": true, "127.0.0.1:40000": false, "[::1]:3306": false, "localhost:3306": false} {
		if got := inTheClear(&mysql.Config{Net: "tcp", Addr: addr}); got != want {
			t.Errorf("inTheClear(%s) = %v", addr, got)
		}
	}
	if inTheClear(&mysql.Config{Net: "tcp", Addr: "192.0.2.40:3306", TLS: &tls.Config{}}) || inTheClear(&mysql.Config{Net: "unix", Addr: "/run/mysqld/mysqld.sock"}) {
		t.Errorf("TLS or a unix socket in the clear")
	}
}

// TestKeyGuardInPieces: however the server's bytes come (one at a time, a
// few, all at once), the guard breaks the login off before the driver has
// all of a packet that would have it send the password encrypted, lets
// every other login through, and reads through after the login's end: a
// packet that starts like AuthMoreData after the OK is a result's. The
// first bytes of a packet that continues one of 2^24-1 bytes are not a
// packet's start.
func TestKeyGuardInPieces(t *testing.T) {
	hs := handshake("caching_sha2_password", []byte("0123456789abcdefghij"))
	key := append([]byte{1}, "-----BEGIN PUBLIC KEY-----\nMFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAK\n-----END PUBLIC KEY-----\n"...)
	toSHA256 := append([]byte{0xfe}, "sha256_password\x00klmnopqrstuvwxyz0123\x00"...)
	toEd25519 := append([]byte{0xfe}, "client_ed25519\x00"...)
	toEd25519 = append(toEd25519, bytes.Repeat([]byte{7}, 32)...)
	long := append([]byte{0xfe}, make([]byte, 1<<24-2)...)
	for _, c := range []struct {
		name    string
		payload [][]byte
		refuse  int // the packet the driver must not get whole; 0: none
	}{
		{"full authentication", [][]byte{hs, {1, 4}}, 1},
		{"another AuthMoreData", [][]byte{hs, {1, 9}}, 1},
		{"a key", [][]byte{hs, toSHA256, key}, 2},
		{"a key after fast authentication", [][]byte{hs, {1, 3}, key}, 2},
		{"a key after a continued packet", [][]byte{hs, long, {0, 1, 2}, key}, 3},
		{"fast authentication", [][]byte{hs, {1, 3}, okPacket, {1, 4}, key}, 0},
		{"ed25519", [][]byte{hs, toEd25519, okPacket, key}, 0},
		{"an error", [][]byte{hs, {0xff, 0x15, 0x04, '#', '2', '8', '0', '0', '0', 'n', 'o'}, key}, 0},
	} {
		stream := packets(c.payload...)
		end := len(packets(c.payload[:c.refuse+1]...))
		for _, n := range []int{1, 2, 3, 5, 7, 64, 4096, len(stream)} {
			if n < 4096 && len(stream) > 1<<20 {
				continue
			}
			conn, _ := guard(wiretest.NewTrickle(stream, n), "192.0.2.40:3306")
			got, buf := 0, make([]byte, 8192)
			var err error
			for err == nil {
				var k int
				k, err = conn.Read(buf)
				got += k
			}
			var ae *AuthError
			switch {
			case c.refuse > 0 && (!errors.As(err, &ae) || got >= end):
				t.Errorf("%s, %d bytes a read: %d of %d bytes read, then %v; want an *AuthError before byte %d", c.name, n, got, len(stream), err, end)
			case c.refuse == 0 && (err != io.EOF || got != len(stream)):
				t.Errorf("%s, %d bytes a read: %d of %d bytes read, then %v", c.name, n, got, len(stream), err)
			}
		}
	}
}
