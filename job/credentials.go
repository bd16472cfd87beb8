package job

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/internal/atomicfile"
	"pidb/inventory"
	"pidb/progress"
	"pidb/remote"
	"pidb/secrets"
)

// Credentials is a connection URL for one of a host's accounts, with the
// password pidb generated for it: pidb's own (database "") or the owner of
// an application database from [[host.database]], asking for TLS where the
// host's network logins need it. It is a secret: only `pidb credentials`
// prints it, when asked.
func Credentials(inv *inventory.Inventory, h inventory.Host, database string) (string, error) {
	return CredentialsVerified(inv, h, database, Verify{})
}

// Verify is how a credentials URL has its client check the server's
// certificate: against the certificate in File (an absolute path, as
// WriteCA wrote it), and with Full the certificate's name against the
// host's address too. The zero value checks nothing: TLS is asked for
// where the host's network logins need it, and any certificate will do.
type Verify struct {
	File string
	Full bool
}

// CredentialsVerified is Credentials' URL with v's check of the server:
// PostgreSQL's sslmode=verify-full (verify-ca without Full) and
// sslrootcert=File, MySQL's ssl-mode=VERIFY_IDENTITY (VERIFY_CA) and
// ssl-ca=File, as libpq and MySQL's URI-like strings spell them.
func CredentialsVerified(inv *inventory.Inventory, h inventory.Host, database string, v Verify) (string, error) {
	sec, err := accountSecrets(inv.Path, h)
	if err != nil {
		return "", err
	}
	user, pw, db := engine.BenchUser, sec.Pidb, engine.BenchDatabase
	if database != "" {
		found := false
		for _, x := range h.Databases {
			found = found || x.Name == database
		}
		if !found {
			return "", usagef("host %s has no database %q in the inventory", h.Name, database)
		}
		s := sec.Databases[database]
		user, pw, db = s.Owner, s.Password, database
	}
	if pw == "" {
		return "", fmt.Errorf("%s: no password for %s yet: run pidb provision first", h.Name, user)
	}
	// the URL's scheme is the family's name: postgres://, mysql://
	u := url.URL{Scheme: string(h.Engine), User: url.UserPassword(user, pw), Host: net.JoinHostPort(h.Address, strconv.Itoa(engine.Port(h.Engine))), Path: "/" + db}
	u.RawQuery = tlsQuery(h.Engine, h.NetworkTLS(), v)
	return u.String(), nil
}

// tlsQuery is the URL's query for TLS on an engine family: with v's file,
// a check of the server against it; else, where network logins need TLS
// (the server refuses one from the network without it), TLS without a
// check; else nothing.
func tlsQuery(family dbms.Family, networkTLS bool, v Verify) string {
	if v.File == "" {
		if !networkTLS {
			return ""
		}
		return map[dbms.Family]string{dbms.PostgresFamily: "sslmode=require", dbms.MySQLFamily: "ssl-mode=REQUIRED"}[family]
	}
	if family == dbms.PostgresFamily {
		return "sslmode=" + verifyMode(family, v.Full) + "&sslrootcert=" + queryEscape(v.File)
	}
	return "ssl-mode=" + verifyMode(family, v.Full) + "&ssl-ca=" + queryEscape(v.File)
}

// verifyMode is how an engine family's clients name a check of the
// server's certificate against a CA file: with the server's name (full),
// or without it.
func verifyMode(family dbms.Family, full bool) string {
	switch {
	case family == dbms.PostgresFamily && full:
		return "verify-full"
	case family == dbms.PostgresFamily:
		return "verify-ca"
	case full:
		return "VERIFY_IDENTITY"
	}
	return "VERIFY_CA"
}

// queryEscape escapes a value of a URL's query for libpq and MySQL's
// URI-like strings, which both decode %XX and nothing else: everything
// but letters, digits and -._~ is escaped, / too (MySQL's clients want a
// path in a value escaped), and a space is %20, not +.
func queryEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// CA is what a client is to trust to check a host's database server, as
// read from the host over SSH (whose host key pidb checks).
type CA struct {
	// PEM is the certificates to trust: the server's own when it signed
	// it itself (pidb's, Debian's snakeoil), else the chain from the CA
	// file the server names that issued it (MySQL's own ca.pem), and no
	// other certificate of that file.
	PEM []byte
	// Full is whether the server's certificate names the address the
	// inventory reaches the host at, so that a client can check the name
	// too (pidb's names it; Debian's snakeoil names the hostname).
	Full bool
	// Names are the names the server's certificate holds (its DNS names
	// and IP addresses, else its common name): what the host said, to be
	// sanitized before it is printed.
	Names []string
}

// Note says why a URL checks less than the server's name, for a person,
// or "" when it checks it (Full).
func (ca CA) Note(h inventory.Host) string {
	if ca.Full {
		return ""
	}
	names := "no name"
	if len(ca.Names) > 0 {
		names = strings.Join(ca.Names, ", ")
	}
	return fmt.Sprintf("the server's certificate names %s, not %s (the inventory's address): the URL checks that the server has a certificate the CA file vouches for (%s), not its name (%s); to check the name too, reach the host at a name the certificate holds",
		names, h.Address, verifyMode(h.Engine, false), verifyMode(h.Engine, true))
}

// ServerCA reads, over SSH as root, the certificate a host's database
// server presents to TLS logins, and what a client is to trust to check it.
func ServerCA(ctx context.Context, h inventory.Host, c Conn, r progress.Reporter) (CA, error) {
	r.Step("gathering facts")
	f, err := facts.Collect(ctx, c.User, h)
	if err != nil {
		return CA{}, err
	}
	if !f.Engine.Running {
		return CA{}, fmt.Errorf("%s: no database server is running here: run pidb provision first", h.Name)
	}
	r.Step("reading the server's certificate")
	ca, err := serverCA(ctx, c.Root, f, h.Address)
	if err != nil {
		return CA{}, fmt.Errorf("%s: %w", h.Name, err)
	}
	return ca, nil
}

// serverCA is ServerCA once the facts are known: the server's certificate
// (serverCert), itself when it is self-signed, else the certificates of the
// CA file the server names, when one of them issued it.
func serverCA(ctx context.Context, root remote.Runner, f facts.Facts, address string) (CA, error) {
	der, err := serverCert(ctx, root, f)
	if err != nil {
		return CA{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return CA{}, fmt.Errorf("the server's certificate: %w", err)
	}
	ca := CA{Full: leaf.VerifyHostname(address) == nil, Names: certNames(leaf)}
	if bytes.Equal(leaf.RawIssuer, leaf.RawSubject) && leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature) == nil {
		ca.PEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		return ca, nil
	}
	issuer := leaf.Issuer.String()
	cas, file, err := serverCAFile(ctx, root, f)
	if err != nil {
		return CA{}, fmt.Errorf("the server's certificate is issued by %q: %w", issuer, err)
	}
	// the file's self-signed certificates are roots, the others
	// intermediates; a file of no root trusts what it holds
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	hasRoot := false
	for _, c := range cas {
		if bytes.Equal(c.RawIssuer, c.RawSubject) {
			roots.AddCert(c)
			hasRoot = true
		} else {
			inter.AddCert(c)
		}
	}
	if !hasRoot {
		roots, inter = inter, x509.NewCertPool()
	}
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return CA{}, fmt.Errorf("the server's certificate, issued by %q, does not check against its CA file %s: %w", issuer, file, err)
	}
	// only the chain that signs it: a public bundle in the CA file would
	// make the URL trust every CA in it
	for _, c := range chains[0][1:] {
		ca.PEM = append(ca.PEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return ca, nil
}

// certNames are the names a certificate holds: its DNS names and IP
// addresses, or its common name where it has neither.
func certNames(c *x509.Certificate) []string {
	names := append([]string(nil), c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 && c.Subject.CommonName != "" {
		names = append(names, c.Subject.CommonName)
	}
	return names
}

// serverCAFile reads the CA certificates of the file the server's
// configuration names (ssl_ca_file, @@ssl_ca; a relative name is in the
// data directory) and returns them with the file's path.
func serverCAFile(ctx context.Context, root remote.Runner, f facts.Facts) ([]*x509.Certificate, string, error) {
	e, err := engine.Of(f)
	if err != nil {
		return nil, "", err
	}
	p, data, err := serverTLSFile(ctx, root, e, "ssl_ca_file", "ssl_ca", "CA file")
	if err != nil {
		return nil, "", err
	}
	if p == "" {
		return nil, "", errors.New("the server names no CA file, and pidb cannot tell which CA to trust: give the clients the CA that issued it yourself")
	}
	var cas []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, "", fmt.Errorf("the server's CA file %s: %w", p, err)
		}
		cas = append(cas, c)
	}
	if len(cas) == 0 {
		return nil, "", fmt.Errorf("the server's CA file %s holds no PEM certificate", p)
	}
	return cas, p, nil
}

// WriteCA writes the certificates a client is to trust to file, mode
// 0644 (they are no secret), atomically: a temporary file beside it,
// renamed over it. A file there already is replaced.
func WriteCA(file string, ca CA) error {
	if len(ca.PEM) == 0 {
		return errors.New("no certificate to write")
	}
	if err := atomicfile.Write(file, 0o644, func(f *os.File) error { _, err := f.Write(ca.PEM); return err }); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

// accountSecrets are the passwords of the host's accounts: its own, or
// its cluster's, which every host of it shares (secrets.Accounts).
func accountSecrets(invPath string, h inventory.Host) (secrets.Host, error) {
	if c := h.Cluster; c != nil {
		return secrets.Accounts(invPath, h.Name, c.Name, c.Primary)
	}
	return secrets.Accounts(invPath, h.Name, "", "")
}
