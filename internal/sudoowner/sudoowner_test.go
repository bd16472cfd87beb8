package sudoowner

import "testing"

// TestFromEnv: the user who ran sudo, only for root, never root itself;
// a missing group leaves the group as it is.
func TestFromEnv(t *testing.T) {
	env := func(uid, gid string) func(string) string {
		return func(k string) string { return map[string]string{"SUDO_UID": uid, "SUDO_GID": gid}[k] }
	}
	for _, c := range []struct {
		name, uid, gid string
		euid           int
		want           Owner
	}{
		{"sudo", "1000", "1001", 0, Owner{1000, 1001, true}},
		{"no group", "1000", "", 0, Owner{1000, -1, true}},
		{"not root", "1000", "1001", 1000, Owner{}},
		{"sudo -u other", "1000", "1001", 1002, Owner{}},
		{"root's sudo", "0", "0", 0, Owner{}},
		{"no sudo", "", "", 0, Owner{}},
		{"garbage", "x", "1", 0, Owner{}},
	} {
		if got := FromEnv(env(c.uid, c.gid), c.euid); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
