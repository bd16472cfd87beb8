package tables

import (
	"testing"

	"pidb/cluster"
	"pidb/job"
)

// TestClusterStatusMariaDB: a MariaDB replica's lag is in transactions,
// with no sync state nor WAL kept; one not replicating has "-".
func TestClusterStatusMariaDB(t *testing.T) {
	u := func(x uint64) *uint64 { return &x }
	f := func(x float64) *float64 { return &x }
	st := []cluster.Status{{Cluster: "shop", Primary: cluster.PrimaryStatus{Host: "pi4", State: "read-only", Error: "pi4 is read_only: it takes no writes"}, Replicas: []cluster.ReplicaStatus{
		{Host: "pi3", State: "streaming", LagTransactions: u(12), LagS: f(3)},
		{Host: "pi5", State: "not streaming", Error: "its replication is stopped: Access denied"},
	}}}
	rowsEqual(t, "cluster status", ClusterStatus(st).Rows, [][]string{
		{"shop", "pi4", "primary", "read-only", "", "", "", "", "pi4 is read_only: it takes no writes"},
		{"shop", "pi3", "replica", "streaming", "12 trx", "3.0", "-", "-", ""},
		{"shop", "pi5", "replica", "not streaming", "-", "-", "-", "-", "its replication is stopped: Access denied"},
	})
}

// TestReplicaLagTransactions: a MariaDB replica's most lag is in
// transactions, 0 of them where it never fell behind.
func TestReplicaLagTransactions(t *testing.T) {
	u := func(x uint64) *uint64 { return &x }
	js := []job.BenchResult{{Host: "pi4", Replicas: []job.ReplicaLag{
		{Host: "pi3", Readings: 30, MaxTransactions: u(8585), MaxS: 2.26, NotConnected: 1},
		{Host: "pi5", Readings: 30, MaxTransactions: u(0)},
	}}}
	rowsEqual(t, "replica lag", ReplicaLag(js).Rows, [][]string{
		{"pi3", "pi4", "30", "8585 trx", "2.3", "1"},
		{"pi5", "pi4", "30", "0 trx", "0.0", "0"},
	})
}
