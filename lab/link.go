package lab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The lab's link: the latency of a network between this machine and its
// hosts. The lab's hosts hang off a bridge with none, so a client here
// waits for a host no longer than the host takes to answer; a client on a
// laptop reaching a Pi over wifi waits the air's round trip as well, on
// every statement, and work that takes turns on a row (TPC-C's one
// warehouse) or on a few threads (oltp_read_only's 50) runs at what the
// round trips allow. The kernel here has no netem and no fq, so the link
// is a relay of the lab's own (`pidb lab link`, started by Up while a host
// has a latency): an nft rule turns this machine's TCP connections to such
// a host to the relay, which connects on to the host and holds what each
// side sends for half the round trip before passing it on. Only this
// machine's connections (pidb's SSH and its clients) wait; the hosts'
// connections to each other go by the bridge as before.

const (
	linkProcess = Prefix + "-link"
	linkTable   = Prefix + "-link" // Down deletes it with the lab's other tables
	linkPIDFile = "link.pid"
	linkLogFile = "link.log"
	// linkAppliedFile holds the delays the relay's rule has applied
	// (appliedText), which Up waits for
	linkAppliedFile = "link.applied"
	// linkMark marks the relay's own connections to the hosts, which its
	// rule lets by ("pidb")
	linkMark = 0x70696462
	// MaxLatency is the longest round trip --latency takes.
	MaxLatency = 2 * time.Second
	// linkIdleLimit is how many seconds the relay goes on with no host
	// to delay before it exits
	linkIdleLimit = 10
)

// latency is the round trip the link adds to the host in cfg: its own,
// else the lab's, else none.
func (cfg ThermalConfig) latency(name string) time.Duration {
	d, err := time.ParseDuration(cmp.Or(cfg.Latency[name], cfg.Latency[AllHosts], "0s"))
	if err != nil {
		return 0
	}
	return d
}

// RoundTrip is the round trip the lab's link adds to the named host, or
// would once it boots; 0 for none.
func (l *Lab) RoundTrip(name string) time.Duration {
	cfg, _ := l.readThermalConfig()
	return cfg.latency(name)
}

// delays is the one-way delay of every powered host with a latency, by
// its address.
func (l *Lab) delays(cfg ThermalConfig) map[netip.Addr]time.Duration {
	out := map[netip.Addr]time.Duration{}
	for _, b := range l.hosts() {
		if d := cfg.latency(b.Name); d > 0 && l.powered(b.Name) {
			out[Address(b)] = d / 2
		}
	}
	return out
}

// appliedText is delays as the relay records what it applied: one
// "ADDRESS DELAY" line a host, in order.
func appliedText(delays map[netip.Addr]time.Duration) string {
	var b strings.Builder
	for _, a := range slices.SortedFunc(maps.Keys(delays), netip.Addr.Compare) {
		fmt.Fprintf(&b, "%s %s\n", a, delays[a])
	}
	return b.String()
}

// ensureLink starts the relay when a powered host has a latency and none
// runs, and waits until the relay applies cfg's latencies, so that the
// first connection after Up already waits. It needs LinkCommand; without
// one (in Go tests) it says so.
func (l *Lab) ensureLink(cfg ThermalConfig) error {
	want := appliedText(l.delays(cfg))
	applied := func() bool {
		// the lab's latencies as they are now: other commands (the
		// tests beside this one) change theirs meanwhile, and the relay
		// applies theirs too
		now, _ := l.readThermalConfig()
		want := appliedText(l.delays(now))
		data, err := os.ReadFile(filepath.Join(l.Dir, linkAppliedFile))
		if err != nil {
			// the relay has gone (idle, with no host to delay)
			return want == ""
		}
		return string(data) == want
	}
	running := len(processesMatching(linkProcess+" ")) > 0
	if want == "" && !running {
		return nil
	}
	if !running {
		if err := l.startLink(); err != nil {
			return err
		}
	}
	// a minute: on a machine busy with other hosts' work the relay takes
	// its time to read the new latencies (10 s was once too little in CI)
	for deadline := time.Now().Add(time.Minute); !applied(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the lab's link did not apply the hosts' latencies within a minute (see %s)", filepath.Join(l.Dir, linkLogFile))
		}
	}
	return nil
}

// startLink starts the relay in its own process.
func (l *Lab) startLink() error {
	if len(l.LinkCommand) == 0 {
		return errors.New("--latency: this program cannot start the lab's link (pidb lab link)")
	}
	if err := l.startProcess(linkProcess, l.LinkCommand, linkLogFile, linkPIDFile); err != nil {
		return fmt.Errorf("start the lab's link: %w", err)
	}
	return nil
}

// stopLink kills the relay; its table goes with the lab's others.
func (l *Lab) stopLink() {
	l.stopProcess(linkProcess, linkPIDFile)
	_ = os.Remove(filepath.Join(l.Dir, linkAppliedFile))
}

// Link runs the relay until ctx ends or no host has had a latency for a
// while, and then removes its rule. It is what `pidb lab link` runs, in
// its own process. Every second it reads the lab's config and points the
// rule at the hosts with a latency.
func (l *Lab) Link(ctx context.Context) error {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	var (
		mu     sync.Mutex
		delays map[netip.Addr]time.Duration
	)
	defer func() {
		_, _ = run(context.WithoutCancel(ctx), "nft", "delete", "table", "ip", linkTable)
		_ = os.Remove(filepath.Join(l.Dir, linkAppliedFile))
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			d := delays
			mu.Unlock()
			go relay(c.(*net.TCPConn), d)
		}
	}()
	idle, first := 0, true
	for {
		cfg, _ := l.readThermalConfig()
		now := l.delays(cfg)
		mu.Lock()
		changed := first || !maps.Equal(now, delays)
		first = false
		delays = now
		mu.Unlock()
		if changed {
			if err := l.writeLinkRule(ctx, port, slices.Collect(maps.Keys(now))); err != nil {
				return err
			}
			if err := writeAtomic(filepath.Join(l.Dir, linkAppliedFile), appliedText(now)); err != nil {
				return err
			}
		}
		if len(now) > 0 {
			idle = 0
		} else if idle++; idle >= linkIdleLimit {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// writeLinkRule replaces the link's nft table: this machine's TCP
// connections to addrs, but the relay's own, go to the relay's port.
func (l *Lab) writeLinkRule(ctx context.Context, port int, addrs []netip.Addr) error {
	slices.SortFunc(addrs, netip.Addr.Compare)
	_, _ = run(ctx, "nft", "delete", "table", "ip", linkTable)
	if len(addrs) == 0 {
		return nil
	}
	set := make([]string, len(addrs))
	for i, a := range addrs {
		set[i] = a.String()
	}
	rules := fmt.Sprintf("table ip %s {\n\tchain output {\n\t\ttype nat hook output priority -100; policy accept;\n\t\tmeta mark %#x return\n\t\tip daddr { %s } meta l4proto tcp redirect to :%d\n\t}\n}\n",
		linkTable, linkMark, strings.Join(set, ", "), port)
	if err := loadNft(ctx, filepath.Join(l.Dir, "link.nft"), rules); err != nil {
		return fmt.Errorf("the link's rule: %w", err)
	}
	return nil
}

// relay connects c on to the host it was sent to and passes what each
// side sends on, each after the host's one-way delay; a connection to an
// address without one is closed.
func relay(c *net.TCPConn, delays map[netip.Addr]time.Duration) {
	dst, err := originalDst(c)
	d, ok := delays[dst.Addr()]
	if err != nil || !ok {
		c.Close()
		return
	}
	// the SYN's way there: the host hears of the connection a delay later
	time.Sleep(d)
	dialer := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = setMark(int(fd), linkMark) }); err != nil {
			return err
		}
		return serr
	}}
	h, err := dialer.Dial("tcp4", dst.String())
	if err != nil {
		c.Close()
		return
	}
	delayPipe(c, h.(*net.TCPConn), d)
}

// delayPipe passes what a and b send each other on, each chunk d after it was
// read, until both have ended, and then closes both. What one side stops
// sending (a half close) the other learns of d later, as a FIN would.
func delayPipe(a, b *net.TCPConn, d time.Duration) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); delayCopy(b, a, d) }()
	go func() { defer wg.Done(); delayCopy(a, b, d) }()
	wg.Wait()
	a.Close()
	b.Close()
}

// delayCopy copies src to dst, each chunk d after it was read; at src's
// end it closes dst for writing, and on an error both.
func delayCopy(dst, src *net.TCPConn, d time.Duration) {
	type chunk struct {
		data []byte
		at   time.Time
	}
	q := make(chan chunk, 1024) // what is in flight: up to 1024 reads
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{buf[:n], time.Now().Add(d)}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					q <- chunk{nil, time.Now().Add(d)} // a reset: passed on as one
				}
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at))
		if c.data == nil {
			_ = dst.SetLinger(0)
			dst.Close()
			src.Close()
			for range q {
			}
			return
		}
		if _, err := dst.Write(c.data); err != nil {
			src.Close()
			for range q {
			}
			return
		}
	}
	_ = dst.CloseWrite()
}
