package remote

import (
	"errors"
	"io/fs"
	"os"
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

// TestCheckKey: the inventory's check of an identity file, on keys
// ssh-keygen made: a private key passes, one a passphrase protects too
// (nothing is asked); its .pub is refused naming the private one; a file
// that holds no key is refused with the parser's reason; one that is not
// there wraps fs.ErrNotExist.
func TestCheckKey(t *testing.T) {
	priv := keygen(t, "ed25519", "")
	locked := keygen(t, "ecdsa", "secret")
	for _, f := range []string{priv, locked} {
		if err := CheckKey(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if err := CheckKey(priv + ".pub"); err == nil || err.Error() != priv+".pub is the public key: name the private one, "+priv {
		t.Errorf("the public key: %v", err)
	}
	notKey := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notKey, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckKey(notKey); err == nil || !strings.HasPrefix(err.Error(), notKey+" is not a private key (ssh: no key found)") {
		t.Errorf("a file with no key: %v", err)
	}
	if err := CheckKey(filepath.Join(t.TempDir(), "gone")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no file: %v, want fs.ErrNotExist", err)
	}
}
