package job

import (
	"context"
	"reflect"
	"testing"

	"pidb/cluster"
	"pidb/dbms"
	"pidb/internal/fakerun"
	"pidb/results"
)

// myReplicaReport is what a MariaDB replica of 10.0.0.40 answers to
// cluster.Read: 108 transactions applied, 3 s behind, its threads as
// given (SHOW SLAVE STATUS cut to the columns pidb reads).
func myReplicaReport(io, sql, behind string) string {
	return "pidb-flavor mariadb\nself\t1\t0-1-108\t0-1-108\npidb-slave-status\n" +
		"Slave_IO_State\tMaster_Host\tMaster_User\tMaster_Port\tSlave_IO_Running\tSlave_SQL_Running\tLast_IO_Error\tLast_SQL_Error\tSeconds_Behind_Master\tUsing_Gtid\tGtid_IO_Pos\n" +
		"Waiting for master to send event\t10.0.0.40\tpidb_replication\t3306\t" + io + "\t" + sql + "\t\t\t" + behind + "\tSlave_Pos\t0-1-108\n"
}

// TestMariaDBLag: a MariaDB replica's lag is read on it: the primary's
// transactions it has not applied and its Seconds_Behind_Master; nothing
// where it could not be reached, could not be read or does not
// replicate.
func TestMariaDBLag(t *testing.T) {
	ctx := context.Background()
	p := cluster.Report{Flavor: dbms.MariaDB, WAL: 120}
	if l := familyLag(ctx, p, "pi3", nil); l != (results.Lag{Host: "pi3"}) {
		t.Errorf("no runner: %+v", l)
	}
	streaming := (&fakerun.Runner{Name: "pi3"}).Contains("pidb-slave-status", fakerun.Reply{Stdout: myReplicaReport("Yes", "Yes", "3")})
	l := familyLag(ctx, p, "pi3", streaming)
	if l.Host != "pi3" || l.Transactions == nil || *l.Transactions != 12 || l.Seconds == nil || *l.Seconds != 3 || l.Bytes != nil {
		t.Errorf("streaming: %+v", l)
	}
	// read a moment before the replica: it has all of it
	if l := familyLag(ctx, cluster.Report{Flavor: dbms.MariaDB, WAL: 100}, "pi3", streaming); l.Transactions == nil || *l.Transactions != 0 {
		t.Errorf("ahead of the position read: %+v", l)
	}
	stopped := (&fakerun.Runner{Name: "pi3"}).Contains("pidb-slave-status", fakerun.Reply{Stdout: myReplicaReport("No", "No", "NULL")})
	if l := familyLag(ctx, p, "pi3", stopped); l != (results.Lag{Host: "pi3"}) {
		t.Errorf("stopped: %+v", l)
	}
	down := (&fakerun.Runner{Name: "pi3"}).Contains("pidb-slave-status", fakerun.Reply{Code: 1, Stderr: "ERROR 2002 (HY000): Can't connect"})
	if l := familyLag(ctx, p, "pi3", down); l != (results.Lag{Host: "pi3"}) {
		t.Errorf("down: %+v", l)
	}
}

// TestReplicaLagsTransactions: on MariaDB a replica's most transactions
// behind is the largest of its readings, unset where none had them; a
// reading with neither bytes nor transactions is one not connected.
func TestReplicaLagsTransactions(t *testing.T) {
	u := func(x uint64) *uint64 { return &x }
	f := func(x float64) *float64 { return &x }
	got := replicaLags([]results.Lag{
		{Host: "pi3", Transactions: u(40), Seconds: f(1)},
		{Host: "pi5", Seconds: f(9)},
		{Host: "pi3", Transactions: u(8585), Seconds: f(0.5)},
		{Host: "pi3"},
		{Host: "pi3", Transactions: u(0), Seconds: f(0)},
		{Host: "pi5"},
	})
	want := []ReplicaLag{
		{Host: "pi3", Readings: 4, MaxS: 1, NotConnected: 1, MaxTransactions: u(8585)},
		{Host: "pi5", Readings: 2, NotConnected: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replicaLags = %+v, want %+v", got, want)
	}
}
