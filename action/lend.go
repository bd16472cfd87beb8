package action

import (
	"context"
	"sync"
	"time"

	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
	"pidb/remote"
)

// Lent are the root runners of the hosts that lend them, by host name:
// a host that could not be reached is missing.
type Lent map[string]remote.Runner

// withLent runs task on each of hosts while each of lenders stays
// connected and lends root on it to the tasks: a MariaDB primary whose
// dump its replicas' copies are, replicas whose lag is read beside their
// primary's workload. A task starts once every lender is connected, or
// after the time a connection may take (those missing are left out of
// its Lent); a lender lets go once every task is done. The lenders' own
// results are left out.
func withLent[T any](ctx context.Context, f Fleet, lenders, hosts []inventory.Host, task func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter, lent Lent) (T, error)) ([]Result[T], error) {
	if len(lenders) == 0 {
		return each(ctx, f, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (T, error) {
			return task(ctx, h, c, r, Lent{})
		})
	}
	lender := map[string]bool{}
	for _, h := range lenders {
		lender[h.Name] = true
	}
	var (
		mu      sync.Mutex
		lent    = Lent{}
		all     = make(chan struct{}) // every lender connected
		release = make(chan struct{}) // every task done
		tasks   sync.WaitGroup
	)
	tasks.Add(len(hosts))
	go func() { tasks.Wait(); close(release) }()
	if f.Concurrency > 0 {
		// the lenders hold a place each while they wait
		f.Concurrency = max(f.Concurrency, len(lenders)+1)
	}
	wait := 2*max(f.ConnectTimeout, 10*time.Second) + 5*time.Second
	res, err := each(ctx, f, append(append([]inventory.Host{}, lenders...), hosts...), func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (T, error) {
		var zero T
		if lender[h.Name] {
			mu.Lock()
			lent[h.Name] = c.Root
			if len(lent) == len(lenders) {
				close(all)
			}
			mu.Unlock()
			r.Step("connected, for the others' work")
			select {
			case <-release:
			case <-ctx.Done():
			}
			return zero, nil
		}
		defer tasks.Done()
		select {
		case <-all:
		case <-time.After(wait):
		case <-ctx.Done():
			return zero, ctx.Err()
		}
		mu.Lock()
		mine := Lent{}
		for k, v := range lent {
			mine[k] = v
		}
		mu.Unlock()
		return task(ctx, h, c, r, mine)
	})
	if err != nil {
		return nil, err
	}
	return res[len(lenders):], nil
}
