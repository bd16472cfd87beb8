package cluster

import (
	"errors"
	"testing"

	"pidb/dbms"
)

func TestLSN(t *testing.T) {
	for in, want := range map[string]uint64{"0/0": 0, "0/3000060": 0x3000060, "16/B374D848": 0x16B374D848} {
		if got, err := LSN(in); err != nil || got != want {
			t.Errorf("LSN(%s) = %x, %v; want %x", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "16", "x/1", "1/1/1", "100000000/0"} {
		if _, err := LSN(bad); err == nil {
			t.Errorf("LSN(%q) read", bad)
		}
	}
}

func TestSlotName(t *testing.T) {
	for host, want := range map[string]string{"pi3": "pidb_pi3", "Pi5-b.lan": "pidb_pi5_b_lan"} {
		if got := SlotName(host); got != want {
			t.Errorf("SlotName(%s) = %s, want %s", host, got, want)
		}
	}
}

// rows as PostgreSQL 15 gives them for a primary with two replicas, one
// streaming 1 MB behind, one gone whose slot keeps 48 MB
func TestParse(t *testing.T) {
	p, err := parse([][]string{
		{"self", "false", "0/5000000", "", "", "", ""},
		{"sender", "pi3", "streaming", "0/4F00000", "0.002154", "async", ""},
		{"slot", "pidb_pi3", "true", "1048576", "reserved", "", ""},
		{"slot", "pidb_pi5", "false", "50331648", "extended", "", ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.InRecovery || p.WAL != 0x5000000 || len(p.Senders) != 1 || p.Senders[0].Replayed != 0x4F00000 || *p.Senders[0].ReplayLag != 0.002154 ||
		len(p.Slots) != 2 || !p.Slots[0].Active || *p.Slots[1].Retained != 50331648 || p.Slots[1].Status != "extended" {
		t.Errorf("primary: %+v", p)
	}
	r, err := parse([][]string{{"self", "true", "", "0/4F00000", "3.5", "streaming", "10.0.0.40"}})
	if err != nil || !r.InRecovery || r.Replayed != 0x4F00000 || *r.ReplayDelay != 3.5 || r.Receiver != "streaming" || r.ReceiveFrom != "10.0.0.40" {
		t.Errorf("standby: %+v, %v", r, err)
	}
	for _, bad := range [][][]string{
		{},
		{{"self", "false", "junk", "", "", "", ""}},
		{{"self", "false", "0/1", "", "", "", ""}, {"sender", "pi3", "streaming", "0/1", "soon", "async", ""}},
		{{"self", "false", "0/1", "", "", "", ""}, {"mystery", "", "", "", "", "", ""}},
	} {
		if _, err := parse(bad); err == nil {
			t.Errorf("%q read", bad)
		}
	}
}

func TestJudge(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	u := func(x uint64) *uint64 { return &x }
	primary := Member{Name: "pi4", Address: "10.0.0.40", Report: Report{WAL: 0x5000000,
		Senders: []Sender{{Name: "pi3", State: "streaming", Replayed: 0x4F00000, ReplayLag: f(0.25), Sync: "async"}, {Name: "pi6", State: "catchup", Replayed: 0x1000000, Sync: "async"}},
		Slots:   []Slot{{Name: "pidb_pi3", Active: true, Retained: u(1 << 20)}, {Name: "pidb_pi5", Retained: u(48 << 20)}, {Name: "pidb_pi6", Active: true, Retained: u(64 << 20)}},
	}}
	streaming := Member{Name: "pi3", Address: "10.0.0.30", Report: Report{InRecovery: true, Receiver: "streaming", ReceiveFrom: "10.0.0.40"}}
	stopped := Member{Name: "pi5", Address: "10.0.0.50", Report: Report{InRecovery: true}}
	catching := Member{Name: "pi6", Address: "10.0.0.60", Report: Report{InRecovery: true, Receiver: "streaming", ReceiveFrom: "10.0.0.40"}}
	st := Judge("quiz", dbms.PostgresFamily, primary, []Member{streaming, stopped, catching})
	if st.OK || st.Primary.State != "primary" || len(st.Replicas) != 3 {
		t.Fatalf("status: %+v", st)
	}
	pi3, pi5, pi6 := st.Replicas[0], st.Replicas[1], st.Replicas[2]
	if pi3.State != Streaming || *pi3.LagBytes != 1<<20 || *pi3.LagS != 0.25 || pi3.Sync == nil || *pi3.Sync != "async" || *pi3.RetainedBytes != 1<<20 || pi3.Error != "" {
		t.Errorf("pi3: %+v", pi3)
	}
	// in recovery alone is not streaming; its slot keeps WAL for it
	if pi5.State != NotStreaming || pi5.LagBytes != nil || *pi5.RetainedBytes != 48<<20 ||
		pi5.Error != "in recovery, but its WAL receiver is not running: it receives nothing (is pi4 up, and does it admit it?)" {
		t.Errorf("pi5: %+v", pi5)
	}
	if pi6.State != CatchingUp || *pi6.LagBytes != 0x4000000 || pi6.LagS != nil {
		t.Errorf("pi6: %+v", pi6)
	}
	// all streaming, one caught up and idle (no replay_lag): 0 s behind
	idle := primary
	idle.Report.Senders = []Sender{{Name: "pi3", State: "streaming", Replayed: 0x5000000, Sync: "sync"}}
	st = Judge("quiz", dbms.PostgresFamily, idle, []Member{streaming})
	if !st.OK || *st.Replicas[0].LagBytes != 0 || *st.Replicas[0].LagS != 0 || st.Replicas[0].Sync == nil || *st.Replicas[0].Sync != "sync" {
		t.Errorf("caught up: %+v", st.Replicas[0])
	}
	// read a moment after the primary's position: it has all of it
	ahead := primary
	ahead.Report.Senders = []Sender{{Name: "pi3", State: "streaming", Replayed: 0x5000100, Sync: "async"}}
	if st := Judge("quiz", dbms.PostgresFamily, ahead, []Member{streaming}); *st.Replicas[0].LagBytes != 0 {
		t.Errorf("past the position read: %+v", st.Replicas[0])
	}
	// a replica on its own, one streaming from elsewhere, one unreachable;
	// the primary unreachable: nothing of lag or slots
	alone := Member{Name: "pi3", Report: Report{}}
	elsewhere := Member{Name: "pi5", Report: Report{InRecovery: true, Receiver: "streaming", ReceiveFrom: "10.0.0.99"}}
	gone := Member{Name: "pi6", Err: errors.New("pi6: connect: no route to host")}
	st = Judge("quiz", dbms.PostgresFamily, Member{Name: "pi4", Address: "10.0.0.40", Err: errors.New("pi4: connect: refused")}, []Member{alone, elsewhere, gone})
	want := []struct{ host, state, slot, err string }{
		{"pi3", NotAStandby, "pidb_pi3", "pi3 is a server of its own, not a standby of pi4"},
		{"pi5", NotStreaming, "pidb_pi5", "it streams from 10.0.0.99, not from pi4 (10.0.0.40)"},
		{"pi6", Unreachable, "pidb_pi6", "pi6: connect: no route to host"},
	}
	if st.OK || st.Primary.State != Unreachable || st.Primary.Error != "pi4: connect: refused" {
		t.Errorf("primary unreachable: %+v", st)
	}
	for i, w := range want {
		r := st.Replicas[i]
		if r.Host != w.host || r.State != w.state || r.Slot == nil || *r.Slot != w.slot || r.Error != w.err ||
			r.Sync != nil || r.LagBytes != nil || r.LagS != nil || r.LagTransactions != nil || r.RetainedBytes != nil {
			t.Errorf("replica %d: %+v, want %+v and nothing of lag", i, r, w)
		}
	}
	// a primary that is a standby
	if st := Judge("quiz", dbms.PostgresFamily, Member{Name: "pi4", Report: Report{InRecovery: true}}, nil); st.OK || st.Primary.State != "not a primary" {
		t.Errorf("a standby as primary: %+v", st)
	}
}
