// Package secrets keeps the database passwords pidb generates, on the
// controller only: one file per inventory and host, mode 0600, under
// $XDG_STATE_HOME/pidb/secrets (default ~/.local/state/pidb/secrets), never
// beside the inventory, which people commit.
package secrets

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Host is the secrets of one host.
type Host struct {
	Pidb      string              `json:"pidb,omitempty"`      // the pidb benchmark account
	Databases map[string]Database `json:"databases,omitempty"` // by database name
}

// Database is an application database's owner and password.
type Database struct {
	Owner    string `json:"owner"`
	Password string `json:"password"`
}

// Dir is where secrets live: $XDG_STATE_HOME/pidb/secrets, or
// ~/.local/state/pidb/secrets. A relative XDG_STATE_HOME is ignored, as
// the XDG Base Directory specification says: it would put the passwords
// wherever pidb happens to run, beside an inventory perhaps.
func Dir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "pidb", "secrets"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "pidb", "secrets"), nil
}

// path is the host's file: a folder per inventory (its name and a hash of
// its absolute path, so two inventories never share), a file per host.
func path(inventoryPath, host string) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(inventoryPath)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	name := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	return filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:4]), host+".json"), nil
}

// Load reads a host's secrets; a host with none yet gets an empty Host.
func Load(inventoryPath, host string) (Host, error) {
	p, err := path(inventoryPath, host)
	if err != nil {
		return Host{}, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return Host{Databases: map[string]Database{}}, nil
	}
	if err != nil {
		return Host{}, err
	}
	var h Host
	if err := json.Unmarshal(data, &h); err != nil {
		return Host{}, fmt.Errorf("%s: %w", p, err)
	}
	if h.Databases == nil {
		h.Databases = map[string]Database{}
	}
	return h, nil
}

// Save writes a host's secrets (0600, in a 0700 folder), atomically.
func Save(inventoryPath, host string, h Host) error {
	p, err := path(inventoryPath, host)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// alphabet is what passwords are made of: letters and digits without the
// ones people misread (I, O, l, 0, 1), safe in SQL literals, URLs and
// shells without quoting.
const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"

// passwordLen is a password's length: 32 of 57 characters, 186 bits
// (32 * log2(57)).
const passwordLen = 32

// Generate makes a password from crypto/rand.
func Generate() string {
	p, err := generate(rand.Reader)
	if err != nil {
		panic("crypto/rand: " + err.Error()) // the system has no entropy: nothing safe to do
	}
	return p
}

// generate draws each character uniformly: a random byte picks one only
// when it is below the largest multiple of the alphabet's size that fits
// in a byte (228 = 4 * 57), and the rest are drawn again, so no character
// is likelier than another (a plain modulo would make the first 28 a
// quarter likelier).
func generate(r io.Reader) (string, error) {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, passwordLen)
	var b [1]byte
	for len(out) < passwordLen {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", err
		}
		if int(b[0]) < limit {
			out = append(out, alphabet[int(b[0])%len(alphabet)])
		}
	}
	return string(out), nil
}
