package remote

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func keygen(t *testing.T, typ, pass string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "id_"+typ)
	args := []string{"-q", "-t", typ, "-N", pass, "-f", p}
	if pass != "" {
		// one round of the bcrypt KDF, not 16: the key is encrypted all the
		// same, and each unlock under the race detector took seconds of CPU
		args = append(args, "-a", "1")
	}
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		t.Skipf("ssh-keygen: %v: %s", err, out)
	}
	return p
}

func TestNewAuthKeyTypes(t *testing.T) {
	for _, typ := range []string{"ed25519", "rsa", "ecdsa"} {
		p := keygen(t, typ, "")
		a, err := NewAuth([]string{p, p}, "", nil)
		if err != nil {
			t.Errorf("%s: %v", typ, err)
			continue
		}
		if len(a.signers) != 1 || a.signers[p] == nil {
			t.Errorf("%s: signers %v", typ, a.signers)
		}
	}
}

func TestPassphraseProtectedKey(t *testing.T) {
	p := keygen(t, "ed25519", "correct horse")
	// no terminal, no agent: a clear error naming the file and what to do
	_, err := NewAuth([]string{p}, "", nil)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "ssh-add") {
		t.Errorf("no way to unlock: %v", err)
	}
	// a terminal: asked once, with the file's name
	asked := 0
	a, err := NewAuth([]string{p}, "", func(file string) ([]byte, error) {
		asked++
		if file != p {
			t.Errorf("asked about %q", file)
		}
		return []byte("correct horse"), nil
	})
	if err != nil || asked != 1 || a.signers[p] == nil {
		t.Errorf("with the passphrase: %v (asked %d times)", err, asked)
	}
	_, err = NewAuth([]string{p}, "", func(string) ([]byte, error) { return []byte("wrong"), nil })
	if err == nil {
		t.Errorf("a wrong passphrase was accepted")
	}
	_, err = NewAuth([]string{p}, "", func(string) ([]byte, error) { return nil, errors.New("interrupted") })
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("a failed prompt: %v", err)
	}
}

func TestMissingIdentityFile(t *testing.T) {
	_, err := NewAuth([]string{"/nonexistent/id_ed25519"}, "", nil)
	var ke *KeyError
	if !errors.As(err, &ke) || ke.File != "/nonexistent/id_ed25519" || !strings.Contains(err.Error(), "identity file /nonexistent/id_ed25519 does not exist") {
		t.Errorf("missing identity file: %v", err)
	}
}
