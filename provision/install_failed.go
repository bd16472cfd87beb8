package provision

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"pidb/remote"
)

// mysqlLog is where Debian's and Ubuntu's MySQL packages have the server
// write its log (log_error in mysqld.cnf); their package scripts'
// mysqld --initialize writes there too.
const mysqlLog = "/var/log/mysql/error.log"

// dpkgLines are the lines of an install's output that say what failed:
// dpkg's and apt's errors, and a package script's own ERROR lines. Where
// the Pi has a terminal (a login's pseudo-terminal), apt runs dpkg on it,
// and dpkg's lines reach apt's standard output, not its standard error, so
// both streams are read. At most 12 lines, in order, each once.
func dpkgLines(streams ...string) []string {
	var lines []string
	seen := map[string]bool{}
	for _, s := range streams {
		for _, l := range strings.Split(s, "\n") {
			l = strings.TrimSpace(strings.TrimRight(l, "\r"))
			if l == "" || seen[l] || !failureLine(l) {
				continue
			}
			seen[l] = true
			lines = append(lines, l)
		}
	}
	if len(lines) > 12 {
		lines = lines[len(lines)-12:]
	}
	return lines
}

// failureLine reports whether an install's output line says what failed.
func failureLine(l string) bool {
	for _, p := range []string{"dpkg: error", "dpkg: dependency problems", "E: ", "ERROR:", "[ERROR]", "Errors were encountered", "returned error exit status", "Job for "} {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

// serverLogErrors is the last errors and warnings of MySQL's log, where a
// package script's failed mysqld --initialize or first start says why.
func (t *Target) serverLogErrors(ctx context.Context) []string {
	out, err := t.run(ctx, "tail -n 400 "+mysqlLog+" 2>/dev/null | grep -E '\\[(ERROR|Warning)\\]' | tail -n 6 || true")
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// installFailed says why an install command failed: apt's error, then
// dpkg's and the package scripts' lines from both streams, and for the
// MySQL family the server log's last errors, with what to do where the
// kernel ran out of asynchronous I/O contexts.
func (t *Target) installFailed(ctx context.Context, err error, out, pkg string) error {
	var stderr string
	var ee *remote.ExitError
	if errors.As(err, &ee) {
		stderr = string(ee.Stderr)
	}
	lines := dpkgLines(out, stderr)
	if pkg != "postgresql" {
		if log := t.serverLogErrors(ctx); len(log) > 0 {
			lines = append(lines, "the server's log ("+mysqlLog+") last said:")
			lines = append(lines, log...)
		}
	}
	if len(lines) > 0 {
		err = fmt.Errorf("%w\n  %s", err, strings.Join(lines, "\n  "))
	}
	if strings.Contains(err.Error(), "io_setup") {
		err = fmt.Errorf("%w\nthe kernel's asynchronous I/O contexts ran out (io_setup): InnoDB takes them from one count for the whole machine (fs.aio-nr, at most fs.aio-max-nr): raise fs.aio-max-nr (sysctl -w fs.aio-max-nr=1048576, and in /etc/sysctl.d to keep it), then run provision again", err)
	}
	return aptHint(err, out)
}

// initAgain mends a fresh MySQL install whose package script's
// mysqld --initialize failed part way (a Pi starved of CPU or memory: the
// log says "System views initialization failed", then every later run of
// the script finds the half-written data directory "unusable"). It acts
// only where what is in /var/lib/mysql can only be that first
// initialisation's: pidb's install found the directory empty (Check
// refuses data it did not create), the log says the directory is
// unusable, and the package never finished its first configuration (no
// debian-5.7.flag, which the script writes at its end). Then it empties
// the directory as its owner, never as root, and reports true: the caller
// configures the package once more.
func (t *Target) initAgain(ctx context.Context) (bool, error) {
	log, err := t.run(ctx, "tail -n 400 "+mysqlLog+" 2>/dev/null | grep -c 'is unusable' || true")
	if err != nil || strings.TrimSpace(log) == "0" || strings.TrimSpace(log) == "" {
		return false, err
	}
	flag, err := t.run(ctx, "test -e /var/lib/mysql/debian-5.7.flag && echo yes || true")
	if err != nil || strings.TrimSpace(flag) == "yes" {
		return false, err
	}
	if _, err := t.inFolder(ctx, "/var/lib/mysql/.", "find /var/lib/mysql -mindepth 1 -delete"); err != nil {
		return false, fmt.Errorf("empty /var/lib/mysql, which a failed first initialisation left: %w", err)
	}
	return true, nil
}
