package tune

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/internal/version"
)

// Replication is a host's part in a cluster (the inventory's [[cluster]]):
// what the tuner adds so that the engine's own replication runs. A host on
// its own has none.
type Replication struct {
	Cluster string // the cluster's name, for the reasons
	Primary bool   // the cluster's primary; else one of its replicas
	Hosts   int    // the cluster's hosts, the primary among them
	// ServerID is the host's server_id on MySQL and MariaDB, unique in
	// the cluster (pidb gives each host its IPv4 address as a number)
	ServerID uint32
	// Synchronous has a commit on the primary wait until a replica has
	// it too; Standbys are the replicas' names, as PostgreSQL's
	// synchronous_standby_names lists them
	Synchronous bool
	Standbys    []string
}

// checkReplication refuses a part in a cluster the tuner cannot write.
func checkReplication(in Input) error {
	r := in.Replication
	if r == nil {
		return nil
	}
	switch {
	case r.Hosts < 2:
		return fmt.Errorf("cluster %q: %d hosts, want a primary and at least one replica", r.Cluster, r.Hosts)
	case isMySQLFamily(in.Flavor) && r.ServerID == 0:
		return fmt.Errorf("cluster %q: server_id 0 is not a replicating server's: give each host its own from 1", r.Cluster)
	case r.Synchronous && in.Flavor == dbms.Postgres && r.Primary && len(r.Standbys) == 0:
		return fmt.Errorf("cluster %q: synchronous = true with no standby named", r.Cluster)
	}
	for _, s := range r.Standbys {
		if !standbyName(s) {
			return fmt.Errorf("cluster %q: standby name %q: want letters, digits, '.', '_' and '-'", r.Cluster, s)
		}
	}
	return nil
}

func standbyName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// replication are the settings a host's part in its cluster takes, over
// the preset's (every preset's: they make the cluster work, they tune
// nothing). Primary and replicas alike can send WAL or a binary log, so a
// switchover needs no other settings than the roles' own.
func replication(in Input, preset PresetName) Settings {
	r := in.Replication
	of := fmt.Sprintf("cluster %q", r.Cluster)
	senders := max(10, r.Hosts+1)
	if in.Flavor == dbms.Postgres {
		s := Settings{
			{Name: "wal_level", Value: Word("replica"), Why: of + ": the replicas replay the WAL, which must carry what they need (the server's default, written so that no override takes it away)"},
			{Name: "max_wal_senders", Value: Integer(int64(senders)), Why: fmt.Sprintf("%s: a WAL sender for each of its %d other hosts and one for pg_basebackup seeding a replica, at least the server's default 10", of, r.Hosts-1)},
			{Name: "max_replication_slots", Value: Integer(int64(senders)), Why: of + ": a slot for each replica, so the primary keeps the WAL a replica has not yet had"},
			{Name: "hot_standby", Value: Switch(true), Why: of + ": a replica answers read-only queries while it replays"},
			{Name: "hot_standby_feedback", Value: Switch(true), Why: of + ": a replica tells the primary which rows its queries still read, so the primary's vacuum does not remove them and cancel the query"},
		}
		if !version.Less(in.Version, "13") {
			keep, why := 8*gb, "at most 8GB of WAL kept for a replica that is away"
			if in.Storage == "sd" {
				keep, why = 2*gb, "at most 2GB of WAL kept for a replica that is away, beside max_wal_size on the SD card"
			}
			s = append(s, Setting{Name: "max_slot_wal_keep_size", Value: Size(keep), Why: of + ": " + why + ": a slot with no replica would fill the disk; a replica that falls further behind is seeded again by the next provision"})
		}
		if r.Primary && r.Synchronous {
			quoted := make([]string, len(r.Standbys))
			for i, n := range r.Standbys {
				quoted[i] = strconv.Quote(n)
			}
			s = append(s, Setting{Name: "synchronous_standby_names", Value: Text("ANY 1 (" + strings.Join(quoted, ", ") + ")"), Why: of + " is synchronous: a commit returns once one replica has its WAL too (synchronous_commit on), so a dead card loses no commit; the primary waits while no replica answers"})
		}
		return s
	}
	// Every member writes the binary log, with what it replays in it too
	// (log_slave_updates): any of them can become the primary without a
	// restart, and the others follow it from their GTID positions. Only
	// read_only tells a replica from the primary.
	updates := "log_slave_updates"
	if in.Flavor == dbms.MySQL && !version.Less(in.Version, "8.0.26") {
		updates = "log_replica_updates" // MySQL's name since 8.0.26
	}
	s := Settings{
		{Name: "server_id", Value: Integer(int64(r.ServerID)), Why: of + ": each server's own number, which its binary log events carry (pidb's: the host's IPv4 address as a number)"},
		{Name: "log_bin", Value: Switch(true), Why: of + ": every member writes the binary log (pidb-bin.* in the data directory), so that any of them can become the primary without a restart; a host on its own keeps the write-up's skip-log-bin"},
		{Name: updates, Value: Switch(true), Why: of + ": a replica's binary log holds what it replays too, so that the others can follow it from their GTID positions once it is the primary"},
	}
	if in.Flavor == dbms.MariaDB {
		// MySQL logs rows by default, and calls binlog_format deprecated
		// since 8.0.34
		s = append(s, Setting{Name: "binlog_format", Value: Word("ROW"), Why: of + ": the rows a statement changed, so a replica applies exactly them"})
	}
	if in.Flavor == dbms.MariaDB {
		s = append(s, Setting{Name: "gtid_strict_mode", Value: Switch(true), Why: of + ": a replica stops on an event out of order instead of applying it twice or skipping it"})
	} else {
		s = append(s,
			Setting{Name: "gtid_mode", Value: Word("ON"), Why: of + ": replicas follow the primary by transaction ids, not file positions"},
			Setting{Name: "enforce_gtid_consistency", Value: Word("ON"), Why: of + ": only statements that GTID replication can carry"})
	}
	expire := Setting{Name: "binlog_expire_logs_seconds", Value: Integer(int64(3 * 24 * time.Hour / time.Second)), Why: of + ": binary logs kept three days, then removed: a card does not fill with them; a replica away longer is seeded again by the next provision"}
	if in.Flavor == dbms.MariaDB && version.Less(in.Version, "10.6") {
		expire = Setting{Name: "expire_logs_days", Value: Integer(3), Why: expire.Why}
	}
	s = append(s, expire)
	if preset == Fast {
		s = append(s, Setting{Name: "sync_binlog", Value: Integer(0), Why: "FAST PRESET: the binary log is flushed when the OS likes; after a power cut the replicas may hold commits the primary lost, and must be seeded again"})
	} else {
		s = append(s, Setting{Name: "sync_binlog", Value: Integer(1), Why: of + ": the binary log is on the card before a commit returns, so after a power cut the primary and its replicas agree (only the fast preset trades that)"})
	}
	s = append(s, Setting{Name: "relay_log_recovery", Value: Switch(true), Why: of + ": after a crash a replica fetches again what it had not applied, instead of trusting a relay log cut short"})
	if in.Flavor == dbms.MariaDB && in.CPUs >= 2 {
		// on every member: a switchover changes it on none
		s = append(s, Setting{Name: "slave_parallel_threads", Value: Integer(int64(min(in.CPUs, 4))), Why: of + ": a replica applies its primary's transactions on a thread per core, in the primary's commit order (optimistic): on the lab, under eight clients inserting, Pi 3 replicas fell 1,600-5,100 transactions behind with four threads and 20,000-40,000 with one"})
	}
	if !r.Primary {
		s = append(s, Setting{Name: "read_only", Value: Switch(true), Why: of + ": a replica takes no writes but the primary's: a write there would part it from the primary"})
	}
	if r.Synchronous && in.Flavor == dbms.MariaDB {
		// both sides on every member: a switchover changes neither
		s = append(s,
			Setting{Name: "rpl_semi_sync_master_enabled", Value: Switch(true), Why: of + " is synchronous (semi-sync): on the primary, a commit returns once a replica has its events, or after rpl_semi_sync_master_timeout (10 s) without one"},
			Setting{Name: "rpl_semi_sync_slave_enabled", Value: Switch(true), Why: of + " is synchronous (semi-sync): a replica acknowledges what it receives"})
	}
	if r.Synchronous && in.Flavor == dbms.MySQL {
		// MySQL's semi-sync is two plugins, loaded at start, both on
		// every member: a switchover changes neither
		source, replica := "source", "replica"
		if version.Less(in.Version, "8.0.26") {
			source, replica = "master", "slave"
		}
		s = append(s,
			Setting{Name: "plugin_load_add", Value: Text("semisync_" + source + ".so;semisync_" + replica + ".so"), Why: of + " is synchronous (semi-sync): MySQL's two semi-sync plugins, loaded at start (their variables, read back, say they are)"},
			Setting{Name: "rpl_semi_sync_" + source + "_enabled", Value: Switch(true), Why: of + " is synchronous (semi-sync): on the primary, a commit returns once a replica has its events, or after rpl_semi_sync_" + source + "_timeout (10 s) without one"},
			Setting{Name: "rpl_semi_sync_" + replica + "_enabled", Value: Switch(true), Why: of + " is synchronous (semi-sync): a replica acknowledges what it receives"})
	}
	return s
}

// over sets each of more in s: in its place where s has it, else at the
// end.
func over(s, more Settings) Settings {
	for _, x := range more {
		replaced := false
		for i := range s {
			if s[i].Name == x.Name {
				s[i], replaced = x, true
			}
		}
		if !replaced {
			s = append(s, x)
		}
	}
	return s
}
