package lab

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// aptProxyPort is where the lab's package cache listens on the bridge. It is
// not apt-cacher-ng's usual 3142, so a system instance does not collide.
const aptProxyPort = 3149

// The lab's hosts share one package cache: an apt-cacher-ng of the lab's own
// on the bridge address, which every host uses as its apt proxy. Each host
// keeps its own /var/cache/apt/archives (and so its own apt lock), while a
// package is downloaded once for the whole fleet and kept for later runs.
// (Binding one archives folder into every host would share apt's lock too:
// two hosts installing at once would fail with "Could not get lock".)

func (l *Lab) aptProxyDir() string { return filepath.Join(l.Dir, Prefix+"-apt-proxy") }

// aptProxyConf is the apt configuration every host gets.
func aptProxyConf() string {
	return fmt.Sprintf("// pidb lab: the fleet's shared package cache\nAcquire::http::Proxy \"http://%s\";\n",
		netip.AddrPortFrom(gateway(), aptProxyPort))
}

// ensureAptProxy starts the lab's apt-cacher-ng unless it is answering.
func (l *Lab) ensureAptProxy(ctx context.Context) error {
	addr := netip.AddrPortFrom(gateway(), aptProxyPort).String()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		return nil
	}
	l.stopAptProxy()
	dir := l.aptProxyDir()
	cache := filepath.Join(l.Dir, "cache", "apt")
	for _, d := range []string{dir, cache, filepath.Join(dir, "log")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	conf := strings.Join([]string{
		"CacheDir: " + cache,
		"LogDir: " + filepath.Join(dir, "log"),
		"SupportDir: /usr/lib/apt-cacher-ng",
		"Port: " + strconv.Itoa(aptProxyPort),
		"BindAddress: " + gateway().String(),
		"ExThreshold: 4",
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "acng.conf"), []byte(conf), 0o644); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "log", "console.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command("apt-cacher-ng", "-c", dir, "ForeGround=1", "pidfile="+filepath.Join(dir, "pid"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the lab's package cache: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the lab's package cache (apt-cacher-ng) did not listen on %s; see %s", addr, logf.Name())
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// stopAptProxy ends the lab's apt-cacher-ng, found by its config folder.
func (l *Lab) stopAptProxy() {
	for _, pid := range processesMatching(Prefix + "-apt-proxy") {
		_ = kill(pid)
	}
}
