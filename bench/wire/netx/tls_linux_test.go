package netx

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/big"
	"syscall"
	"testing"
	"time"
)

// TestTLSOverNonBlocking: a TLS connection over a Conn in non-blocking
// mode, as the driver multiplexes one, reads ErrAgain (a temporary error,
// and EAGAIN) when nothing has come, and lives on: a message sent in two
// parts with a pause between, each its own TLS record, arrives whole, and
// the connection writes and reads again after it.
func TestTLSOverNonBlocking(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	want := bytes.Repeat([]byte("0123456789"), 1000)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		ask := make([]byte, 3)
		for {
			if _, err := c.Read(ask); err != nil {
				return
			}
			c.Write(want[:4000])
			time.Sleep(50 * time.Millisecond)
			c.Write(want[4000:])
		}
	}()
	raw, err := Dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Client(raw, &tls.Config{InsecureSkipVerify: true})
	defer c.Close()
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	if Fd(c) != raw.(*Conn).Fd() {
		t.Fatalf("Fd of the TLS connection %d, want its socket's %d", Fd(c), raw.(*Conn).Fd())
	}
	if err := syscall.SetNonblock(Fd(c), true); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for round := 0; round < 2; round++ {
		if _, err := c.Write([]byte("go!")); err != nil {
			t.Fatalf("round %d: write: %v", round, err)
		}
		var got []byte
		agains := 0
		for deadline := time.Now().Add(10 * time.Second); len(got) < len(want) && time.Now().Before(deadline); {
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			switch {
			case errors.Is(err, ErrAgain) && errors.Is(err, syscall.EAGAIN):
				agains++
				time.Sleep(time.Millisecond)
			case err != nil:
				t.Fatalf("round %d: read after %d bytes: %v", round, len(got), err)
			}
		}
		if !bytes.Equal(got, want) || agains == 0 {
			t.Fatalf("round %d: %d bytes (want %d, equal %v), %d reads with nothing yet (want some)", round, len(got), len(want), bytes.Equal(got, want), agains)
		}
	}
}
