package lab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The lab's network: the bridge, forwarding and NAT, each host's network
// namespace and veth.

// Address returns the board's address in the lab subnet.
func Address(b Board) netip.Addr {
	a := Subnet.Addr().As4()
	a[3] = byte(b.Octet)
	return netip.AddrFrom4(a)
}

// vethName is the host's end of a lab host's veth, named by its address
// (an interface name has at most 15 characters, a host name more).
func vethName(b Board) string { return Prefix + "-v" + strconv.Itoa(b.Octet) }

func gateway() netip.Addr { return Subnet.Addr().Next() }

// sysctls are the kernel settings the lab raises; down puts back what the
// machine had (kept in DIR/sysctl-NAME.orig).
var sysctls = []string{"net/ipv4/ip_forward", "fs/inotify/max_user_instances", "fs/aio-max-nr"}

// raiseSysctl sets /proc/sys/name to at least want, remembering the
// machine's value the first time, so that down can put it back.
func (l *Lab) raiseSysctl(name string, want int) error {
	p := filepath.Join("/proc/sys", name)
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	have, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return fmt.Errorf("%s: %q", p, data)
	}
	if have >= want {
		return nil
	}
	orig := l.sysctlOrig(name)
	if !fileExists(orig) {
		if err := writeFile(orig, strconv.Itoa(have), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(p, []byte(strconv.Itoa(want)+"\n"), 0o644)
}

func (l *Lab) sysctlOrig(name string) string {
	return filepath.Join(l.Dir, "sysctl-"+strings.ReplaceAll(name, "/", ".")+".orig")
}

// ensureNetwork sets up the bridge with the gateway address, forwarding, and
// an nft table that masquerades the lab's traffic out of the default route,
// so apt works inside the hosts.
func (l *Lab) ensureNetwork(ctx context.Context) error {
	if err := checkSubnetFree(); err != nil {
		return err
	}
	if _, err := net.InterfaceByName(bridge); err != nil {
		if _, err := run(ctx, "ip", "link", "add", bridge, "type", "bridge"); err != nil {
			return err
		}
	}
	gw := netip.PrefixFrom(gateway(), Subnet.Bits()).String()
	if out, _ := run(ctx, "ip", "-o", "addr", "show", "dev", bridge); !strings.Contains(out, " "+gw+" ") {
		if _, err := run(ctx, "ip", "addr", "add", gw, "dev", bridge); err != nil {
			return err
		}
	}
	if _, err := run(ctx, "ip", "link", "set", bridge, "up"); err != nil {
		return err
	}
	if err := l.raiseSysctl("net/ipv4/ip_forward", 1); err != nil {
		return fmt.Errorf("enable IPv4 forwarding: %w", err)
	}
	// every host's systemd takes inotify instances of root's, about ten;
	// the kernel's default of 128 a user stops the thirteenth host's boot
	// ("Too many open files")
	if err := l.raiseSysctl("fs/inotify/max_user_instances", 2048); err != nil {
		return err
	}
	// every host's InnoDB takes the kernel's asynchronous I/O contexts
	// from one count (fs.aio-nr: up to 31,491 seen in use in a CI run);
	// at the default limit of 65,536 Oracle MySQL's mysqld --initialize
	// in the package's script aborts when io_setup fails
	if err := l.raiseSysctl("fs/aio-max-nr", 1048576); err != nil {
		return err
	}
	out, err := run(ctx, "ip", "-o", "route", "show", "default")
	if err != nil {
		return err
	}
	f := strings.Fields(out)
	dev := ""
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "dev" {
			dev = f[i+1]
			break
		}
	}
	if dev == "" {
		return errors.New("no default route: the lab's hosts need one for apt")
	}
	_, _ = run(ctx, "nft", "delete", "table", "ip", nftName)
	rules := fmt.Sprintf("table ip %s {\n\tchain postrouting {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n\t\tip saddr %s oifname %q masquerade\n\t}\n}\n", nftName, Subnet, dev)
	return loadNft(ctx, filepath.Join(l.Dir, "nft.rules"), rules)
}

// loadNft writes an nft ruleset to file, where a person can read what the
// lab loaded, and loads it.
func loadNft(ctx context.Context, file, rules string) error {
	if err := writeFile(file, rules, 0o644); err != nil {
		return err
	}
	_, err := run(ctx, "nft", "-f", file)
	return err
}

// checkSubnetFree refuses a lab subnet that another interface already uses.
func checkSubnetFree() error {
	ifaces, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, ifc := range ifaces {
		if strings.HasPrefix(ifc.Name, Prefix) {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Overlaps(Subnet) {
				return fmt.Errorf("the lab's subnet %s overlaps %s on %s", Subnet, p, ifc.Name)
			}
		}
	}
	return nil
}

// setupNetns makes the host's network namespace: a veth whose inside end is
// eth0 with the board's address, the other end on the lab bridge.
func (l *Lab) setupNetns(ctx context.Context, b Board) error {
	ns, veth := machineName(b.Name), vethName(b)
	peer := Prefix + "-tmp" + strconv.Itoa(b.Octet)
	addr := netip.PrefixFrom(Address(b), Subnet.Bits()).String()
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", veth, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", ns},
		{"ip", "-n", ns, "link", "set", peer, "name", "eth0"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "-n", ns, "addr", "add", addr, "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
		{"ip", "-n", ns, "route", "add", "default", "via", gateway().String()},
		{"ip", "link", "set", veth, "master", bridge},
		{"ip", "link", "set", veth, "up"},
	}
	for _, s := range steps {
		if _, err := run(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// containsTable reports whether `nft list tables` output lists "table ip NAME".
func containsTable(list, name string) bool {
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "ip" && f[2] == name {
			return true
		}
	}
	return false
}

// deleteLink removes a network interface if it exists. A veth goes away by
// itself, a moment later, when its peer's namespace is deleted, so one that
// vanishes while being deleted is not an error.
func deleteLink(ctx context.Context, name string) error {
	if _, err := net.InterfaceByName(name); err != nil {
		return nil
	}
	if _, err := run(ctx, "ip", "link", "delete", name); err != nil {
		if _, gone := net.InterfaceByName(name); gone != nil {
			return nil
		}
		return err
	}
	return nil
}

// cutTable is the nft table that cuts a host off (Cut).
func cutTable(b Board) string { return Prefix + "_cut" + strconv.Itoa(b.Octet) }

// Cut drops every packet between this machine and the host, both ways, as
// a pulled cable or a dead Wi-Fi link does, until the returned mend puts
// the link back; the host runs on. It is nft rules on the host's address
// in a table of its own, which Down and Remove delete too.
func (l *Lab) Cut(ctx context.Context, name string) (mend func() error, err error) {
	b, ok := BoardNamed(name)
	if !ok || !l.powered(name) {
		return nil, fmt.Errorf("no lab host %q is up", name)
	}
	addr := Address(b)
	rules := fmt.Sprintf("table ip %s {\n\tchain in {\n\t\ttype filter hook input priority -10; policy accept;\n\t\tip saddr %s drop\n\t}\n"+
		"\tchain out {\n\t\ttype filter hook output priority -10; policy accept;\n\t\tip daddr %s drop\n\t}\n}\n", cutTable(b), addr, addr)
	if err := loadNft(ctx, filepath.Join(l.hostDir(name), "cut.nft"), rules); err != nil {
		return nil, fmt.Errorf("%s: cut: %w", name, err)
	}
	return func() error { return deleteCut(context.Background(), b) }, nil
}

// deleteCut puts a host's link back: its cut table goes, if it is there.
func deleteCut(ctx context.Context, b Board) error {
	if out, _ := run(ctx, "nft", "list", "tables"); !containsTable(out, cutTable(b)) {
		return nil
	}
	_, err := run(ctx, "nft", "delete", "table", "ip", cutTable(b))
	return err
}
