package secrets

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSaveLoad(t *testing.T) {
	notSudo(t)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	h := Host{Pidb: Generate(), Databases: map[string]Database{"inventory": {Owner: "app", Password: Generate()}}}
	if err := Save("/srv/pis.toml", "pi4", h); err != nil {
		t.Fatal(err)
	}
	got, err := Load("/srv/pis.toml", "pi4")
	if err != nil || got.Pidb != h.Pidb || got.Databases["inventory"] != h.Databases["inventory"] {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	files, _ := filepath.Glob(filepath.Join(state, "pidb", "secrets", "pis-*", "pi4.json"))
	if len(files) != 1 {
		t.Fatalf("files: %v", files)
	}
	st, _ := os.Stat(files[0])
	dst, _ := os.Stat(filepath.Dir(files[0]))
	if st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Errorf("modes %v %v, want 0600 and 0700", st.Mode().Perm(), dst.Mode().Perm())
	}
	// another inventory with the same name elsewhere does not share
	if other, _ := Load("/home/x/pis.toml", "pi4"); other.Pidb != "" {
		t.Errorf("another inventory read pi4's secrets")
	}
}

// TestClusterSecrets: a cluster's password is kept apart from its hosts',
// even a host of the cluster's name.
func TestClusterSecrets(t *testing.T) {
	notSudo(t)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	if c, err := LoadCluster("/srv/pis.toml", "quiz"); err != nil || c.Replication != "" {
		t.Fatalf("a cluster with none yet: %+v, %v", c, err)
	}
	c := Cluster{Replication: Generate()}
	if err := SaveCluster("/srv/pis.toml", "quiz", c); err != nil {
		t.Fatal(err)
	}
	if err := Save("/srv/pis.toml", "quiz", Host{Pidb: "host's"}); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCluster("/srv/pis.toml", "quiz")
	if err != nil || got.Replication != c.Replication {
		t.Fatalf("LoadCluster = %+v, %v; want %+v", got, err, c)
	}
	files, _ := filepath.Glob(filepath.Join(state, "pidb", "secrets", "pis-*", "clusters", "quiz.json"))
	if len(files) != 1 {
		t.Fatalf("files: %v", files)
	}
	st, _ := os.Stat(files[0])
	dst, _ := os.Stat(filepath.Dir(files[0]))
	if st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Errorf("modes %v %v, want 0600 and 0700", st.Mode().Perm(), dst.Mode().Perm())
	}
	if h, _ := Load("/srv/pis.toml", "quiz"); h.Pidb != "host's" {
		t.Errorf("the host quiz's secrets: %+v", h)
	}
}

// TestAccounts: a host on its own keeps its accounts' passwords in its
// file; a cluster's hosts share the cluster's, which starts from its
// primary's own.
func TestAccounts(t *testing.T) {
	notSudo(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	own := Host{Pidb: "pi4's", Databases: map[string]Database{"shop": {Owner: "app", Password: "app's"}}}
	if err := Save("/srv/pis.toml", "pi4", own); err != nil {
		t.Fatal(err)
	}
	if h, err := Accounts("/srv/pis.toml", "pi4", "", ""); err != nil || h.Pidb != "pi4's" {
		t.Fatalf("on its own: %+v, %v", h, err)
	}
	// pi4 became quiz's primary: its passwords, for pi3 too
	if h, err := Accounts("/srv/pis.toml", "pi3", "quiz", "pi4"); err != nil || h.Pidb != "pi4's" || h.Databases["shop"].Password != "app's" {
		t.Fatalf("a replica before the cluster kept any: %+v, %v", h, err)
	}
	if err := SaveCluster("/srv/pis.toml", "quiz", Cluster{Replication: "r"}); err != nil {
		t.Fatal(err)
	}
	if err := SaveAccounts("/srv/pis.toml", "pi3", "quiz", Host{Pidb: "the cluster's"}); err != nil {
		t.Fatal(err)
	}
	// after a switchover pi3 is the primary: the same passwords
	if h, err := Accounts("/srv/pis.toml", "pi4", "quiz", "pi3"); err != nil || h.Pidb != "the cluster's" || h.Databases == nil {
		t.Errorf("the cluster's: %+v, %v", h, err)
	}
	if c, _ := LoadCluster("/srv/pis.toml", "quiz"); c.Replication != "r" {
		t.Errorf("saving the accounts lost the replication password: %+v", c)
	}
	if h, _ := Load("/srv/pis.toml", "pi4"); h.Pidb != "pi4's" {
		t.Errorf("pi4's own file: %+v", h)
	}
}

func TestGenerate(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		p := Generate()
		if len(p) != 32 || strings.Trim(p, "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789") != "" || seen[p] {
			t.Fatalf("bad or repeated password %q", p)
		}
		seen[p] = true
	}
}

// cycle reads every byte value in turn, 0 to 255, again and again.
type cycle struct{ next byte }

func (c *cycle) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.next
		c.next++
	}
	return len(p), nil
}

// TestGenerateUniform: fed every byte value equally often, the generator
// makes every character of the alphabet equally often. A byte's plain
// modulo 57 would give the first 28 characters five bytes each and the
// others four.
func TestGenerateUniform(t *testing.T) {
	r := &cycle{}
	counts := map[rune]int{}
	// 57 passwords of 32 characters: 1824 characters, eight cycles of the 228 accepted bytes
	for i := 0; i < 57; i++ {
		p, err := generate(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p {
			counts[c]++
		}
	}
	if len(counts) != len(alphabet) {
		t.Fatalf("%d characters used, the alphabet has %d", len(counts), len(alphabet))
	}
	for c, n := range counts {
		if n != 32 {
			t.Errorf("%q drawn %d times of 1824, want 32 like every other", c, n)
		}
	}
}

// TestRelativeStateHomeIgnored: XDG_STATE_HOME must be absolute to count.
func TestRelativeStateHomeIgnored(t *testing.T) {
	notSudo(t)
	t.Setenv("HOME", "/home/someone")
	t.Setenv("XDG_STATE_HOME", "relative/state")
	if d, err := Dir(); err != nil || d != "/home/someone/.local/state/pidb/secrets" {
		t.Errorf("Dir() = %q, %v; want the default under HOME", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "/var/state")
	if d, _ := Dir(); d != "/var/state/pidb/secrets" {
		t.Errorf("Dir() = %q with an absolute XDG_STATE_HOME", d)
	}
}

// notSudo keeps a test's pidb out of sudo's ways, whoever runs the tests.
func notSudo(t *testing.T) {
	t.Setenv("SUDO_UID", "")
	t.Setenv("SUDO_GID", "")
}

// nobody is the user the sudo tests stand for: a uid that is not root's,
// which root can give files to.
const nobody = 65534

// asRoot skips a test that needs to be root, as pidb is under sudo.
func asRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("run the tests as root to test pidb under sudo (the files it makes are given to SUDO_UID)")
	}
}

// owned fails the test unless path belongs to uid:gid with mode perm.
func owned(t *testing.T, path string, uid, gid int, perm os.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if int(sys.Uid) != uid || int(sys.Gid) != gid || st.Mode().Perm() != perm {
		t.Errorf("%s: %d:%d %v, want %d:%d %v", path, sys.Uid, sys.Gid, st.Mode().Perm(), uid, gid, perm)
	}
}

// TestSudoUsesTheUsersStore: under sudo, with root's HOME, the secrets are
// the invoking user's, in their home from the user database: not root's,
// where provisioning would not find the passwords it made before and would
// make new ones, changing every account's on the server.
func TestSudoUsesTheUsersStore(t *testing.T) {
	asRoot(t)
	u, err := user.LookupId("65534")
	if err != nil {
		t.Skipf("no user 65534 to stand for the one who ran sudo: %v", err)
	}
	t.Setenv("HOME", t.TempDir()) // root's
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("SUDO_UID", "65534")
	t.Setenv("SUDO_GID", "65534")
	want := filepath.Join(u.HomeDir, ".local", "state", "pidb", "secrets")
	if d, err := Dir(); err != nil || d != want {
		t.Errorf("under sudo Dir() = %q, %v; want the user's %s", d, err, want)
	}
}

// TestSudoSaveBelongsToTheUser: under sudo, what Save makes (the folders,
// 0700, and the file, 0600) belongs to SUDO_UID and SUDO_GID, who can read
// it without sudo; a second Save keeps it theirs.
func TestSudoSaveBelongsToTheUser(t *testing.T) {
	asRoot(t)
	state := filepath.Join(t.TempDir(), "state") // the user's XDG_STATE_HOME, let through by sudo
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("SUDO_UID", "65534")
	t.Setenv("SUDO_GID", "65534")
	for i := 0; i < 2; i++ {
		if err := Save("/srv/pis.toml", "pi4", Host{Pidb: Generate()}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Path("/srv/pis.toml", "pi4")
	if err != nil {
		t.Fatal(err)
	}
	owned(t, p, nobody, nobody, 0o600)
	for d := filepath.Dir(p); d != filepath.Dir(state); d = filepath.Dir(d) {
		owned(t, d, nobody, nobody, 0o700)
	}
}

// TestSudoHome: the sudo user's home comes from the user database, and
// every folder Save makes in it belongs to them; a home that cannot be
// found is an error that says why, never root's store.
func TestSudoHome(t *testing.T) {
	asRoot(t)
	home := t.TempDir()
	const homeMode = 0o751
	if err := os.Chmod(home, homeMode); err != nil {
		t.Fatal(err)
	}
	rootHome := t.TempDir()
	env := map[string]string{"SUDO_UID": "65534", "SUDO_GID": "65534"}
	e := environment{
		getenv: func(k string) string { return env[k] },
		euid:   0,
		home:   func() (string, error) { return rootHome, nil },
		homeOf: func(uid string) (string, error) {
			if uid != "65534" {
				return "", errors.New("unknown uid " + uid)
			}
			return home, nil
		},
	}
	s, err := open(e)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir() != filepath.Join(home, ".local", "state", "pidb", "secrets") {
		t.Errorf("Dir() = %s, want under the user's home %s", s.Dir(), home)
	}
	h := Host{Pidb: Generate(), Databases: map[string]Database{"shop": {Owner: "app", Password: Generate()}}}
	if err := s.Save("/srv/pis.toml", "pi4", h); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load("/srv/pis.toml", "pi4"); err != nil || got.Pidb != h.Pidb || got.Databases["shop"] != h.Databases["shop"] {
		t.Errorf("Load = %+v, %v", got, err)
	}
	p, _ := s.Path("/srv/pis.toml", "pi4")
	owned(t, p, nobody, nobody, 0o600)
	for d := filepath.Dir(p); d != home; d = filepath.Dir(d) {
		owned(t, d, nobody, nobody, 0o700) // .local and .local/state too
	}
	owned(t, home, 0, 0, homeMode) // there before: left as it was
	if entries, _ := os.ReadDir(rootHome); len(entries) != 0 {
		t.Errorf("root's home has %v", entries)
	}

	// no SUDO_GID: the file gets the user's uid and keeps root's group
	delete(env, "SUDO_GID")
	if s, err = open(e); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("/srv/other.toml", "pi4", h); err != nil {
		t.Fatal(err)
	}
	p, _ = s.Path("/srv/other.toml", "pi4")
	owned(t, p, nobody, 0, 0o600)

	env["SUDO_UID"] = "4242"
	if _, err := open(e); err == nil || !strings.Contains(err.Error(), "under sudo for uid 4242, whose home cannot be found (unknown uid 4242)") {
		t.Errorf("a sudo user without a home: %v", err)
	}
}

// TestNotSudo: root without SUDO_UID (a root shell), SUDO_UID 0 (sudo
// from root) and another user with SUDO_UID set (sudo -u someone) each use
// their own store, and Save gives nothing away.
func TestNotSudo(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		name string
		euid int
		env  map[string]string
	}{
		{"root", 0, map[string]string{}},
		{"sudo from root", 0, map[string]string{"SUDO_UID": "0", "SUDO_GID": "0"}},
		{"sudo -u another user", 1000, map[string]string{"SUDO_UID": "65534", "SUDO_GID": "65534"}},
		{"a bad SUDO_UID", 0, map[string]string{"SUDO_UID": "me"}},
	} {
		s, err := open(environment{
			getenv: func(k string) string { return c.env[k] },
			euid:   c.euid,
			home:   func() (string, error) { return home, nil },
			homeOf: func(uid string) (string, error) { return "", errors.New("not asked") },
		})
		if err != nil || s.Dir() != filepath.Join(home, ".local", "state", "pidb", "secrets") || s.own.Set {
			t.Errorf("%s: %+v, %v; want the own home's store, owner unchanged", c.name, s, err)
		}
	}
	// a plain Save leaves the folder and the file to whoever runs pidb
	notSudo(t)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	if err := Save("/srv/pis.toml", "pi4", Host{Pidb: "x"}); err != nil {
		t.Fatal(err)
	}
	p, _ := Path("/srv/pis.toml", "pi4")
	owned(t, p, os.Geteuid(), os.Getegid(), 0o600)
	owned(t, filepath.Dir(p), os.Geteuid(), os.Getegid(), 0o700)
}
