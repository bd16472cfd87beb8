package provision

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"pidb/cluster"
	"pidb/dbms"
	"pidb/engine"
	"pidb/internal/version"
	"pidb/remote"
	"pidb/secrets"
)

// A cluster of the MySQL family (MariaDB, Oracle MySQL): every member
// keeps the replication account for each of the others (any of them may
// become the primary), REQUIRE SSL, with REPLICATION SLAVE alone, made
// outside the binary log; a replica that does not replicate from its
// primary is seeded from a consistent dump of it (mariadb-dump
// --single-transaction --master-data --gtid, or mysqldump
// --single-transaction --set-gtid-purged=ON, piped through the
// controller), then follows it by GTID over TLS, the primary's
// certificate verified.

// systemDatabases are MariaDB's own, never dumped or dropped; the
// accounts' marks are each host's own too.
var systemDatabases = []string{"mysql", "information_schema", "performance_schema", "sys", markDatabase}

// myReplicationAccount is the replication account at one address, as the
// server holds it.
type myReplicationAccount struct {
	hash, ssl string
	okay      bool // REPLICATION SLAVE and nothing more
}

const myReplicationListing = "SELECT host, IFNULL(HEX(authentication_string), ''), ssl_type, IF(Repl_slave_priv = 'Y' AND CONCAT(Select_priv, Insert_priv, Update_priv, Delete_priv, Create_priv, Drop_priv, Grant_priv, Super_priv, File_priv, Alter_priv, Process_priv, Reload_priv) = 'NNNNNNNNNNNN', 'ok', 'more') FROM mysql.user WHERE user = '" + ReplicationUser + "'"

func readMyReplication(ctx context.Context, t *Target, e engine.Engine) (map[string]myReplicationAccount, error) {
	rows, err := query(ctx, t, e, myReplicationListing, 4)
	if err != nil {
		return nil, err
	}
	out := map[string]myReplicationAccount{}
	for _, r := range rows {
		hash, err := unhex(r[1])
		if err != nil {
			return nil, fmt.Errorf("read the replication accounts: a hash not in hex for %q", r[0])
		}
		out[r[0]] = myReplicationAccount{hash: hash, ssl: r[2], okay: r[3] == "ok"}
	}
	return out, nil
}

// myReplicationPlan is what the replication step would do on a MariaDB
// member, in words, and the SQL that does it: the account at each peer's
// address, and none at any other.
func myReplicationPlan(t *Target, have map[string]myReplicationAccount, password string) (todo []string, sql string) {
	var b strings.Builder
	b.WriteString(mysqlQuietSession)
	want := map[string]bool{}
	for _, p := range t.peers() {
		h := p.Addr().String()
		want[h] = true
		acct := mysqlAccount(ReplicationUser, h)
		grant := fmt.Sprintf("GRANT REPLICATION SLAVE ON *.* TO %s;\n", acct)
		a, ok := have[h]
		if !ok {
			todo = append(todo, "the replication account at "+h)
			fmt.Fprintf(&b, "CREATE USER %s %s REQUIRE SSL;\n%s", acct, identifiedBy(t.Facts.Engine.Flavor, password), grant)
			continue
		}
		if password == "" || stale(a.hash, password) {
			todo = append(todo, "set "+ReplicationUser+"@"+h+"'s password")
			fmt.Fprintf(&b, "ALTER USER %s %s;\n", acct, identifiedBy(t.Facts.Engine.Flavor, password))
		}
		if a.ssl != "ANY" {
			todo = append(todo, ReplicationUser+"@"+h+" to require TLS")
			fmt.Fprintf(&b, "ALTER USER %s REQUIRE SSL;\n", acct)
		}
		if !a.okay {
			todo = append(todo, "give "+ReplicationUser+"@"+h+" replication and nothing more")
			fmt.Fprintf(&b, "REVOKE ALL PRIVILEGES, GRANT OPTION FROM %s;\n%s", acct, grant)
		}
	}
	var gone []string
	for h := range have {
		if !want[h] {
			gone = append(gone, h)
		}
	}
	slices.Sort(gone)
	for _, h := range gone {
		todo = append(todo, "drop "+ReplicationUser+"@"+h+", no host of the cluster's")
		fmt.Fprintf(&b, "DROP USER %s;\n", mysqlAccount(ReplicationUser, h))
	}
	if len(todo) == 0 {
		return nil, ""
	}
	return todo, b.String()
}

// myReplica is what a MariaDB replica is doing, and what it holds.
type myReplica struct {
	report  cluster.Report
	seeding bool           // an earlier seed did not finish (seedingMark)
	tables  map[string]int // each database's tables, beside MariaDB's own
}

// seedingMark is on a replica while it is seeded: whatever it holds then
// is a copy cut short, seeded again by the next provision.
const seedingMark = "/etc/mysql/pidb-seeding"

const myDatabases = "SELECT s.schema_name, COUNT(t.table_name) FROM information_schema.schemata s LEFT JOIN information_schema.tables t ON t.table_schema = s.schema_name GROUP BY s.schema_name"

// databases reads each database's tables on the host root runs on,
// beside MariaDB's own.
func databases(ctx context.Context, root remote.Runner, e engine.Engine) (map[string]int, error) {
	res, err := root.Run(ctx, e.Query(myDatabases))
	if err != nil {
		return nil, fmt.Errorf("read the databases: %w", err)
	}
	rows, err := e.Rows(string(res.Stdout), 2)
	if err != nil {
		return nil, fmt.Errorf("read the databases: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		if slices.Contains(systemDatabases, r[0]) {
			continue
		}
		n, err := strconv.Atoi(r[1])
		if err != nil {
			return nil, fmt.Errorf("read the databases: %q tables", r[1])
		}
		out[r[0]] = n
	}
	return out, nil
}

func readMyReplica(ctx context.Context, t *Target, e engine.Engine) (myReplica, error) {
	var st myReplica
	var err error
	if st.report, err = cluster.Read(ctx, t.Root, e); err != nil {
		return st, err
	}
	if st.tables, err = databases(ctx, t.Root, e); err != nil {
		return st, err
	}
	out, err := t.run(ctx, "if test -e "+seedingMark+"; then echo yes; fi")
	st.seeding = strings.TrimSpace(out) == "yes"
	return st, err
}

// follows reports whether the replica replicates from the primary at
// address as pidb sets it up (running or not: a primary that is away is
// waited for, not a reason to copy everything again).
func (st myReplica) follows(address string) bool {
	r := st.report
	return !st.seeding && r.InRecovery && r.ReceiveFrom == address && r.SourceUser == ReplicationUser && r.ByGTID()
}

// own are the databases with tables that are the replica's own: not
// pidb's, and not a copy (of another primary, or cut short).
func (st myReplica) own() []string {
	if st.seeding || st.report.InRecovery {
		return nil
	}
	var out []string
	for db, n := range st.tables {
		if n > 0 && db != engine.BenchDatabase {
			out = append(out, db)
		}
	}
	slices.Sort(out)
	return out
}

// refused is the error of a replica whose own databases a copy of its
// primary would replace; nil where it has none.
func (st myReplica) refused(t *Target) error {
	if own := st.own(); len(own) > 0 {
		return fmt.Errorf("%s holds the databases %s, which a copy of %s would replace: move them off it, or leave it out of cluster %q", t.Host.Name, strings.Join(own, ", "), t.Cluster.Primary.Name, t.Cluster.Name)
	}
	return nil
}

func myCheckSeed(ctx context.Context, t *Target, e engine.Engine) (Change, error) {
	p := t.Cluster.Primary
	st, err := readMyReplica(ctx, t, e)
	if err != nil {
		return Change{}, err
	}
	if st.follows(p.Address) {
		return Change{}, nil
	}
	if err := st.refused(t); err != nil {
		return Change{}, err
	}
	was := "its databases are"
	switch {
	case st.seeding:
		was = "the copy an earlier seed cut short is"
	case st.report.InRecovery:
		was = "its copy of " + st.report.ReceiveFrom + " is"
	}
	return Change{Needed: true, Note: fmt.Sprintf("seeded from %s (a consistent %s, then replication by GTID over TLS): %s replaced by a copy of %s's", p.Name, e.DumpClient(), was, p.Name)}, nil
}

// dumpCmd is the consistent dump of the primary's databases: one
// transaction, with the GTID position it was taken at, which the replica
// takes as it loads it: MariaDB's SET GLOBAL gtid_slave_pos, MySQL's SET
// @@GLOBAL.GTID_PURGED (the primary's whole gtid_executed: the
// replica then fetches what comes after it).
func dumpCmd(e engine.Engine, dbs []string) string {
	position := []string{"--master-data=1", "--gtid"}
	if e.Flavor == dbms.MySQL {
		position = []string{"--set-gtid-purged=ON"}
	}
	args := append([]string{e.DumpClient(), "--single-transaction"}, position...)
	// "--": a database named like an option is a name
	args = append(args, "--routines", "--events", "--triggers", "--hex-blob", "--default-character-set=utf8mb4", "--databases", "--")
	return remote.Command(append(args, dbs...)...)
}

// seedLoad loads the primary's dump into the replica as root's client,
// which runs no client command the stream holds: a \! line would run as
// root on the replica. --binary-mode parses no client command but
// DELIMITER and \C; --sandbox, where the client has it (MariaDB 10.5.25,
// 10.6.18, 10.11.8, 11.x), refuses the rest.
func seedLoad(e engine.Engine) string {
	client := strings.Fields(e.Script())
	return "s=; if " + client[0] + " --help 2>/dev/null | grep -q -e '--sandbox'; then s=--sandbox; fi; exec " +
		client[0] + " --binary-mode $s " + remote.Command(client[1:]...)
}

// clearSQL makes the replica ready for its copy: not replicating, its
// databases (pidb's and copies) dropped, its binary log empty (on MySQL
// its GTIDs too, so that the dump's GTID_PURGED can be set).
func clearSQL(e engine.Engine, st myReplica) string {
	var b strings.Builder
	b.WriteString(mysqlQuietSession)
	if e.Flavor == dbms.MySQL {
		b.WriteString("STOP REPLICA;\nRESET REPLICA ALL;\n")
	} else {
		b.WriteString("STOP SLAVE;\nRESET SLAVE ALL;\n")
	}
	dbs := make([]string, 0, len(st.tables))
	for db := range st.tables {
		dbs = append(dbs, db)
	}
	slices.Sort(dbs)
	for _, db := range dbs {
		fmt.Fprintf(&b, "DROP DATABASE %s;\n", mysqlIdent(db))
	}
	b.WriteString(resetBinlog(e))
	return b.String()
}

// resetBinlog empties the binary log (and on MySQL its GTID history):
// RESET MASTER, which MySQL 8.4 renamed RESET BINARY LOGS AND GTIDS.
func resetBinlog(e engine.Engine) string {
	if e.Flavor == dbms.MySQL && !version.Less(e.Version, "8.4") {
		return "RESET BINARY LOGS AND GTIDS;\n"
	}
	return "RESET MASTER;\n"
}

// followSQL starts the replica replicating from the primary by GTID, from
// the position its copy was taken at, over TLS with the primary's
// certificate verified. Its binary log starts at that position too, so
// that a replica may follow it from there once it is the primary.
func followSQL(t *Target, e engine.Engine, password string) string {
	p := t.Cluster.Primary
	var b strings.Builder
	b.WriteString(mysqlQuietSession)
	if e.Flavor == dbms.MySQL {
		// its GTIDs are the dump's GTID_PURGED: it fetches what comes
		// after them
		b.WriteString(cluster.ChangeSource(p.Address, e.Port(), password))
		b.WriteString("START REPLICA;\n")
		return b.String()
	}
	b.WriteString("RESET MASTER;\nSET @pos = @@GLOBAL.gtid_slave_pos;\n")
	b.WriteString("SET @sql = IF(@pos = '', 'DO 0', CONCAT('SET GLOBAL gtid_binlog_state = ', QUOTE(@pos)));\nPREPARE s FROM @sql;\nEXECUTE s;\nDEALLOCATE PREPARE s;\n")
	b.WriteString(cluster.ChangeMaster(p.Address, e.Port(), password))
	b.WriteString("START SLAVE;\n")
	return b.String()
}

func myApplySeed(ctx context.Context, t *Target, e engine.Engine, password string) error {
	p := t.Cluster.Primary
	from, ok := t.Cluster.PrimaryRoot.(remote.Streamer)
	if !ok {
		return fmt.Errorf("no stream to %s to copy its data from", p.Name)
	}
	to, ok := t.Root.(remote.Streamer)
	if !ok {
		return fmt.Errorf("no stream to %s to copy %s's data into", t.Host.Name, p.Name)
	}
	st, err := readMyReplica(ctx, t, e)
	if err != nil {
		return err
	}
	if err := st.refused(t); err != nil {
		return err
	}
	dbs, err := databases(ctx, from, e)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	names := make([]string, 0, len(dbs))
	for db := range dbs {
		names = append(names, db)
	}
	slices.Sort(names)
	if err := t.Root.Upload(ctx, cluster.PrimaryCert(e), []byte(t.Cluster.PrimaryCert), 0o644); err != nil {
		return fmt.Errorf("keep %s's certificate: %w", p.Name, err)
	}
	if err := t.Root.Upload(ctx, seedingMark, []byte(p.Name+"\n"), 0o644); err != nil {
		return fmt.Errorf("mark the seed: %w", err)
	}
	if e.Flavor == dbms.MySQL {
		if err := ownUUID(ctx, t, e, from); err != nil {
			return err
		}
	}
	cutShort := fmt.Sprintf("(what %s holds now is a copy cut short: the next provision seeds it again)", t.Host.Name)
	if _, err := t.Root.RunInput(ctx, e.Script(), []byte(clearSQL(e, st))); err != nil {
		return fmt.Errorf("make ready for the copy: %w", err)
	}
	t.Step(fmt.Sprintf("seeding from %s (%s of %s)", p.Name, e.DumpClient(), strings.Join(names, ", ")))
	if len(names) > 0 {
		if err := remote.Pipe(ctx, from, dumpCmd(e, names), to, seedLoad(e), []byte(mysqlQuietSession)); err != nil {
			return fmt.Errorf("copy %s's data: %w %s", p.Name, err, cutShort)
		}
	}
	if _, err := t.Root.RunInput(ctx, e.Script(), []byte(followSQL(t, e, password))); err != nil {
		return fmt.Errorf("replicate from %s: %w %s", p.Name, err, cutShort)
	}
	if err := cluster.Await(ctx, t.Root, e, t.Host.Name, cluster.Member{Name: p.Name, Address: p.Address}, 2*time.Minute); err != nil {
		return fmt.Errorf("the copy of %s's data: %w %s", p.Name, err, cutShort)
	}
	if _, err := t.run(ctx, "rm -f "+seedingMark); err != nil {
		return fmt.Errorf("remove the seed's mark: %w", err)
	}
	return nil
}

// replicationPassword is the cluster's replication password, which the
// first pass made (makeReplicationPassword).
func replicationPassword(t *Target) (string, error) {
	sec, err := secrets.LoadCluster(t.Inventory, t.Cluster.Name)
	if err != nil {
		return "", err
	}
	if sec.Replication == "" {
		return "", fmt.Errorf("no replication password kept for cluster %q: provision it whole (its primary with it)", t.Cluster.Name)
	}
	return sec.Replication, nil
}
