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
// ~/.local/state/pidb/secrets.
func Dir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
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

// Generate makes a password: 32 letters and digits from crypto/rand (190
// bits), safe in SQL literals, URLs and shells without quoting.
func Generate() string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // the system has no entropy: nothing safe to do
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
