// Package secrets keeps the database passwords pidb generates, on the
// controller only: one file per inventory and host, mode 0600, under
// $XDG_STATE_HOME/pidb/secrets (default ~/.local/state/pidb/secrets), never
// beside the inventory, which people commit. Under sudo they are the
// invoking user's (SUDO_UID), not root's: see Open.
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
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"pidb/internal/atomicfile"
	"pidb/internal/filecap"
	"pidb/internal/sudoowner"
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

// Store is where one user's secrets live, and who owns what pidb makes
// there. Under sudo (pidb running as root, SUDO_UID another user) it is
// the store of the user who ran sudo, not root's: their passwords stay the
// same whichever way they run pidb, and what is made belongs to them.
type Store struct {
	dir string
	own sudoowner.Owner
}

// Open is the store of the user pidb works for. Its folder is
// $XDG_STATE_HOME/pidb/secrets, or ~/.local/state/pidb/secrets. A relative
// XDG_STATE_HOME is ignored, as the XDG Base Directory specification says:
// it would put the passwords wherever pidb happens to run, beside an
// inventory perhaps. Under sudo, ~ is the home of the user who ran sudo
// (SUDO_UID, from the user database), and an XDG_STATE_HOME that sudo let
// through (sudo --preserve-env) is theirs; what Save makes there belongs
// to SUDO_UID and SUDO_GID.
func Open() (Store, error) {
	return open(environment{
		getenv: os.Getenv,
		euid:   os.Geteuid(),
		home:   os.UserHomeDir,
		homeOf: func(uid string) (string, error) {
			u, err := user.LookupId(uid)
			if err != nil {
				return "", err
			}
			return u.HomeDir, nil
		},
	})
}

// environment is what Open reads of the process and the system.
type environment struct {
	getenv func(string) string
	euid   int
	home   func() (string, error)           // the user's own home
	homeOf func(uid string) (string, error) // another user's, by uid
}

func open(e environment) (Store, error) {
	own := sudoowner.FromEnv(e.getenv, e.euid)
	state := e.getenv("XDG_STATE_HOME")
	if state == "" || !filepath.IsAbs(state) {
		home, err := e.home()
		if own.Set {
			home, err = e.homeOf(strconv.Itoa(own.UID))
			if err == nil && !filepath.IsAbs(home) {
				err = fmt.Errorf("home %q is not an absolute path", home)
			}
			if err != nil {
				return Store{}, fmt.Errorf("pidb runs under sudo for uid %d, whose home cannot be found (%v), and keeps that user's passwords there, not root's: "+
					"run pidb without sudo, or let XDG_STATE_HOME through (sudo --preserve-env=XDG_STATE_HOME)", own.UID, err)
			}
		}
		if err != nil {
			return Store{}, err
		}
		state = filepath.Join(home, ".local", "state")
	}
	return Store{dir: filepath.Join(state, "pidb", "secrets"), own: own}, nil
}

// Dir is the store's folder: each inventory has a folder in it.
func (s Store) Dir() string { return s.dir }

// Path is the file of a host's secrets: a folder per inventory (its name
// and a hash of its absolute path, so two inventories never share), a file
// per host. Messages name it so that a person sees which store was used.
func (s Store) Path(inventoryPath, host string) (string, error) {
	abs, err := filepath.Abs(inventoryPath)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	name := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	return filepath.Join(s.dir, name+"-"+hex.EncodeToString(sum[:4]), host+".json"), nil
}

// Load reads a host's secrets; a host with none yet gets an empty Host.
func (s Store) Load(inventoryPath, host string) (Host, error) {
	p, err := s.Path(inventoryPath, host)
	if err != nil {
		return Host{}, err
	}
	var h Host
	if err := read(p, &h); err != nil {
		return Host{}, err
	}
	if h.Databases == nil {
		h.Databases = map[string]Database{}
	}
	return h, nil
}

// Save writes a host's secrets (0600, in 0700 folders), atomically; under
// sudo the folders it makes and the file belong to the user who ran it.
func (s Store) Save(inventoryPath, host string, h Host) error {
	p, err := s.Path(inventoryPath, host)
	if err != nil {
		return err
	}
	return s.write(p, h)
}

// Cluster is the secrets of a [[cluster]], which every host in it shares:
// any of them may become its primary.
type Cluster struct {
	Replication string `json:"replication,omitempty"` // the replication account's password
	// Accounts are the passwords of the accounts every host of the
	// cluster has: the primary's, copied and replayed on its replicas
	Accounts Host `json:"accounts"`
}

// ClusterPath is the file of a cluster's secrets: in the inventory's
// folder, in a folder of its own (clusters/), apart from the hosts' files.
func (s Store) ClusterPath(inventoryPath, cluster string) (string, error) {
	p, err := s.Path(inventoryPath, cluster)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "clusters", cluster+".json"), nil
}

// LoadCluster reads a cluster's secrets; a cluster with none yet gets an
// empty Cluster.
func (s Store) LoadCluster(inventoryPath, cluster string) (Cluster, error) {
	var c Cluster
	p, err := s.ClusterPath(inventoryPath, cluster)
	if err == nil {
		err = read(p, &c)
	}
	return c, err
}

// SaveCluster writes a cluster's secrets as Save writes a host's.
func (s Store) SaveCluster(inventoryPath, cluster string, c Cluster) error {
	p, err := s.ClusterPath(inventoryPath, cluster)
	if err != nil {
		return err
	}
	return s.write(p, c)
}

// read decodes the JSON file at p into v; a file that is not there leaves
// v as it is.
func read(p string, v any) error {
	data, err := filecap.Read(p, 1<<20) // a host's passwords take a few KiB
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// write writes v as JSON to p (0600, in 0700 folders), atomically; under
// sudo the folders it makes and the file belong to the user who ran it.
func (s Store) write(p string, v any) error {
	if err := s.own.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(p, 0o600, func(f *os.File) error {
		if s.own.Set {
			if err := f.Chown(s.own.UID, s.own.GID); err != nil {
				return err
			}
		}
		_, err := f.Write(data)
		return err
	})
}

// Dir is the folder of the store pidb uses (Open's).
func Dir() (string, error) {
	s, err := Open()
	return s.dir, err
}

// Path is the file of a host's secrets in the store pidb uses (Open's).
func Path(inventoryPath, host string) (string, error) {
	s, err := Open()
	if err != nil {
		return "", err
	}
	return s.Path(inventoryPath, host)
}

// Load reads a host's secrets from the store pidb uses (Open's); a host
// with none yet gets an empty Host.
func Load(inventoryPath, host string) (Host, error) {
	s, err := Open()
	if err != nil {
		return Host{}, err
	}
	return s.Load(inventoryPath, host)
}

// Save writes a host's secrets to the store pidb uses (Open's): 0600, in
// 0700 folders, atomically, and under sudo the user's who ran it.
func Save(inventoryPath, host string, h Host) error {
	s, err := Open()
	if err != nil {
		return err
	}
	return s.Save(inventoryPath, host, h)
}

// ClusterPath is the file of a cluster's secrets in the store pidb uses
// (Open's).
func ClusterPath(inventoryPath, cluster string) (string, error) {
	s, err := Open()
	if err != nil {
		return "", err
	}
	return s.ClusterPath(inventoryPath, cluster)
}

// LoadCluster reads a cluster's secrets from the store pidb uses (Open's).
func LoadCluster(inventoryPath, cluster string) (Cluster, error) {
	s, err := Open()
	if err != nil {
		return Cluster{}, err
	}
	return s.LoadCluster(inventoryPath, cluster)
}

// SaveCluster writes a cluster's secrets to the store pidb uses (Open's).
func SaveCluster(inventoryPath, cluster string, c Cluster) error {
	s, err := Open()
	if err != nil {
		return err
	}
	return s.SaveCluster(inventoryPath, cluster, c)
}

// Accounts reads the passwords of a host's accounts from the store pidb
// uses (Open's): a host on its own keeps them in its own file; a host of
// a cluster (cluster not "") in the cluster's, which takes them from its
// primary's own file the first time (a host that was on its own and
// became a cluster's primary keeps its passwords).
func Accounts(inventoryPath, host, cluster, primary string) (Host, error) {
	s, err := Open()
	if err != nil {
		return Host{}, err
	}
	if cluster == "" {
		return s.Load(inventoryPath, host)
	}
	c, err := s.LoadCluster(inventoryPath, cluster)
	if err != nil {
		return Host{}, err
	}
	if c.Accounts.Pidb == "" && len(c.Accounts.Databases) == 0 {
		return s.Load(inventoryPath, primary)
	}
	if c.Accounts.Databases == nil {
		c.Accounts.Databases = map[string]Database{}
	}
	return c.Accounts, nil
}

// SaveAccounts keeps the passwords of a host's accounts where Accounts
// reads them.
func SaveAccounts(inventoryPath, host, cluster string, h Host) error {
	s, err := Open()
	if err != nil {
		return err
	}
	if cluster == "" {
		return s.Save(inventoryPath, host, h)
	}
	c, err := s.LoadCluster(inventoryPath, cluster)
	if err != nil {
		return err
	}
	c.Accounts = h
	return s.SaveCluster(inventoryPath, cluster, c)
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
