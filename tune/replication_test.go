package tune

import (
	"strings"
	"testing"

	"pidb/dbms"
)

// lines renders the settings of a host in a cluster as the drop-in's
// lines, by name, and fails on an error.
func clusterLines(t *testing.T, flavor dbms.Flavor, version string, b board, preset PresetName, r Replication) map[string]string {
	t.Helper()
	in := Input{Flavor: flavor, Version: version, RAMBytes: b.ram, CPUs: b.cpus, Storage: b.storage, Replication: &r}
	s, err := Recommend(in, preset, nil)
	if err != nil {
		t.Fatalf("%s %s %s: %v", flavor, version, preset, err)
	}
	m := map[string]string{}
	for _, x := range s {
		if _, dup := m[x.Name]; dup {
			t.Errorf("%s written twice", x.Name)
		}
		if x.Why == "" {
			t.Errorf("%s has no reason", x.Name)
		}
		m[x.Name] = Line(flavor, x)
	}
	return m
}

// Every value below is written out by hand.
func TestReplicationPostgres(t *testing.T) {
	three := Replication{Cluster: "quiz", Primary: true, Hosts: 3}
	got := clusterLines(t, "postgres", "15", pi4B4, Balanced, three)
	expect(t, "primary on an SD card", got, map[string]string{
		"wal_level":                 "wal_level = replica",
		"max_wal_senders":           "max_wal_senders = 10",
		"max_replication_slots":     "max_replication_slots = 10",
		"hot_standby":               "hot_standby = on",
		"hot_standby_feedback":      "hot_standby_feedback = on",
		"max_slot_wal_keep_size":    "max_slot_wal_keep_size = 2GB",
		"synchronous_standby_names": "-",
		"shared_buffers":            "shared_buffers = 1GB", // the preset's own stay
		"synchronous_commit":        "synchronous_commit = on",
	}, false)
	// a replica takes the same: it may become the primary
	replica := three
	replica.Primary = false
	if r := clusterLines(t, "postgres", "15", pi4B4, Balanced, replica); r["max_wal_senders"] != "max_wal_senders = 10" || r["hot_standby"] != "hot_standby = on" {
		t.Errorf("replica: %v", r)
	}
	// a big cluster on NVMe: a sender for each other host and pg_basebackup
	twelve := Replication{Cluster: "rack", Primary: true, Hosts: 12}
	expect(t, "twelve hosts", clusterLines(t, "postgres", "16", pi5, Balanced, twelve), map[string]string{
		"max_wal_senders":        "max_wal_senders = 13",
		"max_replication_slots":  "max_replication_slots = 13",
		"max_slot_wal_keep_size": "max_slot_wal_keep_size = 8GB",
	}, false)
	// PostgreSQL 12 has no cap on a slot's WAL
	expect(t, "PostgreSQL 12", clusterLines(t, "postgres", "12", pi3B, Balanced, three), map[string]string{
		"max_slot_wal_keep_size": "-",
		"wal_level":              "wal_level = replica",
	}, false)
	// seed is the write-ups' settings, and still a cluster's
	expect(t, "seed", clusterLines(t, "postgres", "15", pi4B4, Seed, three), map[string]string{
		"shared_buffers":                  "shared_buffers = 1GB",
		"max_parallel_workers_per_gather": "max_parallel_workers_per_gather = 0",
		"wal_level":                       "wal_level = replica",
		"max_wal_senders":                 "max_wal_senders = 10",
		"max_replication_slots":           "max_replication_slots = 10",
		"hot_standby":                     "hot_standby = on",
		"hot_standby_feedback":            "hot_standby_feedback = on",
		"max_slot_wal_keep_size":          "max_slot_wal_keep_size = 2GB",
	}, true)
	// synchronous: the primary waits for any one of its replicas, named
	// as they connect; a replica names none
	sync := Replication{Cluster: "quiz", Primary: true, Hosts: 3, Synchronous: true, Standbys: []string{"pi3", "pi-5"}}
	if got := clusterLines(t, "postgres", "15", pi4B4, Balanced, sync)["synchronous_standby_names"]; got != `synchronous_standby_names = 'ANY 1 ("pi3", "pi-5")'` {
		t.Errorf("synchronous primary: %s", got)
	}
	sync.Primary = false
	if got, ok := clusterLines(t, "postgres", "15", pi4B4, Balanced, sync)["synchronous_standby_names"]; ok {
		t.Errorf("synchronous replica: %s", got)
	}
}

func TestReplicationMariaDB(t *testing.T) {
	primary := Replication{Cluster: "shop", Primary: true, Hosts: 2, ServerID: 167772200}
	expect(t, "primary", clusterLines(t, "mariadb", "10.11", pi3B, Balanced, primary), map[string]string{
		"server_id":                      "server_id = 167772200",
		"log_bin":                        "log_bin = pidb-bin",
		"binlog_format":                  "binlog_format = ROW",
		"gtid_strict_mode":               "gtid_strict_mode = ON",
		"binlog_expire_logs_seconds":     "binlog_expire_logs_seconds = 259200",
		"sync_binlog":                    "sync_binlog = 1",
		"log_slave_updates":              "log_slave_updates = ON",
		"read_only":                      "-",
		"innodb_flush_log_at_trx_commit": "innodb_flush_log_at_trx_commit = 1",
	}, false)
	expect(t, "fast primary", clusterLines(t, "mariadb", "10.11", pi3B, Fast, primary), map[string]string{
		"sync_binlog": "sync_binlog = 0",
	}, false)
	expect(t, "primary on MariaDB 10.5", clusterLines(t, "mariadb", "10.5", pi3B, Balanced, primary), map[string]string{
		"expire_logs_days":           "expire_logs_days = 3",
		"binlog_expire_logs_seconds": "-",
	}, false)
	replica := Replication{Cluster: "shop", Hosts: 2, ServerID: 167772201}
	// a replica writes the binary log too, with what it replays: it may
	// become the primary without a restart
	expect(t, "replica", clusterLines(t, "mariadb", "10.11", pi3B, Balanced, replica), map[string]string{
		"server_id":          "server_id = 167772201",
		"log_bin":            "log_bin = pidb-bin",
		"log_slave_updates":  "log_slave_updates = ON",
		"read_only":          "read_only = ON",
		"relay_log_recovery": "relay_log_recovery = ON",
		"gtid_strict_mode":   "gtid_strict_mode = ON",
		"sync_binlog":        "sync_binlog = 1",
		// the Pi 3B's four cores
		"slave_parallel_threads": "slave_parallel_threads = 4",
	}, false)
	// seed's own three and the cluster's: skip-log-bin gives way to the
	// primary's binary log, in its place
	seed := clusterLines(t, "mariadb", "10.11", pi3B, Seed, primary)
	expect(t, "seed primary", seed, map[string]string{
		"innodb_buffer_pool_size":    "innodb_buffer_pool_size = 256M",
		"innodb_adaptive_hash_index": "innodb_adaptive_hash_index = ON",
		"log_bin":                    "log_bin = pidb-bin",
		"server_id":                  "server_id = 167772200",
		"binlog_format":              "binlog_format = ROW",
		"gtid_strict_mode":           "gtid_strict_mode = ON",
		"binlog_expire_logs_seconds": "binlog_expire_logs_seconds = 259200",
		"sync_binlog":                "sync_binlog = 1",
		"log_slave_updates":          "log_slave_updates = ON",
		"relay_log_recovery":         "relay_log_recovery = ON",
		"slave_parallel_threads":     "slave_parallel_threads = 4",
	}, true)
	// a Zero W's one core: one applier, the server's default
	if got := clusterLines(t, "mariadb", "10.11", zeroW, Balanced, replica); got["slave_parallel_threads"] != "" {
		t.Errorf("a Zero W replica: %q", got["slave_parallel_threads"])
	}
	// semi-sync on both sides
	primary.Synchronous, replica.Synchronous = true, true
	for _, r := range []Replication{primary, replica} {
		if got := clusterLines(t, "mariadb", "10.11", pi3B, Balanced, r); got["rpl_semi_sync_master_enabled"] != "rpl_semi_sync_master_enabled = ON" || got["rpl_semi_sync_slave_enabled"] != "rpl_semi_sync_slave_enabled = ON" {
			t.Errorf("synchronous, primary %v: %v", r.Primary, got)
		}
	}
}

func TestReplicationMySQL(t *testing.T) {
	primary := Replication{Cluster: "shop", Primary: true, Hosts: 2, ServerID: 7}
	expect(t, "MySQL primary", clusterLines(t, "mysql", "8.0.39", pi4B4, Balanced, primary), map[string]string{
		"gtid_mode":                  "gtid_mode = ON",
		"enforce_gtid_consistency":   "enforce_gtid_consistency = ON",
		"gtid_strict_mode":           "-",
		"binlog_expire_logs_seconds": "binlog_expire_logs_seconds = 259200",
		"log_bin":                    "log_bin = pidb-bin",
		"log_replica_updates":        "log_replica_updates = ON",
		"log_slave_updates":          "-",
		"binlog_format":              "-",
		"plugin_load_add":            "-",
	}, false)
	// semi-sync: MySQL's two plugins loaded at start, both sides on on
	// every member, by 8.0.26's names, and by the old ones before it
	replica := Replication{Cluster: "shop", Hosts: 2, ServerID: 8, Synchronous: true}
	primary.Synchronous = true
	for _, r := range []Replication{primary, replica} {
		expect(t, "MySQL 8.4, synchronous", clusterLines(t, "mysql", "8.4.6", pi4B4, Balanced, r), map[string]string{
			"plugin_load_add":               "plugin_load_add = semisync_source.so;semisync_replica.so",
			"rpl_semi_sync_source_enabled":  "rpl_semi_sync_source_enabled = ON",
			"rpl_semi_sync_replica_enabled": "rpl_semi_sync_replica_enabled = ON",
		}, false)
	}
	expect(t, "MySQL 8.0.25, synchronous", clusterLines(t, "mysql", "8.0.25", pi4B4, Balanced, replica), map[string]string{
		"plugin_load_add":              "plugin_load_add = semisync_master.so;semisync_slave.so",
		"rpl_semi_sync_master_enabled": "rpl_semi_sync_master_enabled = ON",
		"rpl_semi_sync_slave_enabled":  "rpl_semi_sync_slave_enabled = ON",
		"log_slave_updates":            "log_slave_updates = ON",
	}, false)
}

func TestReplicationRefused(t *testing.T) {
	for _, c := range []struct {
		flavor dbms.Flavor
		r      Replication
		want   string
	}{
		{"mariadb", Replication{Cluster: "c", Primary: true, Hosts: 2}, `cluster "c": server_id 0 is not a replicating server's`},
		{"postgres", Replication{Cluster: "c", Primary: true, Hosts: 1}, `cluster "c": 1 hosts, want a primary and at least one replica`},
		{"postgres", Replication{Cluster: "c", Primary: true, Hosts: 2, Synchronous: true}, `synchronous = true with no standby named`},
		{"postgres", Replication{Cluster: "c", Primary: true, Hosts: 2, Synchronous: true, Standbys: []string{`a"); DROP`}}, `standby name "a\"); DROP"`},
	} {
		_, err := Recommend(Input{Flavor: c.flavor, RAMBytes: 1 << 30, CPUs: 4, Replication: &c.r}, Balanced, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: %v, want %q", c.flavor, c.r, err, c.want)
		}
	}
}

// What Render writes for a host in a cluster, ParseFile reads back.
func TestReplicationFileReadsBack(t *testing.T) {
	for _, c := range []struct {
		flavor dbms.Flavor
		r      Replication
	}{
		{"postgres", Replication{Cluster: "q", Primary: true, Hosts: 3, Synchronous: true, Standbys: []string{"pi3", "pi5"}}},
		{"mariadb", Replication{Cluster: "q", Primary: true, Hosts: 2, ServerID: 9}},
		{"mariadb", Replication{Cluster: "q", Hosts: 2, ServerID: 10}},
	} {
		in := Input{Flavor: c.flavor, RAMBytes: 1 << 30, CPUs: 4, Storage: "sd", Replication: &c.r}
		s, err := Recommend(in, Balanced, nil)
		if err != nil {
			t.Fatal(err)
		}
		in, _ = Normalize(in)
		file := Render(in, Balanced, s)
		if first, _, _ := strings.Cut(file, "\n"); !strings.HasSuffix(first, `, in cluster "q".`) {
			t.Errorf("%s: header %q, want it to name the cluster", c.flavor, first)
		}
		got, err := ParseFile(in, file)
		if err != nil {
			t.Fatalf("%s: %v", c.flavor, err)
		}
		if len(got) != len(s) {
			t.Fatalf("%s: %d settings read, %d written", c.flavor, len(got), len(s))
		}
		for i := range s {
			if got[i].Name != s[i].Name || got[i].Value != s[i].Value {
				t.Errorf("%s: read %+v, wrote %+v", c.flavor, got[i], s[i])
			}
		}
	}
	// a value that would end the quotes, or a comment, is refused
	for _, v := range []string{`'x'`, "a\nb", "a # b"} {
		if _, err := Recommend(Input{Flavor: "postgres", RAMBytes: 1 << 30, CPUs: 4}, Balanced, map[string]string{"synchronous_standby_names": v}); err == nil {
			t.Errorf("synchronous_standby_names = %q accepted", v)
		}
	}
}
