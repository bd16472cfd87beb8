package provision

import (
	"net/netip"
	"strings"
	"testing"
)

// TestUFWPlan: pidb's rules are matched whole, a rule at a time, and the
// ones allow_from no longer names are deleted; rules added by hand stay.
func TestUFWPlan(t *testing.T) {
	const out = `Status: active

To                         Action      From
--                         ------      ----
22/tcp                     ALLOW       10.0.0.0/24
5432/tcp                   ALLOW       192.168.9.0/24             # pidb
5432/tcp                   ALLOW       172.16.5.0/24
Added user rules (see 'ufw status' for running firewall):
ufw allow from 10.0.0.0/24 to any port 22 proto tcp
ufw allow from 192.168.9.0/24 to any port 5432 proto tcp comment 'pidb'
ufw allow from 192.168.7.0/24 to any port 3306 proto tcp comment 'pidb'
ufw allow from 172.16.5.0/24 to any port 5432 proto tcp
`
	allow := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("172.16.5.0/24")}
	got := strings.Join(ufwPlan(out, 5432, allow), "\n")
	// 10.0.0.0/24 and the port 5432 both appear in the output, in two
	// other rules: not an allowed port; 172.16.5.0/24 is allowed by hand;
	// pidb's 192.168.9.0/24 is no longer wanted; the rule for another
	// port (another engine's) is not this step's
	want := "ufw allow from 10.0.0.0/24 to any port 5432 proto tcp comment pidb\n" +
		"ufw delete allow from 192.168.9.0/24 to any port 5432 proto tcp"
	if got != want {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}
	// allow_from emptied: pidb's rules go, and only those
	if got := strings.Join(ufwPlan(out, 5432, nil), "\n"); got != "ufw delete allow from 192.168.9.0/24 to any port 5432 proto tcp" {
		t.Errorf("no allow_from: %q", got)
	}
	// as wanted: nothing
	if got := ufwPlan(out, 5432, []netip.Prefix{netip.MustParsePrefix("192.168.9.0/24")}); len(got) != 0 {
		t.Errorf("nothing to do: %q", got)
	}
}
