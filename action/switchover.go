package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"pidb/cluster"
	"pidb/internal/atomicfile"
	"pidb/internal/filecap"
	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
	"pidb/provision"
	"pidb/secrets"
	"pidb/usage"
)

// SwitchoverOptions are `pidb cluster switchover`'s.
type SwitchoverOptions struct {
	Fleet
	Cluster, To string
	DryRun      bool
}

// SwitchoverResult is what a switchover did, or would do.
type SwitchoverResult struct {
	Cluster string   `json:"cluster"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Steps   []string `json:"steps"` // done, or with DryRun to be done
	DryRun  bool     `json:"dry_run"`
	// Inventory is the file rewritten to say the new roles ("" in a dry run)
	Inventory string `json:"inventory,omitempty"`
}

// Switchover makes cluster's replica To its primary, as planned: the old
// primary stopped cleanly, To promoted once it has all of it, the others
// (the old primary too) made its standbys, and the inventory rewritten to
// say so. It refuses, changing nothing, where To does not stream from
// the primary; where To has not replayed all the old primary wrote, the
// old one is started again.
func Switchover(ctx context.Context, o SwitchoverOptions) (SwitchoverResult, error) {
	inv, err := o.inventory()
	if err != nil {
		return SwitchoverResult{}, err
	}
	c, err := inv.Cluster(o.Cluster)
	if err != nil {
		return SwitchoverResult{}, err
	}
	res := SwitchoverResult{Cluster: c.Name, From: c.Primary, To: o.To, DryRun: o.DryRun}
	src, err := filecap.Read(inv.Path, inventory.MaxSize)
	if err != nil {
		return res, err
	}
	// the rewritten inventory, before any host: a file pidb cannot
	// rewrite stops it here
	after, err := inventory.SwitchedOver(inv.Path, string(src), c, o.To)
	if err != nil {
		return res, usage.Wrap(err)
	}
	// the new roles, as the rewritten inventory says them: checked here,
	// before any host, and given to the role step after the switchover
	now, err := job.ParseInventory(inv.Path, after)
	if err != nil {
		return res, fmt.Errorf("the inventory as the switchover would rewrite it: %w", err)
	}
	sec, err := secrets.LoadCluster(inv.Path, c.Name)
	if err != nil {
		return res, err
	}
	if sec.Replication == "" {
		return res, fmt.Errorf("cluster %q: no replication password kept: provision it first", c.Name)
	}
	hosts := inv.HostsOf(c)
	err = together(ctx, o.Fleet, hosts, func(ctx context.Context, conns map[string]job.Conn, say progress.Reporter) error {
		node := func(h inventory.Host) (cluster.Node, error) {
			r, err := cluster.Read(ctx, conns[h.Name].Root, job.ClusterEngine(c))
			if err != nil {
				return cluster.Node{}, fmt.Errorf("%s: %w", h.Name, err)
			}
			return cluster.Node{Name: h.Name, Address: h.Address, Root: conns[h.Name].Root, Report: r}, nil
		}
		s := cluster.Switchover{Cluster: c.Name, Password: sec.Replication, Say: say.Step}
		for _, h := range hosts {
			n, err := node(h)
			if err != nil {
				return err
			}
			switch h.Name {
			case c.Primary:
				s.Old = n
			case o.To:
				s.New = n
			default:
				s.Others = append(s.Others, n)
			}
		}
		if err := s.Check(); err != nil {
			return err
		}
		res.Steps = append(s.Plan(), "rewrite the inventory, and "+o.To+"'s and "+c.Primary+"'s drop-ins for their new parts where they differ (read_only, synchronous_standby_names: taken live)")
		if o.DryRun {
			return nil
		}
		if s.NewCert, err = provision.ServedCert(ctx, conns[o.To].Root, job.ClusterEngine(c)); err != nil {
			return fmt.Errorf("%s: %w", o.To, err)
		}
		if err := s.Run(ctx); err != nil {
			return err
		}
		say.Step("rewriting " + inv.Path + ": " + o.To + " is the primary")
		if err := writeLike(inv.Path, string(src), after); err != nil {
			return fmt.Errorf("the switchover is made (%s is the primary of cluster %q), but %w", o.To, c.Name, err)
		}
		// the two whose part changed: their drop-ins for it (read_only,
		// synchronous_standby_names), taken live
		env := job.Env{Inventory: now}
		for _, name := range []string{o.To, c.Primary} {
			h, err := now.Named(name)
			if err != nil {
				return err
			}
			if _, err := env.Provision(ctx, h, conns[name], job.ProvisionOptions{Steps: job.Role}, say); err != nil {
				return fmt.Errorf("%s: %w (the switchover is made: pidb provision writes it)", name, err)
			}
		}
		return nil
	})
	if err == nil && !o.DryRun {
		res.Inventory = inv.Path
	}
	return res, err
}

// writeLike writes text over the file at path, whole or not at all,
// where it was read as was: through a link to its target (the link stays),
// with the file's mode and owner (a run under sudo leaves it the user's).
// A file that changed since it was read is left as it is, and the error
// says so: someone's edits made meanwhile are not lost.
func writeLike(path, was, text string) error {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	now, err := filecap.Read(target, inventory.MaxSize)
	if err != nil {
		return err
	}
	if string(now) != was {
		return fmt.Errorf("%s changed while the switchover ran: pidb leaves it as it is; write the new primary into it yourself", path)
	}
	fi, err := os.Stat(target)
	if err != nil {
		return err
	}
	return atomicfile.Write(target, fi.Mode().Perm(), func(f *os.File) error {
		if err := atomicfile.KeepOwner(f, fi); err != nil {
			return fmt.Errorf("keep %s's owner: %w", path, err)
		}
		_, err := f.WriteString(text)
		return err
	})
}

// together connects to every host, and once all are connected runs work
// with their connections and a progress line (the first host's): for a
// use case that works on several hosts in turn, as a switchover does. A
// host that cannot be reached fails it before work runs.
func together(ctx context.Context, f Fleet, hosts []inventory.Host, work func(ctx context.Context, conns map[string]job.Conn, say progress.Reporter) error) error {
	f.Concurrency = len(hosts) // every host connected at once
	type joined struct {
		name string
		conn job.Conn
		say  progress.Reporter
	}
	in := make(chan joined, len(hosts))
	done := make(chan struct{})
	var once sync.Once
	var workErr error
	res, err := each(ctx, f, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (struct{}, error) {
		in <- joined{h.Name, c, r}
		go once.Do(func() {
			defer close(done)
			conns := map[string]job.Conn{}
			var say progress.Reporter
			timeout := time.After(2*max(f.ConnectTimeout, 10*time.Second) + 5*time.Second)
			for len(conns) < len(hosts) {
				select {
				case j := <-in:
					conns[j.name] = j.conn
					if j.name == hosts[0].Name || say == nil {
						say = j.say
					}
				case <-timeout:
					workErr = fmt.Errorf("not every host of the cluster could be reached: nothing was changed")
					return
				case <-ctx.Done():
					workErr = ctx.Err()
					return
				}
			}
			workErr = work(ctx, conns, say)
		})
		<-done
		return struct{}{}, nil
	})
	if err != nil {
		return err
	}
	if err := Err(res); err != nil {
		return err
	}
	return workErr
}
