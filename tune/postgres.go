package tune

import (
	"fmt"
	"time"

	"pidb/internal/version"
)

// PostgreSQL's rules: one function a concern, called in the order the
// drop-in is written (a drop-in written in another order is a change,
// which provision writes and restarts the server for on every Pi it
// provisioned before).

// postgres: the seed's two rules, then PGTune's formulas for a mixed load on
// a small machine, adjusted for a Pi's storage and cores.
func postgres(in Input, preset PresetName) Settings {
	sharedBuffers := Setting{Name: "shared_buffers", Value: Size(in.RAMBytes / 4), Why: "25% of RAM: the write-up's rule and PGTune's"}
	noGather := Setting{Name: "max_parallel_workers_per_gather", Value: Integer(0), Why: "no parallel query: on a Pi, parallel workers take the cores the clients need (the write-up's setting)"}
	if preset == Seed {
		return Settings{sharedBuffers, noGather}
	}
	s := pgMemory(in, sharedBuffers)
	s = append(s, pgWAL(in)...)
	s = append(s, pgIO(in)...)
	s = append(s, pgParallel(in, noGather)...)
	s = append(s, pgCheckpoints(in)...)
	return append(s, pgDurability(preset)...)
}

// pgMemory: the connections, and the memory each part of the server may
// take: the shared buffers (the seed's), the OS's cache beside them,
// maintenance, autovacuum, and work_mem, which the rest is shared for.
func pgMemory(in Input, sharedBuffers Setting) Settings {
	ram, sb := in.RAMBytes, sharedBuffers.Value.Bytes
	conns, connWhy := connections(in)
	maint := min(ram/16, 2*gb)
	// what every connection's sorts and hashes may take at once: what the
	// kernel has, less shared_buffers, the WAL buffers, maintenance and
	// each autovacuum worker's maintenance_work_mem and each backend's
	// own, shared among the connections' operations (pgOps at once, each
	// hash up to hash_mem_multiplier times work_mem), whole MB (kB below)
	walBuf := pgWALBuffers(in)
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
	return Settings{
		{Name: "max_connections", Value: Integer(int64(conns)), Why: connWhy + ": each connection is a process with its own memory"},
		sharedBuffers,
		{Name: "effective_cache_size", Value: Size(ram * 3 / 4), Why: "75% of RAM: what the OS page cache and shared_buffers can hold (PGTune)"},
		{Name: "maintenance_work_mem", Value: Size(maint), Why: "1/16 of RAM for VACUUM and CREATE INDEX (PGTune), at most 2GB"},
		{Name: "autovacuum_work_mem", Value: Size(autovacuum), Why: fmt.Sprintf("1/64 of RAM for each autovacuum worker's dead rows, room for millions (without it each of the %d takes maintenance_work_mem): the rest is the connections'", pgAutovacuumWorkers)},
		{Name: "work_mem", Value: Size(work), Why: fmt.Sprintf("%d connections' sorts and hashes (%d at once each, hashes x hash_mem_multiplier %g) fit in the %d MB the kernel has, beside shared_buffers, maintenance, autovacuum and each backend's own", conns, pgOps, hashMem(in), in.usable()>>20)},
	}
}

// pgWALBuffers is wal_buffers: PostgreSQL's own rule (1/32 of
// shared_buffers, at most a segment), written out.
func pgWALBuffers(in Input) uint64 { return min(in.RAMBytes/4/32, 16*mb) }

// pgWAL: the WAL's buffers, how much of it is kept, and how checkpoints
// spread their writes.
func pgWAL(in Input) Settings {
	walBuf := pgWALBuffers(in)
	walMin, walMax := gb, 4*gb
	minWhy, maxWhy := "PGTune's size (the default 80MB): WAL files kept for reuse, not made anew", "PGTune's size (the default 1GB): checkpoints by time, not by WAL volume"
	if in.Storage == "sd" {
		walMin, walMax = 512*mb, 2*gb
		minWhy = "512MB of WAL files kept for reuse (the default 80MB): fewer new files made on the SD card"
		maxWhy = "checkpoints less often than the default 1GB: fewer full-page writes wear the SD card less, and 2GB of WAL still fits on a card"
	}
	return Settings{
		{Name: "wal_buffers", Value: Size(walBuf), Why: "1/32 of shared_buffers, at most one WAL segment (16MB): PostgreSQL's own rule, written out"},
		{Name: "min_wal_size", Value: Size(walMin), Why: minWhy},
		{Name: "max_wal_size", Value: Size(walMax), Why: maxWhy},
		{Name: "checkpoint_completion_target", Value: Number(0.9), Why: "spread checkpoint writes over 90% of the interval: no write bursts on slow storage"},
	}
}

// pgCheckpoints: how often a checkpoint comes, and the full-page images
// after it compressed.
func pgCheckpoints(in Input) Settings {
	compression, compressionWhy := Word("lz4"), "full-page images in the WAL compressed with lz4 (built into PostgreSQL 15 and later as Debian, Raspberry Pi OS and Ubuntu ship it): fewer bytes written to the card"
	if version.Less(in.Version, "15") {
		compression, compressionWhy = Switch(true), "full-page images in the WAL compressed: fewer bytes written to the card"
	}
	return Settings{
		{Name: "checkpoint_timeout", Value: Time(15 * time.Minute), Why: "a checkpoint every 15 minutes, not 5: a Pi with little to do writes its changed pages a third as often"},
		{Name: "wal_compression", Value: compression, Why: compressionWhy},
	}
}

// pgIO: what the planner takes reads from the storage to cost, and how
// many it asks for at once.
func pgIO(in Input) Settings {
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
	return Settings{
		{Name: "random_page_cost", Value: Number(rpc), Why: rpcWhy},
		{Name: "effective_io_concurrency", Value: Integer(eio), Why: eioWhy},
	}
}

// pgParallel: parallel query and maintenance, which a Pi's few cores
// would rather give to the clients, and JIT.
func pgParallel(in Input, noGather Setting) Settings {
	workers, workersWhy := int64(in.CPUs), "one per core, for maintenance and the occasional parallel plan"
	maintWorkers := int64(min(in.CPUs/2, 2))
	if in.CPUs == 1 {
		workers, workersWhy = 0, "one core: no parallel workers"
	}
	return Settings{
		{Name: "max_parallel_workers", Value: Integer(workers), Why: workersWhy},
		noGather,
		{Name: "max_parallel_maintenance_workers", Value: Integer(maintWorkers), Why: "half the cores, at most 2, for CREATE INDEX; none on one core"},
		{Name: "jit", Value: Switch(false), Why: "JIT pays off on long analytic queries; on a Pi's short queries it costs more than it saves"},
	}
}

// pgDurability: what a power cut costs, which every preset but fast
// keeps at nothing.
func pgDurability(preset PresetName) Settings {
	s := Settings{
		{Name: "fsync", Value: Switch(true), Why: "each write reaches the card before PostgreSQL counts on it: the database comes through a power cut whole (every preset keeps it)"},
		{Name: "full_page_writes", Value: Switch(true), Why: "a page half written at a power cut is restored from the WAL: the database comes through a power cut whole (every preset keeps it)"},
	}
	if preset == Fast {
		s = append(s, Setting{Name: "synchronous_commit", Value: Word("off"), Why: "FAST PRESET: commits return before their WAL is on the card; a power cut or a crash can lose the last moments of commits (up to 3 x wal_writer_delay, 0.6 s), never the database's consistency"})
	} else {
		s = append(s, Setting{Name: "synchronous_commit", Value: Word("on"), Why: "a commit returns once its WAL is on the card: a power cut loses no committed transaction (only the fast preset trades that)"})
	}
	return s
}
