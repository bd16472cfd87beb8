package remote

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError refuses a host whose key known_hosts does not vouch for:
// either the host is unknown, or (Changed) known_hosts holds another key.
type HostKeyError struct {
	Host       string // the inventory's name
	Address    string // host:port as dialled
	Key        ssh.PublicKey
	KnownHosts string
	Changed    bool
	Known      []knownhosts.KnownKey // what known_hosts has for the host, when Changed
}

func (e *HostKeyError) Error() string {
	offered := keyName(e.Key)
	host := knownhosts.Normalize(e.Address)
	if !e.Changed {
		return fmt.Sprintf("%s: unknown host key for %s: %s. Check it on the Pi (ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub) "+
			"and run again with --accept-new-host-keys to add it to %s", e.Host, host, offered, shortType(e.Key), e.KnownHosts)
	}
	var had []string
	for _, k := range e.Known {
		had = append(had, fmt.Sprintf("%s (%s:%d)", keyName(k.Key), k.Filename, k.Line))
	}
	return fmt.Sprintf("%s: HOST KEY CHANGED for %s: it offered %s, but known_hosts has %s. Refusing to connect: "+
		"this can be a man-in-the-middle attack. If the Pi was reinstalled, remove the old key with: ssh-keygen -R %s -f %s",
		e.Host, host, offered, strings.Join(had, ", "), host, e.KnownHosts)
}

// keyName describes a key as OpenSSH does: type and SHA256 fingerprint.
func keyName(k ssh.PublicKey) string {
	return strings.ToUpper(shortType(k)) + " key " + ssh.FingerprintSHA256(k)
}

func shortType(k ssh.PublicKey) string {
	t := k.Type()
	switch {
	case strings.Contains(t, "ed25519"):
		return "ed25519"
	case strings.HasPrefix(t, "ecdsa"):
		return "ecdsa"
	case strings.Contains(t, "rsa"):
		return "rsa"
	}
	return t
}

// hostKeyChecker returns the callback that checks a host's key against
// known_hosts (plain and hashed entries), and the host key algorithms to ask
// for: those of the keys known_hosts has for the host, so that a host known
// by its ECDSA key is not asked for its Ed25519 key and then refused.
// With acceptNew, a host that known_hosts does not know is added to it (as
// OpenSSH's StrictHostKeyChecking=accept-new); a changed key is always refused.
func hostKeyChecker(name, address, file string, acceptNew bool) (ssh.HostKeyCallback, []string, error) {
	var db ssh.HostKeyCallback
	switch _, err := os.Stat(file); {
	case err == nil:
		db, err = knownhosts.New(file)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: read known_hosts: %w", name, err)
		}
	case errors.Is(err, os.ErrNotExist):
		// no file yet: every host is unknown
		db = func(string, net.Addr, ssh.PublicKey) error { return &knownhosts.KeyError{} }
	default:
		return nil, nil, fmt.Errorf("%s: known_hosts: %w", name, err)
	}
	cb := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := db(hostname, remote, key)
		var ke *knownhosts.KeyError
		if err == nil || !errors.As(err, &ke) {
			return err
		}
		if len(ke.Want) > 0 {
			return &HostKeyError{Host: name, Address: hostname, Key: key, KnownHosts: file, Changed: true, Known: ke.Want}
		}
		if !acceptNew {
			return &HostKeyError{Host: name, Address: hostname, Key: key, KnownHosts: file}
		}
		return appendKnownHost(file, hostname, key)
	}
	return cb, knownAlgorithms(db, address), nil
}

// knownAlgorithms asks the database about a key it cannot know; the error
// lists the keys it has for the address.
func knownAlgorithms(db ssh.HostKeyCallback, address string) []string {
	probe, _ := ssh.NewPublicKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public())
	tcp, _ := net.ResolveTCPAddr("tcp", address)
	if tcp == nil {
		tcp = &net.TCPAddr{}
	}
	var ke *knownhosts.KeyError
	if err := db(address, tcp, probe); !errors.As(err, &ke) || len(ke.Want) == 0 {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	add := func(a ...string) {
		for _, x := range a {
			if !seen[x] {
				seen[x] = true
				algos = append(algos, x)
			}
		}
	}
	for _, k := range ke.Want {
		switch t := k.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			add(ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
		default:
			add(t)
		}
	}
	// in OpenSSH's order of preference, not the file's: with an Ed25519
	// and an ECDSA key known, the server is asked for its Ed25519 key, so a
	// changed Ed25519 key is refused as ssh refuses it, even while the
	// ECDSA line still matches
	rank := func(a string) int {
		if i := slices.Index(opensshHostKeyOrder, a); i >= 0 {
			return i
		}
		return len(opensshHostKeyOrder)
	}
	slices.SortStableFunc(algos, func(a, b string) int { return rank(a) - rank(b) })
	return algos
}

// opensshHostKeyOrder is OpenSSH's default HostKeyAlgorithms (ssh_config(5),
// OpenSSH 9), the certificate types left out: pidb checks plain keys.
var opensshHostKeyOrder = []string{
	ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521,
	ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA,
}

// appendKnownHost records key for address in file, making the file (0600)
// and its folder (0700) when needed. One write with O_APPEND, so hosts
// accepted in parallel do not interleave.
func appendKnownHost(file, address string, key ssh.PublicKey) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("record host key: %w", err)
	}
	defer f.Close()
	host := knownhosts.Normalize(address)
	if !plainHost(host) {
		return fmt.Errorf("record host key: %q is not a plain address or name, and goes into no known_hosts line", address)
	}
	if usesHashed(f) { // as ssh with HashKnownHosts: the file names no host in clear
		host = knownhosts.HashHostname(host)
	}
	line := knownhosts.Line([]string{host}, key) + "\n"
	// a file whose last line has no newline would swallow ours
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			line = "\n" + line
		}
	}
	if _, err := f.WriteString(line); err != nil {
		return fmt.Errorf("record host key: %w", err)
	}
	return nil
}

// plainHost says a known_hosts host field (Normalize's: "name",
// "[name]:port") names one address or DNS name: no pattern (*, ?, !), no
// list (,), no space or line end that would start another field or line,
// no marker (@).
func plainHost(h string) bool {
	if strings.HasPrefix(h, "[") {
		end := strings.LastIndex(h, "]:")
		if end < 0 {
			return false
		}
		if _, err := strconv.ParseUint(h[end+2:], 10, 16); err != nil {
			return false
		}
		h = h[1:end]
	}
	return h != "" && strings.IndexFunc(h, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == ':' || r == '-' || r == '_')
	}) < 0
}

// usesHashed reports whether a known_hosts file already has hashed entries
// (ssh-keygen -H, HashKnownHosts yes).
func usesHashed(f *os.File) bool {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<24))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "|1|") {
			return true
		}
	}
	return false
}
