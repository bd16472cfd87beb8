// Package fakerun is a fake remote.Runner for unit tests, after rig's
// rigtest: ordered matchers (exact, prefix, regexp, contains) answer
// commands with stdout, stderr, an exit code or an error, and every
// command, upload and read is recorded. It is for command strings and
// failure paths; the lab proves the happy path against real hosts.
package fakerun

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"

	"pidb/remote"
)

// Reply is what a matched command answers.
type Reply struct {
	Stdout, Stderr string
	Code           int   // non-zero: an *remote.ExitError
	Err            error // else this error (a lost connection, say)
	Times          int   // answer this many times, then stop matching; 0: always
}

type matcher struct {
	what  string
	match func(string) bool
	reply Reply
	used  int
}

// Runner is the fake. The zero value answers every command with nothing
// and exit code 0; set Strict to fail commands no matcher takes.
type Runner struct {
	Name  string            // Host(); default "pi4"
	Files map[string]string // ReadFile's contents; Upload writes here
	// UploadErrs makes Upload of these paths fail with the error, the
	// file left as it was.
	UploadErrs map[string]error
	// Owners answers remote.FolderUser's question: who owns each folder
	// (one not named is root's); every folder is writable by its owner
	// only (0755).
	Owners map[string]string
	Strict bool

	mu       sync.Mutex
	matchers []*matcher
	ran      []string
}

func (r *Runner) add(what string, m func(string) bool, rep Reply) *Runner {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.matchers = append(r.matchers, &matcher{what: what, match: m, reply: rep})
	return r
}

// Exact answers the command cmd.
func (r *Runner) Exact(cmd string, rep Reply) *Runner {
	return r.add("exact "+cmd, func(c string) bool { return c == cmd }, rep)
}

// Prefix answers commands that start with p.
func (r *Runner) Prefix(p string, rep Reply) *Runner {
	return r.add("prefix "+p, func(c string) bool { return strings.HasPrefix(c, p) }, rep)
}

// Contains answers commands that hold s.
func (r *Runner) Contains(s string, rep Reply) *Runner {
	return r.add("contains "+s, func(c string) bool { return strings.Contains(c, s) }, rep)
}

// Regexp answers commands that match re.
func (r *Runner) Regexp(re string, rep Reply) *Runner {
	x := regexp.MustCompile(re)
	return r.add("regexp "+re, x.MatchString, rep)
}

// Ran is every command run so far, in order.
func (r *Runner) Ran() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ran...)
}

// Run answers cmd with the first matcher that takes it.
func (r *Runner) Run(_ context.Context, cmd string) (remote.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ran = append(r.ran, cmd)
	for _, m := range r.matchers {
		if (m.reply.Times > 0 && m.used >= m.reply.Times) || !m.match(cmd) {
			continue
		}
		m.used++
		res := remote.Result{Stdout: []byte(m.reply.Stdout), Stderr: []byte(m.reply.Stderr)}
		if m.reply.Err != nil {
			return res, m.reply.Err
		}
		if m.reply.Code != 0 {
			return res, &remote.ExitError{Host: r.Host(), Cmd: cmd, Code: m.reply.Code, Stderr: []byte(m.reply.Stderr)}
		}
		return res, nil
	}
	if folders, ok := strings.CutPrefix(cmd, "for p in "); ok && strings.Contains(cmd, "; do stat -c '%U %f'") {
		folders, _, _ = strings.Cut(folders, "; do ")
		var out strings.Builder
		for _, f := range strings.Fields(folders) {
			owner := r.Owners[strings.Trim(f, "'")]
			if owner == "" {
				owner = "root"
			}
			out.WriteString(owner + " 41ed\n")
		}
		return remote.Result{Stdout: []byte(out.String())}, nil
	}
	if r.Strict {
		return remote.Result{}, fmt.Errorf("fakerun: no answer for %q", cmd)
	}
	return remote.Result{}, nil
}

// RunInput is Run; the input is dropped.
func (r *Runner) RunInput(ctx context.Context, cmd string, _ []byte) (remote.Result, error) {
	return r.Run(ctx, cmd)
}

// Upload records the file in Files.
func (r *Runner) Upload(_ context.Context, path string, data []byte, _ fs.FileMode) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ran = append(r.ran, "upload "+path)
	if err := r.UploadErrs[path]; err != nil {
		return err
	}
	if r.Files == nil {
		r.Files = map[string]string{}
	}
	r.Files[path] = string(data)
	return nil
}

// ReadFile returns Files[path], or an error wrapping fs.ErrNotExist.
func (r *Runner) ReadFile(_ context.Context, path string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.Files[path]; ok {
		return []byte(d), nil
	}
	return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
}

// Host is the host's name.
func (r *Runner) Host() string {
	if r.Name == "" {
		return "pi4"
	}
	return r.Name
}
