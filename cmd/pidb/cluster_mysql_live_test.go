package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"pidb/cluster"
	"pidb/internal/labtest"
	"pidb/inventory"
)

// TestMySQLClusterOnTheLab: a semi-sync Oracle MySQL cluster of three CM4s
// of the lab's ubuntu release (MySQL 9.7), whose cards were copied from
// one on which pidb had installed and provisioned MySQL alone (so each
// starts with its server_uuid and its certificate, which pidb makes
// their own: one install, not three): the replicas seeded from a mysqldump of the primary with its GTIDs and
// replicating from it by auto-position over TLS, the primary's
// certificate and address verified (the servers' own SHOW REPLICA
// STATUS, and pidb cluster status); validate judging the replicas by
// their replication; rows written on the primary on both replicas; a
// workload that writes run on the primary with each replica's lag read
// beside it; a second run changing nothing; a switchover and back, with
// the rows written on each new primary on every host, and a provision
// after each changing nothing.
func TestMySQLClusterOnTheLab(t *testing.T) {
	reserved := labtest.Reserve(t, "cm4", "cm4", "cm4")
	t.Parallel()
	inv := reserved.CardCopies(t, "ubuntu", func(first *inventory.Inventory) {
		if code, res, errOut := provisionLab(t, "-i", first.Path); code != 0 {
			t.Fatalf("provision %s alone: exit %d %+v\n%s", first.Hosts[0].Name, code, res, errOut)
		}
	})
	primary, r1, r2 := inv.Hosts[0], inv.Hosts[1], inv.Hosts[2]
	addCluster(t, inv, "shop", "synchronous = true\n")
	root := func(h inventory.Host) inventory.Host { return labtest.RootHost(t, inv, h.Name) }
	sql := func(h inventory.Host, q string) string {
		return strings.TrimSpace(labtest.MustSSH(t, root(h), "mysql -NB -e "+shellQuote(q)))
	}
	// a replica's SHOW REPLICA STATUS, read as the server prints it
	replica := func(h inventory.Host) map[string]string {
		t.Helper()
		out := labtest.MustSSH(t, root(h), "mysql --batch -e 'SHOW REPLICA STATUS'")
		if out == "" {
			return nil
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: SHOW REPLICA STATUS: %q", h.Name, out)
		}
		names, values := strings.Split(lines[0], "\t"), strings.Split(lines[1], "\t")
		m := map[string]string{}
		for i, n := range names {
			if i < len(values) {
				m[n] = values[i]
			}
		}
		return m
	}

	// the copies are their first's card: one server_uuid on all three
	copied := map[string]bool{}
	for _, h := range inv.Hosts {
		copied[sql(h, "SELECT @@server_uuid")] = true
	}
	if len(copied) != 1 {
		t.Fatalf("the copied cards' server UUIDs: %v, want one", copied)
	}

	code, res, errOut := provisionLab(t, "-i", inv.Path)
	if code != 0 {
		t.Fatalf("provision: exit %d %+v\n%s", code, res, errOut)
	}
	if !contains(res[primary.Name].Changed, "replication") || !contains(res[r1.Name].Changed, "replica") || !contains(res[r2.Name].Changed, "replica") {
		t.Errorf("the accounts for replication and the replicas' seeding: %+v", res)
	}
	following := func(h, from inventory.Host) bool {
		s := replica(h)
		return s["Source_Host"] == from.Address && s["Source_User"] == "pidb_replication" && s["Auto_Position"] == "1" &&
			s["Replica_IO_Running"] == "Yes" && s["Replica_SQL_Running"] == "Yes" && s["Source_SSL_Allowed"] == "Yes" && s["Source_SSL_Verify_Server_Cert"] == "Yes"
	}
	for _, r := range []inventory.Host{r1, r2} {
		if !following(r, primary) {
			t.Errorf("%s's SHOW REPLICA STATUS: %v", r.Name, replica(r))
		}
		if got := sql(r, "SELECT @@read_only, @@log_bin, @@log_replica_updates, @@gtid_mode"); got != "1\t1\t1\tON" {
			t.Errorf("%s: read_only, log_bin, log_replica_updates, gtid_mode: %q", r.Name, got)
		}
	}
	uuids := map[string]bool{}
	for _, h := range inv.Hosts {
		uuids[sql(h, "SELECT @@server_uuid")] = true
	}
	if len(uuids) != 3 {
		t.Errorf("server UUIDs: %v, want three", uuids)
	}
	// semi-sync: the primary has both replicas acknowledging (MySQL's
	// plugins loaded at start, both sides on)
	semisync := func(h inventory.Host) {
		t.Helper()
		q := "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_source_clients'"
		for start := time.Now(); sql(h, q) != "Rpl_semi_sync_source_clients\t2"; time.Sleep(200 * time.Millisecond) {
			if time.Since(start) > 30*time.Second {
				t.Fatalf("%s: %q, want 2 semi-sync replicas", h.Name, sql(h, q))
			}
		}
	}
	semisync(primary)
	status := func() (int, []cluster.Status, string) { t.Helper(); return clusterStatus(t, inv.Path) }
	if code, sts, errOut := status(); code != 0 || len(sts) != 1 || !sts[0].OK || sts[0].Replicas[0].State != cluster.Streaming || sts[0].Replicas[1].State != cluster.Streaming || sts[0].Replicas[0].LagTransactions == nil {
		t.Errorf("cluster status: exit %d %+v\n%s", code, sts, errOut)
	}
	if code, vs := validateHosts(t, inv.Path, r1.Name+","+r2.Name); code != 0 || vs[r1.Name].Verdict != "PASS" || vs[r2.Name].Verdict != "PASS" {
		t.Errorf("validate the replicas: exit %d %+v", code, vs)
	}

	// rows written on the primary reach both replicas (1,000 a time, by
	// a recursive WITH: MySQL has no seq tables)
	rows := 0
	write := func(h inventory.Host) {
		t.Helper()
		sql(h, fmt.Sprintf("CREATE DATABASE IF NOT EXISTS canary; CREATE TABLE IF NOT EXISTS canary.kept (id int PRIMARY KEY, note text); "+
			"INSERT INTO canary.kept WITH RECURSIVE s(n) AS (SELECT %d UNION ALL SELECT n + 1 FROM s WHERE n < %d) SELECT n, CONCAT('row ', n) FROM s", rows+1, rows+1000))
		rows += 1000
	}
	replicated := func(h inventory.Host) {
		t.Helper()
		for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
			got := strings.TrimSpace(labtest.MustSSH(t, root(h), "mysql -NB -e 'SELECT COUNT(DISTINCT note) FROM canary.kept' 2>/dev/null || true"))
			if got == fmt.Sprint(rows) {
				return
			}
			if time.Since(start) > time.Minute {
				t.Fatalf("%s has %q canary rows a minute on, not %d", h.Name, got, rows)
			}
		}
	}
	write(primary)
	replicated(r1)
	replicated(r2)

	// a workload that writes: on the primary alone, each replica's lag
	// read on it beside the run, and the rows it wrote on both replicas
	familyWrites(t, inv, primary, []inventory.Host{r1, r2}, sql)

	idle := func(after string) {
		t.Helper()
		code, res, errOut := provisionLab(t, "-i", inv.Path)
		if code != 0 {
			t.Fatalf("provision %s: exit %d\n%s", after, code, errOut)
		}
		for _, h := range inv.Hosts {
			if len(res[h.Name].Changed) != 0 {
				t.Errorf("provision %s changed %s: %v %v", after, h.Name, res[h.Name].Changed, res[h.Name].Notes)
			}
		}
	}
	idle("again")

	// a switchover to r1 and back: the roles change on the servers, in
	// their drop-ins and in the inventory; rows written on each new
	// primary reach the others
	configured := func(h inventory.Host) bool {
		return strings.Contains(labtest.MustSSH(t, root(h), "my_print_defaults mysqld"), "--read_only=ON")
	}
	for _, step := range []struct{ to, from, other inventory.Host }{{r1, primary, r2}, {primary, r1, r2}} {
		if code, out := switchoverTo(t, inv.Path, "shop", step.to); code != 0 {
			t.Fatalf("switchover to %s: exit %d\n%s", step.to.Name, code, out)
		}
		semisync(step.to)
		if ro := sql(step.to, "SELECT @@read_only"); ro != "0" || replica(step.to) != nil || configured(step.to) {
			t.Errorf("%s after the switchover to it: read_only %s (configured %v), SHOW REPLICA STATUS %v", step.to.Name, ro, configured(step.to), replica(step.to))
		}
		for _, f := range []inventory.Host{step.from, step.other} {
			if !following(f, step.to) || sql(f, "SELECT @@read_only") != "1" || !configured(f) {
				t.Errorf("%s after the switchover to %s: read_only %s (configured %v), %v", f.Name, step.to.Name, sql(f, "SELECT @@read_only"), configured(f), replica(f))
			}
		}
		if src, _ := os.ReadFile(inv.Path); !strings.Contains(string(src), "primary = \""+step.to.Name+"\"\nreplicas = [\""+step.from.Name+"\"") {
			t.Errorf("the inventory after the switchover to %s:\n%s", step.to.Name, src)
		}
		write(step.to)
		for _, h := range inv.Hosts {
			replicated(h)
		}
		if code, sts, errOut := status(); code != 0 || !sts[0].OK || sts[0].Primary.Host != step.to.Name {
			t.Errorf("cluster status after the switchover to %s: exit %d %+v\n%s", step.to.Name, code, sts, errOut)
		}
		idle("after the switchover to " + step.to.Name)
	}
	_, out, _ := runPidb(t, "cluster", "status", "-i", inv.Path)
	t.Logf("cluster status:\n%s", out)
}
