package inventory

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"pidb/dbms"
)

// Cluster is a primary and its replicas, kept in step by the engine's own
// replication: a [[cluster]] of the inventory.
type Cluster struct {
	Name     string
	Engine   dbms.Family
	Primary  string   // a host's name
	Replicas []string // hosts' names, in the order written
	// Synchronous has a commit on the primary wait for a replica
	// (PostgreSQL's synchronous_standby_names, MariaDB's semi-sync)
	Synchronous bool
	Line        int // where its [[cluster]] header is
	// PrimaryLine and ReplicasLine are where its primary and replicas
	// keys are (SwitchedOver rewrites them)
	PrimaryLine, ReplicasLine int
}

// Members are the cluster's hosts, the primary first.
func (c Cluster) Members() []string {
	return append([]string{c.Primary}, c.Replicas...)
}

// Role is a host's part in its cluster.
type Role string

// The roles.
const (
	Primary Role = "primary"
	Replica Role = "replica"
)

// ClusterOf returns the cluster the host called name is in, and its role
// there; ok is false for a host on its own.
func (inv *Inventory) ClusterOf(name string) (c Cluster, role Role, ok bool) {
	for _, c := range inv.Clusters {
		if c.Primary == name {
			return c, Primary, true
		}
		for _, r := range c.Replicas {
			if r == name {
				return c, Replica, true
			}
		}
	}
	return Cluster{}, "", false
}

// HostsOf are the cluster's hosts as the inventory has them, its primary
// first (Members' order): every one, for a cluster the inventory read.
func (inv *Inventory) HostsOf(c Cluster) []Host {
	var out []Host
	for _, name := range c.Members() {
		if h, err := inv.Named(name); err == nil {
			out = append(out, h)
		}
	}
	return out
}

// Cluster returns the cluster called name; an unknown name is an error
// that lists the clusters there are.
func (inv *Inventory) Cluster(name string) (Cluster, error) {
	names := make([]string, len(inv.Clusters))
	for i, c := range inv.Clusters {
		if c.Name == name {
			return c, nil
		}
		names[i] = c.Name
	}
	if len(names) == 0 {
		return Cluster{}, &Error{File: inv.Path, Msg: fmt.Sprintf("no cluster named %q: the inventory has no [[cluster]]", name)}
	}
	return Cluster{}, &Error{File: inv.Path, Msg: fmt.Sprintf("no cluster named %q in the inventory (clusters: %s)%s", name, quoteList(names), suggest(name, names))}
}

var clusterKeys = table{
	"name":        matching(hostName, "cluster name", "use letters, digits, '.', '_' and '-'"),
	"engine":      engineName,
	"primary":     nonEmptyString,
	"replicas":    isStringList,
	"synchronous": isBool,
}

func isStringList(v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("want an array of host names, like [\"pi3\", \"pi5\"], not %s", tomlType(v))
	}
	for _, item := range list {
		if _, err := str(item); err != nil {
			return fmt.Errorf("want an array of host names: %w", err)
		}
	}
	return nil
}

// clusters reads the [[cluster]] tables against the hosts read already:
// every member a host of the inventory, in one cluster only, of the
// cluster's engine, at an address the others can reach and admit.
func (p *parser) clusters(doc map[string]any, hosts []Host) []Cluster {
	raw, ok := doc["cluster"]
	if !ok {
		return nil
	}
	tables, ok := raw.([]map[string]any)
	if !ok {
		p.errorf([]string{"cluster"}, "cluster: want an array of tables ([[cluster]]), not %s", tomlType(raw))
		return nil
	}
	byName := map[string]Host{}
	for _, h := range hosts {
		byName[h.Name] = h
	}
	names := make([]string, 0, len(hosts))
	for _, h := range hosts {
		names = append(names, h.Name)
	}
	// the hosts, named in an error for a name that is none: a few of
	// them, and a few such errors (a file of thousands of hosts and
	// names would make errors that grow with the square of its size)
	const maxUnknown = 20
	hostList, unknown := someOf(names, 12), 0
	var out []Cluster
	seen := map[string]Cluster{} // clusters by name
	in := map[string]Cluster{}   // a host's cluster
	for i, m := range tables {
		path := []string{"cluster", strconv.Itoa(i)}
		sec := p.checkTable(path, m, clusterKeys)
		c := Cluster{Name: sec.String("name", ""), Primary: sec.String("primary", ""), Line: p.lines.line(path...),
			PrimaryLine: sec["primary"].Line, ReplicasLine: sec["replicas"].Line}
		c.Synchronous, _ = sec["synchronous"].Raw.(bool)
		for _, k := range []string{"name", "primary", "replicas"} {
			if _, ok := m[k]; !ok && !misspelt(m, k, sortedKeys(clusterKeys)) {
				p.errorf(path, "cluster %s has no %s", orUnnamed(c.Name), k)
			}
		}
		if v, ok := sec["replicas"]; ok {
			for _, r := range v.Raw.([]any) {
				c.Replicas = append(c.Replicas, r.(string))
			}
			if len(c.Replicas) == 0 {
				p.errorf(appendPath(path, "replicas"), "cluster %s: replicas is empty: name at least one host to replicate %s", orUnnamed(c.Name), orUnnamed(c.Primary))
			}
		}
		if c.Name == "" || c.Primary == "" || len(c.Replicas) == 0 {
			continue
		}
		if first, dup := seen[c.Name]; dup {
			p.errorf(appendPath(path, "name"), "duplicate cluster name %q (first defined on line %d)", c.Name, first.Line)
			continue
		}
		seen[c.Name] = c
		bad := false
		members := map[string]bool{}
		for j, name := range c.Members() {
			at := appendPath(path, "primary")
			if j > 0 {
				at = appendPath(path, "replicas")
			}
			h, ok := byName[name]
			switch {
			case !ok:
				if unknown++; unknown <= maxUnknown {
					p.errorf(at, "cluster %q: no host named %q in the inventory (hosts: %s)%s", c.Name, name, hostList, suggest(name, names))
				}
				bad = true
				continue
			case members[name]:
				p.errorf(at, "cluster %q: host %q is named twice", c.Name, name)
				bad = true
				continue
			}
			members[name] = true
			if other, taken := in[name]; taken {
				p.errorf(at, "cluster %q: host %q is in cluster %q already (line %d): a host replicates in one cluster only", c.Name, name, other.Name, other.Line)
				bad = true
				continue
			}
			if why := replicationAddress(h); why != "" {
				p.errorf(at, "cluster %q: host %q %s", c.Name, name, why)
				bad = true
			}
		}
		if bad {
			continue
		}
		c.Engine = byName[c.Primary].Engine
		if v, ok := sec["engine"]; ok {
			c.Engine = normalizeEngine(v.Raw.(string))
		}
		for j, name := range c.Members() {
			if h := byName[name]; h.Engine != c.Engine {
				at := appendPath(path, "replicas")
				if j == 0 {
					at = appendPath(path, "primary")
				}
				p.errorf(at, "cluster %q is %s, but host %q (line %d) runs %s: a cluster's hosts run one engine", c.Name, c.Engine, name, h.Line, h.Engine)
				bad = true
			}
		}
		// a standby runs only with at least its primary's max_connections,
		// and any of the hosts may become the primary: they plan alike
		if c.Engine == dbms.PostgresFamily && !bad {
			first := ""
			for _, name := range c.Members() {
				if first == "" {
					first = name
					continue
				}
				if a, b := plannedConnections(byName[first]), plannedConnections(byName[name]); a != b {
					p.errorf(path, "cluster %q: %s plans %s connections, %s %s: a standby needs at least its primary's max_connections, and any host may become the primary: give every host of the cluster the same max_connections, or none", c.Name, first, orDefault(a), name, orDefault(b))
					bad = true
					break
				}
			}
		}
		// the primary admits its replicas by address, and the replicas
		// know one another's by it after a switchover: two hosts at one
		// address would be one machine to them
		addrs := map[netip.Addr]string{}
		for _, name := range c.Members() {
			a, _ := netip.ParseAddr(byName[name].Address)
			a = a.Unmap()
			if first, dup := addrs[a]; dup {
				p.errorf(path, "cluster %q: hosts %q and %q are both at %s: a cluster's hosts are separate machines", c.Name, first, name, a)
				bad = true
			}
			addrs[a] = name
		}
		if bad {
			continue
		}
		for _, name := range c.Members() {
			in[name] = c
		}
		out = append(out, c)
	}
	if unknown > maxUnknown {
		p.errorf([]string{"cluster"}, "and %d more names in [[cluster]] tables that are no host in the inventory", unknown-maxUnknown)
	}
	return out
}

// someOf is the first n of names joined by commas, and how many more.
func someOf(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// replicationAddress says why a host's address cannot carry replication,
// or "": the primary admits its replicas by address (pg_hba.conf lines, a
// MariaDB account at an address, matched without DNS: skip_name_resolve),
// so each member is written at an IP address the others can reach.
func replicationAddress(h Host) string {
	a, err := netip.ParseAddr(h.Address)
	switch {
	case err != nil:
		return fmt.Sprintf("is at %q, a name: give its IP address, which the cluster's other hosts admit it by (MariaDB and MySQL match accounts by address, not by name)", h.Address)
	case a.IsLoopback() || a.IsUnspecified():
		return fmt.Sprintf("is at %s, which on another Pi is that Pi itself: give the address the cluster's other hosts reach it at", a)
	case h.Engine == dbms.MySQLFamily && !a.Unmap().Is4():
		return fmt.Sprintf("is at %s: MySQL and MariaDB accounts take IPv4 addresses only", a)
	}
	return ""
}

func orUnnamed(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return strconv.Quote(name)
}

// plannedConnections is the max_connections a host's inventory entry
// gives (max_connections, or [host.settings] max_connections); 0 for none.
func plannedConnections(h Host) int64 {
	if h.Connections > 0 {
		return int64(h.Connections)
	}
	if n, ok := h.Settings["max_connections"].Raw.(int64); ok {
		return n
	}
	return 0
}

func orDefault(n int64) string {
	if n == 0 {
		return "the default"
	}
	return strconv.FormatInt(n, 10)
}

// SwitchedOver is the inventory's source src with cluster c's primary
// now newPrimary and its replicas the others (the old primary first, in
// its place): what a switchover writes back, so that the inventory says
// what the servers do. Only the primary's and the replicas' values
// change; the file's comments and layout stay. The result is read again
// and must give that cluster, or it is an error.
func SwitchedOver(name, src string, c Cluster, newPrimary string) (string, error) {
	if newPrimary == c.Primary {
		return "", fmt.Errorf("cluster %q: %s is already the primary: name one of its replicas (%s)", c.Name, newPrimary, strings.Join(c.Replicas, ", "))
	}
	if !slices.Contains(c.Replicas, newPrimary) {
		return "", fmt.Errorf("cluster %q: %s is not one of its replicas (%s)", c.Name, newPrimary, strings.Join(c.Replicas, ", "))
	}
	replicas := []string{c.Primary}
	for _, r := range c.Replicas {
		if r != newPrimary {
			replicas = append(replicas, r)
		}
	}
	lines := strings.SplitAfter(src, "\n")
	if c.PrimaryLine < 1 || c.ReplicasLine < 1 || c.PrimaryLine > len(lines) || c.ReplicasLine > len(lines) {
		return "", fmt.Errorf("cluster %q: its primary and replicas are not where the file was read", c.Name)
	}
	key := regexp.MustCompile(`^(\s*primary\s*=\s*)("[^"]*"|'[^']*')`)
	i := c.PrimaryLine - 1
	if !key.MatchString(lines[i]) {
		return "", fmt.Errorf("%s:%d: cannot rewrite the cluster's primary there", name, c.PrimaryLine)
	}
	lines[i] = key.ReplaceAllString(lines[i], "${1}"+strconv.Quote(newPrimary))
	// the replicas' array, which may span lines: from its key to its ]
	j := c.ReplicasLine - 1
	start := regexp.MustCompile(`^\s*replicas\s*=\s*\[`).FindStringIndex(lines[j])
	if start == nil {
		return "", fmt.Errorf("%s:%d: cannot rewrite the cluster's replicas there", name, c.ReplicasLine)
	}
	end := j
	for end < len(lines) && !strings.Contains(stripComment(lines[end]), "]") {
		end++
	}
	if end == len(lines) {
		return "", fmt.Errorf("%s:%d: the replicas' array does not end", name, c.ReplicasLine)
	}
	quoted := make([]string, len(replicas))
	for k, r := range replicas {
		quoted[k] = strconv.Quote(r)
	}
	tail := lines[end][strings.Index(stripComment(lines[end]), "]")+1:]
	lines[j] = lines[j][:start[1]] + strings.Join(quoted, ", ") + "]" + tail
	out := strings.Join(append(lines[:j+1], lines[end+1:]...), "")
	inv, err := Parse(name, "/", out)
	if err != nil {
		return "", fmt.Errorf("the inventory rewritten for the switchover does not read: %w", err)
	}
	got, err := inv.Cluster(c.Name)
	if err != nil || got.Primary != newPrimary || !slices.Equal(got.Replicas, replicas) {
		return "", fmt.Errorf("the inventory rewritten for the switchover does not say %s is the primary of %q", newPrimary, c.Name)
	}
	return out, nil
}

// stripComment is a line without its comment, where a # outside a string
// begins one (the replicas' names hold no #).
func stripComment(line string) string {
	inString := byte(0)
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case inString != 0 && c == inString:
			inString = 0
		case inString == 0 && (c == '"' || c == '\''):
			inString = c
		case inString == 0 && c == '#':
			return line[:i]
		}
	}
	return line
}
