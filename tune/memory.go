package tune

import (
	"fmt"

	"pidb/dbms"
	"pidb/internal/version"
)

// Memory: the connections each engine plans for, the budget a preset's
// worst case must fit in (MemoryBudget), PostgreSQL's memory beside its
// buffers, and the MySQL family's buffer pool.

const (
	kib = uint64(1) << 10
	mb  = uint64(1) << 20
	gb  = uint64(1) << 30
)

// connections scales max_connections to RAM: every PostgreSQL connection is
// a process, every MySQL one a thread with its own buffers.
func connections(in Input) (int, string) {
	if in.MaxConnections > 0 {
		if in.ConnectionsAsk != "" {
			return in.MaxConnections, "as " + in.ConnectionsAsk + " asks"
		}
		return in.MaxConnections, "as asked"
	}
	switch {
	case in.RAMBytes <= 512*mb:
		return 20, "scaled to RAM: 20 on 512 MB or less"
	case in.RAMBytes <= gb:
		return 40, "scaled to RAM: 40 on 1 GB or less"
	case in.RAMBytes <= 2*gb:
		return 60, "scaled to RAM: 60 on 2 GB or less"
	}
	return 100, "scaled to RAM: 100 (the server's default) above 2 GB"
}

// osReserve is the memory the buffer pool and the connections' temporary
// tables leave to the OS's own processes (systemd, sshd, journald: under 100
// MB on Raspberry Pi OS Lite with the desktop off) and the page cache of
// the server's binaries.
const osReserve = 128 * mb

// innodbPool sizes balanced's buffer pool. With O_DIRECT it is InnoDB's
// only cache, so it takes 65% of what the kernel has (the MariaDB
// documentation's 60-70% for a dedicated server), less where the OS's own
// (osReserve), the server's other buffers and every connection's buffers
// with 1 MB temporary tables would not fit beside it, in whole 16 MB; at
// least 25% of RAM (the write-up's). The temporary tables get what is left
// (mysqlFamily).
func innodbPool(in Input, conns int) (uint64, Setting) {
	ram, usable := in.RAMBytes, in.usable()
	others := 8 * mb // key_buffer_size
	if in.Flavor == dbms.MariaDB {
		others += min(max(ram/64, 8*mb), 128*mb) // aria_pagecache_buffer_size
	}
	if ram > gb {
		others += 200 * mb // performance_schema
	}
	whole := func(n uint64) uint64 { return n / (16 * mb) * (16 * mb) }
	pool := whole(usable * 65 / 100)
	direct := "with O_DIRECT (set below) the buffer pool is InnoDB's only cache"
	if _, ok := lookup(in.Flavor, in.Version, "innodb_flush_method"); !ok {
		direct = "with O_DIRECT, the server's own default here, the buffer pool is InnoDB's only cache"
	}
	why := fmt.Sprintf("65%% of the %d MB the kernel has: the MariaDB documentation's 60-70%% for a dedicated server; %s", usable>>20, direct)
	if in.Flavor == dbms.MySQL {
		why = fmt.Sprintf("65%% of the %d MB the kernel has: within the MySQL manual's up to 80%% of memory for a dedicated server, leaving a Pi's connections room; %s", usable>>20, direct)
	}
	conn := uint64(conns) * ((256+256+128+256)*kib + mb + mb)
	if taken := osReserve + others + conn; usable < taken+pool {
		pool = 0
		if usable > taken {
			pool = whole(usable - taken)
		}
		why = fmt.Sprintf("what the kernel's %d MB leave beside the OS's own %d MB, the server's other buffers (%d MB) and %d connections' buffers with 1MB temporary tables (%d MB): less than 65%% of it",
			usable>>20, osReserve>>20, others>>20, conns, conn>>20)
	}
	if pool < ram/4 {
		pool, why = ram/4, "25% of RAM: the write-up's rule; the connections' buffers leave no room for more"
	}
	return pool, Setting{Name: "innodb_buffer_pool_size", Value: Size(pool), Why: why}
}

// mysqlChunk is MySQL's innodb_buffer_pool_chunk_size: its buffer pool
// is a whole number of chunks times the instances, rounded up to one
// where it is not (2256M read back as 2304M).
const mysqlChunk = 128 * mb

// mysqlPool is pool as MySQL holds it with one instance, rounded down
// to whole chunks where it is more than one (a smaller pool is held as
// set: MySQL makes its one chunk that size).
func mysqlPool(pool uint64) uint64 {
	if pool <= mysqlChunk {
		return pool
	}
	return pool / mysqlChunk * mysqlChunk
}

func pow2Floor(n uint64) uint64 {
	p := uint64(1)
	for p*2 <= n {
		p *= 2
	}
	return p
}

// MemoryBudget is the most memory the server can take with these settings:
// the shared buffers and every connection's buffers at once; on
// PostgreSQL each connection's work_mem for each operation a query may run
// at once (a hash's times hash_mem_multiplier), and maintenance_work_mem
// for maintenance and each autovacuum worker.
func MemoryBudget(in Input, s Settings) uint64 {
	flavor := in.Flavor
	get := func(name string, def uint64) uint64 {
		if x, ok := s.Get(name); ok {
			switch x.Value.Kind {
			case Bytes:
				return x.Value.Bytes
			case Int:
				return uint64(x.Value.Int)
			}
		}
		return def
	}
	if flavor == dbms.Postgres {
		conns := get("max_connections", 100)
		hash := hashMem(in)
		if x, ok := s.Get("hash_mem_multiplier"); ok && x.Value.Kind == Float {
			hash = x.Value.Float
		}
		maint := get("maintenance_work_mem", 64*mb)
		autovacuum := get("autovacuum_work_mem", maint)
		perConn := uint64(float64(get("work_mem", 4*mb))*pgOps*hash) + pgBackend
		return get("shared_buffers", 128*mb) + get("wal_buffers", 4*mb) + maint + get("autovacuum_max_workers", pgAutovacuumWorkers)*autovacuum + conns*perConn
	}
	conns := get("max_connections", 151)
	perConn := get("sort_buffer_size", 256*kib) + get("join_buffer_size", 256*kib) + get("read_buffer_size", 128*kib) +
		get("read_rnd_buffer_size", 256*kib) + get("thread_stack", mb) + min(get("tmp_table_size", 16*mb), get("max_heap_table_size", 16*mb))
	keys := uint64(8 * mb) // MySQL's default key_buffer_size
	if flavor == dbms.MariaDB {
		keys = 128 * mb // MariaDB's
	}
	total := get("innodb_buffer_pool_size", 128*mb) + get("key_buffer_size", keys) + conns*perConn
	if flavor == dbms.MariaDB {
		total += get("aria_pagecache_buffer_size", 128*mb)
	}
	if ps, ok := s.Get("performance_schema"); !ok || ps.Value.Bool {
		total += 200 * mb
	}
	return total
}

// BudgetError is settings whose worst case does not fit in the board's
// RAM (MemoryBudget), in bytes.
type BudgetError struct {
	Need, Have uint64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("these settings can take %d MB at worst, more than the %d MB the board's kernel has: lower max_connections or the buffers", e.Need>>20, e.Have>>20)
}

// checkBudget refuses settings whose worst case does not fit in the board's
// RAM, with a *BudgetError.
func checkBudget(in Input, s Settings) error {
	if b := MemoryBudget(in, s); b > in.usable() {
		return &BudgetError{Need: b, Have: in.usable()}
	}
	return nil
}

// The memory of PostgreSQL beside its buffers, as the budget and work_mem
// count it.
const (
	pgOps               = 2       // sorts and hashes one query runs at once
	pgAutovacuumWorkers = 3       // autovacuum_max_workers' default: each may take maintenance_work_mem
	pgBackend           = 2 << 20 // each backend's own memory
)

// hashMem is hash_mem_multiplier's default: a hash may take this many
// times work_mem (2 from PostgreSQL 15, 1 before).
func hashMem(in Input) float64 {
	if in.Flavor == dbms.Postgres && !version.Less(in.Version, "15") {
		return 2
	}
	return 1
}

// usable is the memory the budget must fit in: what the kernel has.
func (in Input) usable() uint64 {
	if in.MemBytes > 0 {
		return in.MemBytes
	}
	return in.RAMBytes * 85 / 100
}
