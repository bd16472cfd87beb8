package tune

import (
	"strings"
	"testing"

	"pidb/dbms"
)

// TestDurability: each override that trades durability is named, with
// what a power cut then loses, however it is spelt; the safe values and
// the other family's names are not.
func TestDurability(t *testing.T) {
	traded := []struct {
		family      dbms.Family
		name, value string
		says        string
	}{
		{"postgres", "fsync", "off", "corrupt, beyond repair"},
		{"postgres", "fsync", "false", "corrupt, beyond repair"},
		{"postgres", "full_page_writes", "OFF", "torn page"},
		{"postgres", "full-page-writes", "0", "torn page"},
		{"postgres", "synchronous_commit", "off", "loses the last commits"},
		{"mysql", "innodb_flush_log_at_trx_commit", "2", "up to a second of commits"},
		{"mysql", "innodb_flush_log_at_trx_commit", "0", "a crash of the server too"},
		{"mysql", "innodb_doublewrite", "OFF", "torn page"},
		{"mysql", "sync_binlog", "0", "binary log"},
	}
	for _, c := range traded {
		if got := Durability(c.family, c.name, c.value); !strings.Contains(got, c.says) || !strings.Contains(got, "power cut") {
			t.Errorf("%s %s = %s: %q, want it to say what a power cut loses (%q)", c.family, c.name, c.value, got, c.says)
		}
	}
	kept := []struct {
		family      dbms.Family
		name, value string
	}{
		{"postgres", "fsync", "on"}, {"postgres", "synchronous_commit", "local"}, {"postgres", "synchronous_commit", "remote_apply"},
		{"postgres", "full_page_writes", "true"}, {"postgres", "shared_buffers", "0"},
		{"mysql", "innodb_flush_log_at_trx_commit", "1"}, {"mysql", "sync_binlog", "1"}, {"mysql", "innodb_doublewrite", "ON"},
		{"mysql", "fsync", "off"}, {"postgres", "sync_binlog", "0"},
	}
	for _, c := range kept {
		if got := Durability(c.family, c.name, c.value); got != "" {
			t.Errorf("%s %s = %s: %q, want nothing said", c.family, c.name, c.value, got)
		}
	}
}
