// Package fleet runs one task per selected host in parallel: it opens one
// SSH connection per host, reuses it for the whole task, shows each host's
// progress on stderr, and keeps every host's result. One host's failure never
// stops the others.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"pidb/inventory"
	"pidb/remote"
)

// Options are the settings of one fleet run.
type Options struct {
	Concurrency       int       // hosts at once; default 10
	Progress          io.Writer // per-host progress lines (stderr); nil for none
	Auth              *remote.Auth
	AcceptNewHostKeys bool
	ConnectTimeout    time.Duration // default 10s
}

// Task is the work for one host, on its connection. step reports what the
// host is doing now, for the progress output.
type Task[T any] func(ctx context.Context, h inventory.Host, c *remote.Client, step func(string)) (T, error)

// Result is one host's outcome.
type Result[T any] struct {
	Host     inventory.Host
	Value    T
	Err      error
	Duration time.Duration
}

// Run runs task on every host and returns the results in the hosts' order.
func Run[T any](ctx context.Context, hosts []inventory.Host, opt Options, task Task[T]) []Result[T] {
	if opt.Concurrency <= 0 {
		opt.Concurrency = 10
	}
	p := &progress{w: opt.Progress}
	results := make([]Result[T], len(hosts))
	var g errgroup.Group
	g.SetLimit(opt.Concurrency)
	for i, h := range hosts {
		g.Go(func() error {
			start := time.Now()
			step := func(s string) { p.printf("%s: %s", h.Name, s) }
			var v T
			err := func() error {
				step("connecting to " + h.Address)
				c, err := remote.Dial(ctx, remote.Config{
					Name: h.Name, Address: h.Address, Port: h.Port, User: h.User,
					IdentityFile: h.IdentityFile, Auth: opt.Auth, KnownHosts: h.KnownHosts,
					AcceptNewHostKeys: opt.AcceptNewHostKeys, ConnectTimeout: opt.ConnectTimeout,
					Log: opt.Progress,
				})
				if err != nil {
					return err
				}
				defer c.Close()
				v, err = task(ctx, h, c, step)
				return err
			}()
			d := time.Since(start)
			results[i] = Result[T]{Host: h, Value: v, Err: err, Duration: d}
			if err != nil {
				p.printf("%s: FAILED after %.1fs", h.Name, d.Seconds())
			} else {
				p.printf("%s: done in %.1fs", h.Name, d.Seconds())
			}
			return nil
		})
	}
	_ = g.Wait()
	return results
}

// Failed is the error of a run in which some hosts failed: exit code 1.
type Failed struct {
	Count, Total int
	Err          error // every failed host's error, joined
}

func (f *Failed) Error() string {
	return fmt.Sprintf("%d of %d hosts failed:\n%v", f.Count, f.Total, f.Err)
}

func (f *Failed) Unwrap() error { return f.Err }

// Err returns a *Failed holding every failed host's error, or nil when all
// hosts succeeded.
func Err[T any](results []Result[T]) error {
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &Failed{Count: len(errs), Total: len(results), Err: errors.Join(errs...)}
}

// progress serialises progress lines from many hosts.
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progress) printf(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}
