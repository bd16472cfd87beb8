package provision

import (
	"context"
	"errors"
	"strings"
	"testing"

	"pidb/facts"
	"pidb/internal/fakerun"
)

// The messages are apt 2.6's and dpkg 1.21's own, copied from Debian 12.
func TestLockMessages(t *testing.T) {
	for msg, want := range map[string]string{
		"E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (apt-get)\nE: Unable to acquire the dpkg frontend lock": "process 812 (apt-get)",
		"E: Could not get lock /var/lib/apt/lists/lock. It is held by process 77 (apt-get)":                                                   "process 77 (apt-get)",
		"dpkg: error: dpkg frontend lock was locked by another process with pid 1234\nNote: removing the lock file is always wrong":           "process 1234",
		"E: Could not get lock /var/lib/dpkg/lock": "another apt",
	} {
		if !lockHeld(msg) {
			t.Errorf("lockHeld(%q) = false", msg)
		}
		if got := lockHolder(msg); got != want {
			t.Errorf("lockHolder(%q) = %q, want %q", msg, got, want)
		}
	}
	if lockHeld("E: Unable to locate package postgresql") {
		t.Error("a missing package taken for a held lock")
	}
}

// The messages are apt 2.6's own, made on Debian 12 with the mirror out of
// reach and with an unknown package.
func TestAptHints(t *testing.T) {
	for msg, want := range map[string]string{
		"E: Failed to fetch http://mirror/debian/pool/main/p/postgresql-15/postgresql-15_15.14-0+deb12u1_arm64.deb  Temporary failure resolving 'mirror'\nE: Unable to fetch some archives, maybe run apt-get update or try with --fix-missing?": "the Pi cannot fetch packages",
		"W: Failed to fetch http://mirror/debian/dists/bookworm/InRelease  Could not connect to 127.0.0.1:1 (127.0.0.1). - connect (111: Connection refused)":                                                                                    "check its network, its DNS",
		"E: Unable to locate package postgresql": "its package lists are empty or stale",
	} {
		err := aptHint(errors.New(msg), "")
		if !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("aptHint(%q) = %q, want the message and then %q", msg, err, want)
		}
	}
	if err := aptHint(errors.New("E: Sub-process /usr/bin/dpkg returned an error code (1)"), ""); strings.Contains(err.Error(), "\n") {
		t.Errorf("a dpkg failure got a network hint: %q", err)
	}
}

// TestAptSpeaksC: every install command runs with apt's and dpkg's
// messages in C's words (their lock and fetch messages are read), and
// only the messages: a new PostgreSQL cluster's collation stays the
// Pi's locale's.
func TestAptSpeaksC(t *testing.T) {
	r := &fakerun.Runner{Files: map[string]string{}}
	_ = installStep{}.Apply(context.Background(), target("postgres", facts.EngineState{}, r))
	n := 0
	for _, c := range r.Ran() {
		if strings.Contains(c, "apt-get -q") || strings.Contains(c, "systemctl enable") {
			n++
			if !strings.HasPrefix(c, "LC_MESSAGES=C ") || strings.Contains(c, "LC_ALL") {
				t.Errorf("%q: want LC_MESSAGES=C first, and no LC_ALL", c)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d install commands ran, want 3: %q", n, r.Ran())
	}
}
