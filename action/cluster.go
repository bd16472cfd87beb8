package action

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"pidb/cluster"
	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
	"pidb/usage"
)

// ClusterOptions are `pidb cluster status`'s: the clusters to show (every
// [[cluster]] of the inventory when none is named).
type ClusterOptions struct {
	Fleet
	Clusters []string
}

// ErrClusterBroken is a cluster status whose cluster is not whole: its
// primary is not one, or a replica does not stream from it (exit code 1).
var ErrClusterBroken = errors.New("a cluster is not whole")

// ClusterStatus asks each host of the clusters for its side of the
// replication and says of each replica whether it streams from its
// primary, how far behind, and what the primary keeps for it. Its error
// is ErrClusterBroken, with the statuses, where a cluster is not whole.
func ClusterStatus(ctx context.Context, o ClusterOptions) ([]cluster.Status, error) {
	inv, err := o.inventory()
	if err != nil {
		return nil, err
	}
	if len(inv.Clusters) == 0 {
		return nil, usage.Wrap(fmt.Errorf("%s has no [[cluster]]: pidb cluster works on a primary and its replicas", inv.Path))
	}
	chosen := inv.Clusters
	if len(o.Clusters) > 0 {
		chosen = nil
		for _, name := range o.Clusters {
			c, err := inv.Cluster(name)
			if err != nil {
				return nil, err
			}
			chosen = append(chosen, c)
		}
	}
	var hosts []inventory.Host
	for _, c := range chosen {
		hosts = append(hosts, inv.HostsOf(c)...)
	}
	res, err := each(ctx, o.Fleet, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (cluster.Report, error) {
		r.Step("reading its replication")
		return cluster.Read(ctx, c.Root, job.ClusterEngine(*h.Cluster))
	})
	if err != nil {
		return nil, err
	}
	said := map[string]cluster.Member{}
	for _, r := range res {
		said[r.Host.Name] = cluster.Member{Name: r.Host.Name, Address: r.Host.Address, Report: r.Value, Err: r.Err}
	}
	var out []cluster.Status
	var broken []string
	for _, c := range chosen {
		var replicas []cluster.Member
		for _, name := range c.Replicas {
			replicas = append(replicas, said[name])
		}
		st := cluster.Judge(c.Name, c.Engine, said[c.Primary], replicas)
		if !st.OK {
			broken = append(broken, c.Name)
		}
		out = append(out, st)
	}
	if len(broken) > 0 {
		return out, fmt.Errorf("%w: %s", ErrClusterBroken, strings.Join(broken, ", "))
	}
	return out, nil
}
