package provision

import (
	"reflect"
	"strings"
	"testing"
)

// myPrimaryDropIn is a MariaDB cluster primary's drop-in as the tuner
// writes it, cut; myReplicaDropIn is a replica's, which adds read_only.
const (
	myPrimaryDropIn = `# Managed by pidb: preset "seed" for MariaDB 10.11, 3796 MiB RAM, 4 CPUs, storage sd, in cluster "quiz".
# pidb rewrites this file: put per-host changes in the inventory's [host.settings].
[mysqld]
innodb_buffer_pool_size = 1024M  # a quarter of the RAM
server_id = 167772200  # cluster "quiz": each server's own number
log_bin = pidb-bin  # cluster "quiz": every member writes the binary log
`
	myReplicaDropIn = myPrimaryDropIn + `read_only = ON  # cluster "quiz": a replica takes no writes but the primary's
`
)

// TestOnlyRole: two drop-ins that differ in read_only or
// synchronous_standby_names and in their comments alone differ in
// nothing else; one that differs in another setting too names it, once.
func TestOnlyRole(t *testing.T) {
	for what, c := range map[string][2]string{
		"a replica made the primary": {myReplicaDropIn, myPrimaryDropIn},
		"the primary made a replica": {myPrimaryDropIn, myReplicaDropIn},
		"the same":                   {myPrimaryDropIn, myPrimaryDropIn},
		"its header changed":         {strings.Replace(myReplicaDropIn, "3796 MiB", "3797 MiB", 1), "# another header\n" + myPrimaryDropIn},
		"PostgreSQL's synchronous_standby_names": {
			"max_connections = 100  # x\nsynchronous_standby_names = 'ANY 1 (\"pi3\", \"pi5\")'  # cluster \"quiz\" is synchronous\n",
			"max_connections = 100  # x\n",
		},
	} {
		if got := onlyRole(c[0], c[1]); got != "" {
			t.Errorf("%s: onlyRole = %q, want nothing", what, got)
		}
	}
	bigger := strings.Replace(myPrimaryDropIn, "innodb_buffer_pool_size = 1024M", "innodb_buffer_pool_size = 2048M", 1)
	if got := onlyRole(myReplicaDropIn, bigger); got != "innodb_buffer_pool_size" {
		t.Errorf("another buffer pool: onlyRole = %q", got)
	}
	// no drop-in yet: everything differs
	if got := onlyRole("", myReplicaDropIn); got != "innodb_buffer_pool_size, server_id, log_bin" {
		t.Errorf("no drop-in: onlyRole = %q", got)
	}
}

// TestSettingLines: a drop-in's setting lines as written, without its
// blank lines, comments and section header; a setting's name is what
// comes before its "=", or a bare option's word.
func TestSettingLines(t *testing.T) {
	file := "# pidb's\n[mysqld]\n\n  innodb_buffer_pool_size = 1024M  # a quarter\nskip-log-bin\n  # indented comment\nread_only=ON\n"
	got := settingLines(file)
	if want := []string{"innodb_buffer_pool_size = 1024M  # a quarter", "skip-log-bin", "read_only=ON"}; !reflect.DeepEqual(got, want) {
		t.Errorf("settingLines = %q, want %q", got, want)
	}
	for line, want := range map[string]string{
		"innodb_buffer_pool_size = 1024M  # a quarter": "innodb_buffer_pool_size",
		"skip-log-bin": "skip-log-bin",
		"read_only=ON": "read_only",
		"synchronous_standby_names = 'ANY 1 (\"a=b\")'": "synchronous_standby_names",
	} {
		if got := settingName(line); got != want {
			t.Errorf("settingName(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestSettingNameOfBareOption: an option with no value, with the tuner's
// comment after it, is named without the comment.
func TestSettingNameOfBareOption(t *testing.T) {
	if got := settingName("skip-log-bin  # no binary log (skip-log-bin): no replication here"); got != "skip-log-bin" {
		t.Errorf("settingName = %q", got)
	}
}
