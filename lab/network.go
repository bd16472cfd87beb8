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

func Address(b Board) netip.Addr {
	a := Subnet.Addr().As4()
	a[3] = byte(b.Octet)
	return netip.AddrFrom4(a)
}

func gateway() netip.Addr { return Subnet.Addr().Next() }

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
	fwd := "/proc/sys/net/ipv4/ip_forward"
	if data, _ := os.ReadFile(fwd); strings.TrimSpace(string(data)) != "1" {
		// remember the machine's setting so down can put it back
		if err := writeFile(filepath.Join(l.Dir, "ip_forward.orig"), strings.TrimSpace(string(data)), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(fwd, []byte("1\n"), 0o644); err != nil {
			return fmt.Errorf("enable IPv4 forwarding: %w", err)
		}
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
	rulesFile := filepath.Join(l.Dir, "nft.rules")
	if err := os.WriteFile(rulesFile, []byte(rules), 0o644); err != nil {
		return err
	}
	_, err = run(ctx, "nft", "-f", rulesFile)
	return err
}

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

func (l *Lab) setupNetns(ctx context.Context, b Board) error {
	ns, veth := machineName(b.Name), machineName(b.Name)
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

func containsTable(list, name string) bool {
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "ip" && f[2] == name {
			return true
		}
	}
	return false
}

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
