package tune

import (
	"strings"

	"pidb/dbms"
)

// Durability is what a power cut or a crash of the Pi then costs, where a
// setting as overridden ([host.settings], --set) trades the database's
// durability for speed; "" where it trades none. The presets trade it
// only where they say so (fast); an override does it in silence unless
// pidb says this, on stderr, at the check and at every run.
func Durability(family dbms.Family, name, raw string) string {
	key, v := overrideName(family, name, raw)
	v = strings.ToLower(strings.Trim(strings.TrimSpace(v), `"'`))
	off := v == "off" || v == "false" || v == "no" || v == "0"
	switch family {
	case dbms.PostgresFamily:
		switch {
		case key == "fsync" && off:
			return "fsync = off: PostgreSQL no longer waits for its writes to reach the card or drive; a power cut or a crash of the Pi can leave the whole database corrupt, beyond repair, not just short of its last commits"
		case key == "full_page_writes" && off:
			return "full_page_writes = off: a power cut in the middle of a page's write leaves a torn page that PostgreSQL cannot repair from its WAL: the database may be corrupt after it"
		case key == "synchronous_commit" && off:
			return "synchronous_commit = off: a power cut or a crash of the Pi loses the last commits (up to three times wal_writer_delay, 0.6 s by default) that clients were told were saved; the database stays consistent"
		}
	case dbms.MySQLFamily:
		switch {
		case key == "innodb_flush_log_at_trx_commit" && (v == "0" || v == "2"):
			return "innodb_flush_log_at_trx_commit = " + v + ": a power cut loses up to a second of commits that clients were told were saved (with 0, a crash of the server too); the database stays consistent"
		case key == "innodb_doublewrite" && off:
			return "innodb_doublewrite = " + v + ": a power cut in the middle of a page's write leaves a torn page that InnoDB cannot repair: the database may be corrupt after it"
		case key == "sync_binlog" && v == "0":
			return "sync_binlog = 0: a power cut can lose the binary log's last transactions, which the replicas and a point-in-time recovery need"
		}
	}
	return ""
}
