package provision

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"pidb/engine"
	"pidb/remote"
)

// TLS for logins from the network (the inventory's allow_from, tls = true,
// the default). The server keeps a certificate of its own where it has one:
// Debian's PostgreSQL is set up with the host's "snakeoil" certificate, and
// MySQL 8 makes one at its first start. Where it has none (MariaDB, or a
// PostgreSQL whose ssl is off), pidb makes a self-signed one on the host,
// once, and points the server at it from the access drop-in. Which logins
// must use TLS is the accounts' part: hostssl lines in pg_hba.conf, REQUIRE
// SSL on the MySQL and MariaDB accounts at the allowed networks. Logins on
// the host itself and through pidb's SSH forward (which arrive at localhost
// and are encrypted by SSH) are not asked for TLS.

// needsTLS reports whether the host's network logins must use TLS.
func needsTLS(t *Target) bool { return t.Host.NetworkTLS() }

// tlsFiles are where pidb keeps the certificate it makes, beside the
// server's configuration, owned by the server's account (the key 0600, as
// both servers require of a key they read).
func tlsFiles(e engine.Engine) (cert, key, owner string) {
	dir, owner := "/etc/mysql/", "mysql"
	if e.Flavor == "postgres" {
		dir, owner = "/etc/postgresql/"+e.Major+"/main/", "postgres"
	}
	return dir + "pidb-server.crt", dir + "pidb-server.key", owner
}

// tlsState is what the host has for TLS.
type tlsState struct {
	pidbs bool // pidb's certificate is there (made by an earlier run)
	own   bool // the server has TLS on with a certificate of its own
}

// tlsOf reads the host's TLS state.
func tlsOf(ctx context.Context, t *Target, e engine.Engine) (tlsState, error) {
	cert, key, _ := tlsFiles(e)
	out, err := t.run(ctx, "if [ -s "+remote.Quote(cert)+" ] && [ -s "+remote.Quote(key)+" ]; then echo yes; else echo no; fi")
	if err != nil {
		return tlsState{}, err
	}
	if strings.TrimSpace(out) == "yes" {
		return tlsState{pidbs: true}, nil
	}
	on, err := serverTLSOn(ctx, t, e)
	return tlsState{own: on}, err
}

// serverTLSOn asks the running server whether it accepts TLS.
func serverTLSOn(ctx context.Context, t *Target, e engine.Engine) (bool, error) {
	sql, want := "SHOW ssl", "on"
	if e.Flavor != "postgres" {
		sql, want = "SELECT @@have_ssl", "YES"
	}
	out, err := t.run(ctx, e.Client(sql))
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) == want, nil
}

// tlsConf is what the access drop-in says about TLS: where pidb's
// certificate is, when the server uses it (once pidb made one, it stays in
// use, also after tls = false, which stops requiring TLS but does not take
// it away); nothing when the server has its own, or needs none.
func tlsConf(e engine.Engine, st tlsState, need bool) string {
	if st.own || (!st.pidbs && !need) {
		return ""
	}
	cert, key, _ := tlsFiles(e)
	if e.Flavor == "postgres" {
		return "ssl = on\nssl_cert_file = '" + cert + "'\nssl_key_file = '" + key + "'\n"
	}
	return "ssl_cert = " + cert + "\nssl_key = " + key + "\n"
}

// mustMake reports whether pidb has to make its certificate.
func (st tlsState) mustMake(need bool) bool { return need && !st.own && !st.pidbs }

// makeCertCmd makes pidb's self-signed certificate on the host: an ECDSA
// P-256 key (a Pi Zero makes it at once, where an RSA key takes seconds),
// valid for ten years, named for the address the inventory reaches the
// host at. It is written under temporary names and moved into place when
// complete, with its owner and modes set first.
func makeCertCmd(e engine.Engine, address string) string {
	cert, key, owner := tlsFiles(e)
	san := "DNS:" + address
	if ip, err := netip.ParseAddr(address); err == nil {
		san = "IP:" + ip.String()
	}
	return "umask 077 && " + remote.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
		"-nodes", "-days", "3650", "-subj", "/CN="+address, "-addext", "subjectAltName="+san,
		"-keyout", key+".tmp", "-out", cert+".tmp") + " 2>/dev/null" +
		" && " + remote.Command("chown", owner+":"+owner, key+".tmp", cert+".tmp") +
		" && chmod 0600 " + remote.Quote(key+".tmp") + " && chmod 0644 " + remote.Quote(cert+".tmp") +
		" && " + remote.Command("mv", cert+".tmp", cert) + " && " + remote.Command("mv", key+".tmp", key)
}

// tlsNote says what the access step does for TLS, for the plan.
func tlsNote(e engine.Engine, st tlsState, need bool) string {
	switch {
	case !need:
		return ""
	case st.own:
		return "logins from the network use TLS, with the server's own certificate"
	case st.pidbs:
		return "logins from the network use TLS, with pidb's certificate"
	}
	cert, _, _ := tlsFiles(e)
	return fmt.Sprintf("logins from the network use TLS: %s has no certificate, so pidb makes a self-signed one (%s)", e.Flavor, cert)
}
