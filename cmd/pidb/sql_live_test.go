package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pidb/internal/labtest"
	"pidb/job"
	"pidb/results"
)

// the sql workload's test scripts: a setup that makes a table of
// 100 x :scale counters at zero, a transaction that adds 1 to one of
// them and reads it back (so the counters' sum is the transactions the
// server committed), and one whose INSERT fails on a duplicate key for
// about half its transactions.
const (
	sqlSetup = `-- a table of counters, as many as 100 x the scale
DROP TABLE IF EXISTS counter;
CREATE TABLE counter (k INT PRIMARY KEY, n INT NOT NULL);
INSERT INTO counter (k, n)
  WITH RECURSIVE s (k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM s WHERE k < 100 * :scale)
  SELECT k, 0 FROM s;
DROP TABLE IF EXISTS seen;
CREATE TABLE seen (k INT PRIMARY KEY);
`
	sqlCount = `\set k random(1, 100 * :scale)
BEGIN;
UPDATE counter SET n = n + 1 WHERE k = :k;
SELECT n FROM counter WHERE k = :k;
COMMIT;
`
	sqlDuplicates = `\set k random(1, 2 * :client_id)
BEGIN;
UPDATE counter SET n = n + 1 WHERE k = 1;
INSERT INTO seen (k) VALUES (:k);
DELETE FROM seen WHERE k = :k AND :k % 2 = 0;
COMMIT;
`
	sqlMissing = `SELECT 1;
\set k random(1, 10)

SELECT n FROM no_such_table WHERE k = :k;
`
)

// TestBenchSQL runs a user's script on MariaDB and PostgreSQL, with each
// protocol, and checks it by what the servers hold after: the setup
// script made its table at the scale asked for, and the counters the
// script adds 1 to add up to the transactions the run measured, with
// those of its warm-up and the few cut at its end. A script whose
// statements fail is counted by the server's error, rolled back, and the
// next transaction runs (no "transaction aborted" errors); a script that
// names a table not there is refused before its run, at its line. On a
// Pi 3 and a Pi 4 of their own (clones of provisioned ones).
func TestBenchSQL(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4", "pi3")
	dir := t.TempDir()
	file := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	setup, count, dups, missing := file("setup.sql", sqlSetup), file("count.sql", sqlCount), file("dups.sql", sqlDuplicates), file("missing.sql", sqlMissing)
	for _, tc := range []struct{ host, engine, query, dupKind string }{
		{"pi3", "mariadb", `mariadb -NBe "SELECT COUNT(*), SUM(n) FROM pidb.counter"`, "mysql 1062"},
		{"pi4", "postgres", `cd /tmp && runuser -u postgres -- psql -AtX -F "	" -d pidb -c "SELECT COUNT(*), SUM(n) FROM counter"`, "sqlstate 23505"},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			h := provisionedAsRoot(t, inv, tc.host)
			out := t.TempDir()
			args := []string{"bench", "-i", inv.Path, "--limit", tc.host, "--workload", "sql", "--setup-script", setup, "--clients", "4", "--out", out}
			for _, proto := range []string{"simple", "prepared"} {
				b := benchOne(t, append(args, "--script", count, "--scale", "3", "--duration", "3s", "--warmup", "1s", "--protocol", proto)...)
				if b.Workload != "sql" || string(b.Engine) != tc.engine || b.Transactions == 0 || len(b.Errors) != 0 {
					t.Errorf("%s: result %+v", proto, b)
				}
				if b.QPS < 3.9*b.TPS || b.QPS > 4.1*b.TPS {
					t.Errorf("%s: qps %.1f is not the script's 4 statements per transaction at tps %.1f", proto, b.QPS, b.TPS)
				}
				held := strings.Fields(labtest.MustSSH(t, h, tc.query))
				if len(held) != 2 || held[0] != "300" {
					t.Fatalf("%s: the counters after the run: %q, want the setup's 300 at scale 3", proto, held)
				}
				sum, _ := strconv.ParseInt(held[1], 10, 64)
				if all := ranInAll(t, b); sum < b.Transactions || sum > all+4 {
					t.Errorf("%s: the counters add up to %d, for %d measured transactions and %d with the warm-up's", proto, sum, b.Transactions, all)
				}
				run, err := results.Load(filepath.Join(b.RunDir, "run.json"))
				if err != nil {
					t.Fatal(err)
				}
				if w := run.Workload; w.Name != "sql" || w.Scale != 3 || w.Protocol != proto || w.Script == nil || w.Script.Name != "count.sql" || len(w.Script.SHA256) != 64 ||
					w.Setup == nil || w.Setup.Name != "setup.sql" {
					t.Errorf("%s: the saved run's workload %+v", proto, w)
				}
			}
			// duplicate keys: each failed transaction rolled back (the
			// UPDATE's 1 gone with it), none left aborted for the next
			b := benchOne(t, append(args, "--script", dups, "--duration", "3s", "--warmup", "0s", "--protocol", "prepared")...)
			if b.Transactions == 0 || b.Errors[tc.dupKind] == 0 || len(b.Errors) != 1 {
				t.Errorf("duplicates: %d transactions, errors %v; want only %s", b.Transactions, b.Errors, tc.dupKind)
			}
			first := strings.Fields(labtest.MustSSH(t, h, strings.Replace(tc.query, "COUNT(*), SUM(n)", "COUNT(*), MAX(n)", 1)))
			if n, _ := strconv.ParseInt(first[len(first)-1], 10, 64); n < b.Transactions || n > ranInAll(t, b)+4 {
				t.Errorf("duplicates: counter 1 at %d for %d committed transactions: the failed ones were not rolled back", n, b.Transactions)
			}
			// a table that is not there: refused before the run, at its line
			code, stdout, errOut := runPidb(t, append(args, "--script", missing, "--duration", "3s", "--json")...)
			var res []job.BenchResult
			if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != 1 || len(res) != 1 || !strings.Contains(res[0].Error, missing+":4: ") || res[0].Measured() {
				t.Errorf("a missing table: exit %d, %v\n%s\n%s", code, err, stdout, errOut)
			}
		})
	}
}
