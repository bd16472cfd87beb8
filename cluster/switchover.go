package cluster

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/remote"
)

// Node is one host of a switchover, as pidb reaches it.
type Node struct {
	Name, Address string
	Root          remote.Runner // root on the host
	Report        Report        // what it said before the switchover began
}

// Switchover hands a PostgreSQL cluster's primary's part to one of its
// replicas, as planned, losing nothing: the old primary stopped cleanly
// (its last WAL, the shutdown checkpoint, sent to its replicas) and seen
// stopped, the new one promoted only once it has replayed all of it (else
// the old one is started again and nothing has changed), then the old
// primary and the other replicas made standbys of the new one, each
// through its slot there, with its certificate.
type Switchover struct {
	Cluster  string
	Old, New Node
	Others   []Node
	Password string // the replication account's
	NewCert  string // the certificate New's server presents (PEM)
	Say      func(string)
	// Wait is how long the new primary may take to replay the old one's
	// last WAL, and each standby to stream from the new one (0: 30 s and
	// 2 min)
	Wait time.Duration
}

// PrimaryCert is where a replica keeps the certificate its primary's
// server presents, which its replication connection verifies.
func PrimaryCert(e engine.Engine) string {
	if e.Flavor.Family() == dbms.MySQLFamily {
		return "/etc/mysql/pidb-primary.crt"
	}
	return "/etc/postgresql/" + e.Major + "/main/pidb-primary.crt"
}

// serverOf is the host's server as the switchover works on it: its
// engine (service, major version) and its data directory.
func serverOf(ctx context.Context, root remote.Runner) (engine.Engine, string, error) {
	res, err := root.Run(ctx, engine.For(dbms.Postgres).Query("SELECT current_setting('server_version_num'), current_setting('data_directory')"))
	if err != nil {
		return engine.Engine{}, "", fmt.Errorf("read the server's version and data directory: %w", err)
	}
	rows, err := engine.For(dbms.Postgres).Rows(string(res.Stdout), 2)
	if err != nil || len(rows) != 1 {
		return engine.Engine{}, "", fmt.Errorf("read the server's version and data directory: %v rows, %v", len(rows), err)
	}
	n, err := strconv.Atoi(rows[0][0])
	if err != nil || n < 100000 {
		return engine.Engine{}, "", fmt.Errorf("read the server's version and data directory: %q", rows[0])
	}
	if err := facts.CheckPath(rows[0][1]); err != nil {
		return engine.Engine{}, "", fmt.Errorf("the server's data directory: %w", err)
	}
	e, err := engine.Of(facts.Facts{Engine: facts.EngineState{Flavor: dbms.Postgres, Version: strconv.Itoa(n / 10000)}})
	return e, rows[0][1], err
}

// Check refuses a switchover that cannot be made as planned, before
// anything changes: the old primary must be one, the new one a replica
// streaming from it.
func (s Switchover) Check() error {
	old, standby, verb, lost := "it is a standby", "standby", "stream", "received"
	if s.Old.Report.Flavor.Family() == dbms.MySQLFamily {
		old, standby, verb, lost = "it replicates from "+s.Old.Report.ReceiveFrom, "replica", "replicate", "applied"
	}
	switch {
	case s.Old.Report.InRecovery:
		return fmt.Errorf("%s is not the primary of cluster %q: %s", s.Old.Name, s.Cluster, old)
	case !s.New.Report.InRecovery:
		return fmt.Errorf("%s is not a %s: there is nothing to switch over to", s.New.Name, standby)
	}
	// what cluster status says of it
	if state, why := Standby(Member{Name: s.New.Name, Report: s.New.Report}, Member{Name: s.Old.Name, Address: s.Old.Address}); state != Streaming {
		return fmt.Errorf("%s does not %s from %s (%s): a switchover to it would lose what it has not %s", s.New.Name, verb, s.Old.Name, why, lost)
	}
	return nil
}

// Plan is what Run does, in words.
func (s Switchover) Plan() []string {
	if s.Old.Report.Flavor.Family() == dbms.MySQLFamily {
		return s.planMySQL()
	}
	out := []string{
		"stop " + s.Old.Name + " cleanly (its last WAL sent to its replicas) and see it stopped",
		"wait until " + s.New.Name + " has replayed everything " + s.Old.Name + " wrote (else start " + s.Old.Name + " again and stop)",
		"make a slot on " + s.New.Name + " for each host that will follow it",
		"promote " + s.New.Name,
	}
	for _, o := range s.Others {
		out = append(out, "point "+o.Name+" at "+s.New.Name)
	}
	return append(out, "start "+s.Old.Name+" as a standby of "+s.New.Name, "wait until every standby streams from "+s.New.Name)
}

// controlDataCmd runs the major's pg_controldata on the data directory as
// postgres, in C's words: its "Database cluster state" is read, whatever
// language the Pi's locale speaks.
func controlDataCmd(major, dataDir string) string {
	return "cd /tmp && LC_ALL=C runuser -u postgres -- " + remote.Command("/usr/lib/postgresql/"+major+"/bin/pg_controldata", "-D", dataDir)
}

// controlLine reads a line of pg_controldata.
var controlLine = regexp.MustCompile(`(?m)^([^:\n]+):\s*(.*?)\s*$`)

// stoppedAt reads pg_controldata's output: the server's last checkpoint,
// which a clean shutdown writes last; an error where the server was not
// shut down cleanly.
func stoppedAt(out string) (uint64, error) {
	fields := map[string]string{}
	for _, m := range controlLine.FindAllStringSubmatch(out, -1) {
		fields[m[1]] = m[2]
	}
	if st := fields["Database cluster state"]; st != "shut down" {
		return 0, fmt.Errorf("its cluster state is %q, not \"shut down\"", st)
	}
	return LSN(fields["Latest checkpoint location"])
}

// Run makes the switchover.
func (s Switchover) Run(ctx context.Context) error {
	if err := s.Check(); err != nil {
		return err
	}
	wait := s.Wait
	if wait == 0 {
		wait = 30 * time.Second
	}
	if s.Old.Report.Flavor.Family() == dbms.MySQLFamily {
		return s.runMySQL(ctx, wait)
	}
	old, oldData, err := serverOf(ctx, s.Old.Root)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Old.Name, err)
	}
	if _, _, err := serverOf(ctx, s.New.Root); err != nil {
		return fmt.Errorf("%s: %w", s.New.Name, err)
	}
	s.Say("stopping " + s.Old.Name + " cleanly")
	if _, err := s.Old.Root.Run(ctx, engine.For(dbms.Postgres).Client("CHECKPOINT")); err != nil {
		return fmt.Errorf("%s: checkpoint before stopping: %w", s.Old.Name, err)
	}
	if _, err := s.Old.Root.Run(ctx, "systemctl stop "+remote.Quote(old.Service)); err != nil {
		return fmt.Errorf("%s: stop: %w", s.Old.Name, err)
	}
	// never two primaries: the old one must be seen stopped
	if _, err := s.Old.Root.Run(ctx, "! pg_isready -q -h /var/run/postgresql"); err != nil {
		return fmt.Errorf("%s still answers after its stop: no switchover while it may take writes", s.Old.Name)
	}
	start := func() string {
		if _, err := s.Old.Root.Run(ctx, old.StartCmd()); err != nil {
			return s.Old.Name + " could not be started again: " + err.Error()
		}
		return s.Old.Name + " runs on as the primary"
	}
	res, err := s.Old.Root.Run(ctx, controlDataCmd(old.Major, oldData))
	if err != nil {
		return fmt.Errorf("%s: read its last checkpoint: %w (%s)", s.Old.Name, err, start())
	}
	last, err := stoppedAt(string(res.Stdout))
	if err != nil {
		return fmt.Errorf("%s: %w (%s)", s.Old.Name, err, start())
	}
	s.Say(fmt.Sprintf("waiting until %s has replayed %s's last WAL (%X/%X)", s.New.Name, s.Old.Name, last>>32, uint32(last)))
	var replayed uint64
	for deadline := time.Now().Add(wait); ; time.Sleep(200 * time.Millisecond) {
		if replayed, err = replayedOf(ctx, s.New.Root); err == nil && replayed > last {
			break
		}
		if time.Now().After(deadline) {
			behind := "unknown"
			if err == nil {
				behind = fmt.Sprintf("%d bytes behind", last-min(last, replayed))
			}
			return fmt.Errorf("%s has not replayed %s's last WAL after %s (%s): no switchover (%s)", s.New.Name, s.Old.Name, wait, behind, start())
		}
	}
	followers := append([]Node{s.Old}, s.Others...)
	s.Say("making slots on " + s.New.Name)
	if err := s.slots(ctx, followers); err != nil {
		return fmt.Errorf("%s: %w (%s)", s.New.Name, err, start())
	}
	s.Say("promoting " + s.New.Name)
	res, err = s.New.Root.Run(ctx, engine.For(dbms.Postgres).Client("SELECT pg_promote(true, 60)"))
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "t" {
		return fmt.Errorf("%s: promote: %v %q (%s is stopped, its data whole: start it to go back)", s.New.Name, err, res.Stdout, s.Old.Name)
	}
	for _, f := range s.Others {
		s.Say("pointing " + f.Name + " at " + s.New.Name)
		if err := s.repoint(ctx, f); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	s.Say("starting " + s.Old.Name + " as a standby of " + s.New.Name)
	if err := s.demote(ctx, old, oldData); err != nil {
		return fmt.Errorf("%s: %w", s.Old.Name, err)
	}
	for _, f := range followers {
		if err := Await(ctx, f.Root, engine.For(dbms.Postgres), f.Name, Member{Name: s.New.Name, Address: s.New.Address}, 4*wait); err != nil {
			return err
		}
	}
	return nil
}

func replayedOf(ctx context.Context, root remote.Runner) (uint64, error) {
	res, err := root.Run(ctx, engine.For(dbms.Postgres).Client("SELECT pg_last_wal_replay_lsn()"))
	if err != nil {
		return 0, err
	}
	return LSN(strings.TrimSpace(string(res.Stdout)))
}

// slots makes, on the new primary while it is still a standby, a slot
// for each host that will follow it, reserving its WAL from where it has
// replayed: what the followers have not had yet is kept. A slot of
// pidb's there from an earlier time, unused, is made anew.
func (s Switchover) slots(ctx context.Context, followers []Node) error {
	var b strings.Builder
	for _, f := range followers {
		slot := SlotName(f.Name)
		fmt.Fprintf(&b, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s AND NOT active;\n", engine.PostgresString(slot))
		fmt.Fprintf(&b, "SELECT pg_create_physical_replication_slot(%s, true);\n", engine.PostgresString(slot))
	}
	if _, err := s.New.Root.RunInput(ctx, engine.PostgresScript, []byte(b.String())); err != nil {
		return fmt.Errorf("make the slots: %w", err)
	}
	return nil
}

// conninfo is how a follower, whose server is e, reaches the new primary.
func (s Switchover) conninfo(f Node, e engine.Engine) string {
	return ConnInfo("host", s.New.Address, "port", strconv.Itoa(e.Port()), "user", engine.ReplicationUser, "password", s.Password,
		"sslmode", "verify-ca", "sslrootcert", PrimaryCert(e), "application_name", f.Name)
}

// repoint makes a running standby follow the new primary: its
// certificate, then primary_conninfo, reloaded (PostgreSQL 13 and later
// take it without a restart; the standby follows the new timeline).
func (s Switchover) repoint(ctx context.Context, f Node) error {
	srv, _, err := serverOf(ctx, f.Root)
	if err != nil {
		return err
	}
	if err := f.Root.Upload(ctx, PrimaryCert(srv), []byte(s.NewCert), 0o644); err != nil {
		return fmt.Errorf("keep %s's certificate: %w", s.New.Name, err)
	}
	sql := engine.PostgresQuiet + fmt.Sprintf("ALTER SYSTEM SET primary_conninfo = %s;\nSELECT pg_reload_conf();\n", engine.PostgresString(s.conninfo(f, srv)))
	if _, err := f.Root.RunInput(ctx, engine.PostgresScript, []byte(sql)); err != nil {
		return fmt.Errorf("point it at %s: %w", s.New.Name, err)
	}
	return nil
}

// demote makes the stopped old primary a standby of the new one: the
// certificate, primary_conninfo and its slot in postgresql.auto.conf (the
// lines it had of them dropped), standby.signal, then a start. It was
// stopped cleanly after its last WAL reached the new primary, so it
// follows it without a rewind.
func (s Switchover) demote(ctx context.Context, old engine.Engine, dataDir string) error {
	if err := s.Old.Root.Upload(ctx, PrimaryCert(old), []byte(s.NewCert), 0o644); err != nil {
		return fmt.Errorf("keep %s's certificate: %w", s.New.Name, err)
	}
	auto := dataDir + "/postgresql.auto.conf"
	conninfo, err := engine.PostgresConfString(s.conninfo(s.Old, old))
	if err != nil {
		return fmt.Errorf("%s's primary_conninfo: %w", s.Old.Name, err)
	}
	slot, err := engine.PostgresConfString(SlotName(s.Old.Name))
	if err != nil {
		return err
	}
	lines := "primary_conninfo = " + conninfo + "\nprimary_slot_name = " + slot + "\n"
	script := strings.Join([]string{
		"set -eu", "cd /tmp",
		"auto=" + remote.Quote(auto),
		// as postgres, whose folder it is; the new lines from stdin
		`runuser -u postgres -- sh -c 'f=$1; { grep -v -E "^(primary_conninfo|primary_slot_name) " "$f" || true; cat; } > "$f.pidb" && mv "$f.pidb" "$f"' sh "$auto"`,
		"runuser -u postgres -- touch " + remote.Quote(dataDir+"/standby.signal"),
		old.StartCmd(),
	}, "\n")
	if _, err := s.Old.Root.RunInput(ctx, "bash -c "+remote.Quote(script), []byte(lines)); err != nil {
		return fmt.Errorf("start it as a standby of %s: %w", s.New.Name, err)
	}
	return nil
}
