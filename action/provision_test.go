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
	if err := clustersWhole(sel("m1,m2")); err != nil {
		t.Errorf("a MariaDB cluster: %v", err)
	}
}

// TestBenchClusterRefusals: a cluster is measured whole, not with
// --limit, and by its name.
func TestBenchClusterRefusals(t *testing.T) {
	src := "[[host]]\nname = \"pi4\"\naddress = \"10.0.0.40\"\n[[host]]\nname = \"pi3\"\naddress = \"10.0.0.30\"\n[[cluster]]\nname = \"quiz\"\nprimary = \"pi4\"\nreplicas = [\"pi3\"]\n"
	inv, err := inventory.Parse("inv.toml", "/", src)
	if err != nil {
		t.Fatal(err)
	}
	hosts, c, err := clusterHosts(inv, "quiz", "")
	if err != nil || c.Name != "quiz" || len(hosts) != 2 || hosts[0].Name != "pi4" || hosts[1].Name != "pi3" {
		t.Fatalf("clusterHosts: %v %+v %v", hosts, c, err)
	}
	if _, _, err := clusterHosts(inv, "quiz", "pi4"); !usage.Is(err) || !strings.Contains(err.Error(), "--cluster and --limit") {
		t.Errorf("with --limit: %v", err)
	}
	if _, _, err := clusterHosts(inv, "qiuz", ""); err == nil || !strings.Contains(err.Error(), `did you mean "quiz"`) {
		t.Errorf("a misspelt cluster: %v", err)
	}
}
