package provision

import "testing"

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
