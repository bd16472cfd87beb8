package provision

import (
	"context"
	"fmt"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/engine"
)

// installStep installs the engine from the distribution and leaves it
// enabled and running. It never replaces, drops or reinitialises a database
// it did not install: another engine, or data with no server, stops it.
type installStep struct{}

func (installStep) Name() string { return "install" }

// want returns the package and service for the host's engine family.
func (installStep) want(t *Target) (pkg, service string, flavor dbms.Flavor) {
	switch flavor = dbms.FlavorOn(t.Host.Engine, t.Facts.OS.ID); flavor {
	case dbms.Postgres:
		return "postgresql", "postgresql", flavor
	case dbms.MySQL:
		return "mysql-server", "mysql", flavor
	}
	return "mariadb-server", "mariadb", flavor
}

// finishDpkg is what completes an install that was cut off (a reboot or a
// lost connection while dpkg configured the packages: unpacked, not
// configured, and for PostgreSQL no cluster yet).
const finishDpkg = "DEBIAN_FRONTEND=noninteractive dpkg --configure -a"

func (s installStep) Check(ctx context.Context, t *Target) (Change, error) {
	pkg, service, flavor := s.want(t)
	have := t.Facts.Engine.Flavor
	if have != "" && have.Family() != t.Host.Engine {
		return Change{}, fmt.Errorf("the host already has %s %s, and the inventory asks for %s: pidb does not replace a database engine (remove it yourself, or change the host's engine)",
			have, t.Facts.Engine.Version, t.Host.Engine)
	}
	if have == "" && flavor == dbms.MariaDB && t.Facts.PageSize > 4096 {
		return Change{}, fmt.Errorf("the kernel runs with %dK pages (the Pi 5's default kernel, kernel_2712.img), and the distribution's MariaDB is built with jemalloc, which fails to start on them: "+
			"add kernel=kernel8.img to /boot/firmware/config.txt and reboot (4K pages), or give the host engine = \"postgres\"; nothing was installed", t.Facts.PageSize>>10)
	}
	audit, err := t.run(ctx, "dpkg --audit 2>&1 || true")
	if err != nil {
		return Change{}, err
	}
	if strings.TrimSpace(audit) != "" {
		cmds := []string{finishDpkg, "systemctl enable --now " + service}
		if have == "" {
			cmds = []string{finishDpkg, "DEBIAN_FRONTEND=noninteractive apt-get -q install -y " + pkg, "systemctl enable --now " + service}
		}
		return Change{Needed: true, Commands: cmds, Note: "an earlier install was cut off (dpkg --audit lists half-installed packages): dpkg --configure -a finishes it"}, nil
	}
	switch {
	case have != "" && t.Facts.Engine.Running:
		return Change{}, nil
	case have != "":
		return Change{Needed: true, Commands: []string{"systemctl enable --now " + service}, Note: "the server was installed but not running"}, nil
	}
	// nothing installed: refuse data that some other install left
	out, err := t.run(ctx, "ls -A /var/lib/postgresql /var/lib/mysql 2>/dev/null | grep -v '^/' | grep -v '^$' | head -3 || true")
	if err != nil {
		return Change{}, err
	}
	if strings.TrimSpace(out) != "" {
		return Change{}, fmt.Errorf("no database server is installed, but /var/lib/postgresql or /var/lib/mysql holds data pidb did not create: refusing to install over it")
	}
	return Change{Needed: true, Commands: []string{
		"apt-get -q update",
		"DEBIAN_FRONTEND=noninteractive apt-get -q install -y " + pkg,
		"systemctl enable --now " + service,
	}}, nil
}

func (s installStep) Apply(ctx context.Context, t *Target) error {
	ch, err := s.Check(ctx, t)
	if err != nil || !ch.Needed {
		return err
	}
	pkg, _, flavor := s.want(t)
	fresh := t.Facts.Engine.Flavor == ""
	for _, cmd := range ch.Commands {
		t.Step("install: " + strings.TrimPrefix(cmd, "DEBIAN_FRONTEND=noninteractive "))
		out, err := t.retryLock(ctx, cmd)
		if err != nil && fresh && flavor == dbms.MySQL && strings.Contains(cmd, "apt-get -q install") {
			// a first initialisation that failed part way: once more, on
			// an empty data directory
			again, aerr := t.initAgain(ctx)
			if aerr != nil {
				return fmt.Errorf("%w\n%w", t.installFailed(ctx, err, out, pkg), aerr)
			}
			if again {
				t.Step("install: mysqld --initialize failed part way (the log says the data directory is unusable): emptied /var/lib/mysql, configuring the package again")
				out, err = t.retryLock(ctx, finishDpkg)
			}
		}
		if err != nil {
			return t.installFailed(ctx, err, out, pkg)
		}
	}
	if err := t.refresh(ctx); err != nil {
		return err
	}
	e, err := engine.Of(t.Facts)
	if err != nil {
		return err
	}
	if err := t.waitFor(ctx, e.ReadyCmd(), 60*time.Second); err != nil {
		return fmt.Errorf("%s does not accept connections after the install: %w", e.Flavor, err)
	}
	return t.refresh(ctx)
}

// aptHint adds what to do to an apt failure whose message says the Pi
// could not fetch packages (apt 2.6's "Failed to fetch ... Temporary
// failure resolving", "Could not connect", "Unable to fetch some
// archives") or knows no such package (its lists are empty or stale: an
// update that could not fetch leaves them so, with warnings only).
func aptHint(err error, out string) error {
	msg := err.Error() + "\n" + out
	switch {
	case strings.Contains(msg, "Failed to fetch"), strings.Contains(msg, "Unable to fetch"),
		strings.Contains(msg, "Temporary failure resolving"), strings.Contains(msg, "Could not connect"), strings.Contains(msg, "Unable to connect"):
		return fmt.Errorf("%w\nthe Pi cannot fetch packages: check its network, its DNS (/etc/resolv.conf) and its apt sources (/etc/apt/sources.list, and any proxy in /etc/apt/apt.conf.d), then run provision again", err)
	case strings.Contains(msg, "Unable to locate package"):
		return fmt.Errorf("%w\napt on the Pi knows no such package: its package lists are empty or stale (apt-get update on the Pi says why: often no network) or its sources lack it", err)
	}
	return err
}

// lockHeld reports whether an apt or dpkg command failed on another's lock:
// apt's "Could not get lock /var/lib/dpkg/lock-frontend. It is held by
// process 812 (apt-get)", dpkg's "dpkg frontend lock was locked by another
// process with pid 812".
func lockHeld(msg string) bool {
	return strings.Contains(msg, "Could not get lock") || strings.Contains(msg, "lock was locked by another process")
}

// lockHolder names the process that holds the lock, as the message says.
func lockHolder(msg string) string {
	if i := strings.Index(msg, "held by process "); i >= 0 {
		return strings.SplitN(msg[i+len("held by "):], "\n", 2)[0]
	}
	if i := strings.Index(msg, "by another process with pid "); i >= 0 {
		return "process " + strings.Fields(msg[i+len("by another process with pid "):] + " ?")[0]
	}
	return "another apt"
}

// aptMessages has apt and dpkg say their messages in C's words, whatever
// language the Pi's locale speaks: pidb reads them (a held lock, a
// package that cannot be fetched). Only the messages: the collation and
// character set a new PostgreSQL cluster takes from the locale stay the
// Pi's.
const aptMessages = "LC_MESSAGES=C "

// DefaultAptLockWait is how long the install waits for another apt's lock
// unless the run says otherwise (`pidb provision --apt-lock-timeout`).
const DefaultAptLockWait = 5 * time.Minute

// retryLock runs an apt command and returns its standard output, retrying every 2 seconds while another
// process holds apt's or dpkg's lock (a fresh Pi updates itself at first
// boot), for at most t.AptLockWait, and says who holds it: when the wait
// begins, when the holder changes, and every 30 seconds with the time
// waited so far.
func (t *Target) retryLock(ctx context.Context, cmd string) (string, error) {
	wait := t.AptLockWait
	if wait <= 0 {
		wait = DefaultAptLockWait
	}
	began := time.Now()
	deadline := began.Add(wait)
	var said string
	var saidAt time.Time
	for {
		out, err := t.run(ctx, aptMessages+cmd)
		if err == nil || !lockHeld(err.Error()) {
			return out, err
		}
		if time.Now().After(deadline) {
			return out, fmt.Errorf("another apt held its lock for %s (--apt-lock-timeout): nothing was installed: %w", wait, err)
		}
		holder := lockHolder(err.Error())
		if holder != said || time.Since(saidAt) >= 30*time.Second {
			line := "install: waiting for the dpkg lock, held by " + holder + " (at most " + wait.String() + ")"
			if said != "" {
				line += fmt.Sprintf(", %s so far", time.Since(began).Round(time.Second))
			}
			t.Step(line)
			said, saidAt = holder, time.Now()
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}
