package tpcb

import (
	"strings"
	"testing"
)

func TestScript(t *testing.T) {
	vars := [nVars]int64{vAid: 123456, vBid: 2, vTid: 17, vDelta: -4321}
	want := []struct{ simple, prepared string }{
		{"BEGIN", "BEGIN"},
		{"UPDATE pgbench_accounts SET abalance = abalance + -4321 WHERE aid = 123456", "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"},
		{"SELECT abalance FROM pgbench_accounts WHERE aid = 123456", "SELECT abalance FROM pgbench_accounts WHERE aid = $1"},
		{"UPDATE pgbench_tellers SET tbalance = tbalance + -4321 WHERE tid = 17", "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2"},
		{"UPDATE pgbench_branches SET bbalance = bbalance + -4321 WHERE bid = 2", "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2"},
		{"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (17, 2, 123456, -4321, CURRENT_TIMESTAMP)", "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)"},
		{"END", "END"},
	}
	if len(script) != len(want) {
		t.Fatalf("%d statements, want pgbench's %d", len(script), len(want))
	}
	for i, st := range script {
		if got := string(st.appendSimple(nil, &vars)); got != want[i].simple {
			t.Errorf("simple %d: %q, want %q", i, got, want[i].simple)
		}
		if st.sql != want[i].prepared || strings.Count(st.sql, "$") != len(st.args) {
			t.Errorf("prepared %d: %q with %d args, want %q", i, st.sql, len(st.args), want[i].prepared)
		}
	}
}

func TestRows(t *testing.T) {
	if b, tl, a := Rows(10); b != 10 || tl != 100 || a != 1000000 {
		t.Errorf("scale 10: %d %d %d, want pgbench's 10 100 1000000", b, tl, a)
	}
}

// BenchmarkAppendSimple is the simple protocol's statement building, the
// client's work per statement before the network.
func BenchmarkAppendSimple(b *testing.B) {
	vars := [nVars]int64{vAid: 123456, vBid: 2, vTid: 17, vDelta: -4321}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		for i := range script {
			buf = script[i].appendSimple(buf[:0], &vars)
		}
	}
}
