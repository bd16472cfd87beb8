package provision

import (
	"context"
	"fmt"
	"net/netip"
	"path"
	"strings"

	"pidb/dbms"
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
	if e.Flavor == dbms.Postgres {
		dir, owner = "/etc/postgresql/"+e.Major+"/main/", engine.PostgresUser
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
	// a link is not pidb's certificate: it is made anew, in the link's place
	is := func(p string) string { return "[ -s " + remote.Quote(p) + " ] && [ ! -h " + remote.Quote(p) + " ]" }
	out, err := t.run(ctx, "if "+is(cert)+" && "+is(key)+"; then echo yes; else echo no; fi")
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
	if e.Flavor != dbms.Postgres {
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
	if e.Flavor == dbms.Postgres {
		return "ssl = on\nssl_cert_file = '" + cert + "'\nssl_key_file = '" + key + "'\n"
	}
	return "ssl_cert = " + cert + "\nssl_key = " + key + "\n"
}

// mustMake reports whether pidb has to make its certificate.
func (st tlsState) mustMake(need bool) bool { return need && !st.own && !st.pidbs }

// makeCertCmd makes pidb's self-signed certificate on the host: an ECDSA
// P-256 key (a Pi Zero makes it at once, where an RSA key takes seconds),
// valid for ten years, named for the address the inventory reaches the
// host at. It is run as user, the one who controls the folder
// (remote.FolderUser: postgres in /etc/postgresql/15/main, root in
// /etc/mysql), and writes under names mktemp makes (never a name that was
// there), sets the modes and, as root, gives both to the server's account,
// then renames them into place (which replaces a link, never follows one).
func makeCertCmd(e engine.Engine, address, user string) string {
	cert, key, owner := tlsFiles(e)
	san := "DNS:" + address
	if ip, err := netip.ParseAddr(address); err == nil {
		san = "IP:" + ip.String()
	}
	dir := path.Dir(cert)
	chown := ""
	if user == "root" && owner != "root" {
		chown = " && " + remote.Command("chown", owner+":"+owner) + ` "$k" "$c"`
	}
	return "umask 077 && k=$(mktemp " + remote.Quote(dir+"/.pidb-server.key.XXXXXX") + ") && c=$(mktemp " + remote.Quote(dir+"/.pidb-server.crt.XXXXXX") + ") || exit 1; " +
		remote.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
			"-nodes", "-days", "3650", "-subj", "/CN="+address, "-addext", "subjectAltName="+san) +
		` -keyout "$k" -out "$c" 2>/dev/null` + chown +
		` && chmod 0600 "$k" && chmod 0644 "$c" && mv -f -- "$c" ` + remote.Quote(cert) + ` && mv -f -- "$k" ` + remote.Quote(key) +
		`; rc=$?; rm -f -- "$k" "$c"; exit $rc`
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
