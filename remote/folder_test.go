package remote

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

func TestFolderChain(t *testing.T) {
	for dir, want := range map[string]string{
		"/":                               "/",
		"/etc":                            "/ /etc",
		"/etc/postgresql/15/main/":        "/ /etc /etc/postgresql /etc/postgresql/15 /etc/postgresql/15/main",
		"/etc//mysql/./mariadb.conf.d/..": "/ /etc /etc/mysql",
	} {
		if got := strings.Join(folderChain(dir), " "); got != want {
			t.Errorf("folderChain(%q) = %q, want %q", dir, got, want)
		}
	}
	if folderChain("etc/mysql") != nil {
		t.Errorf("a relative path has a chain")
	}
}

// TestFolderUserDecides: who acts in a folder, from what stat says of it
// and the folders above it.
func TestFolderUserDecides(t *testing.T) {
	pg := []string{"/", "/etc", "/etc/postgresql", "/etc/postgresql/15", "/etc/postgresql/15/main"}
	for _, c := range []struct {
		name, out, want, err string
	}{
		{"root's all the way", "root 41ed\nroot 41ed\nroot 41ed\nroot 41ed\nroot 41ed\n", "root", ""},
		{"postgres's folders", "root 41ed\nroot 41ed\nroot 41ed\npostgres 41ed\npostgres 41ed\n", "postgres", ""},
		{"a link postgres planted above a folder of root's", "root 41ed\nroot 41ed\nroot 41ed\npostgres a1ff\nroot 41ed\n", "postgres", ""},
		{"not made yet", "root 41ed\nroot 41ed\nroot 41ed\n- -\n- -\n", "root", ""},
		{"below postgres's, not made yet", "root 41ed\nroot 41ed\nroot 41ed\npostgres 41ed\n- -\n", "postgres", ""},
		{"group-writable", "root 41ed\nroot 41fd\nroot 41ed\nroot 41ed\nroot 41ed\n", "", "/etc can be written by users other than its owner root (mode 0775)"},
		{"sticky and everyone's", "root 41ed\nroot 43ff\nroot 41ed\nroot 41ed\nroot 41ed\n", "", "/etc can be written by users other than its owner root (mode 1777)"},
		{"two users", "root 41ed\nroot 41ed\nroot 41ed\npostgres 41ed\nmysql 41ed\n", "", "belongs to mysql, below a folder of postgres's"},
		{"no name", "root 41ed\nroot 41ed\nUNKNOWN 41ed\nroot 41ed\nroot 41ed\n", "", "a user id with no name"},
		{"a file", "root 41ed\nroot 41ed\nroot 41ed\nroot 41ed\nroot 81a4\n", "", "/etc/postgresql/15/main is not a folder"},
		{"short", "root 41ed\n", "", "1 answers for 5 folders"},
		{"garbage", "root 41ed\nroot 41ed\nroot zz\nroot 41ed\nroot 41ed\n", "", "reading the mode of /etc/postgresql"},
	} {
		got, err := folderUser("pi4", pg, c.out)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "pi4: ")):
			t.Errorf("%s: %q, %v; want an error with %q", c.name, got, err, c.err)
		}
	}
}

// local runs commands on this machine, as a host would: for the tests of
// the scripts root runs in a folder.
type local struct{}

func (local) Run(ctx context.Context, cmd string) (Result, error) {
	return local{}.RunInput(ctx, cmd, nil)
}

func (local) RunInput(ctx context.Context, cmd string, stdin []byte) (Result, error) {
	var out, errb bytes.Buffer
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Stdin, c.Stdout, c.Stderr = bytes.NewReader(stdin), &out, &errb
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return Result{out.Bytes(), errb.Bytes()}, &ExitError{Host: "local", Cmd: cmd, Code: ee.ExitCode(), Stderr: errb.Bytes()}
	}
	return Result{out.Bytes(), errb.Bytes()}, err
}

func (local) Upload(context.Context, string, []byte, os.FileMode) error { panic("not used") }
func (local) ReadFile(context.Context, string) ([]byte, error)          { panic("not used") }
func (local) Host() string                                              { return "local" }

// TestRootNeverWritesThroughALink runs FolderUser and the upload script on
// this machine, as root, in a folder of root's holding a folder of
// nobody's where nobody planted links: to a file of root's, and in place
// of a folder. Every write lands in a file of its own; the files of root's
// are as they were.
func TestRootNeverWritesThroughALink(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to act as another user (runuser)")
	}
	if _, err := exec.LookPath("runuser"); err != nil {
		t.Skip("no runuser (util-linux) on this machine")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody on this machine")
	}
	ctx := context.Background()
	// a folder of root's that no one else can write, as /etc is: not under
	// /tmp, which everyone can write
	base, err := os.MkdirTemp(".", ".folder-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if base, err = filepath.Abs(base); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if u, err := FolderUser(ctx, local{}, base); err != nil || u != "root" {
		t.Skipf("this checkout's folders are not root's alone (%q, %v): the test needs a folder no one else can write", u, err)
	}
	target := filepath.Join(base, "bash.bashrc")
	if err := os.WriteFile(target, []byte("root's own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(base, "main")
	mustSh := func(cmd string) {
		t.Helper()
		if res, err := (local{}).Run(ctx, cmd); err != nil {
			t.Fatalf("%s: %v %s", cmd, err, res.Stderr)
		}
	}
	mustSh("install -d -o nobody -g " + Quote(groupOf(t, nobody)) + " -m 0755 " + Quote(theirs))
	asNobody := func(cmd string) { mustSh(AsUser("nobody", cmd)) }
	asNobody("ln -s " + Quote(target) + " " + Quote(theirs+"/pg_hba.conf"))
	asNobody("ln -s " + Quote(base) + " " + Quote(theirs+"/conf.d"))

	// root's upload to the planted name: written as nobody, the link
	// replaced by a file
	u, err := FolderUser(ctx, local{}, theirs)
	if err != nil || u != "nobody" {
		t.Fatalf("FolderUser(%s) = %q, %v; want nobody", theirs, u, err)
	}
	p := theirs + "/pg_hba.conf"
	if _, err := (local{}).RunInput(ctx, AsUser(u, uploadScript(p, 0o640, false)), []byte("host all all 10.0.0.0/8 scram-sha-256\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o640 {
		t.Errorf("%s after the upload: %v, %v; want a file of its own, 0640", p, fi.Mode(), err)
	}
	// through the link in place of a folder: nobody acts, and cannot write root's folder
	u, err = FolderUser(ctx, local{}, theirs+"/conf.d")
	if err != nil || u != "nobody" {
		t.Fatalf("FolderUser(conf.d, a link of nobody's) = %q, %v; want nobody", u, err)
	}
	if _, err := (local{}).RunInput(ctx, AsUser(u, uploadScript(theirs+"/conf.d/bash.bashrc", 0o644, false)), []byte("pwned\n")); err == nil {
		t.Errorf("an upload through a link of nobody's into root's folder succeeded")
	}
	// root in its own folder: a link at the name is replaced, not followed
	if err := os.Symlink(target, filepath.Join(base, "pidb.conf")); err != nil {
		t.Fatal(err)
	}
	if _, err := (local{}).RunInput(ctx, AsUser("root", uploadScript(filepath.Join(base, "pidb.conf"), 0o644, true)), []byte("x = 1\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != "root's own\n" {
		t.Errorf("root's file after the uploads: %q, %v", got, err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o644 || fi.Sys() == nil {
		t.Errorf("root's file's mode: %v, %v", fi.Mode(), err)
	}
	if out, _ := (local{}).Run(ctx, "stat -c %U "+Quote(target)+"; ls -A "+Quote(base)+" "+Quote(theirs)); string(out.Stdout) != "root\n"+
		base+":\nbash.bashrc\nmain\npidb.conf\n\n"+theirs+":\nconf.d\npg_hba.conf\n" {
		t.Errorf("owner and files left:\n%s", out.Stdout)
	}
}

func groupOf(t *testing.T, u *user.User) string {
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		t.Skip("nobody's group has no name here")
	}
	return g.Name
}
