// Package shrun is a remote.Runner whose commands run in a shtest
// sandbox: for tests that drive a step's or a switchover's code and see
// what its commands did with the values they were given.
package shrun

import (
	"context"
	"sync"

	"pidb/internal/fakerun"
	"pidb/internal/shtest"
	"pidb/remote"
)

// Runner is a remote.Runner whose commands run in a sandbox: each
// answers what the run printed, a non-zero exit as an *remote.ExitError.
// Its files are fakerun's: uploads kept in Files, which ReadFile reads.
type Runner struct {
	S *shtest.Sandbox
	fakerun.Runner

	mu   sync.Mutex
	runs []shtest.Result
	ins  []string
}

// Run runs cmd in the sandbox.
func (r *Runner) Run(ctx context.Context, cmd string) (remote.Result, error) {
	return r.RunInput(ctx, cmd, nil)
}

// RunInput runs cmd in the sandbox with stdin.
func (r *Runner) RunInput(_ context.Context, cmd string, stdin []byte) (remote.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.S.Run(cmd, string(stdin))
	r.runs = append(r.runs, res)
	r.ins = append(r.ins, string(stdin))
	out := remote.Result{Stdout: []byte(res.Stdout), Stderr: []byte(res.Stderr)}
	if res.Code != 0 {
		return out, &remote.ExitError{Host: r.Host(), Cmd: cmd, Code: res.Code, Stderr: out.Stderr}
	}
	return out, nil
}

// Runs are the runs so far, and the standard input of each.
func (r *Runner) Runs() ([]shtest.Result, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]shtest.Result(nil), r.runs...), append([]string(nil), r.ins...)
}
