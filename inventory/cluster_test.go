package inventory

import (
	"slices"
	"strings"
	"testing"
)

// clusterHosts are four Pis: three PostgreSQL, one MariaDB.
const clusterHosts = `[[host]]
name = "pi4"
address = "10.0.0.40"

[[host]]
name = "pi3"
address = "10.0.0.30"

[[host]]
name = "pi5"
address = "10.0.0.50"

[[host]]
name = "mpi"
address = "10.0.0.60"
engine = "mariadb"
`

func TestClusters(t *testing.T) {
	src := clusterHosts + `
[[host]]
name = "mpi2"
address = "10.0.0.61"
engine = "mysql"

[[cluster]]
name = "quiz"
engine = "postgres"
primary = "pi4"
replicas = ["pi3", "pi5"]

[[cluster]]
name = "shop"
primary = "mpi"
replicas = ["mpi2"]
synchronous = true
`
	inv, err := Parse("inv.toml", "/", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Clusters) != 2 {
		t.Fatalf("clusters = %+v, want two", inv.Clusters)
	}
	quiz, shop := inv.Clusters[0], inv.Clusters[1]
	if quiz.Name != "quiz" || quiz.Engine != "postgres" || quiz.Primary != "pi4" || !slices.Equal(quiz.Replicas, []string{"pi3", "pi5"}) || quiz.Synchronous || quiz.Line != 23 {
		t.Errorf("quiz = %+v", quiz)
	}
	// the engine from the primary's, mariadb read as the mysql family
	if shop.Engine != "mysql" || !shop.Synchronous || !slices.Equal(shop.Members(), []string{"mpi", "mpi2"}) {
		t.Errorf("shop = %+v", shop)
	}
	for _, x := range []struct {
		host string
		want Role
		in   string
	}{{"pi4", Primary, "quiz"}, {"pi5", Replica, "quiz"}, {"mpi2", Replica, "shop"}} {
		c, role, ok := inv.ClusterOf(x.host)
		if !ok || role != x.want || c.Name != x.in {
			t.Errorf("ClusterOf(%s) = %s, %s, %v; want %s of %s", x.host, c.Name, role, ok, x.want, x.in)
		}
	}
	if c := inv.Hosts[1].Cluster; c == nil || c.Name != "quiz" || c.Primary != "pi4" {
		t.Errorf("pi3's cluster = %+v, want quiz", c)
	}
	if c := inv.Hosts[3].Cluster; c == nil || c.Name != "shop" {
		t.Errorf("mpi's cluster = %+v, want shop", c)
	}
	var names []string
	for _, h := range inv.HostsOf(quiz) {
		names = append(names, h.Name+"@"+h.Address)
	}
	if strings.Join(names, ",") != "pi4@10.0.0.40,pi3@10.0.0.30,pi5@10.0.0.50" {
		t.Errorf("quiz's hosts: %v, want the primary first, then the replicas", names)
	}
	if _, _, ok := inv.ClusterOf("nobody"); ok {
		t.Error("ClusterOf(nobody) found a cluster")
	}
	if c, err := inv.Cluster("shop"); err != nil || c.Primary != "mpi" {
		t.Errorf("Cluster(shop) = %+v, %v", c, err)
	}
	if _, err := inv.Cluster("qiuz"); err == nil || !strings.Contains(err.Error(), `no cluster named "qiuz" in the inventory (clusters: "quiz", "shop") (did you mean "quiz"?)`) {
		t.Errorf("Cluster(qiuz) = %v", err)
	}
}

func TestClusterErrors(t *testing.T) {
	// clusterHosts and the blank line after it are 17 lines: each case's own begin on line 18
	cases := []struct {
		name, src string
		want      string // "LINE: substring"
	}{
		{"unknown primary", `[[cluster]]
name = "q"
primary = "pi44"
replicas = ["pi3"]`, `20: cluster "q": no host named "pi44" in the inventory (hosts: pi4, pi3, pi5, mpi) (did you mean "pi4"?)`},
		{"unknown replica", `[[cluster]]
name = "q"
primary = "pi4"
replicas = ["pi3", "pi6"]`, `21: cluster "q": no host named "pi6"`},
		{"no replicas", `[[cluster]]
name = "q"
primary = "pi4"`, `18: cluster "q" has no replicas`},
		{"empty replicas", `[[cluster]]
name = "q"
primary = "pi4"
replicas = []`, `21: cluster "q": replicas is empty`},
		{"replicas a string", `[[cluster]]
name = "q"
primary = "pi4"
replicas = "pi3"`, `21: cluster.replicas: want an array of host names`},
		{"no name", `[[cluster]]
primary = "pi4"
replicas = ["pi3"]`, `18: cluster (unnamed) has no name`},
		{"misspelt key", `[[cluster]]
name = "q"
primary = "pi4"
replica = ["pi3"]`, `21: unknown key "replica" in [cluster] (did you mean "replicas"?)`},
		{"primary its own replica", `[[cluster]]
name = "q"
primary = "pi4"
replicas = ["pi3", "pi4"]`, `21: cluster "q": host "pi4" is named twice`},
		{"a host in two clusters", `[[cluster]]
name = "q"
primary = "pi4"
replicas = ["pi3"]
[[cluster]]
name = "r"
primary = "pi5"
replicas = ["pi3"]`, `25: cluster "r": host "pi3" is in cluster "q" already (line 18)`},
		{"two engines", `[[cluster]]
name = "q"
primary = "pi4"
replicas = ["mpi"]`, `21: cluster "q" is postgres, but host "mpi" (line 13) runs mysql`},
		{"the cluster's engine not the hosts'", `[[cluster]]
name = "q"
engine = "mysql"
primary = "pi4"
replicas = ["pi3"]`, `21: cluster "q" is mysql, but host "pi4" (line 1) runs postgres`},
		{"duplicate name", `[[cluster]]
name = "q"
primary = "pi4"
replicas = ["pi3"]
[[cluster]]
name = "q"
primary = "mpi"
replicas = ["pi5"]`, `23: duplicate cluster name "q" (first defined on line 18)`},

		{"misspelt table", `[[clusters]]
name = "q"`, `18: unknown key "clusters" at the top level (did you mean "cluster"?)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("inv.toml", "/", clusterHosts+"\n"+c.src+"\n")
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), "inv.toml:"+c.want) {
				t.Errorf("error:\n%v\nwant it to contain\ninv.toml:%s", err, c.want)
			}
		})
	}
}

// Each member is at an IP address the others can reach and admit.
func TestClusterAddresses(t *testing.T) {
	cases := []struct {
		name, hosts string
		want        string
	}{
		{"a DNS name", `[[host]]
name = "a"
address = "pi-a.local"
[[host]]
name = "b"
address = "10.0.0.2"`, `cluster "q": host "a" is at "pi-a.local", a name: give its IP address`},
		{"loopback", `[[host]]
name = "a"
address = "10.0.0.1"
[[host]]
name = "b"
address = "127.0.0.1"
port = 2222`, `cluster "q": host "b" is at 127.0.0.1, which on another Pi is that Pi itself`},
		{"IPv6 on MariaDB", `[defaults]
engine = "mysql"
[[host]]
name = "a"
address = "10.0.0.1"
[[host]]
name = "b"
address = "fd00::2"`, `cluster "q": host "b" is at fd00::2: MySQL and MariaDB accounts take IPv4 addresses only`},
		{"connections planned apart", `[[host]]
name = "a"
address = "10.0.0.1"
[[host]]
name = "b"
address = "10.0.0.2"
max_connections = 40`, `cluster "q": a plans the default connections, b 40: a standby needs at least its primary's max_connections`},
		{"connections planned apart in settings", `[[host]]
name = "a"
address = "10.0.0.1"
max_connections = 50
[[host]]
name = "b"
address = "10.0.0.2"
[host.settings]
max_connections = 60`, `cluster "q": a plans 50 connections, b 60`},
		{"one machine under two ports", `[[host]]
name = "a"
address = "10.0.0.1"
[[host]]
name = "b"
address = "10.0.0.1"
port = 2222`, `cluster "q": hosts "a" and "b" are both at 10.0.0.1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := c.hosts + "\n[[cluster]]\nname = \"q\"\nprimary = \"a\"\nreplicas = [\"b\"]\n"
			_, err := Parse("inv.toml", "/", src)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want %q", err, c.want)
			}
		})
	}
	// a cluster key, not a table
	if _, err := Parse("inv.toml", "/", "cluster = \"q\"\n"+clusterHosts); err == nil || !strings.Contains(err.Error(), "inv.toml:1: cluster: want an array of tables ([[cluster]]), not a string") {
		t.Errorf("cluster = \"q\": %v", err)
	}
	// the same connections, said either way
	src := "[[host]]\nname = \"a\"\naddress = \"10.0.0.1\"\nmax_connections = 60\n[[host]]\nname = \"b\"\naddress = \"10.0.0.2\"\n[host.settings]\nmax_connections = 60\n[[cluster]]\nname = \"q\"\nprimary = \"a\"\nreplicas = [\"b\"]\n"
	if _, err := Parse("inv.toml", "/", src); err != nil {
		t.Errorf("60 connections on both: %v", err)
	}
	// IPv6 is fine on PostgreSQL
	src = "[[host]]\nname = \"a\"\naddress = \"fd00::1\"\n[[host]]\nname = \"b\"\naddress = \"fd00::2\"\n[[cluster]]\nname = \"q\"\nprimary = \"a\"\nreplicas = [\"b\"]\n"
	if _, err := Parse("inv.toml", "/", src); err != nil {
		t.Errorf("PostgreSQL over IPv6: %v", err)
	}
}

// TestSwitchedOver: the primary's and the replicas' values rewritten in
// place, comments and layout kept, an array over several lines too.
func TestSwitchedOver(t *testing.T) {
	src := clusterHosts + `
[[cluster]]
name = "quiz"   # the quiz's
primary = "pi4"  # the Pi 4 in the case
replicas = [
  "pi3",   # on the desk
  "pi5",
] # two
[bench]
clients = 8
`
	inv, err := Parse("inv.toml", "/", src)
	if err != nil {
		t.Fatal(err)
	}
	c := inv.Clusters[0]
	out, err := SwitchedOver("inv.toml", src, c, "pi5")
	if err != nil {
		t.Fatal(err)
	}
	want := clusterHosts + `
[[cluster]]
name = "quiz"   # the quiz's
primary = "pi5"  # the Pi 4 in the case
replicas = ["pi4", "pi3"] # two
[bench]
clients = 8
`
	if out != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", out, want)
	}
	// and back, from the rewritten file
	inv, err = Parse("inv.toml", "/", out)
	if err != nil {
		t.Fatal(err)
	}
	back, err := SwitchedOver("inv.toml", out, inv.Clusters[0], "pi4")
	if err != nil || !strings.Contains(back, "primary = \"pi4\"  # the Pi 4 in the case\nreplicas = [\"pi5\", \"pi3\"] # two\n") {
		t.Errorf("back: %v\n%s", err, back)
	}
	if _, err := SwitchedOver("inv.toml", src, c, c.Primary); err == nil || !strings.Contains(err.Error(), c.Primary+" is already the primary: name one of its replicas (pi3, pi5)") {
		t.Errorf("to its primary: %v", err)
	}
	if _, err := SwitchedOver("inv.toml", src, c, "mpi"); err == nil || !strings.Contains(err.Error(), "mpi is not one of its replicas (pi3, pi5)") {
		t.Errorf("to a host not its replica: %v", err)
	}
	// single quotes and one line
	src2 := clusterHosts + "\n[[cluster]]\nname = 'q'\nprimary = 'pi4'\nreplicas = ['pi3']\n"
	inv, _ = Parse("inv.toml", "/", src2)
	if out, err := SwitchedOver("inv.toml", src2, inv.Clusters[0], "pi3"); err != nil || !strings.HasSuffix(out, "primary = \"pi3\"\nreplicas = [\"pi4\"]\n") {
		t.Errorf("one line: %v\n%s", err, out)
	}
}
