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
	"time"

	"golang.org/x/sync/errgroup"

	"pidb/inventory"
	"pidb/progress"
	"pidb/remote"
)

// DefaultConcurrency is how many hosts are worked on at once when the
// options say nothing.
const DefaultConcurrency = 10

// Options are the settings of one fleet run.
type Options struct {
	Concurrency       int            // hosts at once; default 10
	View              *progress.View // each host's progress (stderr); nil for none
	Auth              *remote.Auth
	AcceptNewHostKeys bool
	ConnectTimeout    time.Duration // default 10s
}

// Task is the work for one host, on its connection; r is where it says how
// it goes, for the progress output.
type Task[T any] func(ctx context.Context, h inventory.Host, c *remote.Client, r progress.Reporter) (T, error)

// Result is one host's outcome.
type Result[T any] struct {
	Host     inventory.Host
	Value    T
	Err      error
	Duration time.Duration
}

// Run runs task on every host and returns the results in the hosts' order.
// Every host has its line in the view from the start (those beyond the
// concurrency wait for a turn), and the view is done when Run returns.
func Run[T any](ctx context.Context, hosts []inventory.Host, opt Options, task Task[T]) []Result[T] {
	if opt.Concurrency <= 0 {
		opt.Concurrency = DefaultConcurrency
	}
	view := opt.View
	if view == nil {
		view = progress.New(io.Discard, progress.Options{})
	}
	lines := make([]*progress.Host, len(hosts))
	for i, h := range hosts {
		lines[i] = view.Host(h.Name)
	}
	results := make([]Result[T], len(hosts))
	var g errgroup.Group
	g.SetLimit(opt.Concurrency)
	for i, h := range hosts {
		g.Go(func() error {
			start := time.Now()
			line := lines[i]
			var v T
			err := func() error {
				line.Step("connecting to " + h.Address)
				c, err := remote.Dial(ctx, remote.Config{
					Name: h.Name, Address: h.Address, Port: h.Port, User: h.User,
					IdentityFile: h.IdentityFile, Auth: opt.Auth, KnownHosts: h.KnownHosts,
					AcceptNewHostKeys: opt.AcceptNewHostKeys, ConnectTimeout: opt.ConnectTimeout,
					Log: view.Writer(), Trace: line.Command,
				})
				if err != nil {
					return err
				}
				defer c.Close()
				v, err = task(ctx, h, c, line)
				return err
			}()
			results[i] = Result[T]{Host: h, Value: v, Err: err, Duration: time.Since(start)}
			line.Done(err)
			return nil
		})
	}
	_ = g.Wait()
	view.Wait()
	return results
}

// Failed is the error of a run in which some hosts failed: exit code 1.
type Failed struct {
	Count, Total int
	Err          error // every failed host's error, joined
}

func (f *Failed) Error() string {
	switch {
	case f.Total == 1:
		return fmt.Sprintf("the host failed:\n%v", f.Err)
	case f.Count == f.Total:
		return fmt.Sprintf("all %d hosts failed:\n%v", f.Total, f.Err)
	}
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
