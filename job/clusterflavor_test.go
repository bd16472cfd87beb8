package job

import (
	"testing"

	"pidb/dbms"
	"pidb/facts"
	"pidb/inventory"
	"pidb/provision"
)

// TestClusterFlavor: a cluster's host on MySQL's own server, installed or
// the one Ubuntu ships, is refused before any step; MariaDB (Debian's) and
// PostgreSQL go on, and a host on its own is not asked.
func TestClusterFlavor(t *testing.T) {
	shop := &provision.Cluster{Name: "shop"}
	my := inventory.Host{Name: "pi3", Engine: dbms.MySQLFamily}
	on := func(id, flavor string) facts.Facts {
		f := facts.Facts{Engine: facts.EngineState{Flavor: dbms.Flavor(flavor)}}
		f.OS.ID = id
		return f
	}
	const refused = `cluster "shop": pi3 runs MySQL (or its distribution ships it), and pidb makes clusters of PostgreSQL and MariaDB only: nothing was changed on it`
	for _, c := range []struct {
		c    *provision.Cluster
		h    inventory.Host
		f    facts.Facts
		want string
	}{
		{shop, my, on("ubuntu", ""), refused},
		{shop, my, on("debian", "mysql"), refused},
		{shop, my, on("debian", ""), ""},
		{shop, my, on("raspbian", "mariadb"), ""},
		{shop, inventory.Host{Name: "pi4", Engine: dbms.PostgresFamily}, on("ubuntu", ""), ""},
		{nil, my, on("ubuntu", ""), ""},
	} {
		err := clusterFlavor(c.c, c.h, c.f)
		if got := ""; err != nil {
			got = err.Error()
			if got != c.want {
				t.Errorf("%s on %s (%q): %q, want %q", c.h.Name, c.f.OS.ID, c.f.Engine.Flavor, got, c.want)
			}
		} else if c.want != "" {
			t.Errorf("%s on %s (%q): not refused", c.h.Name, c.f.OS.ID, c.f.Engine.Flavor)
		}
	}
}
