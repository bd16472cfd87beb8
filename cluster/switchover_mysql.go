package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/engine"
)

// The MySQL family's switchover (MariaDB's and Oracle MySQL's): the old
// primary made read-only (its last commits done, no more taken) and its
// binary log's GTID position read; the new one promoted only once it has
// applied all of it (MariaDB's MASTER_GTID_WAIT, MySQL's
// WAIT_FOR_EXECUTED_GTID_SET), else the old one takes writes again and
// nothing has changed; then the others, the old primary too, replicate
// from the new one by GTID. Every member writes its binary log with what
// it applies (log_slave_updates, log_replica_updates), so each finds its
// position in the new primary's.

// dialect is how one flavour of the family says each of the
// switchover's statements.
type dialect struct {
	e engine.Engine
	// position: the statement that prints the binary log's GTID
	// position; count: its transactions
	position string
	count    func(string) (uint64, error)
	// wait: the statement that waits (%s the position, %d seconds) and
	// prints 0 once the server has applied it
	wait string
	// stop, promote: stop replicating; stop and forget the source
	stop, promote string
	// follow: replicate from address; rejoin: what the old primary runs
	// before it, to follow from its own position
	follow func(address string, port int, password string) string
	start  string
	rejoin string
}

func dialectOf(f dbms.Flavor) dialect {
	if f == dbms.MySQL {
		return dialect{
			e:        engine.For(dbms.MySQL),
			position: "SELECT REPLACE(@@GLOBAL.gtid_executed, '\\n', '');\n",
			count:    GTIDCount,
			wait:     "SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %d);\n",
			stop:     "STOP REPLICA;\n",
			promote:  "STOP REPLICA;\nRESET REPLICA ALL;\n",
			follow:   ChangeSource,
			start:    "START REPLICA;\n",
		}
	}
	return dialect{
		e:        engine.For(dbms.MariaDB),
		position: "SELECT @@GLOBAL.gtid_binlog_pos;\n",
		count:    Transactions,
		wait:     "SELECT MASTER_GTID_WAIT(%s, %d);\n",
		stop:     "STOP SLAVE;\n",
		promote:  "STOP SLAVE;\nRESET SLAVE ALL;\n",
		follow:   ChangeMaster,
		start:    "START SLAVE;\n",
		// it applies from the new primary what comes after its own last
		// transaction: its binary log's position is where it is
		rejoin: "SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_binlog_pos;\n",
	}
}

// ChangeMaster is the statement that makes a MariaDB server replicate from
// the primary at address by GTID (from its gtid_slave_pos), as
// pidb_replication, over TLS with the primary's certificate verified
// (the one kept at PrimaryCert).
func ChangeMaster(address string, port int, password string) string {
	return fmt.Sprintf("CHANGE MASTER TO MASTER_HOST = %s, MASTER_PORT = %d, MASTER_USER = %s, MASTER_PASSWORD = %s, MASTER_SSL = 1, MASTER_SSL_CA = %s, MASTER_SSL_VERIFY_SERVER_CERT = 1, MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 10;\n",
		engine.MySQLString(address), port, engine.MySQLString(engine.ReplicationUser), engine.MySQLString(password), engine.MySQLString(PrimaryCert(engine.For(dbms.MariaDB))))
}

func (s Switchover) planMySQL() []string {
	out := []string{
		"make " + s.Old.Name + " read-only (its commits done, no more taken) and read its binary log's position",
		"wait until " + s.New.Name + " has applied all of it (else make " + s.Old.Name + " writable again and stop)",
		"promote " + s.New.Name + ": its replication stopped and forgotten, writable",
	}
	for _, o := range s.Others {
		out = append(out, "point "+o.Name+" at "+s.New.Name)
	}
	return append(out, "make "+s.Old.Name+" a replica of "+s.New.Name, "wait until every replica replicates from "+s.New.Name)
}

// sql runs statements as the server's administrator and returns what
// they printed.
func (d dialect) sql(ctx context.Context, n Node, stmts string) (string, error) {
	res, err := n.Root.RunInput(ctx, d.e.Script(), []byte(stmts))
	return strings.TrimSpace(string(res.Stdout)), err
}

func (s Switchover) runMySQL(ctx context.Context, wait time.Duration) error {
	d := dialectOf(s.Old.Report.Flavor)
	s.Say("making " + s.Old.Name + " read-only")
	pos, err := d.sql(ctx, s.Old, engine.MySQLQuiet+"SET GLOBAL read_only = ON;\n"+d.position)
	if err != nil {
		return fmt.Errorf("%s: make it read-only: %w", s.Old.Name, err)
	}
	if strings.Contains(pos, "\t") || strings.Contains(pos, "\n") {
		return fmt.Errorf("%s: its binary log's position: %q", s.Old.Name, pos)
	}
	writable := func() string {
		if _, err := d.sql(ctx, s.Old, engine.MySQLQuiet+"SET GLOBAL read_only = OFF;\n"); err != nil {
			return s.Old.Name + " is read-only and could not be made writable again: " + err.Error()
		}
		return s.Old.Name + " takes writes again, as the primary"
	}
	if pos != "" {
		s.Say(fmt.Sprintf("waiting until %s has applied %s's last transaction (%s)", s.New.Name, s.Old.Name, pos))
		got, err := d.sql(ctx, s.New, fmt.Sprintf(d.wait, engine.MySQLString(pos), int(wait.Seconds())))
		if err != nil || got != "0" {
			behind := "unknown"
			if r, rerr := Read(ctx, s.New.Root, d.e); rerr == nil {
				if want, perr := d.count(pos); perr == nil {
					behind = fmt.Sprintf("%d transactions behind", want-min(want, r.Replayed))
				}
			}
			why := strings.SplitN(d.wait, "(", 2)[0][len("SELECT "):] + " timed out"
			if err != nil {
				why = err.Error()
			}
			return fmt.Errorf("%s has not applied %s's last transaction after %s (%s; %s): no switchover (%s)", s.New.Name, s.Old.Name, wait, behind, why, writable())
		}
	}
	s.Say("promoting " + s.New.Name)
	if _, err := d.sql(ctx, s.New, engine.MySQLQuiet+d.promote+"SET GLOBAL read_only = OFF;\n"); err != nil {
		return fmt.Errorf("%s: promote: %w (%s is read-only, its data whole: SET GLOBAL read_only = OFF there to go back)", s.New.Name, err, s.Old.Name)
	}
	follow := d.follow(s.New.Address, d.e.Port(), s.Password) + d.start
	for _, f := range s.Others {
		s.Say("pointing " + f.Name + " at " + s.New.Name)
		if err := f.Root.Upload(ctx, PrimaryCert(d.e), []byte(s.NewCert), 0o644); err != nil {
			return fmt.Errorf("%s: keep %s's certificate: %w", f.Name, s.New.Name, err)
		}
		if _, err := d.sql(ctx, f, engine.MySQLQuiet+d.stop+follow); err != nil {
			return fmt.Errorf("%s: point it at %s: %w", f.Name, s.New.Name, err)
		}
	}
	s.Say("making " + s.Old.Name + " a replica of " + s.New.Name)
	if err := s.Old.Root.Upload(ctx, PrimaryCert(d.e), []byte(s.NewCert), 0o644); err != nil {
		return fmt.Errorf("%s: keep %s's certificate: %w", s.Old.Name, s.New.Name, err)
	}
	if _, err := d.sql(ctx, s.Old, engine.MySQLQuiet+d.rejoin+follow); err != nil {
		return fmt.Errorf("%s: make it a replica of %s: %w", s.Old.Name, s.New.Name, err)
	}
	for _, f := range append([]Node{s.Old}, s.Others...) {
		if err := Await(ctx, f.Root, d.e, f.Name, Member{Name: s.New.Name, Address: s.New.Address}, 4*wait); err != nil {
			return err
		}
	}
	return nil
}
