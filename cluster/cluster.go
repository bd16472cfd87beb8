// Package cluster reads a [[cluster]]'s replication as each of its hosts
// reports it, and says of each replica whether it keeps up: streaming (its
// WAL receiver connected and the primary sending to it, not only "in
// recovery": autobase's lesson), how far behind in bytes and seconds, and
// what the primary keeps for it (the retained WAL of its slot). It reads
// over a Runner with the server's own client, as the administrator on the
// host; Judge is pure.
package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/engine"
	"pidb/remote"
)

// Report is what one host of a cluster says of its replication.
type Report struct {
	// Flavor is the server's: PostgreSQL's positions are bytes of WAL,
	// MariaDB's transactions (Transactions)
	Flavor     dbms.Flavor
	InRecovery bool // a standby (MariaDB: a replica of a source)
	// the primary's side: where its WAL is, whom it sends to, its slots
	WAL     uint64 // pg_current_wal_lsn(), as a byte position
	Senders []Sender
	Slots   []Slot
	// a standby's side: its WAL receiver's status ("" with none) and the
	// host it receives from, and how far it has replayed
	Receiver    string
	ReceiveFrom string
	Replayed    uint64 // pg_last_wal_replay_lsn()
	// ReplayDelay is how far behind the standby is, in seconds, by its
	// own clock: 0 where it has replayed all it received, else the age
	// of the last transaction it replayed; nil: it has replayed none
	// (MariaDB: Seconds_Behind_Master; nil while it does not replicate)
	ReplayDelay *float64
	// MariaDB's alone: read_only, the account and GTID mode it
	// replicates with, and the replication's last error
	ReadOnly              bool
	SourceUser, UsingGTID string
	LastError             string
}

// Sender is one replication connection a primary serves.
type Sender struct {
	Name      string   // its application_name: the replica's host name, as pidb seeds it
	State     string   // streaming, catchup, startup, ...
	Replayed  uint64   // replay_lsn
	ReplayLag *float64 // replay_lag in seconds; nil when the server has none to report (idle)
	Sync      string   // sync_state: async, sync, quorum, potential
}

// Slot is one of the primary's replication slots.
type Slot struct {
	Name     string
	Active   bool
	Retained *uint64 // bytes of WAL kept for it; nil when its WAL is lost
	Status   string  // wal_status: reserved, extended, unreserved, lost
}

// primarySQL and standbySQL read a host's side, one row a kind: the
// whole state in one round trip.
const readSQL = "SELECT 'self', pg_is_in_recovery()::text, CASE WHEN pg_is_in_recovery() THEN '' ELSE pg_current_wal_lsn()::text END, coalesce(pg_last_wal_replay_lsn()::text, ''), coalesce(CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0 ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) END::text, ''), coalesce((SELECT status FROM pg_stat_wal_receiver), ''), coalesce((SELECT sender_host FROM pg_stat_wal_receiver), '')" +
	" UNION ALL SELECT 'sender', application_name, state, coalesce(replay_lsn::text, ''), coalesce(extract(epoch FROM replay_lag)::text, ''), sync_state, '' FROM pg_stat_replication" +
	" UNION ALL SELECT 'slot', slot_name::text, active::text, coalesce(CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint::text END, ''), coalesce(wal_status, ''), '', '' FROM pg_replication_slots WHERE slot_type = 'physical'"

// Read asks the host's server for its side of the replication.
func Read(ctx context.Context, root remote.Runner, e engine.Engine) (Report, error) {
	if e.Flavor.Family() == dbms.MySQLFamily {
		return readFamily(ctx, root)
	}
	res, err := root.Run(ctx, e.Query(readSQL))
	if err != nil {
		return Report{}, fmt.Errorf("read the replication state: %w", err)
	}
	rows, err := e.Rows(string(res.Stdout), 7)
	if err != nil {
		return Report{}, fmt.Errorf("read the replication state: %w", err)
	}
	return parse(rows)
}

// parse reads readSQL's rows.
func parse(rows [][]string) (Report, error) {
	r := Report{Flavor: dbms.Postgres}
	self := false
	bad := func(what string, row []string) (Report, error) {
		return Report{}, fmt.Errorf("read the replication state: %s in a row of kind %q", what, row[0])
	}
	for _, row := range rows {
		switch row[0] {
		case "self":
			self = true
			r.InRecovery = row[1] == "true"
			var err error
			if r.WAL, err = lsnOr0(row[2]); err != nil {
				return bad(err.Error(), row)
			}
			if r.Replayed, err = lsnOr0(row[3]); err != nil {
				return bad(err.Error(), row)
			}
			if r.ReplayDelay, err = seconds(row[4]); err != nil {
				return bad(err.Error(), row)
			}
			r.Receiver, r.ReceiveFrom = row[5], row[6]
		case "sender":
			s := Sender{Name: row[1], State: row[2], Sync: row[5]}
			var err error
			if s.Replayed, err = lsnOr0(row[3]); err != nil {
				return bad(err.Error(), row)
			}
			if s.ReplayLag, err = seconds(row[4]); err != nil {
				return bad(err.Error(), row)
			}
			r.Senders = append(r.Senders, s)
		case "slot":
			s := Slot{Name: row[1], Active: row[2] == "true", Status: row[4]}
			if row[3] != "" {
				n, err := strconv.ParseInt(row[3], 10, 64)
				if err != nil {
					return bad(fmt.Sprintf("retained WAL %q", row[3]), row)
				}
				b := uint64(max(n, 0))
				s.Retained = &b
			}
			r.Slots = append(r.Slots, s)
		default:
			return bad("an unknown kind", row)
		}
	}
	if !self {
		return Report{}, fmt.Errorf("read the replication state: the server said nothing of itself")
	}
	return r, nil
}

// LSN reads a WAL position as PostgreSQL writes it ("16/B374D848") as a
// byte position.
func LSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("WAL position %q", s)
	}
	return h<<32 | l, nil
}

func lsnOr0(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	return LSN(s)
}

func seconds(s string) (*float64, error) {
	if s == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("seconds %q", s)
	}
	return &f, nil
}

// SlotName is the replication slot a primary keeps for the replica called
// host: pidb_ and the name in the letters a slot may have.
func SlotName(host string) string {
	var b strings.Builder
	b.WriteString("pidb_")
	for _, c := range strings.ToLower(host) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Member is one host of a cluster and what it said: its report, or why
// it said nothing.
type Member struct {
	Name, Address string
	Report        Report
	Err           error
}

// The states of a replica.
const (
	Streaming    = "streaming"     // its WAL receiver streams from the primary
	CatchingUp   = "catching up"   // connected, replaying what it missed
	NotStreaming = "not streaming" // in recovery, but receiving nothing
	NotAStandby  = "not a standby" // a server of its own
	Unreachable  = "unreachable"   // pidb could not ask it
)

// Status is a cluster as `pidb cluster status` shows it.
type Status struct {
	Cluster  string          `json:"cluster"`
	Primary  PrimaryStatus   `json:"primary"`
	Replicas []ReplicaStatus `json:"replicas"`
	// OK: the primary is one, and every replica streams from it
	OK bool `json:"ok"`
}

// PrimaryStatus is the primary's part.
type PrimaryStatus struct {
	Host  string `json:"host"`
	State string `json:"state"` // primary, not a primary, unreachable
	Error string `json:"error,omitempty"`
}

// ReplicaStatus is one replica's part: how far behind the primary it is,
// and what the primary keeps for it.
type ReplicaStatus struct {
	Host     string  `json:"host"`
	State    string  `json:"state"`
	LagBytes *uint64 `json:"lag_bytes"` // the primary's WAL it has not replayed; null: unknown (and on MariaDB)
	// LagTransactions is, on MariaDB, the primary's transactions it has
	// not applied; null: unknown (and on PostgreSQL)
	LagTransactions *uint64  `json:"lag_transactions"`
	LagS            *float64 `json:"lag_s"` // seconds behind (replay_lag); null: unknown
	// Sync is PostgreSQL's sync_state of it: async, sync, quorum,
	// potential; null: unknown (not connected, and on MariaDB)
	Sync *string `json:"sync"`
	// Slot is its replication slot on the primary; null on MariaDB,
	// which has none
	Slot *string `json:"slot"`
	// RetainedBytes is the WAL the primary keeps for its slot; null: no
	// slot, or its WAL lost
	RetainedBytes *uint64 `json:"retained_bytes"`
	Error         string  `json:"error,omitempty"` // why it is not streaming
}

// Standby says of a replica, from what it said, whether it streams from
// primary (Streaming), or what else it does and why: in recovery is not
// streaming, its WAL receiver must stream from the primary's address.
func Standby(m, primary Member) (state, why string) {
	r := m.Report
	if m.Err == nil && r.Flavor.Family() == dbms.MySQLFamily {
		return replicaOf(m, primary)
	}
	switch {
	case m.Err != nil:
		return Unreachable, m.Err.Error()
	case !r.InRecovery:
		return NotAStandby, m.Name + " is a server of its own, not a standby of " + primary.Name
	case r.Receiver == "":
		return NotStreaming, "in recovery, but its WAL receiver is not running: it receives nothing (is " + primary.Name + " up, and does it admit it?)"
	case r.Receiver != "streaming":
		return NotStreaming, "in recovery, but its WAL receiver is " + r.Receiver + ", not streaming"
	case r.ReceiveFrom != primary.Address:
		return NotStreaming, "it streams from " + r.ReceiveFrom + ", not from " + primary.Name + " (" + primary.Address + ")"
	}
	return Streaming, ""
}

// Await waits, for wait at most, until the host called name (root on it,
// its server e) streams from primary as Standby judges it: a standby's
// WAL receiver streaming from the primary's address, a MariaDB replica's
// both threads running from it. Its error says how the host stood at the
// last look.
func Await(ctx context.Context, root remote.Runner, e engine.Engine, name string, primary Member, wait time.Duration) error {
	verb := "replicate"
	if e.Flavor == dbms.Postgres {
		verb = "stream"
	}
	why := "not read"
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := Read(ctx, root, e)
		state, w := Standby(Member{Name: name, Report: r, Err: err}, primary)
		if state == Streaming {
			return nil
		}
		why = w
	}
	return fmt.Errorf("%s does not %s from %s after %s: %s", name, verb, primary.Name, wait, why)
}

// Lag is where the replica called name is behind the primary that
// reported p: its sender there, the primary's WAL it has not replayed and
// the server's replay_lag (0 s where it has all of it); a nil sender
// where the replica is not connected.
func Lag(p Report, name string) (sender *Sender, bytes *uint64, secs *float64) {
	for i := range p.Senders {
		if p.Senders[i].Name != name {
			continue
		}
		s := &p.Senders[i]
		// the replica may pass the WAL position read a moment before
		b := p.WAL - min(p.WAL, s.Replayed)
		secs := s.ReplayLag
		if b == 0 && secs == nil {
			zero := 0.0
			secs = &zero
		}
		return s, &b, secs
	}
	return nil, nil, nil
}

// Judge says of each replica of the cluster of engine family whether it
// streams from the primary, from what each host said.
func Judge(name string, family dbms.Family, primary Member, replicas []Member) Status {
	st := Status{Cluster: name, Primary: PrimaryStatus{Host: primary.Name, State: "primary"}, OK: true}
	p := primary.Report
	switch {
	case primary.Err != nil:
		st.Primary.State, st.Primary.Error, st.OK = Unreachable, primary.Err.Error(), false
	case p.InRecovery && p.Flavor.Family() == dbms.MySQLFamily:
		st.Primary.State, st.Primary.Error, st.OK = "not a primary", primary.Name+" replicates from "+p.ReceiveFrom+": it is a replica, not the primary", false
	case p.InRecovery:
		st.Primary.State, st.Primary.Error, st.OK = "not a primary", primary.Name+" is a standby (in recovery), not the primary", false
	case p.ReadOnly:
		st.Primary.State, st.Primary.Error, st.OK = "read-only", primary.Name+" is read_only: it takes no writes", false
	}
	for _, m := range replicas {
		rs := ReplicaStatus{Host: m.Name}
		rs.State, rs.Error = Standby(m, primary)
		measured := rs.State == Streaming && primary.Err == nil && !p.InRecovery
		if family != dbms.PostgresFamily {
			// MariaDB: no slot, no sync state; the lag in transactions
			if measured {
				rs.LagTransactions, rs.LagS = Behind(p, m.Report)
			}
		} else {
			slot := SlotName(m.Name)
			rs.Slot = &slot
			if primary.Err == nil {
				for _, s := range p.Slots {
					if s.Name == slot {
						rs.RetainedBytes = s.Retained
					}
				}
			}
			if measured {
				if sender, bytes, secs := Lag(p, m.Name); sender != nil {
					sync := sender.Sync
					rs.Sync, rs.LagBytes, rs.LagS = &sync, bytes, secs
					if sender.State == "catchup" {
						rs.State = CatchingUp
					}
				}
			}
		}
		if rs.State != Streaming && rs.State != CatchingUp {
			st.OK = false
		}
		st.Replicas = append(st.Replicas, rs)
	}
	return st
}
