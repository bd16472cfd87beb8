package tune

import (
	"fmt"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/internal/version"
)

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

// postgres: the seed's two rules, then PGTune's formulas for a mixed load on
// a small machine, adjusted for a Pi's storage and cores.
func postgres(in Input, preset PresetName) Settings {
	ram := in.RAMBytes
	sb := ram / 4
	sharedBuffers := Setting{"shared_buffers", Size(sb), "25% of RAM: the write-up's rule and PGTune's", false}
	noGather := Setting{"max_parallel_workers_per_gather", Integer(0), "no parallel query: on a Pi, parallel workers take the cores the clients need (the write-up's setting)", false}
	if preset == Seed {
		return Settings{sharedBuffers, noGather}
	}
	conns, connWhy := connections(in)
	maint := min(ram/16, 2*gb)
	// what every connection's sorts and hashes may take at once: what the
	// kernel has, less shared_buffers, the WAL buffers, maintenance and
	// each autovacuum worker's maintenance_work_mem and each backend's
	// own, shared among the connections' operations (pgOps at once, each
	// hash up to hash_mem_multiplier times work_mem), whole MB (kB below)
	walBuf := min(sb/32, 16*mb)
	autovacuum := ram / 64
	fixed := sb + walBuf + maint + autovacuum*pgAutovacuumWorkers + uint64(conns)*pgBackend
	work := uint64(64 * kib)
	if usable := in.usable(); usable > fixed {
		work = max(uint64(float64(usable-fixed)/(float64(conns)*pgOps*hashMem(in))), 64*kib)
	}
	if work >= mb {
		work = work / mb * mb
	} else {
		work = max(work/kib*kib, 64*kib)
	}
	walMin, walMax := gb, 4*gb
	minWhy, maxWhy := "PGTune's size (the default 80MB): WAL files kept for reuse, not made anew", "PGTune's size (the default 1GB): checkpoints by time, not by WAL volume"
	if in.Storage == "sd" {
		walMin, walMax = 512*mb, 2*gb
		minWhy = "512MB of WAL files kept for reuse (the default 80MB): fewer new files made on the SD card"
		maxWhy = "checkpoints less often than the default 1GB: fewer full-page writes wear the SD card less, and 2GB of WAL still fits on a card"
	}
	rpc, rpcWhy := 4.0, "the default: storage unknown"
	eio, eioWhy := int64(1), "the default: storage unknown"
	if !version.Less(in.Version, "18") {
		// 18 reads ahead through its asynchronous I/O (io_method worker)
		eio, eioWhy = 16, "PostgreSQL 18's default: storage unknown"
	}
	switch in.Storage {
	case "sd":
		rpc, rpcWhy = 1.5, "an SD card has no seek time, but its small random reads are slower than an SSD's"
		eio, eioWhy = 2, "an SD card serves few requests at once"
	case "usb", "nvme":
		rpc, rpcWhy = 1.1, "solid-state storage: random reads cost about what sequential ones do (PGTune)"
		eio, eioWhy = 200, "solid-state storage serves many requests at once (PGTune)"
	}
	workers, workersWhy := int64(in.CPUs), "one per core, for maintenance and the occasional parallel plan"
	maintWorkers := int64(min(in.CPUs/2, 2))
	if in.CPUs == 1 {
		workers, workersWhy = 0, "one core: no parallel workers"
	}
	s := Settings{
		{"max_connections", Integer(int64(conns)), connWhy + ": each connection is a process with its own memory", false},
		sharedBuffers,
		{"effective_cache_size", Size(ram * 3 / 4), "75% of RAM: what the OS page cache and shared_buffers can hold (PGTune)", false},
		{"maintenance_work_mem", Size(maint), "1/16 of RAM for VACUUM and CREATE INDEX (PGTune), at most 2GB", false},
		{"autovacuum_work_mem", Size(autovacuum), fmt.Sprintf("1/64 of RAM for each autovacuum worker's dead rows, room for millions (without it each of the %d takes maintenance_work_mem): the rest is the connections'", pgAutovacuumWorkers), false},
		{"work_mem", Size(work), fmt.Sprintf("%d connections' sorts and hashes (%d at once each, hashes x hash_mem_multiplier %g) fit in the %d MB the kernel has, beside shared_buffers, maintenance, autovacuum and each backend's own", conns, pgOps, hashMem(in), in.usable()>>20), false},
		{"wal_buffers", Size(walBuf), "1/32 of shared_buffers, at most one WAL segment (16MB): PostgreSQL's own rule, written out", false},
		{"min_wal_size", Size(walMin), minWhy, false},
		{"max_wal_size", Size(walMax), maxWhy, false},
		{"checkpoint_completion_target", Number(0.9), "spread checkpoint writes over 90% of the interval: no write bursts on slow storage", false},
		{"random_page_cost", Number(rpc), rpcWhy, false},
		{"effective_io_concurrency", Integer(eio), eioWhy, false},
		{"max_parallel_workers", Integer(workers), workersWhy, false},
		noGather,
		{"max_parallel_maintenance_workers", Integer(maintWorkers), "half the cores, at most 2, for CREATE INDEX; none on one core", false},
		{"jit", Switch(false), "JIT pays off on long analytic queries; on a Pi's short queries it costs more than it saves", false},
	}
	compression, compressionWhy := Word("lz4"), "full-page images in the WAL compressed with lz4 (built into PostgreSQL 15 and later as Debian, Raspberry Pi OS and Ubuntu ship it): fewer bytes written to the card"
	if version.Less(in.Version, "15") {
		compression, compressionWhy = Switch(true), "full-page images in the WAL compressed: fewer bytes written to the card"
	}
	s = append(s,
		Setting{"checkpoint_timeout", Time(15 * time.Minute), "a checkpoint every 15 minutes, not 5: a Pi with little to do writes its changed pages a third as often", false},
		Setting{"wal_compression", compression, compressionWhy, false},
		Setting{"fsync", Switch(true), "each write reaches the card before PostgreSQL counts on it: the database comes through a power cut whole (every preset keeps it)", false},
		Setting{"full_page_writes", Switch(true), "a page half written at a power cut is restored from the WAL: the database comes through a power cut whole (every preset keeps it)", false},
	)
	if preset == Fast {
		s = append(s, Setting{"synchronous_commit", Word("off"), "FAST PRESET: commits return before their WAL is on the card; a power cut or a crash can lose the last moments of commits (up to 3 x wal_writer_delay, 0.6 s), never the database's consistency", false})
	} else {
		s = append(s, Setting{"synchronous_commit", Word("on"), "a commit returns once its WAL is on the card: a power cut loses no committed transaction (only the fast preset trades that)", false})
	}
	return s
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

// mysqlFamily: the seed's three rules, then memory within RAM, I/O by
// storage and the MySQL/MariaDB differences by version.
func mysqlFamily(in Input, preset PresetName) Settings {
	ram := in.RAMBytes
	pool := ram / 4
	poolSet := Setting{"innodb_buffer_pool_size", Size(pool), "25% of RAM: the write-up's rule, leaving room for the OS and the connections", false}
	binlogOff := Setting{"log_bin", Switch(false), "no binary log (skip-log-bin): no replication here, and half the writes to the card (the write-up's setting)", false}
	ahi := Setting{"innodb_adaptive_hash_index", Switch(true), "faster point selects once the working set is in memory (the write-up's setting)", false}
	if preset == Seed {
		return Settings{poolSet, binlogOff, ahi}
	}
	conns, connWhy := connections(in)
	pool, poolSet = innodbPool(in, conns)
	if in.Flavor == dbms.MySQL && mysqlPool(pool) != pool {
		pool = mysqlPool(pool)
		poolSet.Value = Size(pool)
		poolSet.Why += "; rounded down to whole 128MB chunks (MySQL would round it up)"
	}
	redo := max(64*mb, pool/4)
	redoSet := Setting{"innodb_log_file_size", Size(redo), "a quarter of the buffer pool, at least 64MB: fewer checkpoints, fewer writes", false}
	if in.Flavor == dbms.MySQL && !version.Less(in.Version, "8.0.30") {
		redoSet.Name = "innodb_redo_log_capacity"
		redoSet.Why = "a quarter of the buffer pool, at least 64MB (MySQL 8.0.30+ sizes the redo log as a whole)"
	}
	io, ioWhy := int64(200), "the default: storage unknown"
	switch in.Storage {
	case "sd":
		io, ioWhy = 100, "an SD card sustains few writes per second: background flushing at its pace"
	case "usb":
		io, ioWhy = 400, "a USB SSD sustains a few hundred writes per second"
	case "nvme":
		io, ioWhy = 1000, "NVMe storage sustains thousands of writes per second"
	}
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
	s := Settings{
		{"max_connections", Integer(int64(conns)), connWhy + ": each connection's buffers must fit in RAM", false},
		poolSet,
	}
	if in.Flavor == dbms.MySQL {
		s = append(s, Setting{"innodb_buffer_pool_instances", Integer(1), "one: what MySQL 8.4 itself picks for up to 4 cores (8.0 would split a pool of 1GB or more in 8, each of a Pi's few cores' worth), and so the pool is whole chunks of 128MB, as written", false})
	}
	s = append(s, Settings{
		redoSet,
		{"innodb_io_capacity", Integer(io), ioWhy, false},
		{"innodb_io_capacity_max", Integer(2 * io), "twice innodb_io_capacity, for bursts", false},
	}...)
	if _, ok := lookup(in.Flavor, in.Version, "innodb_flush_method"); ok {
		s = append(s, Setting{"innodb_flush_method", Word("O_DIRECT"), "the buffer pool caches pages; O_DIRECT keeps the page cache from holding them twice", false})
	}
	s = append(s, ahi, binlogOff)
	if ram <= gb {
		s = append(s, Setting{"performance_schema", Switch(false), "performance_schema takes 100MB or more; the board has 1 GB or less", false})
	}
	s = append(s,
		Setting{"sort_buffer_size", Size(256 * kib), "per connection: small, so max_connections fit in RAM", false},
		Setting{"join_buffer_size", Size(256 * kib), "per connection: small, so max_connections fit in RAM", false},
		Setting{"read_buffer_size", Size(128 * kib), "per connection: the default", false},
		Setting{"read_rnd_buffer_size", Size(256 * kib), "per connection: the default", false},
		Setting{"tmp_table_size", Size(tmp), tmpWhy, false},
		Setting{"max_heap_table_size", Size(tmp), "the same as tmp_table_size, which it caps", false},
	)
	if in.Flavor == dbms.MariaDB {
		aria := min(max(ram/64, 8*mb), 128*mb)
		s = append(s, Setting{"aria_pagecache_buffer_size", Size(aria), "MariaDB's internal temporary tables use Aria: 1/64 of RAM, not the default 128MB", false})
	}
	s = append(s, Setting{"skip_name_resolve", Switch(true), "accounts are matched by address, as pidb makes them (its networks, 127.0.0.1 for its SSH forward, localhost for the socket): no reverse DNS lookup at each login, which on a LAN without a reverse zone waits for the resolver", false})
	s = append(s, Setting{"key_buffer_size", Size(8 * mb), "MyISAM's index cache: pidb's tables and most applications' are InnoDB (MariaDB's default is 128MB that nothing uses)", false})
	doublewrite := Switch(true)
	if p, ok := lookup(in.Flavor, in.Version, "innodb_doublewrite"); ok && p.Kind == Enum {
		doublewrite = Word("ON")
	}
	s = append(s, Setting{"innodb_doublewrite", doublewrite, "a page half written at a power cut is restored from its copy in the doublewrite buffer: the database comes through a power cut whole (every preset keeps it)", false})
	if preset == Fast {
		s = append(s, Setting{"innodb_flush_log_at_trx_commit", Integer(2), "FAST PRESET: the redo log is flushed once a second, not at every commit; a power cut can lose up to a second of commits, never the database's consistency", false})
	} else {
		s = append(s, Setting{"innodb_flush_log_at_trx_commit", Integer(1), "the redo log is flushed at every commit: a power cut loses no committed transaction (only the fast preset trades that)", false})
	}
	return s
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
	return pool, Setting{"innodb_buffer_pool_size", Size(pool), why, false}
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

// Render writes the drop-in file exactly as provisioning writes it: a header
// naming the preset and the inputs, then one line per setting with its
// reason. No timestamps, so the same inputs give the same bytes.
func Render(in Input, preset PresetName, s Settings) string {
	var b strings.Builder
	// a cluster's host says its cluster, not its role: a switchover
	// changes the roles, and a header that said them would make every
	// host's file new, and its server restart, for a comment
	cluster := ""
	if r := in.Replication; r != nil {
		cluster = fmt.Sprintf(", in cluster %q", r.Cluster)
	}
	server := in.Version
	if in.Asked != "" {
		server = in.Asked + " (tuned as " + in.Version + ", the newest pidb knows)"
	}
	ram := fmt.Sprintf("%d MiB RAM", in.RAMBytes>>20)
	if in.Board != 0 {
		ram = fmt.Sprintf("%d MiB RAM (a 32-bit server on a board of %d MiB)", in.RAMBytes>>20, in.Board>>20)
	}
	fmt.Fprintf(&b, "# Managed by pidb: preset %q for %s %s, %s, %d CPUs, storage %s%s.\n",
		preset, flavorName(in.Flavor), server, ram, in.CPUs, in.Storage, cluster)
	b.WriteString("# pidb rewrites this file: put per-host changes in the inventory's [host.settings].\n")
	if isMySQLFamily(in.Flavor) {
		b.WriteString("[mysqld]\n")
	}
	for _, x := range s {
		why := x.Why
		if x.Override {
			why = "OVERRIDE: " + why
		}
		fmt.Fprintf(&b, "%s  # %s\n", Line(in.Flavor, x), why)
	}
	return b.String()
}

// binlogName is the binary log's base name (pidb-bin.000001, in the data
// directory).
const binlogName = "pidb-bin"

// Line is a setting as written in the file, without its comment.
func Line(flavor dbms.Flavor, x Setting) string {
	if isMySQLFamily(flavor) && x.Name == "log_bin" {
		if x.Value.Bool {
			// the binary log on, named for pidb: the server's default
			// name is the host name's, which a renamed Pi would lose
			return "log_bin = " + binlogName
		}
		return "skip-log-bin"
	}
	return x.Name + " = " + x.Value.Render(flavor)
}

// JSONSetting is a setting as `pidb tune show --format json` prints it.
type JSONSetting struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Bytes    *uint64 `json:"bytes,omitempty"`
	Why      string  `json:"why"`
	Override bool    `json:"override"`
	Line     string  `json:"line"`
}

// JSON returns the settings in the order written, values rendered as in the
// file; sizes carry their bytes too, and line is the setting's whole line.
func JSON(flavor dbms.Flavor, s Settings) []JSONSetting {
	out := make([]JSONSetting, 0, len(s))
	for _, x := range s {
		j := JSONSetting{Name: x.Name, Value: x.Value.Render(flavor), Why: x.Why, Override: x.Override, Line: Line(flavor, x)}
		if x.Value.Kind == Bytes {
			b := x.Value.Bytes
			j.Bytes = &b
		}
		out = append(out, j)
	}
	return out
}
