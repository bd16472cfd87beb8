package provision

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"pidb/facts"
	"pidb/internal/fakerun"
)

// TestHBAHostSSL: with TLS the allowed networks get hostssl lines only (a
// login without TLS from there matches no line and is refused); with
// tls = false, host lines (with TLS or without).
func TestHBAHostSSL(t *testing.T) {
	allow := []netip.Prefix{netip.MustParsePrefix("192.168.1.0/24")}
	accounts := []account{{"pidb", "pidb"}}
	got := withHBABlock("local all postgres peer\n", allow, accounts, true, nil)
	if !strings.Contains(got, "\nhostssl \"pidb\"") || strings.Contains(got, "\nhost    ") {
		t.Errorf("with TLS:\n%s", got)
	}
	got = withHBABlock(got, allow, accounts, false, nil)
	if !strings.Contains(got, "\nhost    \"pidb\"          \"pidb\"          192.168.1.0/24") || strings.Contains(got, "hostssl") {
		t.Errorf("tls = false, over the block with TLS:\n%s", got)
	}
	// a cluster's other hosts: replication, over TLS even with tls = false,
	// for the replication account alone, each from its one address
	peers := []netip.Prefix{netip.MustParsePrefix("10.0.0.30/32"), netip.MustParsePrefix("fd00::5/128")}
	got = withHBABlock(got, allow, accounts, false, peers)
	want := "# BEGIN pidb: access from the inventory's allow_from (pidb rewrites this block)\n" +
		"host    \"pidb\"          \"pidb\"          192.168.1.0/24          scram-sha-256\n" +
		"hostssl replication     \"pidb_replication\" 10.0.0.30/32            scram-sha-256\n" +
		"hostssl replication     \"pidb_replication\" fd00::5/128             scram-sha-256\n" +
		"# END pidb\n"
	if got != "local all postgres peer\n"+want {
		t.Errorf("with peers:\n%s\nwant the block\n%s", got, want)
	}
	// peers alone, no allow_from: the block holds replication only
	if got := withHBABlock("local all postgres peer\n", nil, accounts, true, peers[:1]); strings.Contains(got, `"pidb"`) || !strings.Contains(got, "hostssl replication") {
		t.Errorf("peers without allow_from:\n%s", got)
	}
}

// TestAccessTLSCheck: what the access step plans for TLS, from what the
// server says. MariaDB without a certificate of its own: pidb's
// self-signed one is made and named in the drop-in. PostgreSQL with its
// own (ssl on, Debian's snakeoil): kept, the drop-in says nothing of TLS.
// A second run, with pidb's certificate there: the same drop-in, nothing
// made again. tls = false on a host that never had pidb's: nothing.
func TestAccessTLSCheck(t *testing.T) {
	ctx := context.Background()
	allow := []netip.Prefix{netip.MustParsePrefix("10.213.41.0/24")}
	maria := func(r *fakerun.Runner) *Target {
		tg := target("mysql", facts.EngineState{Flavor: "mariadb", Version: "10.11.6", Running: true}, r)
		tg.Host.AllowFrom, tg.Host.TLS, tg.Host.Address = allow, true, "10.213.41.30"
		return tg
	}
	r := (&fakerun.Runner{Files: map[string]string{}}).
		Contains("pidb-server.crt", fakerun.Reply{Stdout: "no\n"}).
		Contains("@@ssl_cert", fakerun.Reply{Stdout: "none\n"})
	ch, err := accessStep{}.Check(ctx, maria(r))
	cmds := strings.Join(ch.Commands, "\n")
	if err != nil || !ch.Needed || !strings.Contains(cmds, "openssl req -x509 -newkey ec") || !strings.Contains(cmds, "subjectAltName=IP:10.213.41.30") ||
		!strings.Contains(cmds, `chown mysql:mysql "$k" "$c"`) || !strings.Contains(cmds, `chmod 0600 "$k"`) ||
		!strings.Contains(cmds, "k=$(mktemp /etc/mysql/.pidb-server.key.XXXXXX)") || strings.Contains(cmds, "runuser") ||
		!strings.Contains(ch.Diff, "+ssl_cert = /etc/mysql/pidb-server.crt") || !strings.Contains(ch.Note, "self-signed") {
		t.Errorf("MariaDB without a certificate: %+v %v", ch, err)
	}
	// made before: named again, not made again
	made := func(san string) *fakerun.Runner {
		return (&fakerun.Runner{Files: map[string]string{}}).Contains("pidb-server.crt", fakerun.Reply{Stdout: "yes\nX509v3 Subject Alternative Name: \n    " + san + "\n"})
	}
	ch, _ = accessStep{}.Check(ctx, maria(made("IP Address:10.213.41.30")))
	if strings.Contains(strings.Join(ch.Commands, "\n"), "openssl req") || !strings.Contains(ch.Diff, "+ssl_key = /etc/mysql/pidb-server.key") {
		t.Errorf("MariaDB with pidb's certificate: %+v", ch)
	}
	// made for another address (the Pi's address changed, or its card
	// moved into another Pi): made again, for this one
	ch, _ = accessStep{}.Check(ctx, maria(made("IP Address:10.213.41.131")))
	if cmds := strings.Join(ch.Commands, "\n"); !ch.Needed || !strings.Contains(cmds, "subjectAltName=IP:10.213.41.30 ") ||
		!strings.Contains(ch.Note, "names IP:10.213.41.131, not this host's address (IP:10.213.41.30)") {
		t.Errorf("MariaDB with pidb's certificate for another address: %+v", ch)
	}
	// tls = false: pidb's certificate stays in use, none is made where there is none
	tg := maria(made("IP Address:10.213.41.30"))
	tg.Host.TLS = false
	if ch, _ = (accessStep{}).Check(ctx, tg); !strings.Contains(ch.Diff, "+ssl_cert = ") {
		t.Errorf("tls = false with pidb's certificate: %+v", ch)
	}
	r = (&fakerun.Runner{Files: map[string]string{}}).
		Contains("pidb-server.crt", fakerun.Reply{Stdout: "no\n"}).
		Contains("@@ssl_cert", fakerun.Reply{Stdout: "none\n"})
	tg = maria(r)
	tg.Host.TLS = false
	if ch, _ = (accessStep{}).Check(ctx, tg); strings.Contains(strings.Join(ch.Commands, "\n"), "openssl") || strings.Contains(ch.Diff, "ssl_cert") {
		t.Errorf("tls = false without a certificate: %+v", ch)
	}
	// Oracle MySQL with the certificate it made at its first start: kept
	// on its own; in a cluster, pidb's (the replicas verify the
	// primary's by its address, which MySQL's names not)
	oracle := func(cluster bool) *Target {
		r := (&fakerun.Runner{Files: map[string]string{}}).
			Contains("pidb-server.crt", fakerun.Reply{Stdout: "no\n"}).
			Contains("@@ssl_cert", fakerun.Reply{Stdout: "own\n"})
		tg := target("mysql", facts.EngineState{Flavor: "mysql", Version: "9.7.4", Running: true}, r)
		if cluster {
			tg = member("pi3", r)
			tg.Host.Engine, tg.Facts.Engine = "mysql", facts.EngineState{Flavor: "mysql", Version: "9.7.4", Running: true}
		}
		tg.Host.AllowFrom, tg.Host.TLS = allow, true
		return tg
	}
	if ch, err := (accessStep{}).Check(ctx, oracle(false)); err != nil || strings.Contains(strings.Join(ch.Commands, "\n"), "openssl req") || strings.Contains(ch.Diff, "ssl_cert") {
		t.Errorf("MySQL on its own, with its certificate: %+v %v", ch, err)
	}
	ch, err = accessStep{}.Check(ctx, oracle(true))
	if cmds := strings.Join(ch.Commands, "\n"); err != nil || !strings.Contains(cmds, "subjectAltName=IP:10.0.0.30") || !strings.Contains(ch.Diff, "+ssl_cert = /etc/mysql/pidb-server.crt") ||
		!strings.Contains(ch.Note, "by its address") {
		t.Errorf("MySQL in a cluster: %+v %v", ch, err)
	}
	// PostgreSQL with its own certificate
	r = (&fakerun.Runner{Files: map[string]string{"/etc/postgresql/15/main/pg_hba.conf": "local all postgres peer\n"}}).
		Contains("pidb-server.crt", fakerun.Reply{Stdout: "no\n"}).
		Contains("SHOW ssl", fakerun.Reply{Stdout: "on\n"})
	tg = target("postgres", facts.EngineState{Flavor: "postgres", Version: "15.8", Running: true}, r)
	tg.Host.AllowFrom, tg.Host.TLS, tg.Host.Address = allow, true, "pi4.local"
	ch, err = accessStep{}.Check(ctx, tg)
	if err != nil || strings.Contains(strings.Join(ch.Commands, "\n"), "openssl") || strings.Contains(ch.Diff, "ssl_cert_file") ||
		!strings.Contains(ch.Diff, "+hostssl") || !strings.Contains(ch.Note, "the server's own certificate") {
		t.Errorf("PostgreSQL with its own certificate: %+v %v", ch, err)
	}
	// PostgreSQL with ssl off: pidb's, by its DNS name, made by postgres in
	// its own folder (nothing for root to chown there)
	r = (&fakerun.Runner{Files: map[string]string{"/etc/postgresql/15/main/pg_hba.conf": ""},
		Owners: map[string]string{"/etc/postgresql/15": "postgres", "/etc/postgresql/15/main": "postgres"}}).
		Contains("pidb-server.crt", fakerun.Reply{Stdout: "no\n"}).
		Contains("SHOW ssl", fakerun.Reply{Stdout: "off\n"})
	tg.Root = r
	ch, _ = accessStep{}.Check(ctx, tg)
	if cmds := strings.Join(ch.Commands, "\n"); !strings.Contains(cmds, "subjectAltName=DNS:pi4.local") || strings.Contains(cmds, "chown") ||
		!strings.HasPrefix(cmds, "cd / && runuser -u postgres -- sh -c ") ||
		!strings.Contains(ch.Diff, "+ssl_cert_file = '/etc/postgresql/15/main/pidb-server.crt'") {
		t.Errorf("PostgreSQL with ssl off: %+v", ch)
	}
}

// TestCertNames: openssl's subjectAltName lines read in makeCertCmd's
// form, IPv6 as Go writes it, so a certificate pidb made compares equal to
// the name it would make now.
func TestCertNames(t *testing.T) {
	for out, want := range map[string]string{
		"X509v3 Subject Alternative Name: \n    IP Address:10.213.41.30\n":                   "IP:10.213.41.30",
		"X509v3 Subject Alternative Name: \n    DNS:pi4.local, IP Address:0:0:0:0:0:0:0:1\n": "DNS:pi4.local,IP:::1",
		"": "",
	} {
		if got := certNames(out); got != want {
			t.Errorf("certNames(%q) = %q, want %q", out, got, want)
		}
	}
	if subjectAltName("fd00::0:1") != "IP:fd00::1" || subjectAltName("pi4.local") != "DNS:pi4.local" {
		t.Errorf("subjectAltName: %q %q", subjectAltName("fd00::0:1"), subjectAltName("pi4.local"))
	}
	// the server presents what the file holds, or an older certificate
	if ok, _ := servesFile("SHA256 Fingerprint=AA:BB\nSHA256 Fingerprint=AA:BB\n"); !ok {
		t.Error("the same fingerprint twice: not served")
	}
	if ok, why := servesFile("SHA256 Fingerprint=AA:BB\nSHA256 Fingerprint=CC:DD\n"); ok || !strings.Contains(why, "other than pidb's file") {
		t.Errorf("two fingerprints: %v %q", ok, why)
	}
}
