package tune

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pidb/dbms"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

type board struct {
	name    string
	ram     uint64
	cpus    int
	storage string
}

var (
	zeroW = board{"Zero W", 512 << 20, 1, "sd"}
	pi3B  = board{"3B", 1 << 30, 4, "sd"}
	pi4B4 = board{"4B 4GB", 4 << 30, 4, "sd"}
	pi4B8 = board{"4B 8GB", 8 << 30, 4, "sd"}
	pi5   = board{"Pi 5 8GB NVMe", 8 << 30, 4, "nvme"}
)

func rendered(t *testing.T, flavor dbms.Flavor, version string, b board, preset PresetName, overrides map[string]string) map[string]string {
	t.Helper()
	s, err := Recommend(Input{Flavor: flavor, Version: version, RAMBytes: b.ram, CPUs: b.cpus, Storage: b.storage}, preset, overrides)
	if err != nil {
		t.Fatalf("%s %s %s: %v", flavor, b.name, preset, err)
	}
	m := map[string]string{}
	for _, x := range s {
		if _, dup := m[x.Name]; dup {
			t.Errorf("%s written twice", x.Name)
		}
		m[x.Name] = x.Value.Render(flavor)
	}
	return m
}

func expect(t *testing.T, label string, got, want map[string]string, exact bool) {
	t.Helper()
	for k, v := range want {
		if v == "-" {
			if g, ok := got[k]; ok {
				t.Errorf("%s: %s = %s, want it not written", label, k, g)
			}
			continue
		}
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", label, k, got[k], v)
		}
	}
	if exact && len(got) != len(want) {
		t.Errorf("%s: wrote %d settings, want exactly %d: %v", label, len(got), len(want), got)
	}
}

// Every expected value below is written out by hand for its board, never
// computed with the tuner's own formulas.
func TestSeed(t *testing.T) {
	for _, c := range []struct {
		b      board
		shared string
	}{{pi4B4, "1GB"}, {pi3B, "256MB"}, {zeroW, "128MB"}, {pi4B8, "2GB"}} {
		expect(t, "postgres seed "+c.b.name, rendered(t, "postgres", "", c.b, "seed", nil),
			map[string]string{"shared_buffers": c.shared, "max_parallel_workers_per_gather": "0"}, true)
	}
	for _, flavor := range []dbms.Flavor{"mariadb", "mysql"} {
		for _, c := range []struct {
			b    board
			pool string
		}{{pi4B4, "1G"}, {pi3B, "256M"}, {zeroW, "128M"}} {
			expect(t, string(flavor)+" seed "+c.b.name, rendered(t, flavor, "", c.b, "seed", nil),
				map[string]string{"innodb_buffer_pool_size": c.pool, "log_bin": "OFF", "innodb_adaptive_hash_index": "ON"}, true)
		}
	}
}

func TestPostgresBalanced(t *testing.T) {
	cases := []struct {
		b    board
		want map[string]string
	}{
		{zeroW, map[string]string{"max_connections": "20", "shared_buffers": "128MB", "effective_cache_size": "384MB",
			"autovacuum_work_mem": "8MB", "maintenance_work_mem": "32MB", "work_mem": "2MB", "wal_buffers": "4MB", "min_wal_size": "512MB", "max_wal_size": "2GB",
			"checkpoint_completion_target": "0.9", "random_page_cost": "1.5", "effective_io_concurrency": "2",
			"max_parallel_workers": "0", "max_parallel_workers_per_gather": "0", "max_parallel_maintenance_workers": "0", "jit": "off", "checkpoint_timeout": "15min", "wal_compression": "lz4",
			"fsync": "on", "full_page_writes": "on", "synchronous_commit": "on"}},
		{pi3B, map[string]string{"max_connections": "40", "shared_buffers": "256MB", "effective_cache_size": "768MB",
			"autovacuum_work_mem": "16MB", "maintenance_work_mem": "64MB", "work_mem": "2MB", "wal_buffers": "8MB", "min_wal_size": "512MB", "max_wal_size": "2GB",
			"checkpoint_completion_target": "0.9", "random_page_cost": "1.5", "effective_io_concurrency": "2",
			"max_parallel_workers": "4", "max_parallel_workers_per_gather": "0", "max_parallel_maintenance_workers": "2", "jit": "off", "checkpoint_timeout": "15min", "wal_compression": "lz4",
			"fsync": "on", "full_page_writes": "on", "synchronous_commit": "on"}},
		{pi4B4, map[string]string{"max_connections": "100", "shared_buffers": "1GB", "effective_cache_size": "3GB",
			"autovacuum_work_mem": "64MB", "maintenance_work_mem": "256MB", "work_mem": "4MB", "wal_buffers": "16MB", "min_wal_size": "512MB", "max_wal_size": "2GB",
			"checkpoint_completion_target": "0.9", "random_page_cost": "1.5", "effective_io_concurrency": "2",
			"max_parallel_workers": "4", "max_parallel_workers_per_gather": "0", "max_parallel_maintenance_workers": "2", "jit": "off", "checkpoint_timeout": "15min", "wal_compression": "lz4",
			"fsync": "on", "full_page_writes": "on", "synchronous_commit": "on"}},
		{pi4B8, map[string]string{"max_connections": "100", "shared_buffers": "2GB", "effective_cache_size": "6GB",
			"autovacuum_work_mem": "128MB", "maintenance_work_mem": "512MB", "work_mem": "9MB", "wal_buffers": "16MB", "min_wal_size": "512MB", "max_wal_size": "2GB",
			"checkpoint_completion_target": "0.9", "random_page_cost": "1.5", "effective_io_concurrency": "2",
			"max_parallel_workers": "4", "max_parallel_workers_per_gather": "0", "max_parallel_maintenance_workers": "2", "jit": "off", "checkpoint_timeout": "15min", "wal_compression": "lz4",
			"fsync": "on", "full_page_writes": "on", "synchronous_commit": "on"}},
		{pi5, map[string]string{"max_connections": "100", "shared_buffers": "2GB", "effective_cache_size": "6GB",
			"autovacuum_work_mem": "128MB", "maintenance_work_mem": "512MB", "work_mem": "9MB", "wal_buffers": "16MB", "min_wal_size": "1GB", "max_wal_size": "4GB",
			"checkpoint_completion_target": "0.9", "random_page_cost": "1.1", "effective_io_concurrency": "200",
			"max_parallel_workers": "4", "max_parallel_workers_per_gather": "0", "max_parallel_maintenance_workers": "2", "jit": "off", "checkpoint_timeout": "15min", "wal_compression": "lz4",
			"fsync": "on", "full_page_writes": "on", "synchronous_commit": "on"}},
	}
	for _, c := range cases {
		expect(t, "postgres balanced "+c.b.name, rendered(t, "postgres", "15", c.b, "balanced", nil), c.want, true)
		fast := rendered(t, "postgres", "15", c.b, "fast", nil)
		c.want["synchronous_commit"] = "off"
		expect(t, "postgres fast "+c.b.name, fast, c.want, true)
	}
}

// Every expected value below is written out by hand for its board, never
// computed with the tuner's own formulas. The buffer pool is 65% of what
// the kernel has (85% of RAM here), less where the OS's 128 MB,
// key_buffer_size (8M), Aria's page cache (MariaDB), performance_schema's
// 200 MB (above 1 GB) and max_connections x (256K + 256K + 128K + 256K +
// 1M of stack + 1M of temporary table) would not fit beside it, in whole
// 16 MB; the temporary tables get what is left beside the pool, those
// buffers and the OS's 128 MB, a power of two, at most RAM / 256:
//   - Zero W: 65% of 435.2 = 282.9, but 435.2 - 128 - (8 + 8) - 20 x
//     2.875 = 233.7: 224M; (435.2 - 128 - 224 - 16) / 20 - 1.875 = 1.49:
//     1M;
//   - 3B: 65% of 870.4 = 565.8: 560M; (870.4 - 128 - 560 - 24) / 40 -
//     1.875 = 2.09: 2M (MySQL, no Aria: 2.49: 2M);
//   - 4B 4GB: 65% of 3481.6 = 2263: 2256M; (3481.6 - 128 - 2256 - 272) /
//     100 - 1.875 = 6.38: 4M;
//   - 4B 8GB: 65% of 6963.2 = 4526: 4512M; (6963.2 - 128 - 4512 - 336) /
//     100 - 1.875 = 18.0: 16M (MySQL, no Aria: 19.3: 16M).
//   - MySQL's pool in whole 128M chunks, rounded down (it would round up):
//     4512M is 35.25 chunks: 4480M, its redo log 1120M; the 3B's 560M is
//     4.375: 512M, its log file 128M.
func TestMySQLFamilyBalanced(t *testing.T) {
	cases := []struct {
		flavor  dbms.Flavor
		version string
		b       board
		want    map[string]string
	}{
		{"mariadb", "10.11", zeroW, map[string]string{"max_connections": "20", "innodb_buffer_pool_size": "224M", "innodb_log_file_size": "64M",
			"innodb_io_capacity": "100", "innodb_io_capacity_max": "200", "innodb_flush_method": "O_DIRECT", "innodb_adaptive_hash_index": "ON",
			"log_bin": "OFF", "performance_schema": "OFF", "sort_buffer_size": "256K", "join_buffer_size": "256K", "read_buffer_size": "128K",
			"read_rnd_buffer_size": "256K", "tmp_table_size": "1M", "max_heap_table_size": "1M", "aria_pagecache_buffer_size": "8M",
			"key_buffer_size": "8M", "skip_name_resolve": "ON", "innodb_doublewrite": "ON", "innodb_flush_log_at_trx_commit": "1"}},
		{"mariadb", "10.11", pi3B, map[string]string{"max_connections": "40", "innodb_buffer_pool_size": "560M", "innodb_log_file_size": "140M",
			"innodb_io_capacity": "100", "innodb_io_capacity_max": "200", "innodb_flush_method": "O_DIRECT", "innodb_adaptive_hash_index": "ON",
			"log_bin": "OFF", "performance_schema": "OFF", "sort_buffer_size": "256K", "join_buffer_size": "256K", "read_buffer_size": "128K",
			"read_rnd_buffer_size": "256K", "tmp_table_size": "2M", "max_heap_table_size": "2M", "aria_pagecache_buffer_size": "16M",
			"key_buffer_size": "8M", "skip_name_resolve": "ON", "innodb_doublewrite": "ON", "innodb_flush_log_at_trx_commit": "1"}},
		{"mariadb", "10.11", pi4B4, map[string]string{"max_connections": "100", "innodb_buffer_pool_size": "2256M", "innodb_log_file_size": "564M",
			"innodb_io_capacity": "100", "innodb_io_capacity_max": "200", "innodb_flush_method": "O_DIRECT", "innodb_adaptive_hash_index": "ON",
			"log_bin": "OFF", "performance_schema": "-", "sort_buffer_size": "256K", "join_buffer_size": "256K", "read_buffer_size": "128K",
			"read_rnd_buffer_size": "256K", "tmp_table_size": "4M", "max_heap_table_size": "4M", "aria_pagecache_buffer_size": "64M",
			"key_buffer_size": "8M", "skip_name_resolve": "ON", "innodb_doublewrite": "ON", "innodb_flush_log_at_trx_commit": "1"}},
		{"mariadb", "11.4", pi4B8, map[string]string{"max_connections": "100", "innodb_buffer_pool_size": "4512M", "innodb_log_file_size": "1128M",
			"innodb_io_capacity": "100", "innodb_io_capacity_max": "200", "innodb_flush_method": "-", "innodb_adaptive_hash_index": "ON",
			"log_bin": "OFF", "performance_schema": "-", "sort_buffer_size": "256K", "join_buffer_size": "256K", "read_buffer_size": "128K",
			"read_rnd_buffer_size": "256K", "tmp_table_size": "16M", "max_heap_table_size": "16M", "aria_pagecache_buffer_size": "128M",
			"key_buffer_size": "8M", "skip_name_resolve": "ON", "innodb_doublewrite": "ON", "innodb_flush_log_at_trx_commit": "1"}},
		{"mysql", "8.0.39", pi5, map[string]string{"max_connections": "100", "innodb_buffer_pool_size": "4480M", "innodb_buffer_pool_instances": "1", "innodb_redo_log_capacity": "1120M",
			"innodb_log_file_size": "-", "innodb_io_capacity": "1000", "innodb_io_capacity_max": "2000", "innodb_flush_method": "O_DIRECT",
			"innodb_adaptive_hash_index": "ON", "log_bin": "OFF", "performance_schema": "-", "sort_buffer_size": "256K", "join_buffer_size": "256K",
			"read_buffer_size": "128K", "read_rnd_buffer_size": "256K", "tmp_table_size": "16M", "max_heap_table_size": "16M", "aria_pagecache_buffer_size": "-",
			"key_buffer_size": "8M", "skip_name_resolve": "ON", "innodb_doublewrite": "ON", "innodb_flush_log_at_trx_commit": "1"}},
		{"mysql", "8.0.28", pi3B, map[string]string{"innodb_log_file_size": "128M", "innodb_redo_log_capacity": "-", "performance_schema": "OFF",
			"innodb_buffer_pool_size": "512M", "tmp_table_size": "2M", "aria_pagecache_buffer_size": "-"}},
	}
	for _, c := range cases {
		got := rendered(t, c.flavor, c.version, c.b, "balanced", nil)
		exact := len(c.want) > 6
		if exact {
			n := 0
			for _, v := range c.want {
				if v != "-" {
					n++
				}
			}
			if len(got) != n {
				t.Errorf("%s %s %s: %d settings, want %d: %v", c.flavor, c.version, c.b.name, len(got), n, got)
			}
		}
		expect(t, string(c.flavor)+" "+c.version+" balanced "+c.b.name, got, c.want, false)
		fast := rendered(t, c.flavor, c.version, c.b, "fast", nil)
		if fast["innodb_flush_log_at_trx_commit"] != "2" {
			t.Errorf("%s fast: innodb_flush_log_at_trx_commit = %q, want 2", c.flavor, fast["innodb_flush_log_at_trx_commit"])
		}
	}
}

// TestInnoDBPoolBounds: the pool on a lab Pi 3B's kernel (926 MB of
// MemTotal), and where the connections leave less, by hand: 65% of 926 =
// 601.9: 592M; 60 connections (scripts/preset-bench's) leave 926 - 128 -
// 24 - 60 x 2.875 = 601.5: 592M too; 100 leave 486: 480M; 200 leave 199,
// less than 25% of RAM: 256M; one connection on a 1 GB kernel: 65% of
// 1024 = 665.6: 656M.
func TestInnoDBPoolBounds(t *testing.T) {
	for _, c := range []struct {
		mem   uint64
		conns int
		pool  string
		why   string
	}{
		{926 << 20, 0, "592M", "65% of the 926 MB"},
		{926 << 20, 60, "592M", "65% of the 926 MB"},
		{926 << 20, 100, "480M", "the kernel's 926 MB leave beside the OS's own 128 MB"},
		{926 << 20, 200, "256M", "25% of RAM"},
		{1 << 30, 1, "656M", "65% of the 1024 MB"},
	} {
		in := Input{Flavor: "mariadb", Version: "10.11", RAMBytes: 1 << 30, MemBytes: c.mem, CPUs: 4, Storage: "sd", MaxConnections: c.conns}
		s, err := Recommend(in, Balanced, nil)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		x, _ := s.Get("innodb_buffer_pool_size")
		if got := x.Value.Render("mariadb"); got != c.pool || !strings.Contains(x.Why, c.why) {
			t.Errorf("%d MB, %d connections: %s (%s), want %s (%q)", c.mem>>20, c.conns, got, x.Why, c.pool, c.why)
		}
		if seed, _ := Recommend(in, Seed, nil); seed[0].Value.Render("mariadb") != "256M" {
			t.Errorf("seed: %s, want the write-up's 25%%, 256M", seed[0].Value.Render("mariadb"))
		}
	}
}

// TestFlavoursStayApart checks that no preset writes a variable the flavour
// and version do not have: no MySQL-only variable for MariaDB, or the reverse.
func TestFlavoursStayApart(t *testing.T) {
	versions := map[dbms.Flavor][]string{
		"postgres": {"11", "13", "15", "16", "17"},
		"mysql":    {"8.0.22", "8.0.29", "8.0.30", "8.0.39", "8.4.2"},
		"mariadb":  {"10.3", "10.5", "10.11", "11.0", "11.4"},
	}
	for flavor, vs := range versions {
		for _, v := range vs {
			for _, b := range []board{zeroW, pi3B, pi4B4, pi4B8, pi5} {
				for _, p := range Presets() {
					s, err := Recommend(Input{Flavor: flavor, Version: v, RAMBytes: b.ram, CPUs: b.cpus, Storage: b.storage}, p.Name, nil)
					if err != nil {
						t.Fatalf("%s %s %s %s: %v", flavor, v, b.name, p.Name, err)
					}
					for _, x := range s {
						param, ok := lookup(flavor, v, x.Name)
						if !ok {
							t.Errorf("%s %s %s: writes %s, which it does not have", flavor, v, p.Name, x.Name)
							continue
						}
						// within the server's own limits, in units it reads
						if _, err := param.parse(x.Value.Render(flavor)); err != nil {
							t.Errorf("%s %s %s %s: %s = %s: %v", flavor, v, b.name, p.Name, x.Name, x.Value.Render(flavor), err)
						}
					}
					// seed leaves the rest at the server's defaults; the others must fit
					if budget := MemoryBudget(Input{Flavor: flavor, Version: v, RAMBytes: b.ram}, s); p.Name != "seed" && budget > b.ram*85/100 {
						t.Errorf("%s %s %s %s: worst case %d MB > RAM %d MB", flavor, v, b.name, p.Name, budget>>20, b.ram>>20)
					}
				}
			}
		}
	}
	// the specific differences, by name
	for _, c := range []struct {
		flavor        dbms.Flavor
		version, name string
		has           bool
	}{
		{"mariadb", "10.11", "innodb_redo_log_capacity", false},
		{"mysql", "8.0.39", "aria_pagecache_buffer_size", false},
		{"mysql", "8.0.39", "innodb_log_file_size", false},
		{"mysql", "8.0.29", "innodb_log_file_size", true},
		{"mariadb", "11.4", "innodb_flush_method", false},
		{"postgres", "15", "innodb_buffer_pool_size", false},
		{"mysql", "8.0.39", "shared_buffers", false},
	} {
		if _, ok := lookup(c.flavor, c.version, c.name); ok != c.has {
			t.Errorf("%s %s has %s: %v, want %v", c.flavor, c.version, c.name, ok, c.has)
		}
	}
}

func TestOverrides(t *testing.T) {
	got := rendered(t, "postgres", "15", pi4B4, "balanced", map[string]string{"work_mem": "3MB", "log-min-duration-statement": "250"})
	expect(t, "overrides", got, map[string]string{"work_mem": "3MB", "log_min_duration_statement": "250", "shared_buffers": "1GB"}, false)
	s, _ := Recommend(Input{Flavor: "postgres", RAMBytes: 4 << 30, CPUs: 4}, "balanced", map[string]string{"work_mem": "3MB"})
	if w, _ := s.Get("work_mem"); !w.Override || !strings.Contains(w.Why, "the preset says 4MB") {
		t.Errorf("work_mem override = %+v", w)
	}
	got = rendered(t, "mariadb", "", pi3B, "balanced", map[string]string{"innodb_buffer_pool_size": "512MB", "skip-log-bin": "on"})
	expect(t, "mariadb overrides", got, map[string]string{"innodb_buffer_pool_size": "512M", "log_bin": "OFF"}, false)

	bad := []struct {
		flavor dbms.Flavor
		set    map[string]string
		want   string
	}{
		{"postgres", map[string]string{"shared_bufers": "1GB"}, `unknown PostgreSQL 17 setting (did you mean "shared_buffers"?)`},
		{"postgres", map[string]string{"shared_buffers": "lots"}, "want a size"},
		{"postgres", map[string]string{"shared_buffers": "64kB"}, "out of range"},
		{"postgres", map[string]string{"max_connections": "many"}, "not a whole number"},
		{"postgres", map[string]string{"jit": "maybe"}, "not on or off"},
		{"postgres", map[string]string{"synchronous_commit": "sometimes"}, "not one of"},
		{"postgres", map[string]string{"innodb_buffer_pool_size": "1G"}, "it is a MySQL/MariaDB setting"},
		{"mariadb", map[string]string{"innodb_redo_log_capacity": "1G"}, "it is a MySQL setting"},
		{"mysql", map[string]string{"aria_pagecache_buffer_size": "8M"}, "it is a MariaDB setting"},
		// MySQL 8.0 and 8.4 (the default) have it, deprecated: not "a MariaDB setting"
		{"mysql", map[string]string{"innodb_log_file_size": "256M"}, "on MySQL 8.4, innodb_log_file_size is deprecated (since 8.0.30) and ignored where innodb_redo_log_capacity is set, as pidb sets it: set innodb_redo_log_capacity instead"},
		{"postgres", map[string]string{"max_connections": "5000"}, "more than the 3481 MB the board's kernel has"},
		{"postgres", map[string]string{"checkpoint_timeout": "5 minutes"}, "not a time"},
		// the fuzzer's find: a bare number is 8kB blocks to PostgreSQL, not bytes
		{"postgres", map[string]string{"shared_buffers": "170000"}, "has no unit"},
		{"postgres", map[string]string{"work_mem": "1500B"}, "not a whole number of kB"},
	}
	for _, c := range bad {
		_, err := Recommend(Input{Flavor: c.flavor, RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"}, "balanced", c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: error %v, want %q", c.flavor, c.set, err, c.want)
		}
	}
}

// TestReasonsSayWhatIsWritten: a buffer pool's reason names O_DIRECT as
// set below only where the drop-in sets it (MariaDB 11 has no
// innodb_flush_method: O_DIRECT is its own default); connections scaled
// to RAM say the range, not one size the board does not have; an
// override's reason says whose it is.
func TestReasonsSayWhatIsWritten(t *testing.T) {
	for _, c := range []struct {
		version, says string
		flush         bool
	}{{"10.11", "with O_DIRECT (set below)", true}, {"11.8", "with O_DIRECT, the server's own default here", false}} {
		s, err := Recommend(Input{Flavor: dbms.MariaDB, Version: c.version, RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"}, Balanced, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := reasonOf(s, "innodb_buffer_pool_size"); !strings.Contains(got, c.says) {
			t.Errorf("MariaDB %s's buffer pool: %q, want %q", c.version, got, c.says)
		}
		if has := reasonOf(s, "innodb_flush_method") != ""; has != c.flush {
			t.Errorf("MariaDB %s: innodb_flush_method written %v, want %v", c.version, has, c.flush)
		}
	}
	s, err := Recommend(Input{Flavor: dbms.Postgres, RAMBytes: 256 << 20, CPUs: 1, Storage: "sd"}, Balanced, map[string]string{"checkpoint_timeout": "10min"})
	if err != nil {
		t.Fatal(err)
	}
	if got := reasonOf(s, "max_connections"); !strings.HasPrefix(got, "scaled to RAM: 20 on 512 MB or less") {
		t.Errorf("256 MB's connections: %q", got)
	}
	if got := reasonOf(s, "checkpoint_timeout"); got != "yours ([host.settings] or --set); the preset says 15min" {
		t.Errorf("an override's reason: %q", got)
	}
}

// TestNewerThanKnown: a release newer than any the tuner knows is tuned
// as the newest it knows, said in a warning and in the drop-in's first
// line (PostgreSQL 18 as 17, MySQL 9.7 as 8.4, MariaDB 12.1 as 11.8); a
// minor release of a known one is that one (MySQL 8.4.6); one older than
// supported is refused.
func TestNewerThanKnown(t *testing.T) {
	for _, c := range []struct {
		flavor      dbms.Flavor
		asked, want string
	}{{dbms.Postgres, "19", "18"}, {dbms.Postgres, "19.1", "18"}, {dbms.MySQL, "10.0.1", "9.7"}, {dbms.MariaDB, "12.1", "11.8"}} {
		in, err := Normalize(Input{Flavor: c.flavor, Version: c.asked, RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"})
		if err != nil || in.Version != c.want || in.Asked != c.asked {
			t.Errorf("%s %s: tuned as %q (asked %q), %v; want %s", c.flavor, c.asked, in.Version, in.Asked, err, c.want)
			continue
		}
		if w := NewerThanKnown(in); !strings.Contains(w, c.asked+" is newer than any pidb knows: tuned as ") || !strings.HasSuffix(strings.SplitN(w, ";", 2)[0], " "+c.want) {
			t.Errorf("%s %s: warning %q", c.flavor, c.asked, w)
		}
		s, err := Recommend(in, Balanced, nil)
		if err != nil {
			t.Fatal(err)
		}
		if head := strings.SplitN(Render(in, Balanced, s), "\n", 2)[0]; !strings.Contains(head, c.asked+" (tuned as "+c.want+", the newest pidb knows)") {
			t.Errorf("%s %s: the drop-in's first line %q", c.flavor, c.asked, head)
		}
	}
	for _, c := range []struct {
		flavor dbms.Flavor
		v      string
	}{{dbms.Postgres, "18"}, {dbms.Postgres, "17"}, {dbms.Postgres, "15.8"}, {dbms.MySQL, "9.7.4"}, {dbms.MySQL, "9.1.0"}, {dbms.MySQL, "8.4.6"}, {dbms.MySQL, "8.0.39"}, {dbms.MariaDB, "11.8.3"}, {dbms.MariaDB, "10.11"}} {
		in, err := Normalize(Input{Flavor: c.flavor, Version: c.v, RAMBytes: 4 << 30, CPUs: 4})
		if err != nil || in.Version != c.v || in.Asked != "" || NewerThanKnown(in) != "" {
			t.Errorf("%s %s, a known release: tuned as %q (asked %q), %v", c.flavor, c.v, in.Version, in.Asked, err)
		}
	}
	for _, c := range []struct {
		flavor dbms.Flavor
		v      string
	}{{dbms.Postgres, "10"}, {dbms.MySQL, "5.7"}, {dbms.MariaDB, "10.2"}} {
		if _, err := Normalize(Input{Flavor: c.flavor, Version: c.v, RAMBytes: 4 << 30, CPUs: 4}); err == nil || !strings.Contains(err.Error(), "is not supported") {
			t.Errorf("%s %s: %v, want refused", c.flavor, c.v, err)
		}
	}
}

// TestEngineNamesAsWritten: --engine as people write it is the engine it
// names: PostgreSQL in any case is PostgreSQL.
func TestEngineNamesAsWritten(t *testing.T) {
	for name, want := range map[string]dbms.Flavor{"postgresql": dbms.Postgres, "PostgreSQL": dbms.Postgres, "MariaDB": dbms.MariaDB, "MySQL": dbms.MySQL} {
		in, err := Normalize(Input{Flavor: dbms.Flavor(name), RAMBytes: 1 << 30, CPUs: 1})
		if err != nil || in.Flavor != want {
			t.Errorf("--engine %s: %s, %v; want %s", name, in.Flavor, err, want)
		}
	}
}

func TestBadInputs(t *testing.T) {
	for _, in := range []Input{
		{Flavor: "oracle", RAMBytes: 1 << 30, CPUs: 1},
		{Flavor: "postgres", Version: "9.6", RAMBytes: 1 << 30, CPUs: 1},
		{Flavor: "mysql", Version: "5.7", RAMBytes: 1 << 30, CPUs: 1},
		{Flavor: "postgres", RAMBytes: 1 << 20, CPUs: 1},
		{Flavor: "postgres", RAMBytes: 1 << 30, CPUs: 0},
		{Flavor: "postgres", RAMBytes: 1 << 30, CPUs: 1, Storage: "floppy"},
	} {
		if _, err := Recommend(in, "balanced", nil); err == nil {
			t.Errorf("%+v: no error", in)
		}
	}
	if _, err := Recommend(Input{Flavor: "postgres", RAMBytes: 1 << 30, CPUs: 1}, "turbo", nil); err == nil {
		t.Errorf("unknown preset: no error")
	}
}

// TestGolden compares the rendered drop-ins with testdata/*.conf; run with
// -update to rewrite them after a deliberate change.
func TestGolden(t *testing.T) {
	for _, flavor := range []dbms.Flavor{"postgres", "mariadb", "mysql"} {
		for _, b := range []board{zeroW, pi4B4} {
			for _, p := range Presets() {
				in := Input{Flavor: flavor, RAMBytes: b.ram, CPUs: b.cpus, Storage: b.storage}
				s, err := Recommend(in, p.Name, nil)
				if err != nil {
					t.Fatal(err)
				}
				in, _ = Normalize(in)
				got := Render(in, p.Name, s)
				file := filepath.Join("testdata", strings.ReplaceAll(string(flavor)+"-"+b.name+"-"+string(p.Name), " ", "")+".conf")
				if *update {
					if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run go test ./tune -update to create it)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs from the golden file:\n%s", file, got)
				}
			}
		}
	}
}

func FuzzOverride(f *testing.F) {
	for _, seed := range [][2]string{{"work_mem", "4MB"}, {"shared_buffers", "1GB"}, {"jit", "off"}, {"random_page_cost", "1.1"},
		{"checkpoint_timeout", "5min"}, {"innodb_buffer_pool_size", "512M"}, {"synchronous_commit", "local"}, {"x", "$(id)"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		for _, flavor := range []dbms.Flavor{"postgres", "mariadb"} {
			s, err := Recommend(Input{Flavor: flavor, RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"}, "balanced", map[string]string{name: value})
			if err != nil {
				continue
			}
			for _, x := range s {
				if !x.Override {
					continue
				}
				// what was written reads back as the same value
				p, ok := lookup(flavor, DefaultVersion(flavor), x.Name)
				if !ok {
					t.Fatalf("override %q accepted but unknown", x.Name)
				}
				again, err := p.parse(x.Value.Render(flavor))
				if err != nil || again != x.Value {
					t.Fatalf("%s = %q rendered %q, which reads back as %+v (%v)", x.Name, value, x.Value.Render(flavor), again, err)
				}
				if strings.ContainsAny(Line(flavor, x), "\n#") {
					t.Fatalf("line %q could break the file", Line(flavor, x))
				}
			}
		}
	})
}

// TestParseFileReadsRender reads back every golden file as the settings
// that produced it.
func TestParseFileReadsRender(t *testing.T) {
	for _, flavor := range []dbms.Flavor{"postgres", "mariadb", "mysql"} {
		for _, p := range Presets() {
			in := Input{Flavor: flavor, RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"}
			s, _ := Recommend(in, p.Name, map[string]string{"max_connections": "50"})
			in, _ = Normalize(in)
			got, err := ParseFile(in, Render(in, p.Name, s))
			if err != nil {
				t.Fatalf("%s %s: %v", flavor, p.Name, err)
			}
			if len(got) != len(s) {
				t.Fatalf("%s %s: %d settings read, %d written", flavor, p.Name, len(got), len(s))
			}
			for i := range s {
				if got[i].Name != s[i].Name || got[i].Value != s[i].Value {
					t.Errorf("%s %s: read %+v, wrote %+v", flavor, p.Name, got[i], s[i])
				}
			}
		}
	}
	if _, err := ParseFile(Input{Flavor: "postgres", RAMBytes: 1 << 30, CPUs: 1}, "shared_buffers = 1GB\nbogus = 1\n"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad file: %v", err)
	}
}

// TestPresetNames: the names the inventory and the flags accept are the
// presets', in order.
func TestPresetNames(t *testing.T) {
	if got := strings.Join(PresetNames(), ","); got != "seed,balanced,fast" {
		t.Errorf("preset names %s", got)
	}
}

// TestCheck: an override checked with only the engine family known, as
// `pidb inventory check` does: the catalogue's names of the family, the
// value's type and range; what only a version has passes until the facts
// are known.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		family, name, value string
		want                string // "" = accepted
	}{
		{"postgres", "shared_buffers", "1GB", ""},
		{"postgres", "shared-buffers", "1GB", ""},
		{"postgres", "shared_buffers", "1 lots", "want a size"},
		{"postgres", "max_connections", "0", "want an integer"},
		{"postgres", "shared_bufers", "1GB", `did you mean "shared_buffers"?`},
		{"postgres", "shared_preload_libraries", "'$libdir/evil'", "commands, libraries, includes and paths are never set"},
		{"postgres", "archive_command", "rm -rf /", "commands, libraries, includes and paths are never set"},
		{"postgres", "innodb_buffer_pool_size", "1G", "it is a MySQL/MariaDB setting"},
		{"mysql", "innodb_buffer_pool_size", "1G", ""},
		{"mysql", "skip-log-bin", "true", ""},
		{"mysql", "aria_pagecache_buffer_size", "16M", ""}, // MariaDB's: the family has it
		{"mysql", "innodb_log_writer_threads", "ON", ""},   // MySQL 8.0.22 and later: the version waits for the facts
		{"mysql", "shared_buffers", "1GB", "it is a PostgreSQL setting"},
		{"mysql", "init_file", "/tmp/x.sql", "never set from an inventory"},
	} {
		err := Check(dbms.Family(c.family), c.name, c.value)
		var oe *OverrideError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s = %q: %v", c.family, c.name, c.value, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &oe)):
			t.Errorf("%s %s = %q: %v; want an OverrideError with %q", c.family, c.name, c.value, err, c.want)
		}
	}
}

// TestMaxConnectionsIsAPlan: max_connections set as a setting is the
// connections the tuner plans for, as --max-connections is: work_mem is
// scaled to it, not left at the RAM-scaled count's.
func TestMaxConnectionsIsAPlan(t *testing.T) {
	in := Input{Flavor: "postgres", RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"}
	viaSet, err := Recommend(in, "balanced", map[string]string{"max_connections": "400"})
	if err != nil {
		t.Fatal(err)
	}
	in.MaxConnections = 400
	viaPlan, err := Recommend(in, "balanced", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := viaSet.Get("work_mem")
	b, _ := viaPlan.Get("work_mem")
	plain, _ := Recommend(Input{Flavor: "postgres", RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"}, "balanced", nil)
	c, _ := plain.Get("work_mem")
	if a.Value != b.Value || a.Value == c.Value {
		t.Errorf("work_mem: %s with the setting, %s with the plan, %s without either; want the first two equal, and smaller than the third",
			a.Value.Render("postgres"), b.Value.Render("postgres"), c.Value.Render("postgres"))
	}
	if m, _ := viaSet.Get("max_connections"); m.Value.Int != 400 || !m.Override {
		t.Errorf("max_connections %+v, want 400 as the override", m)
	}
}

// TestReasonsTrue: each setting's reason says what made it: an override's
// what the preset would say without it (a max_connections override
// changes the preset's own value too), the connections as the one who
// asked for them, and min_wal_size its own default.
func TestReasonsTrue(t *testing.T) {
	in := Input{Flavor: "postgres", RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"}
	s, err := Recommend(in, Balanced, map[string]string{"max_connections": "50"})
	if err != nil {
		t.Fatal(err)
	}
	if got := reasonOf(s, "max_connections"); got != "yours ([host.settings] or --set); the preset says 100" {
		t.Errorf("max_connections: %q", got)
	}
	if got := reasonOf(s, "work_mem"); !strings.Contains(got, "50 connections'") {
		t.Errorf("work_mem scales to the override's connections: %q", got)
	}
	in.MaxConnections, in.ConnectionsAsk = 50, "--max-connections"
	s, _ = Recommend(in, Balanced, nil)
	if got := reasonOf(s, "max_connections"); !strings.HasPrefix(got, "as --max-connections asks:") {
		t.Errorf("max_connections from the flag: %q", got)
	}
	in.ConnectionsAsk = ""
	s, _ = Recommend(in, Balanced, nil)
	if got := reasonOf(s, "max_connections"); !strings.HasPrefix(got, "as asked:") || strings.Contains(got, "inventory") {
		t.Errorf("max_connections asked by nobody named: %q", got)
	}
	for _, storage := range []string{"sd", "usb"} {
		in.Storage = storage
		s, _ = Recommend(in, Balanced, nil)
		if got := reasonOf(s, "min_wal_size"); !strings.Contains(got, "the default 80MB") || strings.Contains(got, "1GB") {
			t.Errorf("min_wal_size on %s: %q", storage, got)
		}
	}
}

// reasonOf is the reason of the setting called name in s; "" where s has
// none.
func reasonOf(s Settings, name string) string {
	x, _ := s.Get(name)
	return x.Why
}

// TestPostgres18: the tuner knows PostgreSQL 18: effective_io_concurrency
// where the storage is unknown is 18's own default (16), 1 before it; an
// SD card's 2 on both; io_method and io_workers, new in 18, are taken as
// overrides there and refused before it, naming the release.
func TestPostgres18(t *testing.T) {
	eio := func(v, storage string) (int64, string) {
		t.Helper()
		s, err := Recommend(Input{Flavor: dbms.Postgres, Version: v, RAMBytes: 4 << 30, CPUs: 4, Storage: storage}, Balanced, nil)
		if err != nil {
			t.Fatal(err)
		}
		x, _ := s.Get("effective_io_concurrency")
		return x.Value.Int, x.Why
	}
	if n, why := eio("18", ""); n != 16 || !strings.Contains(why, "PostgreSQL 18's default") {
		t.Errorf("18, storage unknown: %d (%s)", n, why)
	}
	if n, _ := eio("17", ""); n != 1 {
		t.Errorf("17, storage unknown: %d", n)
	}
	for _, v := range []string{"17", "18"} {
		if n, _ := eio(v, "sd"); n != 2 {
			t.Errorf("%s on an SD card: %d", v, n)
		}
	}
	over := map[string]string{"io_method": "sync", "io_workers": "2"}
	s, err := Recommend(Input{Flavor: dbms.Postgres, Version: "18", RAMBytes: 1 << 30, CPUs: 4}, Balanced, over)
	if m, ok := s.Get("io_method"); err != nil || !ok || m.Value.Word != "sync" {
		t.Errorf("io_method on 18: %+v %v", m, err)
	}
	if _, err := Recommend(Input{Flavor: dbms.Postgres, Version: "17", RAMBytes: 1 << 30, CPUs: 4}, Balanced, map[string]string{"io_method": "sync"}); err == nil || !strings.Contains(err.Error(), "18") {
		t.Errorf("io_method on 17: %v", err)
	}
}

// TestCapped32: a 32-bit server on a board with more RAM than a 32-bit
// process addresses is sized within 3 GB, and says so (the warning, the
// drop-in's first line); on a smaller board, or 64-bit, nothing changes.
func TestCapped32(t *testing.T) {
	in, err := Normalize(Input{Flavor: dbms.Postgres, Version: "17", RAMBytes: 8 << 30, MemBytes: 7 << 30, CPUs: 4, Bits: 32})
	if err != nil || in.RAMBytes != 3<<30 || in.Board != 8<<30 || in.MemBytes > 3<<30 || !strings.Contains(Capped32(in), "addresses at most 3072 MiB") || !strings.Contains(Capped32(in), "8192 MiB") {
		t.Errorf("8 GB, 32-bit: %+v %v: %s", in, err, Capped32(in))
	}
	s, _ := Recommend(in, Balanced, nil)
	if sb, _ := s.Get("shared_buffers"); sb.Value.Bytes != 768<<20 {
		t.Errorf("shared_buffers on 8 GB, 32-bit: %v, want 768MB (a quarter of 3 GB)", sb.Value.Bytes)
	}
	if head := strings.SplitN(Render(in, Balanced, s), "\n", 2)[0]; !strings.Contains(head, "3072 MiB RAM (a 32-bit server on a board of 8192 MiB)") {
		t.Errorf("the drop-in's first line: %s", head)
	}
	for _, c := range []Input{
		{Flavor: dbms.MariaDB, Version: "11.8", RAMBytes: 2 << 30, CPUs: 4, Bits: 32},
		{Flavor: dbms.MariaDB, Version: "11.8", RAMBytes: 8 << 30, CPUs: 4, Bits: 64},
		{Flavor: dbms.MariaDB, Version: "11.8", RAMBytes: 8 << 30, CPUs: 4},
	} {
		in, err := Normalize(c)
		if err != nil || in.RAMBytes != c.RAMBytes || in.Board != 0 || len(Warnings(in)) != 0 {
			t.Errorf("%d MiB, %d-bit: %+v %v", c.RAMBytes>>20, c.Bits, in, err)
		}
	}
}
