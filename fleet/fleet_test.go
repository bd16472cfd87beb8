package fleet

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"pidb/inventory"
	"pidb/progress"
	"pidb/remote"
)

// TestRunKeepsEveryHostsResult runs against loopback ports where no SSH
// server listens: each host fails on its own, in order, with its name.
func TestRunKeepsEveryHostsResult(t *testing.T) {
	var hosts []inventory.Host
	for i := 0; i < 5; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close() // nothing listens there now: connection refused
		hosts = append(hosts, inventory.Host{Name: "h" + strconv.Itoa(i), Address: "127.0.0.1", Port: port, User: "pi"})
	}
	auth, err := remote.NewAuth(nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	view := progress.New(&lines, progress.Options{})
	called := 0
	results := Run(context.Background(), hosts, Options{Concurrency: 2, Auth: auth, ConnectTimeout: 2 * time.Second, View: view},
		func(ctx context.Context, h inventory.Host, c *remote.Client, r progress.Reporter) (int, error) {
			called++
			return 1, nil
		})
	if called != 0 {
		t.Errorf("the task ran %d times without a connection", called)
	}
	if len(results) != len(hosts) {
		t.Fatalf("%d results for %d hosts", len(results), len(hosts))
	}
	for i, r := range results {
		var ce *remote.ConnError
		if r.Host.Name != hosts[i].Name || !errors.As(r.Err, &ce) || !strings.HasPrefix(r.Err.Error(), hosts[i].Name+": connect to 127.0.0.1:") {
			t.Errorf("result %d: %s %v", i, r.Host.Name, r.Err)
		}
	}
	err = Err(results)
	var f *Failed
	if !errors.As(err, &f) || f.Count != 5 || f.Total != 5 || !strings.HasPrefix(err.Error(), "all 5 hosts failed:\n") {
		t.Errorf("Err = %v", err)
	}
	for _, h := range hosts {
		if !strings.Contains(lines.String(), h.Name+": FAILED") {
			t.Errorf("no progress line for %s:\n%s", h.Name, lines.String())
		}
	}
	if Err([]Result[int]{{Host: hosts[0]}}) != nil {
		t.Errorf("Err of a success is not nil")
	}
}

// TestFailedWords: the count of failed hosts in words: the one host, all
// of them, or some of them.
func TestFailedWords(t *testing.T) {
	for _, c := range []struct {
		count, total int
		want         string
	}{{1, 1, "the host failed:\nx"}, {3, 3, "all 3 hosts failed:\nx"}, {1, 2, "1 of 2 hosts failed:\nx"}} {
		if got := (&Failed{Count: c.count, Total: c.total, Err: errors.New("x")}).Error(); got != c.want {
			t.Errorf("%d of %d: %q, want %q", c.count, c.total, got, c.want)
		}
	}
}
