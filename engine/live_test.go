package engine

import (
	"context"
	"strings"
	"testing"

	"pidb/dbms"
	"pidb/internal/fakerun"
	"pidb/tune"
)

// TestLiveSkipsPluginLoad: MySQL's plugin_load_add is an option, not a
// variable the server can be asked for: the read-back leaves it out and
// reads the plugins' own variables, which a server whose plugins did
// not load has not (an error, then, not a pass).
func TestLiveSkipsPluginLoad(t *testing.T) {
	e, _ := New(dbms.MySQL, "9.7.4")
	s := tune.Settings{
		{Name: "plugin_load_add", Value: tune.Text("semisync_source.so;semisync_replica.so")},
		{Name: "rpl_semi_sync_source_enabled", Value: tune.Switch(true)},
	}
	r := (&fakerun.Runner{Strict: true}).Exact(e.Query("SELECT @@rpl_semi_sync_source_enabled"), fakerun.Reply{Stdout: "1\n"})
	if bad, err := Live(context.Background(), r, e, s); err != nil || len(bad) != 0 {
		t.Errorf("Live: %v %v; ran %q", bad, err, r.Ran())
	}
	unloaded := (&fakerun.Runner{}).Contains("@@rpl_semi_sync_source_enabled", fakerun.Reply{Code: 1, Stderr: "ERROR 1193 (HY000) at line 1: Unknown system variable 'rpl_semi_sync_source_enabled'"})
	if _, err := Live(context.Background(), unloaded, e, s); err == nil || !strings.Contains(err.Error(), "Unknown system variable") {
		t.Errorf("plugins not loaded: %v", err)
	}
}
