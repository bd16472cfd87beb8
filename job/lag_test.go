package job

import (
	"testing"

	"pidb/cluster"
	"pidb/results"
)

// TestLagOf: a replica's place behind the primary, from the primary's
// report: its WAL less the replica's replay position, the server's
// replay_lag, 0 s where it has all; nothing where it is not connected.
func TestLagOf(t *testing.T) {
	f := 0.25
	st := cluster.Report{WAL: 5000, Senders: []cluster.Sender{{Name: "pi3", Replayed: 3000, ReplayLag: &f}, {Name: "zero", Replayed: 5000}}}
	if l := lagOf(st, "pi3"); l.Host != "pi3" || *l.Bytes != 2000 || *l.Seconds != 0.25 {
		t.Errorf("pi3: %+v", l)
	}
	if l := lagOf(st, "zero"); *l.Bytes != 0 || *l.Seconds != 0 {
		t.Errorf("zero, caught up: %+v", l)
	}
	// read a moment after the primary's position: it has all of it
	ahead := cluster.Report{WAL: 5000, Senders: []cluster.Sender{{Name: "pi3", Replayed: 5100}}}
	if l := lagOf(ahead, "pi3"); l.Bytes == nil || *l.Bytes != 0 || *l.Seconds != 0 {
		t.Errorf("pi3 past the position read: %+v", l)
	}
	if l := lagOf(st, "pi5"); l.Bytes != nil || l.Seconds != nil {
		t.Errorf("pi5, not connected: %+v", l)
	}
}

func TestReplicaLags(t *testing.T) {
	u := func(x uint64) *uint64 { return &x }
	f := func(x float64) *float64 { return &x }
	got := replicaLags([]results.Lag{
		{Host: "pi3", Bytes: u(100), Seconds: f(0.5)}, {Host: "zero"},
		{Host: "pi3", Bytes: u(4000), Seconds: f(0.1)}, {Host: "zero", Bytes: u(10)},
	})
	want := []ReplicaLag{{Host: "pi3", Readings: 2, MaxBytes: 4000, MaxS: 0.5}, {Host: "zero", Readings: 2, MaxBytes: 10, NotConnected: 1}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("replicaLags = %+v, want %+v", got, want)
	}
}
