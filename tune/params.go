package tune

import (
	"pidb/dbms"
	"pidb/internal/version"
)

// Param is a server setting pidb knows: its type, the range the server
// accepts, and which flavours and versions have it.
type Param struct {
	Name               string
	Kind               Kind
	Min, Max           float64 // Int and Float; Duration in milliseconds
	MinBytes, MaxBytes uint64  // Bytes
	Enum               []string
	Flavors            []dbms.Flavor
	Since, Until       string // versions: Since <= v < Until ("" = open)
	// Successor, with Until, is the setting that took its place from
	// Until, which pidb sets there: the server ignores this one where
	// that is set (MySQL's innodb_log_file_size from 8.0.30)
	Successor string
	// StartOnly is an option the server reads at its start and keeps no
	// variable of (MySQL's plugin_load_add, which loads plugins): a
	// read-back cannot ask for it, and asks for what it did instead
	StartOnly bool
}

// has reports whether the flavour at version v has the parameter.
func (p Param) has(flavor dbms.Flavor, v string) bool {
	ok := false
	for _, f := range p.Flavors {
		if f == flavor {
			ok = true
		}
	}
	if !ok {
		return false
	}
	if p.Since != "" && version.Less(v, p.Since) {
		return false
	}
	if p.Until != "" && !version.Less(v, p.Until) {
		return false
	}
	return true
}

var (
	pg      = []dbms.Flavor{dbms.Postgres}
	mysqls  = []dbms.Flavor{dbms.MySQL, dbms.MariaDB}
	mysql   = []dbms.Flavor{dbms.MySQL}
	mariadb = []dbms.Flavor{dbms.MariaDB}
)

// params is the catalogue: the settings the presets write and the common
// ones a user may override. Ranges are the servers' own (PostgreSQL's
// pg_settings min_val/max_val; the MySQL and MariaDB system variable pages).
var params = []Param{
	// PostgreSQL
	{Name: "max_connections", Kind: Int, Min: 1, Max: 262143, Flavors: pg},
	{Name: "shared_buffers", Kind: Bytes, MinBytes: 128 << 10, MaxBytes: 1 << 40, Flavors: pg},
	{Name: "effective_cache_size", Kind: Bytes, MinBytes: 8 << 10, MaxBytes: 1 << 44, Flavors: pg},
	{Name: "maintenance_work_mem", Kind: Bytes, MinBytes: 1 << 20, MaxBytes: 2147483647 << 10, Flavors: pg},
	{Name: "work_mem", Kind: Bytes, MinBytes: 64 << 10, MaxBytes: 2147483647 << 10, Flavors: pg},
	{Name: "temp_buffers", Kind: Bytes, MinBytes: 800 << 10, MaxBytes: 1 << 40, Flavors: pg},
	{Name: "wal_buffers", Kind: Bytes, MinBytes: 32 << 10, MaxBytes: 2 << 30, Flavors: pg},
	{Name: "min_wal_size", Kind: Bytes, MinBytes: 32 << 20, MaxBytes: 1 << 40, Flavors: pg},
	{Name: "max_wal_size", Kind: Bytes, MinBytes: 32 << 20, MaxBytes: 1 << 40, Flavors: pg},
	{Name: "checkpoint_completion_target", Kind: Float, Min: 0, Max: 1, Flavors: pg},
	{Name: "checkpoint_timeout", Kind: Duration, Min: 30e3, Max: 86400e3, Flavors: pg},
	{Name: "random_page_cost", Kind: Float, Min: 0, Max: 1.79769e308, Flavors: pg},
	{Name: "log_min_duration_statement", Kind: Int, Min: -1, Max: 2147483647, Flavors: pg}, // milliseconds; -1 off
	{Name: "seq_page_cost", Kind: Float, Min: 0, Max: 1.79769e308, Flavors: pg},
	{Name: "effective_io_concurrency", Kind: Int, Min: 0, Max: 1000, Flavors: pg},
	{Name: "io_method", Kind: Enum, Enum: []string{"sync", "worker", "io_uring"}, Flavors: pg, Since: "18"},
	{Name: "io_workers", Kind: Int, Min: 1, Max: 32, Flavors: pg, Since: "18"},
	{Name: "default_statistics_target", Kind: Int, Min: 1, Max: 10000, Flavors: pg},
	{Name: "max_worker_processes", Kind: Int, Min: 0, Max: 262143, Flavors: pg},
	{Name: "max_parallel_workers", Kind: Int, Min: 0, Max: 1024, Flavors: pg},
	{Name: "max_parallel_workers_per_gather", Kind: Int, Min: 0, Max: 1024, Flavors: pg},
	{Name: "max_parallel_maintenance_workers", Kind: Int, Min: 0, Max: 1024, Flavors: pg, Since: "11"},
	{Name: "jit", Kind: Bool, Flavors: pg, Since: "11"},
	{Name: "synchronous_commit", Kind: Enum, Enum: []string{"on", "off", "local", "remote_write", "remote_apply"}, Flavors: pg},
	{Name: "wal_compression", Kind: Bool, Flavors: pg, Until: "15"},
	{Name: "wal_compression", Kind: Enum, Enum: []string{"off", "on", "pglz", "lz4", "zstd"}, Flavors: pg, Since: "15"},
	{Name: "fsync", Kind: Bool, Flavors: pg},
	{Name: "full_page_writes", Kind: Bool, Flavors: pg},
	{Name: "hash_mem_multiplier", Kind: Float, Min: 1, Max: 1000, Flavors: pg, Since: "13"},
	{Name: "autovacuum_work_mem", Kind: Bytes, MinBytes: 1 << 20, MaxBytes: 2147483647 << 10, Flavors: pg}, // the server's -1 (maintenance_work_mem) is left by not setting it
	{Name: "huge_pages", Kind: Enum, Enum: []string{"try", "on", "off"}, Flavors: pg},
	{Name: "autovacuum", Kind: Bool, Flavors: pg},
	{Name: "autovacuum_max_workers", Kind: Int, Min: 1, Max: 262143, Flavors: pg},
	{Name: "log_min_duration_statement", Kind: Int, Min: -1, Max: 2147483647, Flavors: pg},
	{Name: "wal_level", Kind: Enum, Enum: []string{"minimal", "replica", "logical"}, Flavors: pg},
	{Name: "max_wal_senders", Kind: Int, Min: 0, Max: 262143, Flavors: pg},
	{Name: "max_replication_slots", Kind: Int, Min: 0, Max: 262143, Flavors: pg},
	{Name: "max_slot_wal_keep_size", Kind: Bytes, MinBytes: 1 << 20, MaxBytes: 1 << 50, Flavors: pg, Since: "13"}, // the server's -1 (no cap) is left by not setting it
	{Name: "hot_standby", Kind: Bool, Flavors: pg},
	{Name: "hot_standby_feedback", Kind: Bool, Flavors: pg},
	{Name: "synchronous_standby_names", Kind: Quoted, Flavors: pg},

	// MySQL and MariaDB
	{Name: "innodb_buffer_pool_size", Kind: Bytes, MinBytes: 5 << 20, MaxBytes: 1 << 44, Flavors: mysqls},
	{Name: "innodb_buffer_pool_instances", Kind: Int, Min: 1, Max: 64, Flavors: mysql},
	{Name: "innodb_redo_log_capacity", Kind: Bytes, MinBytes: 8 << 20, MaxBytes: 128 << 30, Flavors: mysql, Since: "8.0.30"},
	{Name: "innodb_log_file_size", Kind: Bytes, MinBytes: 4 << 20, MaxBytes: 512 << 30, Flavors: mysql, Until: "8.0.30", Successor: "innodb_redo_log_capacity"},
	{Name: "innodb_log_file_size", Kind: Bytes, MinBytes: 4 << 20, MaxBytes: 512 << 30, Flavors: mariadb},
	{Name: "innodb_io_capacity", Kind: Int, Min: 100, Max: 4294967295, Flavors: mysqls},
	{Name: "innodb_io_capacity_max", Kind: Int, Min: 100, Max: 4294967295, Flavors: mysqls},
	{Name: "innodb_flush_method", Kind: Enum, Enum: []string{"fsync", "O_DSYNC", "littlesync", "nosync", "O_DIRECT", "O_DIRECT_NO_FSYNC"}, Flavors: mysql},
	{Name: "innodb_flush_method", Kind: Enum, Enum: []string{"fsync", "O_DSYNC", "littlesync", "nosync", "O_DIRECT", "O_DIRECT_NO_FSYNC"}, Flavors: mariadb, Until: "11.0"},
	{Name: "innodb_flush_log_at_trx_commit", Kind: Int, Min: 0, Max: 2, Flavors: mysqls},
	{Name: "innodb_adaptive_hash_index", Kind: Bool, Flavors: mysqls},
	{Name: "innodb_doublewrite", Kind: Bool, Flavors: mysql, Until: "8.0.30"},
	{Name: "innodb_doublewrite", Kind: Enum, Enum: []string{"ON", "OFF", "DETECT_AND_RECOVER", "DETECT_ONLY"}, Flavors: mysql, Since: "8.0.30"},
	{Name: "innodb_doublewrite", Kind: Bool, Flavors: mariadb},
	{Name: "max_connections", Kind: Int, Min: 1, Max: 100000, Flavors: mysqls},
	{Name: "sort_buffer_size", Kind: Bytes, MinBytes: 32 << 10, MaxBytes: 1 << 40, Flavors: mysqls},
	{Name: "join_buffer_size", Kind: Bytes, MinBytes: 128, MaxBytes: 1 << 40, Flavors: mysqls},
	{Name: "read_buffer_size", Kind: Bytes, MinBytes: 8 << 10, MaxBytes: 2 << 30, Flavors: mysqls},
	{Name: "read_rnd_buffer_size", Kind: Bytes, MinBytes: 1, MaxBytes: 2 << 30, Flavors: mysqls},
	{Name: "tmp_table_size", Kind: Bytes, MinBytes: 1 << 10, MaxBytes: 1 << 44, Flavors: mysqls},
	{Name: "max_heap_table_size", Kind: Bytes, MinBytes: 16 << 10, MaxBytes: 1 << 44, Flavors: mysqls},
	{Name: "thread_stack", Kind: Bytes, MinBytes: 128 << 10, MaxBytes: 1 << 40, Flavors: mysqls},
	{Name: "table_open_cache", Kind: Int, Min: 1, Max: 524288, Flavors: mysqls},
	{Name: "performance_schema", Kind: Bool, Flavors: mysqls},
	{Name: "log_bin", Kind: Bool, Flavors: mysqls},
	{Name: "log_slave_updates", Kind: Bool, Flavors: mariadb},
	{Name: "log_slave_updates", Kind: Bool, Flavors: mysql, Until: "8.0.26"},
	{Name: "log_replica_updates", Kind: Bool, Flavors: mysql, Since: "8.0.26"},
	{Name: "key_buffer_size", Kind: Bytes, MinBytes: 8, MaxBytes: 1 << 40, Flavors: mysqls},
	{Name: "aria_pagecache_buffer_size", Kind: Bytes, MinBytes: 128 << 10, MaxBytes: 1 << 40, Flavors: mariadb},
	{Name: "innodb_log_writer_threads", Kind: Bool, Flavors: mysql, Since: "8.0.22"},
	{Name: "slow_query_log", Kind: Bool, Flavors: mysqls},
	{Name: "skip_name_resolve", Kind: Bool, Flavors: mysqls},
	{Name: "long_query_time", Kind: Float, Min: 0, Max: 31536000, Flavors: mysqls},
	{Name: "server_id", Kind: Int, Min: 0, Max: 4294967295, Flavors: mysqls},
	{Name: "binlog_format", Kind: Enum, Enum: []string{"ROW", "STATEMENT", "MIXED"}, Flavors: mysqls},
	{Name: "binlog_expire_logs_seconds", Kind: Int, Min: 0, Max: 4294967295, Flavors: mysql},
	{Name: "binlog_expire_logs_seconds", Kind: Int, Min: 0, Max: 8553600, Flavors: mariadb, Since: "10.6"},
	{Name: "expire_logs_days", Kind: Int, Min: 0, Max: 99, Flavors: mariadb},
	{Name: "sync_binlog", Kind: Int, Min: 0, Max: 4294967295, Flavors: mysqls},
	{Name: "gtid_strict_mode", Kind: Bool, Flavors: mariadb},
	{Name: "gtid_mode", Kind: Enum, Enum: []string{"OFF", "OFF_PERMISSIVE", "ON_PERMISSIVE", "ON"}, Flavors: mysql},
	{Name: "enforce_gtid_consistency", Kind: Enum, Enum: []string{"OFF", "ON", "WARN"}, Flavors: mysql},
	{Name: "read_only", Kind: Bool, Flavors: mysqls},
	{Name: "relay_log_recovery", Kind: Bool, Flavors: mysqls},
	{Name: "slave_parallel_threads", Kind: Int, Min: 0, Max: 16383, Flavors: mariadb},
	{Name: "rpl_semi_sync_master_enabled", Kind: Bool, Flavors: mariadb, Since: "10.3.3"},
	{Name: "rpl_semi_sync_master_enabled", Kind: Bool, Flavors: mysql, Until: "8.0.26"},
	{Name: "rpl_semi_sync_slave_enabled", Kind: Bool, Flavors: mysql, Until: "8.0.26"},
	{Name: "rpl_semi_sync_source_enabled", Kind: Bool, Flavors: mysql, Since: "8.0.26"},
	{Name: "rpl_semi_sync_replica_enabled", Kind: Bool, Flavors: mysql, Since: "8.0.26"},
	{Name: "plugin_load_add", Kind: Quoted, Flavors: mysql, StartOnly: true},
	{Name: "rpl_semi_sync_slave_enabled", Kind: Bool, Flavors: mariadb, Since: "10.3.3"},
}

// lookup returns the parameter called name for the flavour and version.
func lookup(flavor dbms.Flavor, version, name string) (Param, bool) {
	for _, p := range params {
		if p.Name == name && p.has(flavor, version) {
			return p, true
		}
	}
	return Param{}, false
}

// Variables are the settings of s the server of flavor at version holds
// as variables, which a read-back can ask for: all but the StartOnly
// options.
func (s Settings) Variables(flavor dbms.Flavor, version string) Settings {
	out := make(Settings, 0, len(s))
	for _, x := range s {
		if p, ok := lookup(flavor, version, x.Name); !ok || !p.StartOnly {
			out = append(out, x)
		}
	}
	return out
}

// Names lists the parameters the tuner knows for the flavour and version.
func Names(flavor dbms.Flavor, version string) []string {
	var out []string
	for _, p := range params {
		if p.has(flavor, version) {
			out = append(out, p.Name)
		}
	}
	return out
}
