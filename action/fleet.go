// Package action is pidb's use cases: one options struct per command and
// one function that runs it. Each loads the inventory, resolves what every
// selected host is to do (refusing bad input before any host is touched),
// runs over the fleet, and returns a typed result per host, with its host
// and its error. The command line (cmd/pidb) turns flags into the options
// and prints the results; the demo calls the same functions.
package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"pidb/config"
	"pidb/fleet"
	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
	"pidb/remote"
	"pidb/usage"
)

// Fleet is which hosts a use case works on and how it reaches them.
type Fleet struct {
	Inventory string // the inventory file
	Limit     string // only these hosts, comma-separated; empty: all
	// Concurrency is how many hosts are worked on at once (default 10).
	Concurrency       int
	AcceptNewHostKeys bool          // record a host key known_hosts does not know yet
	ConnectTimeout    time.Duration // default 10s
	View              *progress.View
	// Agent is the ssh-agent's socket (SSH_AUTH_SOCK); Passphrase asks
	// for a key's passphrase (nil: a protected key is an error).
	Agent      string
	Passphrase func(file string) ([]byte, error)
	// Warnings gets what the inventory allows but should not (tls =
	// false on a public network), once, before any host; nil: dropped.
	Warnings io.Writer
}

// ErrNoInventory is a use case's options without an inventory: a usage
// error (exit code 2).
var ErrNoInventory = usage.Wrap(errors.New("no inventory: give -i FILE (or set PIDB_INVENTORY)"))

// Result is one host's outcome: its value, or its error.
type Result[T any] = fleet.Result[T]

// Err is nil when every host succeeded, else an error (exit code 1) that
// counts the hosts that failed and holds each one's error.
func Err[T any](results []Result[T]) error { return fleet.Err(results) }

// Task is a use case's work on one host, over its connection.
type Task[T any] func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (T, error)

// inventory reads the inventory with every check pidb can make before it
// touches a host, and says its warnings.
func (f Fleet) inventory() (*inventory.Inventory, error) {
	if f.Inventory == "" {
		return nil, ErrNoInventory
	}
	inv, err := job.LoadInventory(f.Inventory)
	if err != nil {
		return nil, err
	}
	if f.Warnings != nil {
		for _, w := range inv.Warnings {
			fmt.Fprintf(f.Warnings, "warning: %s\n", progress.Sanitize(w))
		}
	}
	return inv, nil
}

// load reads the inventory (inventory) and selects the hosts.
func (f Fleet) load() (*inventory.Inventory, []inventory.Host, error) {
	inv, err := f.inventory()
	if err != nil {
		return nil, nil, err
	}
	hosts, err := inv.Select(f.Limit)
	if err != nil {
		return nil, nil, err
	}
	return inv, hosts, nil
}

// alongside is how many other hosts run at the same time as each, at
// most: the hosts, as many at once as the concurrency allows.
func (f Fleet) alongside(hosts []inventory.Host) int {
	n := f.Concurrency
	if n <= 0 {
		n = fleet.DefaultConcurrency
	}
	return max(min(n, len(hosts))-1, 0)
}

// each runs task on every host, a connection each: the one fleet loop of
// every use case. A key that cannot be read names the hosts that use it
// (a usage error: no host was touched).
func each[T any](ctx context.Context, f Fleet, hosts []inventory.Host, task Task[T]) ([]Result[T], error) {
	files := make([]string, 0, len(hosts))
	for _, h := range hosts {
		files = append(files, h.IdentityFile)
	}
	auth, err := remote.NewAuth(files, f.Agent, f.Passphrase)
	var ke *remote.KeyError
	if errors.As(err, &ke) {
		var users []string
		for _, h := range hosts {
			if h.IdentityFile == ke.File {
				users = append(users, h.Name)
			}
		}
		err = fmt.Errorf("%s: %w", strings.Join(users, ", "), err)
	}
	if err != nil {
		return nil, usage.Wrap(err)
	}
	defer auth.Close()
	opt := fleet.Options{Concurrency: f.Concurrency, View: f.View, Auth: auth, AcceptNewHostKeys: f.AcceptNewHostKeys, ConnectTimeout: f.ConnectTimeout}
	return fleet.Run(ctx, hosts, opt, func(ctx context.Context, h inventory.Host, rc *remote.Client, r progress.Reporter) (T, error) {
		return task(ctx, h, job.Over(rc), r)
	}), nil
}

// over is a use case's fleet loop and its tail: task on every host
// (each), the hosts' results as the command returns them (values, set
// writing in each one's host and error), and Err's error.
func over[T any](ctx context.Context, f Fleet, hosts []inventory.Host, task Task[T], set func(v *T, h inventory.Host, err string)) ([]T, error) {
	res, err := each(ctx, f, hosts, task)
	if err != nil {
		return nil, err
	}
	return values(res, set), Err(res)
}

// values are the hosts' results as a command returns them: each host's
// value, with set writing in its host and its error ("" for none).
func values[T any](res []Result[T], set func(v *T, h inventory.Host, err string)) []T {
	out := make([]T, 0, len(res))
	for _, r := range res {
		v, e := r.Value, ""
		if r.Err != nil {
			e = r.Err.Error()
		}
		set(&v, r.Host, e)
		out = append(out, v)
	}
	return out
}

// CheckedHost is a host as pidb inventory check resolves it: its keys,
// and the settings a command takes before its flags, with where each
// value came from (Settings.From: "FILE:LINE" or "default", by key:
// "user", "bench.clients").
type CheckedHost struct {
	Host     inventory.Host
	Settings config.Resolved
}

// InventoryCheck reads the inventory with every check pidb makes before
// it touches a host, and returns the selected hosts as resolved (pidb
// inventory check): it connects to none.
func InventoryCheck(f Fleet) ([]CheckedHost, error) {
	inv, hosts, err := f.load()
	if err != nil {
		return nil, err
	}
	// a selection provision refuses, which bench and validate take: said,
	// not refused, so that the check still shows a replica on its own
	if err := clustersWhole(hosts); err != nil && f.Warnings != nil {
		fmt.Fprintf(f.Warnings, "warning: %v; pidb provision refuses it (bench and validate take it)\n", err)
	}
	out := make([]CheckedHost, 0, len(hosts))
	for _, h := range hosts {
		r, err := config.Resolve(inv, h, config.ForBench)
		if err != nil {
			return nil, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
		}
		// what bench and validate would refuse in the settings together
		// (a script without the sql workload, --queries for tpcb)
		b, err := config.BenchFor(h, nil)
		if err != nil {
			return nil, usage.Wrap(fmt.Errorf("%s: %w", h.Name, err))
		}
		if _, err := job.Resolve(h, b, config.Thermal{}); err != nil {
			return nil, atItsLine(err, inv, h, nil)
		}
		for _, k := range inventory.HostKeys() {
			r.From[k] = "default"
			if line, ok := h.Lines[k]; ok {
				r.From[k] = fmt.Sprintf("%s:%d", inv.Path, line)
			}
		}
		out = append(out, CheckedHost{Host: h, Settings: r})
	}
	return out, nil
}
