package provision

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/remote"
)

// TestPresetsForOtherBoardsOnRealMariaDB renders every preset for the 512 MB
// and the 4 GB board and applies it to a real MariaDB (on a clone of pi3,
// the lab's MySQL-family host, provisioned as the lab's inventory says):
// the server must start and report every value as written. The lab has no
// 512 MB or 4 GB MariaDB host, so the facts say so instead; at the end the
// clone's own configuration must go back on as well.
func TestPresetsForOtherBoardsOnRealMariaDB(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "pi3")
	h := inv.Hosts[0]
	auth, err := remote.NewAuth([]string{h.IdentityFile}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := remote.Dial(ctx, remote.Config{Name: h.Name, Address: h.Address, Port: h.Port, User: h.User,
		IdentityFile: h.IdentityFile, Auth: auth, KnownHosts: h.KnownHosts})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	newTarget := func(preset string) *Target {
		f, err := facts.Collect(ctx, c, h)
		if err != nil {
			t.Fatal(err)
		}
		return &Target{Host: h, Inventory: inv.Path, Root: c.AsRoot(), Facts: f, Preset: preset, Step: func(string) {}}
	}
	// the clone provisioned as the lab inventory says (little to do: its
	// snapshot was, though under another inventory's passwords)
	if _, err := Run(ctx, newTarget("balanced"), Steps(), false); err != nil {
		t.Fatalf("provision %s: %v", h.Name, err)
	}
	defer func() {
		if _, err := Run(ctx, newTarget("balanced"), TuneSteps(), false); err != nil {
			t.Errorf("putting %s's own configuration back: %v", h.Name, err)
		}
	}()
	for _, ram := range []uint64{512 << 20, 4 << 30} {
		for _, preset := range []string{"seed", "balanced", "fast"} {
			tg := newTarget(preset)
			if tg.Facts.Engine.Flavor != "mariadb" {
				t.Fatalf("%s runs %q", h.Name, tg.Facts.Engine.Flavor)
			}
			// the other board's RAM, and what its kernel would have of it
			// (unknown: the tuner takes 85%), not this board's MemTotal
			tg.Facts.RAMBytes, tg.Facts.MemBytes = ram, 0
			if err := (configureStep{}).Apply(ctx, tg); err != nil {
				t.Errorf("%s for %d MB: %v", preset, ram>>20, err)
			}
		}
	}
}

// TestRootFollowsNoLinkOfTheServersUser: postgres owns /etc/postgresql/15/main
// on Debian, so a PostgreSQL superuser (COPY ... TO PROGRAM) can plant links
// there. On a clone of pi4 postgres plants one at every name pidb uses in
// its folders (the backups and marks of the drop-ins and pg_hba.conf, the
// certificate, its key and their old temp names), each pointing at a file
// of root's; then a provision that changes the drop-in (another preset),
// pg_hba.conf (another network) and makes pidb's certificate anew (the
// server's own TLS off). Every file of root's is as it was and still
// root's, and pidb's files are files of their own, postgres's. On a clone
// of pi3, MariaDB's folders are root's alone: mysql can plant nothing where
// pidb writes. Then the pi4 clone goes back to the lab's own configuration,
// which must take pidb's certificate off again.
func TestRootFollowsNoLinkOfTheServersUser(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "pi4", "pi3")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// the whole provision once, to have the server; then the steps that
	// write in its folders
	var files []Step
	for _, s := range Steps() {
		if s.Name() == "configure" || s.Name() == "access" {
			files = append(files, s)
		}
	}
	provision := func(t *testing.T, h inventory.Host, preset string, steps []Step) {
		t.Helper()
		provisionOn(ctx, t, inv, h, preset, steps)
	}

	t.Run("postgres", func(t *testing.T) {
		pi4 := inv.Hosts[0] // the clone of pi4
		root := labtest.RootHost(t, inv, pi4.Name)
		provision(t, pi4, "balanced", Steps())
		const dir = labtest.PGEtc
		var names []string
		for _, f := range []string{"conf.d/90-pidb.conf", "conf.d/91-pidb-access.conf", "pg_hba.conf"} {
			names = append(names, f+".pidb-previous", f+".pidb-none")
		}
		names = append(names, "pidb-server.crt", "pidb-server.key", "pidb-server.crt.tmp", "pidb-server.key.tmp")
		// the files of root's the links point at; the server's own TLS off
		// (and pidb's certificate gone), so that pidb makes one
		var setup strings.Builder
		setup.WriteString("set -e; rm -rf /etc/pidb-link-targets; install -d -m 0755 /etc/pidb-link-targets; " +
			"rm -f " + dir + "/pidb-server.crt " + dir + "/pidb-server.key; " +
			"echo 'ssl = off' > " + dir + "/conf.d/00-pidb-test-ssl-off.conf; chown postgres: " + dir + "/conf.d/00-pidb-test-ssl-off.conf; ")
		for i, n := range names {
			target := fmt.Sprintf("/etc/pidb-link-targets/%d", i)
			fmt.Fprintf(&setup, "echo 'root'\\''s own %d' > %s; chmod 0644 %s; rm -f %s/%s; runuser -u postgres -- ln -s %s %s/%s; ", i, target, target, dir, n, target, dir, n)
		}
		setup.WriteString("systemctl restart " + labtest.PGUnit + "; until pg_isready -q; do sleep 0.2; done")
		labtest.MustSSH(t, root, setup.String())
		t.Cleanup(func() {
			labtest.MustSSH(t, root, "rm -rf /etc/pidb-link-targets "+dir+"/conf.d/00-pidb-test-ssl-off.conf "+dir+"/pidb-server.crt "+dir+"/pidb-server.key "+
				"&& find "+dir+" -type l -delete")
			provision(t, pi4, "balanced", files)
			if got := labtest.MustSSH(t, root, `su postgres -c "psql -XAtc 'SHOW ssl_cert_file'"`); strings.Contains(got, "pidb-server") {
				t.Errorf("%s back as the lab has it: the server still uses pidb's certificate: %q", pi4.Name, got)
			}
		})

		h := pi4
		h.AllowFrom = append(append([]netip.Prefix(nil), h.AllowFrom...), netip.MustParsePrefix("10.213.99.0/24"))
		h.TLS = true
		provision(t, h, "fast", files)

		var want, check strings.Builder
		for i := range names {
			fmt.Fprintf(&want, "root 644 root's own %d\n", i)
			fmt.Fprintf(&check, "printf '%%s %%s ' $(stat -c '%%U %%a' /etc/pidb-link-targets/%d); cat /etc/pidb-link-targets/%d; ", i, i)
		}
		if got := labtest.MustSSH(t, root, check.String()); strings.TrimSpace(got) != strings.TrimSpace(want.String()) {
			t.Errorf("the files of root's the links pointed at:\n%s\nwant:\n%s", got, want.String())
		}
		// pidb's own files: files of their own (a link at the name replaced), postgres's
		got := labtest.MustSSH(t, root, "cd "+dir+" && stat -c '%n %F %U %a' pidb-server.crt pidb-server.key conf.d/90-pidb.conf conf.d/91-pidb-access.conf pg_hba.conf conf.d/90-pidb.conf.pidb-previous")
		for _, line := range []string{"pidb-server.crt regular file postgres 644", "pidb-server.key regular file postgres 600",
			"conf.d/90-pidb.conf regular file postgres 644", "conf.d/91-pidb-access.conf regular file postgres 644",
			"pg_hba.conf regular file postgres 640", "conf.d/90-pidb.conf.pidb-previous regular file postgres 644"} {
			if !strings.Contains(got, line+"\n") && !strings.HasSuffix(got, line) {
				t.Errorf("pidb's files after the provision: want %q in\n%s", line, got)
			}
		}
		if got := labtest.MustSSH(t, root, `su postgres -c "psql -XAtc 'SHOW ssl_cert_file'"`); strings.TrimSpace(got) != dir+"/pidb-server.crt" {
			t.Errorf("the server's certificate after the provision: %q, want pidb's", got)
		}
	})

	t.Run("mariadb", func(t *testing.T) {
		pi3 := inv.Hosts[1] // the clone of pi3
		root := labtest.RootHost(t, inv, pi3.Name)
		if _, _, err := labtest.SSH(root, "test -d /etc/mysql/mariadb.conf.d"); err != nil {
			provision(t, pi3, "balanced", Steps()) // MariaDB installed
		}
		for _, dir := range []string{"/etc/mysql", "/etc/mysql/mariadb.conf.d"} {
			if out, _, err := labtest.SSH(root, "runuser -u mysql -- ln -s /etc/passwd "+dir+"/90-pidb.cnf.pidb-previous"); err == nil {
				labtest.MustSSH(t, root, "rm -f "+dir+"/90-pidb.cnf.pidb-previous")
				t.Errorf("mysql planted a link in %s, where pidb writes as root: %s", dir, out)
			}
		}
	})
}

// TestUFWRulesFollowAllowFrom: on a Pi whose ufw is active (a clone of
// zero, with SSH allowed), provisioning opens the database port to each
// allow_from network in a rule of pidb's, takes none of the rules already
// there for one (a rule for SSH from the same network), and when
// allow_from shrinks deletes its own rule and no other. The port stays
// reachable from the lab through the firewall.
func TestUFWRulesFollowAllowFrom(t *testing.T) {
	t.Parallel()
	inv := labtest.Clone(t, "zero")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	zero := inv.Hosts[0] // the clone of zero
	root := labtest.RootHost(t, inv, zero.Name)
	subnet := zero.AllowFrom[0].String()
	labtest.MustSSH(t, root, "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ufw >/dev/null && ufw allow 22/tcp >/dev/null && "+
		"ufw allow from "+subnet+" to any port 22 proto tcp >/dev/null && ufw --force enable >/dev/null && ufw status | grep -q 'Status: active'")
	t.Cleanup(func() { labtest.MustSSH(t, root, "ufw --force reset >/dev/null && ufw disable >/dev/null") })
	provision := func(h inventory.Host, steps []Step) {
		t.Helper()
		provisionOn(ctx, t, inv, h, "balanced", steps)
	}
	rules := func() []string {
		var rs []string
		for _, l := range strings.Split(labtest.MustSSH(t, root, "ufw show added"), "\n") {
			if strings.HasPrefix(l, "ufw ") {
				rs = append(rs, strings.TrimSpace(l))
			}
		}
		return rs
	}
	ssh := []string{"ufw allow 22/tcp", "ufw allow from " + subnet + " to any port 22 proto tcp"}
	ours := func(nets ...string) []string {
		rs := append([]string(nil), ssh...)
		for _, n := range nets {
			rs = append(rs, "ufw allow from "+n+" to any port 5432 proto tcp comment 'pidb'")
		}
		return rs
	}
	provision(zero, Steps())
	if got, want := rules(), ours(subnet); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the provision:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wider := zero
	wider.AllowFrom = append(append([]netip.Prefix(nil), zero.AllowFrom...), netip.MustParsePrefix("10.213.98.0/24"))
	access := []Step{accessStep{}}
	provision(wider, access)
	if got, want := rules(), ours(subnet, "10.213.98.0/24"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("with a second network:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	provision(zero, access)
	if got, want := rules(), ours(subnet); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("allow_from back to one network:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(zero.Address, "5432"), 5*time.Second)
	if err != nil {
		t.Fatalf("the database port through the firewall: %v", err)
	}
	conn.Close()
}

// provisionOn runs steps on the lab host h with preset, from facts read
// anew, and fails the test if they fail. inv is the test's own inventory
// (from its lease or clone), which has h: pidb keeps the passwords it makes
// under that inventory's path, apart from other tests'.
func provisionOn(ctx context.Context, t *testing.T, inv *inventory.Inventory, h inventory.Host, preset string, steps []Step) {
	t.Helper()
	auth, err := remote.NewAuth([]string{h.IdentityFile}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	c, err := remote.Dial(ctx, remote.Config{Name: h.Name, Address: h.Address, Port: h.Port, User: h.User,
		IdentityFile: h.IdentityFile, Auth: auth, KnownHosts: h.KnownHosts})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f, err := facts.Collect(ctx, c, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, &Target{Host: h, Inventory: inv.Path, Root: c.AsRoot(), Facts: f, Preset: preset, Step: func(string) {}}, steps, false); err != nil {
		t.Fatalf("provision %s (%s): %v", h.Name, preset, err)
	}
}

// TestMariaDBAccountsAtSeveralNetworks: with TLS and three allow_from
// networks, pi3's MariaDB gets pidb's account at each network, each
// requiring TLS once (a REQUIRE SSL repeated per network was a syntax
// error), and at localhost without; back to the lab's one network, the
// other two accounts are dropped. pi3 is leased alone: its accounts change.
func TestMariaDBAccountsAtSeveralNetworks(t *testing.T) {
	t.Parallel()
	inv := labtest.Lease(t, "pi3")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pi3, root := labtest.Host(t, inv, "pi3"), labtest.RootHost(t, inv, "pi3")
	if _, _, err := labtest.SSH(root, "command -v mariadb"); err != nil {
		provisionOn(ctx, t, inv, pi3, "balanced", Steps())
	}
	steps := []Step{accessStep{}, accountsStep{}}
	accounts := func() string {
		return strings.Join(strings.Fields(labtest.MustSSH(t, root, `mariadb -NBe "SELECT CONCAT(host, '=', ssl_type) FROM mysql.user WHERE user = 'pidb' ORDER BY host"`)), " ")
	}
	if pi3.AllowFrom[0].String() != "10.213.41.0/24" {
		t.Fatalf("the lab's network is %s, not the one this test knows", pi3.AllowFrom[0])
	}
	h := pi3
	h.TLS = true
	h.AllowFrom = append(append([]netip.Prefix(nil), pi3.AllowFrom...), netip.MustParsePrefix("10.213.97.0/24"), netip.MustParsePrefix("10.213.96.0/25"))
	provisionOn(ctx, t, inv, h, "balanced", steps)
	if got, want := accounts(), "10.213.41.0/255.255.255.0=ANY 10.213.96.0/255.255.255.128=ANY 10.213.97.0/255.255.255.0=ANY 127.0.0.1= localhost="; got != want {
		t.Errorf("pidb's accounts at three networks: %q, want %q", got, want)
	}
	provisionOn(ctx, t, inv, pi3, "balanced", steps)
	if got, want := accounts(), "10.213.41.0/255.255.255.0=ANY 127.0.0.1= localhost="; got != want {
		t.Errorf("pidb's accounts back at the lab's network: %q, want %q", got, want)
	}

	// a replica's seed loads a primary's dump as root's client: a \! line
	// in it runs nothing (the client with its commands on ran it as root)
	maria, _ := engine.New(dbms.MariaDB, "10.11.6")
	mark := "/tmp/pidb-seed-ran"
	labtest.MustSSH(t, root, "rm -f "+mark)
	_, _, err := labtest.SSH(root, "printf '%s\\n' "+remote.Command(`\! touch `+mark, "SELECT 1;")+" | sh -c "+remote.Quote(seedLoad(maria)))
	if out, _, _ := labtest.SSH(root, "test -e "+mark+" && echo ran"); strings.TrimSpace(out) == "ran" {
		t.Errorf("the seed's load ran a client command of the dump as root (load: %v)", err)
	}
}
