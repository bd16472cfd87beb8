// Package shrun is a remote.Runner whose commands run in a shtest
// sandbox: for tests that drive a step's or a switchover's code and see
// what its commands did with the values they were given.
package shrun

import (
	"context"
	"io/fs"
	"sync"

	"pidb/internal/shtest"
	"pidb/remote"
)

// Runner is a remote.Runner whose commands run in a sandbox: each
// answers what the run printed, a non-zero exit as an *remote.ExitError.
// Uploads are kept in Files, which ReadFile reads.
type Runner struct {
	S     *shtest.Sandbox
	Files map[string]string

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

// Upload keeps data in Files.
func (r *Runner) Upload(_ context.Context, path string, data []byte, _ fs.FileMode) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Files == nil {
		r.Files = map[string]string{}
	}
	r.Files[path] = string(data)
	return nil
}

// ReadFile reads Files.
func (r *Runner) ReadFile(_ context.Context, path string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.Files[path]; ok {
		return []byte(d), nil
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
}

// Host is "pi".
func (r *Runner) Host() string { return "pi" }

// Runs are the runs so far, and the standard input of each.
func (r *Runner) Runs() ([]shtest.Result, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]shtest.Result(nil), r.runs...), append([]string(nil), r.ins...)
}
