package provision

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/engine"
	"pidb/internal/shtest"
)

// TestScriptsTakeValuesAsData: each of provision's script builders that
// takes a value (an address or a name from the inventory, a user or a
// rule read from the host), run under sh with its commands stubbed and
// fed hostile values, runs none of them as a command and passes each to
// its command unchanged. The data-directory move (TestMoveScript), the
// seed (TestSeedCheck) and MariaDB's dump (TestDumpCmd) have theirs.
func TestScriptsTakeValuesAsData(t *testing.T) {
	pg, _ := engine.New(dbms.Postgres, "15.8")
	maria, _ := engine.New(dbms.MariaDB, "10.11.6")
	sb := shtest.New(t)
	for _, v := range shtest.Hostile("pi4.local") {
		for _, e := range []engine.Engine{pg, maria} {
			for _, user := range []string{"root", v} {
				// the certificate: the address in its subject and name
				r := sb.Run(makeCertCmd(e, v, user), "")
				r.Check(t, fmt.Sprintf("makeCertCmd(%s, %q, %q)", e.Flavor, v, user), "", "/CN="+v, "subjectAltName=DNS:"+v)
				if user == "root" && !slices.ContainsFunc(r.Calls, func(c shtest.Call) bool { return c.Name == "openssl" }) {
					t.Errorf("makeCertCmd: no openssl: %v", r.Calls)
				}
			}
		}
		// ufw's rules, read from the host: one of pidb's with a hostile
		// source is dropped with the source as it is, or left
		added := "Status: active\nufw allow from " + v + " to any port 5432 proto tcp comment 'pidb'\n"
		for _, cmd := range ufwPlan(added, 5432, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24")}) {
			r := sb.Run(cmd, "")
			if strings.Contains(cmd, "delete") {
				r.Check(t, "ufwPlan's delete", "", v)
			} else {
				r.Check(t, "ufwPlan's allow", "", "10.0.0.0/24")
			}
		}
	}
}
