package tune

import (
	"errors"
	"testing"

	"pidb/dbms"
)

// FuzzCheck: an override from an inventory ([host.settings], --set) is
// accepted or refused with an *OverrideError, never a panic; one accepted
// for PostgreSQL goes through Recommend for a Pi 4 on PostgreSQL 15 as
// accepted, or is refused there with an *OverrideError too (what needs
// the version or the memory budget).
func FuzzCheck(f *testing.F) {
	for _, kv := range [][2]string{{"shared_buffers", "1GB"}, {"work_mem", "64kB"}, {"max_connections", "100"}, {"random_page_cost", "1.1"},
		{"innodb_buffer_pool_size", "512M"}, {"skip_log_bin", "on"}, {"checkpoint_timeout", "15min"}, {"shared_bufers", "1GB"}, {"work_mem", "-1"}} {
		f.Add(kv[0], kv[1])
	}
	in, err := Normalize(Input{Flavor: "postgres", Version: "15", RAMBytes: 4 << 30, CPUs: 4, Storage: "sd"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name, raw string) {
		var oe *OverrideError
		for _, family := range []dbms.Family{"postgres", "mysql"} {
			if err := Check(family, name, raw); err != nil && !errors.As(err, &oe) {
				t.Fatalf("Check(%s, %q, %q): %T %v", family, name, raw, err, err)
			}
		}
		if Check("postgres", name, raw) != nil {
			return
		}
		var be *BudgetError
		if _, err := Recommend(in, "balanced", map[string]string{name: raw}); err != nil && !errors.As(err, &oe) && !errors.As(err, &be) {
			t.Fatalf("Recommend with %s = %q: %T %v", name, raw, err, err)
		}
	})
}
