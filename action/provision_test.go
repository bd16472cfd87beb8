package action

import (
	"strings"
	"testing"

	"pidb/inventory"
	"pidb/usage"
)

// TestClustersWhole: a replica is provisioned with its primary, and a
// cluster only of an engine pidb makes clusters of, refused before any
// host is touched.
func TestClustersWhole(t *testing.T) {
	src := `[[host]]
name = "pi4"
address = "10.0.0.40"
[[host]]
name = "pi3"
address = "10.0.0.30"
[[host]]
name = "m1"
address = "10.0.0.61"
engine = "mysql"
[[host]]
name = "m2"
address = "10.0.0.62"
engine = "mysql"
[[host]]
name = "alone"
address = "10.0.0.70"
[[cluster]]
name = "quiz"
primary = "pi4"
replicas = ["pi3"]
[[cluster]]
name = "shop"
primary = "m1"
replicas = ["m2"]
`
	inv, err := inventory.Parse("inv.toml", "/", src)
	if err != nil {
		t.Fatal(err)
	}
	sel := func(limit string) []inventory.Host {
		hosts, err := inv.Select(limit)
		if err != nil {
			t.Fatal(err)
		}
		return hosts
	}
	for _, ok := range []string{"pi4,pi3", "pi4", "alone", "pi4,pi3,alone"} {
		if err := clustersWhole(sel(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	err = clustersWhole(sel("pi3,alone"))
	if !usage.Is(err) || err.Error() != `--limit selects pi3, a replica in cluster "quiz", without its primary pi4, which it is seeded from: select pi4 too` {
		t.Errorf("a replica without its primary: %v", err)
	}
	if err := clustersWhole(sel("m1,m2")); err == nil || !strings.Contains(err.Error(), `cluster "shop": pidb provisions PostgreSQL clusters only so far, not mysql`) {
		t.Errorf("a MariaDB cluster: %v", err)
	}
}
