package tune

import (
	"fmt"

	"pidb/dbms"
	"pidb/internal/version"
)

// The MySQL family's rules (MariaDB's and Oracle MySQL's): one function a
// concern, called in the order the drop-in is written, as PostgreSQL's.

// mysqlFamily: the seed's three rules, then memory within RAM, I/O by
// storage and the MySQL/MariaDB differences by version.
func mysqlFamily(in Input, preset PresetName) Settings {
	poolSet := Setting{Name: "innodb_buffer_pool_size", Value: Size(in.RAMBytes / 4), Why: "25% of RAM: the write-up's rule, leaving room for the OS and the connections"}
	binlogOff := Setting{Name: "log_bin", Value: Switch(false), Why: "no binary log (skip-log-bin): no replication here, and half the writes to the card (the write-up's setting)"}
	ahi := Setting{Name: "innodb_adaptive_hash_index", Value: Switch(true), Why: "faster point selects once the working set is in memory (the write-up's setting)"}
	if preset == Seed {
		return Settings{poolSet, binlogOff, ahi}
	}
	conns, connWhy := connections(in)
	pool, poolSet := myPool(in, conns)
	s := Settings{
		{Name: "max_connections", Value: Integer(int64(conns)), Why: connWhy + ": each connection's buffers must fit in RAM"},
		poolSet,
	}
	if in.Flavor == dbms.MySQL {
		s = append(s, Setting{Name: "innodb_buffer_pool_instances", Value: Integer(1), Why: "one: what MySQL 8.4 itself picks for up to 4 cores (8.0 would split a pool of 1GB or more in 8, each of a Pi's few cores' worth), and so the pool is whole chunks of 128MB, as written"})
	}
	s = append(s, myRedo(in, pool))
	s = append(s, myIO(in)...)
	s = append(s, ahi, binlogOff)
	s = append(s, myBuffers(in, conns, pool)...)
	s = append(s, Setting{Name: "skip_name_resolve", Value: Switch(true), Why: "accounts are matched by address, as pidb makes them (its networks, 127.0.0.1 for its SSH forward, localhost for the socket): no reverse DNS lookup at each login, which on a LAN without a reverse zone waits for the resolver"})
	s = append(s, Setting{Name: "key_buffer_size", Value: Size(8 * mb), Why: "MyISAM's index cache: pidb's tables and most applications' are InnoDB (MariaDB's default is 128MB that nothing uses)"})
	return append(s, myDurability(in, preset)...)
}

// myPool is balanced's buffer pool (innodbPool), as Oracle MySQL holds
// it: in whole chunks.
func myPool(in Input, conns int) (uint64, Setting) {
	pool, poolSet := innodbPool(in, conns)
	if in.Flavor == dbms.MySQL && mysqlPool(pool) != pool {
		pool = mysqlPool(pool)
		poolSet.Value = Size(pool)
		poolSet.Why += "; rounded down to whole 128MB chunks (MySQL would round it up)"
	}
	return pool, poolSet
}

// myRedo: the redo log, a quarter of the buffer pool.
func myRedo(in Input, pool uint64) Setting {
	redo := max(64*mb, pool/4)
	redoSet := Setting{Name: "innodb_log_file_size", Value: Size(redo), Why: "a quarter of the buffer pool, at least 64MB: fewer checkpoints, fewer writes"}
	if in.Flavor == dbms.MySQL && !version.Less(in.Version, "8.0.30") {
		redoSet.Name = "innodb_redo_log_capacity"
		redoSet.Why = "a quarter of the buffer pool, at least 64MB (MySQL 8.0.30+ sizes the redo log as a whole)"
	}
	return redoSet
}

// myIO: how fast InnoDB flushes in the background, by storage, and how
// it writes its pages.
func myIO(in Input) Settings {
	io, ioWhy := int64(200), "the default: storage unknown"
	switch in.Storage {
	case "sd":
		io, ioWhy = 100, "an SD card sustains few writes per second: background flushing at its pace"
	case "usb":
		io, ioWhy = 400, "a USB SSD sustains a few hundred writes per second"
	case "nvme":
		io, ioWhy = 1000, "NVMe storage sustains thousands of writes per second"
	}
	s := Settings{
		{Name: "innodb_io_capacity", Value: Integer(io), Why: ioWhy},
		{Name: "innodb_io_capacity_max", Value: Integer(2 * io), Why: "twice innodb_io_capacity, for bursts"},
	}
	if _, ok := lookup(in.Flavor, in.Version, "innodb_flush_method"); ok {
		s = append(s, Setting{Name: "innodb_flush_method", Value: Word("O_DIRECT"), Why: "the buffer pool caches pages; O_DIRECT keeps the page cache from holding them twice"})
	}
	return s
}

// myBuffers: what each connection's sorts, joins, reads and temporary
// tables may take, so that max_connections fit in RAM beside the buffer
// pool; performance_schema off on a board of 1 GB or less; Aria's cache.
func myBuffers(in Input, conns int, pool uint64) Settings {
	ram := in.RAMBytes
	// an in-memory temporary table per connection: 1/256 of RAM, less when
	// the connections planned for would not fit in nine tenths of it
	// beside the buffer pool, the server's own and the other buffers
	tmp, tmpWhy := pow2Floor(ram/256), "1/256 of RAM per in-memory temporary table, so max_connections fit in RAM"
	fixed := pool + 8*mb + osReserve // the pool, key_buffer_size and the OS's own
	if ram > gb {
		fixed += 200 * mb // performance_schema
	}
	if in.Flavor == dbms.MariaDB {
		fixed += min(max(ram/64, 8*mb), 128*mb) // aria_pagecache_buffer_size
	}
	if avail := in.usable(); avail > fixed {
		share, own := (avail-fixed)/uint64(conns), (256+256+128+256)*kib+mb // the other buffers and the thread's stack
		if share > own {
			if perConn := share - own; perConn < tmp && perConn >= 256*kib {
				tmp = pow2Floor(perConn)
				tmpWhy = fmt.Sprintf("per in-memory temporary table: what %d connections can each have beside the buffer pool, the other buffers and the OS's own %d MB", conns, osReserve>>20)
			}
		}
	}
	var s Settings
	if ram <= gb {
		s = append(s, Setting{Name: "performance_schema", Value: Switch(false), Why: "performance_schema takes 100MB or more; the board has 1 GB or less"})
	}
	s = append(s,
		Setting{Name: "sort_buffer_size", Value: Size(256 * kib), Why: "per connection: small, so max_connections fit in RAM"},
		Setting{Name: "join_buffer_size", Value: Size(256 * kib), Why: "per connection: small, so max_connections fit in RAM"},
		Setting{Name: "read_buffer_size", Value: Size(128 * kib), Why: "per connection: the default"},
		Setting{Name: "read_rnd_buffer_size", Value: Size(256 * kib), Why: "per connection: the default"},
		Setting{Name: "tmp_table_size", Value: Size(tmp), Why: tmpWhy},
		Setting{Name: "max_heap_table_size", Value: Size(tmp), Why: "the same as tmp_table_size, which it caps"},
	)
	if in.Flavor == dbms.MariaDB {
		aria := min(max(ram/64, 8*mb), 128*mb)
		s = append(s, Setting{Name: "aria_pagecache_buffer_size", Value: Size(aria), Why: "MariaDB's internal temporary tables use Aria: 1/64 of RAM, not the default 128MB"})
	}
	return s
}

// myDurability: what a power cut costs, which every preset but fast
// keeps at nothing.
func myDurability(in Input, preset PresetName) Settings {
	var s Settings
	doublewrite := Switch(true)
	if p, ok := lookup(in.Flavor, in.Version, "innodb_doublewrite"); ok && p.Kind == Enum {
		doublewrite = Word("ON")
	}
	s = append(s, Setting{Name: "innodb_doublewrite", Value: doublewrite, Why: "a page half written at a power cut is restored from its copy in the doublewrite buffer: the database comes through a power cut whole (every preset keeps it)"})
	if preset == Fast {
		s = append(s, Setting{Name: "innodb_flush_log_at_trx_commit", Value: Integer(2), Why: "FAST PRESET: the redo log is flushed once a second, not at every commit; a power cut can lose up to a second of commits, never the database's consistency"})
	} else {
		s = append(s, Setting{Name: "innodb_flush_log_at_trx_commit", Value: Integer(1), Why: "the redo log is flushed at every commit: a power cut loses no committed transaction (only the fast preset trades that)"})
	}
	return s
}
