package action

import (
	"strings"
	"testing"
	"time"

	"pidb/bench/workloads"
	"pidb/config"
	"pidb/inventory"
	"pidb/job"
	"pidb/usage"
)

// TestReplicasWrite: a workload that writes (tpcb, tpcc) on a cluster's
// replica selected on its own is refused, pointing to --cluster; on the
// primary, on a host in no cluster, or read-only on the replica, it is
// not.
func TestReplicasWrite(t *testing.T) {
	inv, err := inventory.Parse("inv.toml", "/tmp", `[[host]]
name = "pi4"
address = "10.0.0.40"
[[host]]
name = "pi3"
address = "10.0.0.30"
[[host]]
name = "alone"
address = "10.0.0.70"
[[cluster]]
name = "quiz"
primary = "pi4"
replicas = ["pi3"]
`)
	if err != nil {
		t.Fatal(err)
	}
	host := func(name string) inventory.Host {
		h, err := inv.Named(name)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	plan := func(h inventory.Host, w string) map[string]job.Plan {
		spec, err := workloads.Get(w)
		if err != nil {
			t.Fatal(err)
		}
		return map[string]job.Plan{h.Name: {Spec: spec}}
	}
	for _, w := range []string{"tpcb", "tpcc"} {
		err := replicasWrite([]inventory.Host{host("pi3")}, plan(host("pi3"), w))
		if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), `pi3 is a replica in cluster "quiz", and `+w+` writes, which a replica refuses: bench the cluster with --cluster quiz (`+w+` runs on its primary, pi4`) {
			t.Errorf("%s on the replica: %v", w, err)
		}
		for _, h := range []string{"pi4", "alone"} {
			if err := replicasWrite([]inventory.Host{host(h)}, plan(host(h), w)); err != nil {
				t.Errorf("%s on %s: %v", w, h, err)
			}
		}
	}
	for _, w := range []string{"quiz", "oltp-read-only"} {
		if err := replicasWrite([]inventory.Host{host("pi3")}, plan(host("pi3"), w)); err != nil {
			t.Errorf("%s, read-only, on the replica: %v", w, err)
		}
	}
}

// TestTimeWarnings: a run longer than a day, and an interval longer than
// the run, are said; the defaults, an interval as long as a short run,
// and a fixed amount of work are not.
func TestTimeWarnings(t *testing.T) {
	b := config.DefaultBench()
	if w := timeWarnings(b); len(w) != 0 {
		t.Errorf("the defaults: %q", w)
	}
	long := b
	long.Duration = 1000 * time.Hour
	if w := timeWarnings(long); len(w) != 1 || !strings.Contains(w[0], "--duration 1000h0m0s is a run of 41.7 days") {
		t.Errorf("1000h: %q", w)
	}
	coarse := b
	coarse.Duration, coarse.Interval = time.Minute, 10*time.Minute
	if w := timeWarnings(coarse); len(w) != 1 || !strings.Contains(w[0], "--interval 10m0s is longer than the run (--duration 1m0s)") {
		t.Errorf("an interval past the run: %q", w)
	}
	short := b
	short.Duration = time.Second // the interval's default
	if w := timeWarnings(short); len(w) != 0 {
		t.Errorf("a run of one interval: %q", w)
	}
	fixed := coarse
	fixed.Queries = 1000 // --duration is then the most it may take
	if w := timeWarnings(fixed); len(w) != 0 {
		t.Errorf("a fixed amount of work: %q", w)
	}
}
