package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"pidb/cluster"
	"pidb/internal/labtest"
	"pidb/inventory"
)

// TestMariaDBClusterOnTheLab: a semi-sync MariaDB cluster of three Pi 3s (clones of
// provisioned Pis, each on its own): the replicas seeded from a dump of
// the primary and replicating from it by GTID over TLS (the servers' own
// SHOW SLAVE STATUS, and pidb cluster status); rows written on the
// primary on both replicas; a second run changing nothing; validate
// judging the replicas by their replication.
func TestMariaDBClusterOnTheLab(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "pi3", "pi3", "pi3")
	primary, r1, r2 := inv.Hosts[0], inv.Hosts[1], inv.Hosts[2]
	addCluster(t, inv, "shop", "synchronous = true\n")
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
	// semi-sync: the primary has both replicas acknowledging
	semisync := func(h inventory.Host) {
		t.Helper()
		q := "SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'Rpl_semi_sync_master_clients'"
		for start := time.Now(); sql(h, q) != "2"; time.Sleep(200 * time.Millisecond) {
			if time.Since(start) > 30*time.Second {
				t.Fatalf("%s: %s semi-sync replicas, want 2", h.Name, sql(h, q))
			}
		}
	}
	semisync(primary)
	status := func() (int, []cluster.Status, string) { t.Helper(); return clusterStatus(t, inv.Path) }
	if code, sts, errOut := status(); code != 0 || len(sts) != 1 || !sts[0].OK || sts[0].Replicas[0].State != cluster.Streaming || sts[0].Replicas[1].State != cluster.Streaming || sts[0].Replicas[0].LagTransactions == nil {
		t.Errorf("cluster status: exit %d %+v\n%s", code, sts, errOut)
	}
	// validate judges the replicas by their replication, with no workload
	validateReplicas := func(limit string) (int, map[string]validateJSON) {
		t.Helper()
		return validateHosts(t, inv.Path, limit)
	}
	if code, vs := validateReplicas(r1.Name + "," + r2.Name); code != 0 || vs[r1.Name].Verdict != "PASS" || vs[r2.Name].Verdict != "PASS" || vs[r1.Name].TPS != nil {
		t.Errorf("validate the replicas: exit %d %+v", code, vs)
	}

	// rows written on the primary are on both replicas; a replica takes
	// no writes from pidb's account
	sql(primary, "CREATE DATABASE canary; CREATE TABLE canary.kept (id int PRIMARY KEY, note text); USE canary; INSERT INTO kept SELECT seq, CONCAT('row ', seq) FROM seq_1_to_1000")
	replicated := func(h inventory.Host, n string) {
		t.Helper()
		for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
			got := strings.TrimSpace(labtest.MustSSH(t, root(h), "mariadb -NB -e 'SELECT COUNT(*) FROM canary.kept' 2>/dev/null || true"))
			if got == n {
				return
			}
			if time.Since(start) > time.Minute {
				t.Fatalf("%s has %q canary rows a minute on, not %s", h.Name, got, n)
			}
		}
	}
	replicated(r1, "1000")
	replicated(r2, "1000")

	// the cluster measured: the quiz's data made on the primary, read on
	// every host at once, each server counting its own queries
	queries := func(h inventory.Host) int64 {
		t.Helper()
		n, err := strconv.ParseInt(sql(h, "SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'COM_SELECT'"), 10, 64)
		if err != nil {
			t.Fatalf("%s: Com_select: %v", h.Name, err)
		}
		return n
	}
	before := map[string]int64{}
	for _, h := range inv.Hosts {
		before[h.Name] = queries(h)
	}
	code, out, errOut := runPidb(t, "bench", "-i", inv.Path, "--cluster", "shop", "--workload", "quiz", "--clients", "4", "--duration", "5s", "--warmup", "1s", "--out", t.TempDir(), "--json")
	var runs []struct {
		Host    string         `json:"host"`
		Queries int64          `json:"transactions"`
		Errors  map[string]int `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &runs); code != 0 || err != nil || len(runs) != 3 {
		t.Fatalf("bench --cluster: exit %d, %v: %s\n%s", code, err, out, errOut)
	}
	for _, r := range runs {
		h := labtest.Host(t, inv, r.Host)
		if grew := queries(h) - before[h.Name]; r.Queries == 0 || len(r.Errors) != 0 || grew < r.Queries {
			t.Errorf("%s: %d queries, errors %v, the server counted %d more selects", r.Host, r.Queries, r.Errors, grew)
		}
	}

	// a workload that writes: on the primary alone, each replica's lag
	// read on it beside the run, and the rows it wrote on both replicas
	familyWrites(t, inv, primary, []inventory.Host{r1, r2}, sql)

	// again: nothing to change anywhere
	code, res, errOut = provisionLab(t, "-i", inv.Path)
	if code != 0 {
		t.Fatalf("provision again: exit %d\n%s", code, errOut)
	}
	for _, h := range inv.Hosts {
		if len(res[h.Name].Changed) != 0 {
			t.Errorf("provision again changed %s: %v %v", h.Name, res[h.Name].Changed, res[h.Name].Notes)
		}
	}

	// a replica stopped: status fails and names it; started, it catches up
	// (its socket too: Debian's MariaDB starts on a client's connection)
	labtest.MustSSH(t, root(r2), "systemctl stop mariadb.socket mariadb")
	if code, sts, _ := status(); code != 1 || sts[0].OK || sts[0].Replicas[1].State != cluster.Unreachable {
		t.Errorf("a stopped replica: exit %d %+v", code, sts)
	}
	sql(primary, "USE canary; INSERT INTO kept SELECT seq, CONCAT('row ', seq) FROM seq_1001_to_2000")
	labtest.MustSSH(t, root(r2), "systemctl start mariadb.socket mariadb")
	replicated(r2, "2000")

	// a replica made anew, a server of its own with nothing in it: seeded again
	labtest.MustSSH(t, root(r1), "systemctl stop mariadb && rm -rf /var/lib/mysql/* && mariadb-install-db --user=mysql >/dev/null 2>&1 && systemctl start mariadb")
	if code, sts, _ := status(); code != 1 || sts[0].Replicas[0].State != cluster.NotAStandby {
		t.Errorf("a replica made anew: exit %d %+v", code, sts)
	}
	if code, vs := validateReplicas(r1.Name); code != 1 || vs[r1.Name].Verdict != "FAIL" || !strings.Contains(fmt.Sprint(vs[r1.Name].Reasons), "is a server of its own, not a replica") {
		t.Errorf("validate a replica made anew: exit %d %+v", code, vs)
	}
	code, res, errOut = provisionLab(t, "-i", inv.Path)
	if code != 0 || !contains(res[r1.Name].Changed, "replica") {
		t.Fatalf("provision after a replica was made anew: exit %d %+v\n%s", code, res[r1.Name], errOut)
	}
	replicated(r1, "2000")
	if code, sts, errOut := status(); code != 0 || !sts[0].OK {
		t.Errorf("cluster status after the new seed: exit %d %+v\n%s", code, sts, errOut)
	}

	// a switchover to r1 and back: a dry run changes nothing; then the
	// roles change, on the servers, in their drop-ins and in the
	// inventory, rows written on the new primary reach the others, and a
	// provision after it changes nothing
	switchover := func(to inventory.Host, more ...string) (int, string) {
		t.Helper()
		return switchoverTo(t, inv.Path, "shop", to, more...)
	}
	if code, out := switchover(r1, "--dry-run"); code != 0 || !strings.Contains(out, "would promote "+r1.Name) {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if sql(primary, "SELECT @@read_only") != "0" || slave(r1)["Master_Host"] != primary.Address {
		t.Fatal("the dry run changed the primary or the replica")
	}
	// the read_only the server's configuration files give it at its next start
	configured := func(h inventory.Host) bool {
		return strings.Contains(labtest.MustSSH(t, root(h), "my_print_defaults --mysqld"), "--read_only=ON")
	}
	rows := 2000
	for _, step := range []struct{ to, from, other inventory.Host }{{r1, primary, r2}, {primary, r1, r2}} {
		if code, out := switchover(step.to); code != 0 {
			t.Fatalf("switchover to %s: exit %d\n%s", step.to.Name, code, out)
		}
		semisync(step.to)
		if ro := sql(step.to, "SELECT @@read_only"); ro != "0" || slave(step.to) != nil || configured(step.to) {
			t.Errorf("%s after the switchover to it: read_only %s (configured %v), SHOW SLAVE STATUS %v", step.to.Name, ro, configured(step.to), slave(step.to))
		}
		for _, f := range []inventory.Host{step.from, step.other} {
			if s := slave(f); s["Master_Host"] != step.to.Address || s["Slave_IO_Running"] != "Yes" || s["Slave_SQL_Running"] != "Yes" || sql(f, "SELECT @@read_only") != "1" || !configured(f) {
				t.Errorf("%s after the switchover to %s: read_only %s (configured %v), %v", f.Name, step.to.Name, sql(f, "SELECT @@read_only"), configured(f), s)
			}
		}
		if src, _ := os.ReadFile(inv.Path); !strings.Contains(string(src), "primary = \""+step.to.Name+"\"\nreplicas = [\""+step.from.Name+"\"") {
			t.Errorf("the inventory after the switchover to %s:\n%s", step.to.Name, src)
		}
		sql(step.to, fmt.Sprintf("USE canary; INSERT INTO kept SELECT seq, CONCAT('row ', seq) FROM seq_%d_to_%d", rows+1, rows+1000))
		rows += 1000
		for _, h := range inv.Hosts {
			replicated(h, fmt.Sprint(rows))
		}
		if code, sts, errOut := status(); code != 0 || !sts[0].OK || sts[0].Primary.Host != step.to.Name {
			t.Errorf("cluster status after the switchover to %s: exit %d %+v\n%s", step.to.Name, code, sts, errOut)
		}
		code, res, errOut := provisionLab(t, "-i", inv.Path)
		if code != 0 {
			t.Fatalf("provision after the switchover to %s: exit %d\n%s", step.to.Name, code, errOut)
		}
		for _, h := range inv.Hosts {
			if len(res[h.Name].Changed) != 0 {
				t.Errorf("provision after the switchover to %s changed %s: %v %v", step.to.Name, h.Name, res[h.Name].Changed, res[h.Name].Notes)
			}
		}
	}
	// to a replica that is stopped: refused, the primary as it was
	labtest.MustSSH(t, root(r2), "systemctl stop mariadb.socket mariadb")
	if code, out := switchover(r2); code != 1 || sql(primary, "SELECT @@read_only") != "0" {
		t.Errorf("a switchover to a stopped replica: exit %d\n%s", code, out)
	}
	labtest.MustSSH(t, root(r2), "systemctl start mariadb.socket mariadb")
	// every canary row on every host
	for _, h := range inv.Hosts {
		replicated(h, fmt.Sprint(rows))
		if got := sql(h, "SELECT COUNT(DISTINCT note) FROM canary.kept"); got != fmt.Sprint(rows) {
			t.Errorf("%s: %s distinct canary rows, want %d", h.Name, got, rows)
		}
	}
	_, out, _ = runPidb(t, "cluster", "status", "-i", inv.Path)
	t.Logf("cluster status:\n%s", out)
}

// familyWrites runs a workload that writes on the MySQL family's cluster
// shop of inv, on its primary alone, with each replica's lag read on it
// beside the run, and checks the rows it wrote reach both replicas (sql
// asks a host's server as root).
func familyWrites(t *testing.T, inv *inventory.Inventory, primary inventory.Host, replicas []inventory.Host, sql func(inventory.Host, string) string) {
	t.Helper()
	dir := t.TempDir()
	setup, script := dir+"/setup.sql", dir+"/notes.sql"
	os.WriteFile(setup, []byte("CREATE TABLE IF NOT EXISTS notes (id INT AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL);\n"), 0o644)
	os.WriteFile(script, []byte("\\set n random(1, 1000)\nINSERT INTO notes (n) VALUES (:n);\n"), 0o644)
	code, out, errOut := runPidb(t, "bench", "-i", inv.Path, "--cluster", "shop", "--workload", "sql", "--setup-script", setup, "--script", script, "--clients", "4", "--duration", "8s", "--warmup", "1s", "--thermal-interval", "1s", "--out", t.TempDir(), "--json")
	var writes []clusterBenchJSON
	if err := json.Unmarshal([]byte(out), &writes); code != 0 || err != nil || len(writes) != 1 || writes[0].Host != primary.Name || len(writes[0].Replicas) != len(replicas) {
		t.Fatalf("bench --cluster with a script that writes: exit %d, %v: %s\n%s", code, err, out, errOut)
	}
	for _, r := range writes[0].Replicas {
		// how many readings fit in the run is the machine's pace: one
		// is the evidence that it was read beside the workload
		if r.Readings < 1 || r.NotConnected != 0 || r.MaxTransactions == nil {
			t.Errorf("%s's lag under writes: %+v, want readings, each of it replicating\n%s", r.Host, r, out)
		}
	}
	notes := sql(primary, "SELECT COUNT(*) FROM pidb.notes")
	for _, r := range replicas {
		for start := time.Now(); sql(r, "SELECT COUNT(*) FROM pidb.notes") != notes; time.Sleep(200 * time.Millisecond) {
			if time.Since(start) > time.Minute {
				t.Fatalf("%s has not the primary's %s notes a minute on", r.Name, notes)
			}
		}
	}
}
