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

// needsTLS reports whether the host's network logins must use TLS: those
// from allow_from (unless tls = false), and a cluster's replication.
func needsTLS(t *Target) bool { return t.Host.NetworkTLS() || len(t.peers()) > 0 }

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
	// names is the name pidb's certificate gives the host where that is not
	// the address the inventory reaches it at ("" where it is): the Pi's
	// address changed, or its card was moved into another Pi
	names string
	// mysqls: MySQL's own certificate is there, which a cluster's
	// member does not use (it names no address)
	mysqls bool
}

// subjectAltName is the name makeCertCmd gives a host reached at address,
// as the certificate's subjectAltName.
func subjectAltName(address string) string {
	if ip, err := netip.ParseAddr(address); err == nil {
		return "IP:" + ip.String()
	}
	return "DNS:" + address
}

// certNames reads the subjectAltName of openssl's -ext subjectAltName
// output ("IP Address:10.213.41.30", "DNS:pi4.local") in makeCertCmd's
// form ("IP:10.213.41.30"), names joined by commas; "" when it has none.
func certNames(out string) string {
	_, list, ok := strings.Cut(out, "Subject Alternative Name:")
	if !ok {
		return ""
	}
	var names []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if a, ok := strings.CutPrefix(n, "IP Address:"); ok {
			if ip, err := netip.ParseAddr(a); err == nil {
				a = ip.String() // openssl writes IPv6 in full
			}
			n = "IP:" + a
		}
		if n != "" {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// tlsOf reads the host's TLS state.
func tlsOf(ctx context.Context, t *Target, e engine.Engine) (tlsState, error) {
	cert, key, _ := tlsFiles(e)
	// a link is not pidb's certificate: it is made anew, in the link's place
	is := func(p string) string { return "[ -s " + remote.Quote(p) + " ] && [ ! -h " + remote.Quote(p) + " ]" }
	out, err := t.run(ctx, "if "+is(cert)+" && "+is(key)+"; then echo yes; openssl x509 -noout -ext subjectAltName -in "+remote.Quote(cert)+" 2>/dev/null || true; else echo no; fi")
	if err != nil {
		return tlsState{}, err
	}
	if first, rest, _ := strings.Cut(out, "\n"); strings.TrimSpace(first) == "yes" {
		st := tlsState{pidbs: true}
		if names, want := certNames(rest), subjectAltName(t.Host.Address); names != want {
			st.names = names
			if names == "" {
				st.names = "nothing"
			}
		}
		return st, nil
	}
	on, err := serverTLSOn(ctx, t, e)
	if on && e.Flavor == dbms.MySQL && len(t.peers()) > 0 {
		// a cluster's replicas verify the primary's certificate by the
		// address they reach it at, and the one MySQL made at its first
		// start names none (and is signed by a CA of its own): pidb's
		return tlsState{mysqls: true}, err
	}
	return tlsState{own: on}, err
}

// servedCertCmd prints the SHA-256 fingerprints of pidb's certificate
// file and of the certificate the server presents on the host's loopback
// (openssl s_client with the engine's STARTTLS), a line each: they differ
// while the server runs an older certificate than the file.
func servedCertCmd(e engine.Engine) string {
	cert, _, _ := tlsFiles(e)
	proto := "mysql"
	if e.Flavor == dbms.Postgres {
		proto = "postgres"
	}
	fp := "openssl x509 -noout -fingerprint -sha256"
	return fp + " -in " + remote.Quote(cert) + " 2>/dev/null; echo; openssl s_client -connect 127.0.0.1:" + fmt.Sprint(e.Port()) +
		" -starttls " + proto + " </dev/null 2>/dev/null | " + fp + " 2>/dev/null; true"
}

// servesFile reads servedCertCmd's output: false, with why, where the
// server presents a certificate other than the file (both read).
func servesFile(out string) (bool, string) {
	file, served, _ := strings.Cut(out, "\n")
	file, served = strings.TrimSpace(file), strings.TrimSpace(served)
	if file == "" || served == "" || file == served {
		return true, ""
	}
	return false, "the server presents a certificate other than pidb's file (made again since it started)"
}

// serverTLSOn asks the running server whether it accepts TLS with a
// certificate of its own: one its configuration names, which a client
// can pin. MariaDB 11.4 and later accept TLS with none named
// (@@have_ssl YES, @@ssl_cert NULL): they make a throw-away certificate
// at every start, which no client can check, so pidb makes its own
// there, as where TLS is off. MySQL 8.4 has no @@have_ssl; its ssl_cert
// names the certificate it made at its first start, and an empty
// tls_version says TLS is off. PostgreSQL does not
// start with ssl on and no certificate.
func serverTLSOn(ctx context.Context, t *Target, e engine.Engine) (bool, error) {
	sql, want := serverTLSQuery(e.Flavor)
	out, err := t.run(ctx, e.Client(sql))
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) == want, nil
}

// serverTLSQuery asks a server of flavor whether it accepts TLS with a
// certificate its configuration names, and is the answer it gives when
// it does.
func serverTLSQuery(flavor dbms.Flavor) (sql, yes string) {
	switch flavor {
	case dbms.Postgres:
		return "SHOW ssl", "on"
	case dbms.MySQL:
		return "SELECT IF(COALESCE(@@ssl_cert, '') <> '' AND @@tls_version <> '', 'own', 'none')", "own"
	default:
		return "SELECT IF(@@have_ssl = 'YES' AND COALESCE(@@ssl_cert, '') <> '', 'own', 'none')", "own"
	}
}

// tlsConf is what the access drop-in says about TLS: where pidb's
// certificate is, when the server uses it (once pidb made one, it stays in
// use, also after tls = false, which stops requiring TLS but does not take
// it away); nothing when the server has its own, or needs none.
func tlsConf(e engine.Engine, st tlsState, need bool) string {
	if !st.inUse(need) {
		return ""
	}
	cert, key, _ := tlsFiles(e)
	if e.Flavor == dbms.Postgres {
		return "ssl = on\nssl_cert_file = '" + cert + "'\nssl_key_file = '" + key + "'\n"
	}
	return "ssl_cert = " + cert + "\nssl_key = " + key + "\n"
}

// mustMake reports whether pidb has to make its certificate: there is
// none, or pidb's names another address.
func (st tlsState) mustMake(need bool) bool { return need && !st.own && (!st.pidbs || st.names != "") }

// inUse reports whether the server is to run pidb's certificate.
func (st tlsState) inUse(need bool) bool { return !st.own && (st.pidbs || need) }

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
	san := subjectAltName(address)
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
func tlsNote(e engine.Engine, st tlsState, need bool, address string) string {
	switch {
	case !need:
		return ""
	case st.own:
		return "logins from the network use TLS, with the server's own certificate"
	case st.pidbs && st.names != "":
		return fmt.Sprintf("logins from the network use TLS: pidb's certificate names %s, not this host's address (%s), so pidb makes it again", st.names, subjectAltName(address))
	case st.pidbs:
		return "logins from the network use TLS, with pidb's certificate"
	}
	cert, _, _ := tlsFiles(e)
	if st.mysqls {
		return fmt.Sprintf("logins from the network use TLS: the cluster's replicas verify the primary's certificate by its address, which the certificate MySQL made names not, so pidb makes a self-signed one (%s)", cert)
	}
	return fmt.Sprintf("logins from the network use TLS: %s names no certificate of its own, so pidb makes a self-signed one (%s)", e.Flavor, cert)
}
