package provision

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"pidb/cluster"
	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/internal/version"
	"pidb/inventory"
	"pidb/remote"
	"pidb/secrets"
)

// Cluster is a [[cluster]] as its hosts are provisioned, in two passes.
// The first (Steps) provisions every host as one on its own, except that
// a replica makes no accounts of its own (they come from the primary),
// every member listens for the others' replication connections (the
// access step: pg_hba.conf's hostssl replication lines, ufw), and the
// primary's replication step makes the replication account and a slot
// for each replica. The second (SeedSteps, on the replicas, once the
// primary's first pass is done) seeds each replica that does not follow
// the primary yet.
type Cluster struct {
	Name     string
	Primary  inventory.Host
	Replicas []inventory.Host
	// PrimaryCert is the certificate the primary's server presents
	// (PEM), which a replica's replication connection verifies: read after
	// the primary's first pass (ServedCert), given to the second
	PrimaryCert string
	// PrimaryRoot is root on the primary, in the second pass on MariaDB:
	// a replica's copy is its dump, piped through the controller
	PrimaryRoot remote.Runner
	// Secrets is held while a host reads and writes the cluster's
	// passwords, which its hosts share (nil: one host at a time anyway)
	Secrets sync.Locker
}

// lockSecrets holds the cluster's secrets until the returned function is
// called: the first of its hosts makes a password, the others read it.
func (t *Target) lockSecrets() func() {
	if t.Cluster == nil || t.Cluster.Secrets == nil {
		return func() {}
	}
	t.Cluster.Secrets.Lock()
	return t.Cluster.Secrets.Unlock
}

// ReplicationUser is the account replicas log in to the primary as.
const ReplicationUser = engine.ReplicationUser

// role is the host's part in its cluster: "" on its own.
func (t *Target) role() inventory.Role {
	switch {
	case t.Cluster == nil:
		return ""
	case t.Cluster.Primary.Name == t.Host.Name:
		return inventory.Primary
	}
	return inventory.Replica
}

// peers are the addresses of the cluster's other hosts, each a prefix of
// one address, in the addresses' order: what the host admits replication
// from (any of them may become the primary).
func (t *Target) peers() []netip.Prefix {
	if t.Cluster == nil {
		return nil
	}
	var out []netip.Prefix
	for _, h := range append([]inventory.Host{t.Cluster.Primary}, t.Cluster.Replicas...) {
		if h.Name == t.Host.Name {
			continue
		}
		if a, err := netip.ParseAddr(h.Address); err == nil {
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	// in the addresses' order, not the roles': a switchover changes no file
	slices.SortFunc(out, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
	return out
}

// accountSecrets are the passwords of the host's accounts: its own, or
// its cluster's, which every host of it shares (secrets.Accounts).
func (t *Target) accountSecrets() (secrets.Host, error) {
	if t.Cluster == nil {
		return secrets.Accounts(t.Inventory, t.Host.Name, "", "")
	}
	return secrets.Accounts(t.Inventory, t.Host.Name, t.Cluster.Name, t.Cluster.Primary.Name)
}

func (t *Target) saveAccountSecrets(h secrets.Host) error {
	cluster := ""
	if t.Cluster != nil {
		cluster = t.Cluster.Name
	}
	return secrets.SaveAccounts(t.Inventory, t.Host.Name, cluster, h)
}

// listens reports whether the server listens on the network: for the
// inventory's allow_from, or for its cluster's replication.
func (t *Target) listens() bool { return len(t.Host.AllowFrom) > 0 || len(t.peers()) > 0 }

// network is every address the server admits connections from: the
// inventory's allow_from and the cluster's other hosts.
func (t *Target) network() []netip.Prefix {
	out := slices.Clone(t.Host.AllowFrom)
	for _, p := range t.peers() {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// replicationStep makes, on a cluster's primary, the account its replicas
// log in with (replication only, a generated password kept for the
// cluster) and a replication slot for each replica, and drops pidb's
// slots no replica of the inventory's has any more (unless one is in use).
type replicationStep struct{}

func (replicationStep) Name() string { return "replication" }

// primaryState is what a primary has of its replication.
type primaryState struct {
	hash  string          // the replication account's stored password; "" for none
	found bool            // the replication account is there
	okay  bool            // with LOGIN and REPLICATION, and nothing more
	slots map[string]bool // pidb's slots: in use
}

const pgReplicationListing = "SELECT 'role', rolname, coalesce(rolpassword, ''), CASE WHEN rolcanlogin AND rolreplication AND NOT rolsuper AND NOT rolcreatedb AND NOT rolcreaterole AND NOT rolbypassrls THEN 'ok' ELSE 'more' END FROM pg_authid WHERE rolname = '" + ReplicationUser + "'" +
	" UNION ALL SELECT 'slot', slot_name::text, '', CASE WHEN active THEN 'active' ELSE '' END FROM pg_replication_slots WHERE slot_type = 'physical' AND slot_name::text LIKE 'pidb\\_%'"

func readPrimary(ctx context.Context, t *Target, e engine.Engine) (primaryState, error) {
	st := primaryState{slots: map[string]bool{}}
	rows, err := query(ctx, t, e, pgReplicationListing, 4)
	if err != nil {
		return st, err
	}
	for _, r := range rows {
		switch r[0] {
		case "role":
			st.found, st.hash, st.okay = true, r[2], r[3] == "ok"
		case "slot":
			st.slots[r[1]] = r[3] == "active"
		default:
			return st, fmt.Errorf("read the replication account and slots: a row of kind %q", r[0])
		}
	}
	return st, nil
}

// primaryPlan is what the primary's replication step would do, in words,
// and the SQL that does it.
func primaryPlan(t *Target, st primaryState, password string) (todo []string, sql string) {
	var b strings.Builder
	b.WriteString(pgQuietSession)
	switch {
	case !st.found:
		todo = append(todo, "make the replication account "+ReplicationUser)
		fmt.Fprintf(&b, "CREATE ROLE %s;\n", pgIdent(ReplicationUser))
	case !st.okay:
		todo = append(todo, "give "+ReplicationUser+" replication and nothing more")
	}
	fmt.Fprintf(&b, "ALTER ROLE %s WITH LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;\n", pgIdent(ReplicationUser))
	if password == "" || !st.found || stale(st.hash, password) {
		if st.found {
			todo = append(todo, "set "+ReplicationUser+"'s password")
		}
		fmt.Fprintf(&b, "ALTER ROLE %s PASSWORD %s;\n", pgIdent(ReplicationUser), engine.PostgresString(newScramVerifier(password)))
	}
	fmt.Fprintf(&b, "COMMENT ON ROLE %s IS %s;\n", pgIdent(ReplicationUser), engine.PostgresString(accountMark+" for the replication of cluster "+t.Cluster.Name))
	want := map[string]bool{}
	for _, r := range t.Cluster.Replicas {
		slot := cluster.SlotName(r.Name)
		want[slot] = true
		if _, ok := st.slots[slot]; !ok {
			todo = append(todo, "a replication slot for "+r.Name+" ("+slot+")")
			// reserved now: the WAL from here on is kept for the replica
			fmt.Fprintf(&b, "SELECT pg_create_physical_replication_slot(%s, true);\n", engine.PostgresString(slot))
		}
	}
	var gone []string
	for slot, active := range st.slots {
		if !want[slot] && !active {
			gone = append(gone, slot)
		}
	}
	slices.Sort(gone)
	for _, slot := range gone {
		todo = append(todo, "drop the slot "+slot+", whose host is no replica of the cluster now (it kept WAL for nobody)")
		fmt.Fprintf(&b, "SELECT pg_drop_replication_slot(%s);\n", engine.PostgresString(slot))
	}
	if len(todo) == 0 {
		return nil, ""
	}
	return todo, b.String()
}

func (replicationStep) Check(ctx context.Context, t *Target) (Change, error) {
	if t.role() == "" {
		return Change{}, nil
	}
	e, err := engine.Of(t.Facts)
	if err != nil {
		if t.role() != inventory.Primary && t.Host.Engine == dbms.PostgresFamily {
			return Change{}, nil
		}
		return Change{Needed: true, Note: "after the install: the replication account for the other hosts of cluster " + t.Cluster.Name}, nil
	}
	sec, err := secrets.LoadCluster(t.Inventory, t.Cluster.Name)
	if err != nil {
		return Change{}, err
	}
	todo, _, err := replicationPlan(ctx, t, e, sec.Replication)
	if err != nil || len(todo) == 0 {
		return Change{}, err
	}
	return Change{Needed: true, Note: strings.Join(todo, ", ")}, nil
}

func (replicationStep) Apply(ctx context.Context, t *Target) error {
	e, err := engine.Of(t.Facts)
	if err != nil {
		return err
	}
	password, err := makeReplicationPassword(t)
	if err != nil {
		return err
	}
	_, sql, err := replicationPlan(ctx, t, e, password)
	if err != nil || sql == "" {
		return err
	}
	if _, err := t.Root.RunInput(ctx, e.Script(), []byte(sql)); err != nil {
		what := "the replication account"
		if e.Flavor == dbms.Postgres {
			what += " and slots"
		}
		return fmt.Errorf("make %s: %w", what, err)
	}
	return nil
}

// replicationPlan is what the replication step would do on the host, in
// words, and the SQL that does it, from what the server holds: on
// PostgreSQL's primary the account and its replicas' slots, on every
// MariaDB member (any of them may become the primary) the account at
// each other host's address; nothing on a PostgreSQL standby.
func replicationPlan(ctx context.Context, t *Target, e engine.Engine, password string) (todo []string, sql string, err error) {
	if e.Flavor != dbms.Postgres {
		have, err := readMyReplication(ctx, t, e)
		if err != nil {
			return nil, "", err
		}
		todo, sql := myReplicationPlan(t, have, password)
		return todo, sql, nil
	}
	if t.role() != inventory.Primary {
		return nil, "", nil
	}
	st, err := readPrimary(ctx, t, e)
	if err != nil {
		return nil, "", err
	}
	todo, sql = primaryPlan(t, st, password)
	return todo, sql, nil
}

// makeReplicationPassword is the cluster's replication password, made
// and kept by the first of its hosts that needs it, before any server has
// it: a failure between the two leaves a password the next run sets again.
func makeReplicationPassword(t *Target) (string, error) {
	defer t.lockSecrets()()
	sec, err := secrets.LoadCluster(t.Inventory, t.Cluster.Name)
	if err != nil {
		return "", err
	}
	if sec.Replication == "" {
		sec.Replication = secrets.Generate()
		if err := secrets.SaveCluster(t.Inventory, t.Cluster.Name, sec); err != nil {
			return "", fmt.Errorf("keep the replication password: %w", err)
		}
	}
	return sec.Replication, nil
}

// ServedCert is the certificate the host's server presents to a TLS
// client (PEM), as its replicas will see it: read on the host's loopback.
func ServedCert(ctx context.Context, root remote.Runner, e engine.Engine) (string, error) {
	proto := map[bool]string{true: "postgres", false: "mysql"}[e.Flavor == dbms.Postgres]
	res, err := root.Run(ctx, fmt.Sprintf("openssl s_client -connect 127.0.0.1:%d -starttls %s </dev/null 2>/dev/null | openssl x509", e.Port(), proto))
	if err != nil {
		return "", fmt.Errorf("read the certificate the server presents: %w", err)
	}
	pem := strings.TrimSpace(string(res.Stdout))
	if !strings.HasPrefix(pem, "-----BEGIN CERTIFICATE-----") || !strings.HasSuffix(pem, "-----END CERTIFICATE-----") {
		return "", fmt.Errorf("read the certificate the server presents: not a certificate")
	}
	return pem + "\n", nil
}

// SeedSteps are a replica's second pass: seeded from its primary where it
// does not follow it yet.
func SeedSteps() []Step { return []Step{seedStep{}} }

// seedStep makes a replica follow its primary: where the server is not a
// standby of that primary with its slot, it is stopped, its data
// directory set aside, a copy of the primary's taken with pg_basebackup
// over TLS (the primary's certificate verified) into its place, and the
// server started as a standby (-R: primary_conninfo, standby.signal); the
// old directory is removed once the replica streams, and put back if the
// copy fails. A server that holds databases of its own is refused: the
// copy would replace them.
type seedStep struct{}

func (seedStep) Name() string { return "replica" }

// replicaState is what a replica is doing.
type replicaState struct {
	recovery bool   // a standby
	status   string // its WAL receiver's: streaming, ...; "" with none
	sender   string // the host its WAL receiver is connected to
	conninfo string // primary_conninfo, its password replaced by ***
	slot     string // primary_slot_name
	dataDir  string
	own      []string // databases beside PostgreSQL's and pidb's own
}

const pgReplicaListing = "SELECT 'state', pg_is_in_recovery()::text, coalesce((SELECT status FROM pg_stat_wal_receiver), ''), coalesce((SELECT sender_host FROM pg_stat_wal_receiver), ''), regexp_replace(current_setting('primary_conninfo'), 'password=(''[^'']*''|\\S*)', 'password=***', 'g'), current_setting('primary_slot_name'), current_setting('data_directory')" +
	" UNION ALL SELECT 'db', datname::text, '', '', '', '', '' FROM pg_database WHERE datname NOT IN ('postgres', 'template0', 'template1', '" + inventory.Pidb + "')"

func readReplica(ctx context.Context, t *Target, e engine.Engine) (replicaState, error) {
	var st replicaState
	rows, err := query(ctx, t, e, pgReplicaListing, 7)
	if err != nil {
		return st, err
	}
	for _, r := range rows {
		switch r[0] {
		case "state":
			st.recovery, st.status, st.sender, st.conninfo, st.slot, st.dataDir = r[1] == "true", r[2], r[3], r[4], r[5], r[6]
		case "db":
			st.own = append(st.own, r[1])
		}
	}
	if err := facts.CheckPath(st.dataDir); err != nil {
		return st, fmt.Errorf("read the replica's state: its data directory: %w", err)
	}
	return st, nil
}

// follows reports whether the replica is a standby of the primary at
// address, through its slot (streaming or not: a stopped primary, or one
// restarting, is waited for, not a reason to copy everything again).
func (st replicaState) follows(address, slot string) bool {
	ci, err := cluster.ParseConnInfo(st.conninfo)
	return err == nil && st.recovery && st.slot == slot && ci["host"] == address
}

func (seedStep) Check(ctx context.Context, t *Target) (Change, error) {
	if t.role() != inventory.Replica {
		return Change{}, nil
	}
	p := t.Cluster.Primary
	e, err := engine.Of(t.Facts)
	if err != nil {
		return Change{Needed: true, Note: "after the install: seeded from " + p.Name}, nil
	}
	if e.Flavor != dbms.Postgres {
		return myCheckSeed(ctx, t, e)
	}
	st, err := readReplica(ctx, t, e)
	if err != nil {
		return Change{}, err
	}
	if st.follows(p.Address, cluster.SlotName(t.Host.Name)) {
		return Change{}, nil
	}
	if len(st.own) > 0 && !st.recovery {
		return Change{}, fmt.Errorf("%s holds the databases %s, which a copy of %s would replace: move them off it, or leave it out of cluster %q", t.Host.Name, strings.Join(st.own, ", "), p.Name, t.Cluster.Name)
	}
	was := "its data"
	if st.recovery {
		was = "its copy of another primary"
	}
	return Change{Needed: true, Note: fmt.Sprintf("seeded from %s (pg_basebackup over TLS, slot %s): %s is replaced by a copy of %s's", p.Name, cluster.SlotName(t.Host.Name), was, p.Name),
		Commands: []string{seedScript(e, t, st.dataDir)}}, nil
}

// seedScript copies the primary's data directory into the replica's:
// root stops and starts the server; the postgres account, whose folders
// they are, moves, copies and removes. The password comes on stdin.
func seedScript(e engine.Engine, t *Target, dataDir string) string {
	p := t.Cluster.Primary
	conn := cluster.ConnInfo("host", p.Address, "port", strconv.Itoa(e.Port()), "user", ReplicationUser,
		"sslmode", "verify-ca", "sslrootcert", cluster.PrimaryCert(e), "application_name", t.Host.Name)
	pg := "runuser -u " + engine.PostgresUser + " -- "
	old := dataDir + ".pidb-seed"
	stop, start := "systemctl stop "+remote.Quote(e.Service), e.StartCmd()
	return strings.Join([]string{
		"set -eu",
		"IFS= read -r pw",
		"cd /tmp",
		"data=" + remote.Quote(dataDir) + "; old=" + remote.Quote(old),
		stop,
		pg + `rm -rf -- "$old"`,
		pg + `mv -- "$data" "$old"`,
		pg + `mkdir -m 700 -- "$data"`,
		// the password goes in pg_basebackup's environment, never in a
		// command line, which every user of the host may read in ps
		`if ! PGPASSWORD="$pw" ` + pg + remote.Command("pg_basebackup", "-d", conn, "-D", dataDir, "-X", "stream", "-S", cluster.SlotName(t.Host.Name), "-R", "-c", "fast") + "; then " +
			pg + `rm -rf -- "$data"; ` + pg + `mv -- "$old" "$data"; ` + start + "; exit 1; fi",
		start,
	}, "\n")
}

func (seedStep) Apply(ctx context.Context, t *Target) error {
	e, err := engine.Of(t.Facts)
	if err != nil {
		return err
	}
	if t.Cluster.PrimaryCert == "" {
		return fmt.Errorf("no certificate of %s's to verify it by", t.Cluster.Primary.Name)
	}
	if e.Flavor != dbms.Postgres {
		password, err := replicationPassword(t)
		if err != nil {
			return err
		}
		return myApplySeed(ctx, t, e, password)
	}
	sec, err := secrets.LoadCluster(t.Inventory, t.Cluster.Name)
	if err != nil {
		return err
	}
	if sec.Replication == "" {
		return fmt.Errorf("no replication password kept for cluster %q: provision its primary %s first", t.Cluster.Name, t.Cluster.Primary.Name)
	}
	st, err := readReplica(ctx, t, e)
	if err != nil {
		return err
	}
	if err := t.Root.Upload(ctx, cluster.PrimaryCert(e), []byte(t.Cluster.PrimaryCert), 0o644); err != nil {
		return fmt.Errorf("keep %s's certificate: %w", t.Cluster.Primary.Name, err)
	}
	t.Step("seeding from " + t.Cluster.Primary.Name + " (pg_basebackup)")
	if _, err := t.Root.RunInput(ctx, "bash -c "+remote.Quote(seedScript(e, t, st.dataDir)), []byte(sec.Replication+"\n")); err != nil {
		return fmt.Errorf("copy %s's data: %w (the replica runs on its own data again)", t.Cluster.Primary.Name, err)
	}
	// streaming, then the old directory goes
	streaming := e.Client("SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming'") + " | grep -qx 1"
	if err := t.waitFor(ctx, streaming, 2*time.Minute); err != nil {
		return fmt.Errorf("the copy of %s's data runs, but does not stream from it after 2 minutes (its old data is kept in %s.pidb-seed): %w", t.Cluster.Primary.Name, st.dataDir, err)
	}
	if _, err := t.run(ctx, "runuser -u "+engine.PostgresUser+" -- rm -rf -- "+remote.Quote(st.dataDir+".pidb-seed")); err != nil {
		return fmt.Errorf("remove the replica's old data: %w", err)
	}
	return nil
}

// Member is one host of a cluster as ClusterAlike compares it: its name
// and its facts.
type Member struct {
	Name  string
	Facts facts.Facts
}

// ClusterAlike refuses a cluster whose hosts would run different major
// versions of its server (a replica of PostgreSQL is a byte copy of its
// primary's data, which another major cannot start on; a newer MariaDB's
// dump holds collations an older one cannot load), or, on PostgreSQL,
// packages of different word sizes (a 32-bit server does not start on a
// 64-bit one's data files: "database files are incompatible with
// server"). What a host would run is its installed server's version,
// else what its distribution ships; hosts whose distribution pidb does
// not know are compared by the distribution itself. The error names
// both hosts and what each runs. Members is the primary first.
func ClusterAlike(cluster string, family dbms.Family, members []Member) error {
	if len(members) < 2 {
		return nil
	}
	runs := func(m Member) (flavor dbms.Flavor, major, how string) {
		f := m.Facts
		if e := f.Engine; e.Flavor != "" {
			return e.Flavor, e.Flavor.Major(e.Version), "installed"
		}
		flavor = dbms.FlavorOn(family, f.OS.ID)
		osName := strings.TrimSpace(f.OS.ID + " " + f.OS.VersionID)
		if v := dbms.Shipped(f.OS.ID, f.OS.VersionID, flavor); v != "" {
			return flavor, flavor.Major(v), "what " + osName + " ships"
		}
		return flavor, "", "what " + osName + " ships, which pidb does not know"
	}
	first := members[0]
	ff, fmaj, fhow := runs(first)
	for _, m := range members {
		// the cluster's reads and switchover call MariaDB's programs by
		// their MariaDB names, which a MariaDB before 10.5 does not have
		if mf, mmaj, mhow := runs(m); mf == dbms.MariaDB && mmaj != "" && version.Less(mmaj, "10.5") {
			return fmt.Errorf("cluster %q: %s would run %s (%s): pidb's clusters need MariaDB 10.5 or later, whose clients answer to MariaDB's names (mariadb, mariadb-dump); put its members on a newer release (Raspberry Pi OS 11 or later ships 10.5 and later); nothing was changed",
				cluster, m.Name, versionText(mf, mmaj), mhow)
		}
	}
	for _, m := range members[1:] {
		mf, mmaj, mhow := runs(m)
		same := mf == ff && mmaj == fmaj && fmaj != ""
		if fmaj == "" || mmaj == "" { // compare the distributions themselves
			same = mf == ff && first.Facts.OS.ID == m.Facts.OS.ID && first.Facts.OS.VersionID == m.Facts.OS.VersionID
		}
		if !same {
			return fmt.Errorf("cluster %q: %s would run %s (%s) and %s %s (%s): a replica runs its primary's major version (PostgreSQL's replica is a byte copy of its primary's data; a newer MariaDB's dump does not load into an older one): put both on one release; nothing was changed",
				cluster, first.Name, versionText(ff, fmaj), fhow, m.Name, versionText(mf, mmaj), mhow)
		}
		if family != dbms.PostgresFamily {
			continue
		}
		if fb, mb := first.Facts.WordBits(), m.Facts.WordBits(); fb != 0 && mb != 0 && fb != mb {
			return fmt.Errorf("cluster %q: %s runs %d-bit packages (%s) and %s %d-bit ones (%s): PostgreSQL's data files are not portable between word sizes, so a replica cannot start on its primary's copy; run the same Raspberry Pi OS (32- or 64-bit) on both; nothing was changed",
				cluster, first.Name, fb, archOf(first.Facts), m.Name, mb, archOf(m.Facts))
		}
	}
	return nil
}

// versionText is "PostgreSQL 17", or the flavour alone where the
// version is not known.
func versionText(f dbms.Flavor, major string) string {
	name := map[dbms.Flavor]string{dbms.Postgres: "PostgreSQL", dbms.MySQL: "MySQL", dbms.MariaDB: "MariaDB"}[f]
	if major == "" {
		return name
	}
	return name + " " + major
}

// archOf is the packages' architecture, else the kernel's.
func archOf(f facts.Facts) string {
	if f.Userland != "" {
		return f.Userland
	}
	return f.Arch
}
