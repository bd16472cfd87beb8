package action

import (
	"strings"
	"testing"

	"pidb/bench/workloads"
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
		for _, h := range inv.Hosts {
			if h.Name == name {
				return h
			}
		}
		t.Fatalf("no host %s", name)
		return inventory.Host{}
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
