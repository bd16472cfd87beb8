package tune

import (
	"testing"

	"pidb/dbms"
)

// TestIOByStorage: the I/O rules (pgIO, myIO) for each storage a Pi has,
// on a 4 GB Pi 4, each value written out by hand: PGTune's for
// solid-state storage, the card's few requests at once, and the server's
// own defaults where the storage is not known (PostgreSQL 18's reads
// ahead, so its default is 16).
func TestIOByStorage(t *testing.T) {
	for _, c := range []struct {
		flavor  dbms.Flavor
		version string
		storage string
		want    map[string]string
	}{
		{dbms.Postgres, "17", "sd", map[string]string{"random_page_cost": "1.5", "effective_io_concurrency": "2"}},
		{dbms.Postgres, "17", "usb", map[string]string{"random_page_cost": "1.1", "effective_io_concurrency": "200"}},
		{dbms.Postgres, "17", "nvme", map[string]string{"random_page_cost": "1.1", "effective_io_concurrency": "200"}},
		{dbms.Postgres, "17", "", map[string]string{"random_page_cost": "4", "effective_io_concurrency": "1"}},
		{dbms.Postgres, "18", "", map[string]string{"random_page_cost": "4", "effective_io_concurrency": "16"}},
		{dbms.Postgres, "18", "sd", map[string]string{"effective_io_concurrency": "2"}},
		{dbms.MariaDB, "11.8", "sd", map[string]string{"innodb_io_capacity": "100", "innodb_io_capacity_max": "200"}},
		{dbms.MariaDB, "11.8", "usb", map[string]string{"innodb_io_capacity": "400", "innodb_io_capacity_max": "800"}},
		{dbms.MariaDB, "11.8", "nvme", map[string]string{"innodb_io_capacity": "1000", "innodb_io_capacity_max": "2000"}},
		{dbms.MySQL, "8.4.6", "", map[string]string{"innodb_io_capacity": "200", "innodb_io_capacity_max": "400", "innodb_flush_method": "O_DIRECT"}},
	} {
		b := board{"4B 4GB", 4 << 30, 4, c.storage}
		expect(t, string(c.flavor)+" "+c.version+" on "+c.storage, rendered(t, c.flavor, c.version, b, Balanced, nil), c.want, false)
	}
}
