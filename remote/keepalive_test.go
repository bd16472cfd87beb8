package remote

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// mute is an SSH server on loopback that takes any key, runs every
// command for ever, and answers keep-alives until silent is set: a host
// whose network went down in the middle of a command. A command that
// says end-session has its session closed with no exit status, as a
// host's sshd does when the host reboots.
func mute(t *testing.T, silent *atomic.Bool) (addr string, hostKey ssh.PublicKey) {
	t.Helper()
	return testServer(t, func(reqs <-chan *ssh.Request) {
		for r := range reqs {
			if !silent.Load() && r.WantReply {
				r.Reply(true, nil)
			}
		}
	}, func(ch ssh.Channel, creqs <-chan *ssh.Request) {
		for r := range creqs {
			r.Reply(r.Type == "exec", nil) // and never an exit status
			if r.Type == "exec" && strings.Contains(string(r.Payload), "end-session") {
				break // as sshd does when the host shuts down
			}
		}
		ch.Close()
	})
}

// testServer is an SSH server on loopback that takes any key: global
// requests go to global, each session channel to session.
func testServer(t *testing.T, global func(<-chan *ssh.Request), session func(ssh.Channel, <-chan *ssh.Request)) (addr string, hostKey ssh.PublicKey) {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(ssh.ConnMetadata, ssh.PublicKey) (*ssh.Permissions, error) { return nil, nil }}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_, chans, reqs, err := ssh.NewServerConn(c, cfg)
				if err != nil {
					return
				}
				go global(reqs)
				for nc := range chans {
					ch, creqs, err := nc.Accept()
					if err != nil {
						continue
					}
					go session(ch, creqs)
				}
			}()
		}
	}()
	return ln.Addr().String(), signer.PublicKey()
}

// dialMute connects to the mute server at addr as pi4, with keep-alives
// every every.
func dialMute(t *testing.T, addr string, hostKey ssh.PublicKey, every time.Duration) *Client {
	t.Helper()
	return dialTest(t, "pi4", addr, hostKey, every)
}

// dialTest connects to a test server at addr as the host called name.
func dialTest(t *testing.T, name, addr string, hostKey ssh.PublicKey, every time.Duration) *Client {
	t.Helper()
	dir := t.TempDir()
	host, port, _ := net.SplitHostPort(addr)
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte("[127.0.0.1]:"+port+" "+string(ssh.MarshalAuthorizedKey(hostKey))), 0o600); err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	id := filepath.Join(dir, "id_ed25519")
	os.WriteFile(id, pem.EncodeToMemory(block), 0o600)
	auth, err := NewAuth([]string{id}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { auth.Close() })
	p, _ := strconv.Atoi(port)
	c, err := Dial(context.Background(), Config{Name: name, Address: host, Port: p, User: "pi", IdentityFile: id, Auth: auth, KnownHosts: known, KeepAlive: every})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestKeepAliveNoticesADeadHost: a command runs on a host that then stops
// answering; the keep-alive notices within four of its intervals, closes
// the connection, and the command ends with a ConnError that says the host
// stopped answering, not a bare EOF.
func TestKeepAliveNoticesADeadHost(t *testing.T) {
	var silent atomic.Bool
	addr, hostKey := mute(t, &silent)
	const every = 100 * time.Millisecond
	c := dialMute(t, addr, hostKey, every)
	ended := make(chan error, 1)
	go func() {
		_, err := c.Run(context.Background(), "sleep 1000")
		ended <- err
	}()
	time.Sleep(3 * every) // answered: the command goes on
	select {
	case err := <-ended:
		t.Fatalf("the command ended while the host answered: %v", err)
	default:
	}
	silent.Store(true)
	select {
	case err := <-ended:
		var ce *ConnError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "no answer from the host") || !strings.Contains(err.Error(), "pi4") {
			t.Errorf("the command ended with %v; want a ConnError saying the host stopped answering", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the command still waits a minute after the host went silent")
	}
}

// TestSessionEndedByTheHost: the host's sshd closes a command's session
// with no exit status (a reboot stops sshd); the error says so and names
// the command, not "remote command exited without exit status".
func TestSessionEndedByTheHost(t *testing.T) {
	var silent atomic.Bool
	addr, hostKey := mute(t, &silent)
	c := dialMute(t, addr, hostKey, time.Second)
	_, err := c.Run(context.Background(), "apt-get install end-session")
	var ce *ConnError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `the host ended the session while "apt-get install end-session" ran: it rebooted or shut down`) {
		t.Errorf("err = %v", err)
	}
}
