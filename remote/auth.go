package remote

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"pidb/internal/filecap"
)

// Auth holds the credentials of one run: the private keys of the
// inventory's identity files, read once (so a passphrase is asked for once),
// and the ssh-agent when SSH_AUTH_SOCK is set. It is shared by every host.
type Auth struct {
	signers map[string]ssh.Signer // by identity file path
	agent   agent.ExtendedAgent
	conn    net.Conn
}

// PassphraseFunc asks for the passphrase of an identity file; nil means
// there is nobody to ask (no terminal).
type PassphraseFunc func(file string) ([]byte, error)

// NewAuth reads each identity file and connects to the ssh-agent if there is
// one. A passphrase-protected key is decrypted with ask, or, when ask is nil,
// left to the agent: with no agent either, that is an error saying what to do.
func NewAuth(identityFiles []string, agentSocket string, ask PassphraseFunc) (*Auth, error) {
	a := &Auth{signers: map[string]ssh.Signer{}}
	if agentSocket != "" {
		if conn, err := net.Dial("unix", agentSocket); err == nil {
			a.conn = conn
			a.agent = agent.NewClient(conn)
		}
	}
	for _, f := range identityFiles {
		if f == "" || a.signers[f] != nil {
			continue
		}
		s, err := readKey(f, ask, a.agent != nil)
		if err != nil {
			a.Close()
			return nil, &KeyError{File: f, Err: err}
		}
		if s != nil {
			a.signers[f] = s
		}
	}
	return a, nil
}

// KeyError is an identity file that cannot be used; Err says why, and
// names the file.
type KeyError struct {
	File string
	Err  error
}

func (e *KeyError) Error() string { return e.Err.Error() }

func (e *KeyError) Unwrap() error { return e.Err }

// MaxKeySize is the largest identity file pidb reads: an RSA key of 16,384
// bits takes under 13 KiB.
const MaxKeySize = 64 << 10

// CheckKey reads an identity file as pidb logs in with it, without asking
// for a passphrase: nil where it holds a private key (one a passphrase
// protects too); an error wrapping fs.ErrNotExist where it is not there;
// else why it is no key pidb can log in with, naming the file: a public
// key (the .pub beside the private one) gets the private one's name.
// The inventory's check makes it (inventory.Keys), so that a command
// never meets it at connect.
func CheckKey(file string) error {
	pem, err := filecap.Read(file, MaxKeySize)
	if err != nil {
		return err
	}
	_, err = ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	if err == nil || errors.As(err, &missing) {
		return nil
	}
	if _, _, _, _, perr := ssh.ParseAuthorizedKey(pem); perr == nil {
		hint := "name the private one"
		if priv, ok := strings.CutSuffix(file, ".pub"); ok {
			if _, err := os.Stat(priv); err == nil {
				hint = "name the private one, " + priv
			}
		}
		return fmt.Errorf("%s is the public key: %s", file, hint)
	}
	return fmt.Errorf("%s is not a private key (%v): name the private key pidb logs in with", file, err)
}

// readKey parses a private key file. It returns nil, nil for an encrypted key
// that the agent is expected to hold.
func readKey(file string, ask PassphraseFunc, haveAgent bool) (ssh.Signer, error) {
	pem, err := filecap.Read(file, MaxKeySize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("identity file %s does not exist: write the key's path (ssh-keygen -t ed25519 makes one), or leave identity_file out to use the ssh-agent", file)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("identity file %s cannot be read by this user: %w", file, err)
	case err != nil:
		return nil, fmt.Errorf("identity file %s: %w", file, err)
	}
	s, err := ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	switch {
	case err == nil:
		return s, nil
	case !errors.As(err, &missing):
		return nil, fmt.Errorf("identity file %s: %w", file, err)
	case ask != nil:
		pass, err := ask(file)
		if err != nil {
			return nil, fmt.Errorf("identity file %s: %w", file, err)
		}
		s, err := ssh.ParsePrivateKeyWithPassphrase(pem, pass)
		if err != nil {
			return nil, fmt.Errorf("identity file %s: %w", file, err)
		}
		return s, nil
	case haveAgent:
		return nil, nil
	default:
		return nil, fmt.Errorf("identity file %s is protected by a passphrase and there is no terminal to ask for it: "+
			"add it to the ssh-agent (ssh-add %s) and set SSH_AUTH_SOCK, or run pidb from a terminal", file, file)
	}
}

// methods returns the ways to log in for a host using identityFile: that
// key first, then the agent's keys.
func (a *Auth) methods(identityFile string) []ssh.AuthMethod {
	return []ssh.AuthMethod{ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
		var out []ssh.Signer
		if s := a.signers[identityFile]; s != nil {
			out = append(out, s)
		}
		if a.agent != nil {
			if more, err := a.agent.Signers(); err == nil {
				out = append(out, more...)
			}
		}
		return out, nil
	})}
}

// Close ends the agent connection.
func (a *Auth) Close() {
	if a.conn != nil {
		a.conn.Close()
	}
}
