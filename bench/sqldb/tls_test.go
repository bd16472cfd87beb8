package sqldb

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"
)

// selfSigned is a certificate like the one pidb makes on a host.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestTLSConfigPins: a TLS login to a server on loopback with a
// self-signed certificate goes through unpinned and pinned to that
// certificate, and is refused pinned to another one (someone in between),
// with ErrNotTheServersCert.
func TestTLSConfigPins(t *testing.T) {
	server, other := selfSigned(t), selfSigned(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{server}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	dial := func(pin []byte) error {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(), TLSConfig(pin))
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial(nil); err != nil {
		t.Errorf("not pinned: %v", err)
	}
	if err := dial(server.Certificate[0]); err != nil {
		t.Errorf("pinned to the server's certificate: %v", err)
	}
	if err := dial(other.Certificate[0]); !errors.Is(err, ErrNotTheServersCert) {
		t.Errorf("pinned to another certificate: %v, want ErrNotTheServersCert", err)
	}
}

// TestNewTLS: a target with TLS asks each driver for it, with no fallback
// to the clear; without, neither does.
func TestNewTLS(t *testing.T) {
	pg, err := New(Target{Engine: "postgres", Host: "127.0.0.1", Port: 5432, TLS: true, ServerCert: []byte{1}})
	if err != nil || pg.Postgres.TLSConfig == nil || len(pg.Postgres.Fallbacks) != 0 || pg.Postgres.TLSConfig.MinVersion != tls.VersionTLS12 {
		t.Errorf("postgres with TLS: %+v %v", pg.Postgres, err)
	}
	my, _ := New(Target{Engine: "mysql", Host: "127.0.0.1", Port: 3306, TLS: true})
	if my.MySQL.TLS == nil || my.MySQL.AllowFallbackToPlaintext {
		t.Errorf("mysql with TLS: %+v", my.MySQL)
	}
	pg, _ = New(Target{Engine: "postgres", Host: "127.0.0.1", Port: 5432})
	my, _ = New(Target{Engine: "mysql", Host: "127.0.0.1", Port: 3306})
	if pg.Postgres.TLSConfig != nil || my.MySQL.TLS != nil {
		t.Errorf("without TLS: %v %v", pg.Postgres.TLSConfig, my.MySQL.TLS)
	}
	for _, fb := range pg.Postgres.Fallbacks {
		if fb.TLSConfig != nil {
			t.Errorf("without TLS, a fallback with TLS")
		}
	}
}
