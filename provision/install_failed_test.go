package provision

import (
	"context"
	"strings"
	"testing"

	"pidb/facts"
	"pidb/internal/fakerun"
)

// What apt 3.0 and dpkg 1.22 printed on a trixie host whose mysql-server
// script failed, with a pseudo-terminal (dpkg's lines on apt's standard
// output), and the server's log lines of that failure.
const (
	dpkgOut = "Setting up mysql-server-core (9.7.4-1) ...\n" +
		"ERROR: Unable to start MySQL server:\n" +
		"dpkg: error processing package mysql-server (--configure):\n" +
		" installed mysql-server package post-installation script subprocess returned error exit status 1\n" +
		"Errors were encountered while processing:\n mysql-server\n"
	aptErr  = "E: Sub-process /usr/bin/dpkg returned an error code (1)\n"
	logAIO  = "2026-12-06T20:01:02.000000Z 0 [Warning] [MY-012582] [InnoDB] io_setup() failed with EAGAIN. Will make 5 attempts before giving up.\n2026-12-06T20:01:03.000000Z 0 [ERROR] [MY-012584] [InnoDB] io_setup() failed with EAGAIN after 5 attempts.\n"
	logSays = "2026-12-06T20:01:02.000000Z 0 [ERROR] [MY-013236] [Server] The designated data directory /var/lib/mysql/ is unusable. You can remove all files that the server added to it.\n"
)

func ubuntuMySQL(r *fakerun.Runner) *Target {
	t := target("mysql", facts.EngineState{}, r)
	t.Facts.OS.ID = "ubuntu"
	return t
}

func TestInstallFailedSaysWhy(t *testing.T) {
	r := (&fakerun.Runner{Files: map[string]string{}}).
		Contains("apt-get -q install -y mysql-server", fakerun.Reply{Stdout: dpkgOut, Stderr: aptErr, Code: 100}).
		Prefix("tail -n 400 /var/log/mysql/error.log 2>/dev/null | grep -E", fakerun.Reply{Stdout: logAIO})
	err := installStep{}.Apply(context.Background(), ubuntuMySQL(r))
	if err == nil {
		t.Fatal("a failed install passed")
	}
	for _, want := range []string{
		"returned an error code (1)",                                 // apt's own line, on standard error
		"dpkg: error processing package mysql-server (--configure):", // dpkg's, on standard output
		"post-installation script subprocess returned error exit status 1",
		"ERROR: Unable to start MySQL server:",
		"the server's log (/var/log/mysql/error.log) last said:",
		"[ERROR] [MY-012584] [InnoDB] io_setup() failed with EAGAIN after 5 attempts.",
		"raise fs.aio-max-nr",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%s", want, err)
		}
	}
	if strings.Contains(err.Error(), "Setting up mysql-server-core") {
		t.Errorf("the error holds progress lines:\n%s", err)
	}
	for _, c := range r.Ran() {
		if strings.Contains(c, "-delete") || strings.Contains(c, "dpkg --configure") {
			t.Errorf("the data directory was touched though the log does not say it is unusable: %s", c)
		}
	}
}

func TestInitAgain(t *testing.T) {
	ctx := context.Background()
	failOnce := func() *fakerun.Runner {
		return (&fakerun.Runner{Files: map[string]string{}, Owners: map[string]string{"/var/lib/mysql": "mysql"}}).
			Contains("apt-get -q install -y mysql-server", fakerun.Reply{Stdout: dpkgOut, Stderr: aptErr, Code: 100, Times: 1}).
			Prefix("tail -n 400 /var/log/mysql/error.log 2>/dev/null | grep -c 'is unusable'", fakerun.Reply{Stdout: "2\n"}).
			Prefix("tail -n 400 /var/log/mysql/error.log 2>/dev/null | grep -E", fakerun.Reply{Stdout: logSays})
	}
	// a fresh install whose first initialisation failed: emptied by the
	// directory's owner, then configured once more
	r := failOnce()
	_ = installStep{}.Apply(ctx, ubuntuMySQL(r))
	ran := strings.Join(r.Ran(), "\n")
	del := strings.Index(ran, "runuser -u mysql -- sh -c 'find /var/lib/mysql -mindepth 1 -delete'")
	conf := strings.Index(ran, "dpkg --configure -a")
	if del < 0 || conf < del {
		t.Errorf("want the directory emptied as mysql, then dpkg --configure -a; ran:\n%s", ran)
	}
	if strings.Contains(ran, "\nfind /var/lib/mysql") {
		t.Errorf("root emptied the directory:\n%s", ran)
	}
	// the package finished its configuration once (its flag): not
	// pidb's first initialisation, left alone
	r = failOnce().Prefix("test -e /var/lib/mysql/debian-5.7.flag", fakerun.Reply{Stdout: "yes\n"})
	err := installStep{}.Apply(ctx, ubuntuMySQL(r))
	if err == nil || !strings.Contains(err.Error(), "is unusable") || strings.Contains(strings.Join(r.Ran(), "\n"), "-delete") {
		t.Errorf("with the package's flag: %v\nran: %q", err, r.Ran())
	}
	// MariaDB (Debian's): its script is not MySQL's, left alone
	r = (&fakerun.Runner{Files: map[string]string{}, Owners: map[string]string{"/var/lib/mysql": "mysql"}}).
		Contains("apt-get -q install -y mariadb-server", fakerun.Reply{Stdout: dpkgOut, Stderr: aptErr, Code: 100, Times: 1}).
		Prefix("tail -n 400 /var/log/mysql/error.log 2>/dev/null | grep -c 'is unusable'", fakerun.Reply{Stdout: "2\n"})
	if err := (installStep{}).Apply(ctx, target("mysql", facts.EngineState{}, r)); err == nil || strings.Contains(strings.Join(r.Ran(), "\n"), "-delete") {
		t.Errorf("MariaDB: %v\nran: %q", err, r.Ran())
	}
}
