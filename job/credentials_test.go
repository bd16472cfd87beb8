package job

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pidb/dbms"
	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/inventory"
	"pidb/secrets"
	"pidb/usage"
)

func TestCredentials(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("SUDO_UID", "")
	dir := t.TempDir()
	path := filepath.Join(dir, "inv.toml")
	inv, err := inventory.Parse(path, dir, "[[host]]\nname = \"pi3\"\naddress = \"10.213.41.30\"\nengine = \"mysql\"\n[[host.database]]\nname = \"shop\"\nowner = \"app\"\n")
	if err != nil {
		t.Fatal(err)
	}
	h := inv.Hosts[0]
	if _, err := Credentials(inv, h, ""); err == nil || !strings.Contains(err.Error(), "pi3: no password for pidb yet: run pidb provision first") {
		t.Errorf("before provision: %v", err)
	}
	if err := secrets.Save(path, "pi3", secrets.Host{Pidb: "p@ss word", Databases: map[string]secrets.Database{"shop": {Owner: "app", Password: "s3cret"}}}); err != nil {
		t.Fatal(err)
	}
	if u, err := Credentials(inv, h, ""); err != nil || u != "mysql://pidb:p%40ss%20word@10.213.41.30:3306/pidb" {
		t.Errorf("pidb's: %s %v", u, err)
	}
	if u, err := Credentials(inv, h, "shop"); err != nil || u != "mysql://app:s3cret@10.213.41.30:3306/shop" {
		t.Errorf("shop's: %s %v", u, err)
	}
	// network logins with TLS: the URL asks for it, in each engine's words
	for _, c := range []struct{ engine, want string }{
		{"mysql", "mysql://pidb:p%40ss%20word@10.213.41.30:3306/pidb?ssl-mode=REQUIRED"},
		{"postgres", "postgres://pidb:p%40ss%20word@10.213.41.30:5432/pidb?sslmode=require"},
	} {
		tls := h
		tls.Engine, tls.TLS, tls.AllowFrom = dbms.Family(c.engine), true, []netip.Prefix{netip.MustParsePrefix("10.213.41.0/24")}
		if u, err := Credentials(inv, tls, ""); err != nil || u != c.want {
			t.Errorf("%s with TLS: %s %v, want %s", c.engine, u, err, c.want)
		}
		tls.TLS = false
		if u, _ := Credentials(inv, tls, ""); strings.Contains(u, "?") {
			t.Errorf("%s with tls = false: %s", c.engine, u)
		}
	}
	if _, err := Credentials(inv, h, "nope"); !usage.Is(err) || !strings.Contains(err.Error(), `host pi3 has no database "nope"`) {
		t.Errorf("unknown database: %v", err)
	}
}

// TestCredentialsVerified: with the server's certificate written to a
// file, the URL checks the server against it: the name too (verify-full,
// VERIFY_IDENTITY) where the certificate names the host's address, else
// the certificate alone (verify-ca, VERIFY_CA); the file's path is escaped
// as libpq and MySQL's clients decode it.
func TestCredentialsVerified(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("SUDO_UID", "")
	dir := t.TempDir()
	path := filepath.Join(dir, "inv.toml")
	inv, err := inventory.Parse(path, dir, "[[host]]\nname = \"pi4\"\naddress = \"10.213.41.30\"\nallow_from = [\"10.213.41.0/24\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := secrets.Save(path, "pi4", secrets.Host{Pidb: "p@ss word"}); err != nil {
		t.Fatal(err)
	}
	const file = "/home/me/pi 4&ca.pem"
	const escaped = "%2Fhome%2Fme%2Fpi%204%26ca.pem"
	for _, c := range []struct {
		engine string
		tls    bool
		full   bool
		want   string
	}{
		{"postgres", true, true, "postgres://pidb:p%40ss%20word@10.213.41.30:5432/pidb?sslmode=verify-full&sslrootcert=" + escaped},
		{"postgres", true, false, "postgres://pidb:p%40ss%20word@10.213.41.30:5432/pidb?sslmode=verify-ca&sslrootcert=" + escaped},
		{"mysql", true, true, "mysql://pidb:p%40ss%20word@10.213.41.30:3306/pidb?ssl-mode=VERIFY_IDENTITY&ssl-ca=" + escaped},
		{"mysql", true, false, "mysql://pidb:p%40ss%20word@10.213.41.30:3306/pidb?ssl-mode=VERIFY_CA&ssl-ca=" + escaped},
		// tls = false: the server still offers pidb's certificate, and the file asks for the check
		{"postgres", false, true, "postgres://pidb:p%40ss%20word@10.213.41.30:5432/pidb?sslmode=verify-full&sslrootcert=" + escaped},
	} {
		h := inv.Hosts[0]
		h.Engine, h.TLS = dbms.Family(c.engine), c.tls
		if u, err := CredentialsVerified(inv, h, "", Verify{File: file, Full: c.full}); err != nil || u != c.want {
			t.Errorf("%s full=%v: %s %v, want %s", c.engine, c.full, u, err, c.want)
		}
	}
	if u, _ := CredentialsVerified(inv, inv.Hosts[0], "", Verify{}); !strings.HasSuffix(u, "?sslmode=require") {
		t.Errorf("no file: %s, want sslmode=require as before", u)
	}
}

// certificate makes a certificate for the tests: self-signed when parent
// is nil, else issued by parent (with its key).
func certificate(t *testing.T, tmpl x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.BasicConstraintsValid = true
	if parent == nil {
		parent, parentKey = &tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestServerCA: what a client is to trust, read from the host: pidb's
// self-signed certificate, which names the inventory's address (verify-full
// works); Debian's snakeoil, self-signed for the hostname (verify-ca, and a
// note that says why); MySQL's own, issued by the CA of its ca.pem (that
// CA, from the data directory). A certificate whose CA the server does not
// name, or that its CA file did not issue, is an error.
func TestServerCA(t *testing.T) {
	const addr = "10.213.41.30"
	pg := facts.Facts{Engine: facts.EngineState{Flavor: "postgres", Version: "15.8", Running: true}}
	my := facts.Facts{Engine: facts.EngineState{Flavor: "mysql", Version: "8.0.39", Running: true}}
	_, _, pidbs := certificate(t, x509.Certificate{Subject: pkix.Name{CommonName: addr}, IPAddresses: []net.IP{net.ParseIP(addr)}, IsCA: true}, nil, nil)
	_, _, snakeoil := certificate(t, x509.Certificate{Subject: pkix.Name{CommonName: "pi4"}, DNSNames: []string{"pi4"}}, nil, nil)
	myCA, myCAKey, myCAPEM := certificate(t, x509.Certificate{Subject: pkix.Name{CommonName: "MySQL_Server_8.0.39_Auto_Generated_CA_Certificate"}, IsCA: true, KeyUsage: x509.KeyUsageCertSign}, nil, nil)
	_, _, myLeaf := certificate(t, x509.Certificate{Subject: pkix.Name{CommonName: "MySQL_Server_8.0.39_Auto_Generated_Server_Certificate"}}, myCA, myCAKey)
	_, _, otherCA := certificate(t, x509.Certificate{Subject: pkix.Name{CommonName: "another CA"}, IsCA: true, KeyUsage: x509.KeyUsageCertSign}, nil, nil)

	postgres := func(cert string) *fakerun.Runner {
		r := &fakerun.Runner{Strict: true, Files: map[string]string{"/etc/postgresql/15/main/server.crt": cert}}
		return r.Contains("SHOW ssl_cert_file", fakerun.Reply{Stdout: "/etc/postgresql/15/main/server.crt\n"})
	}
	mysql := func(caFile string, files map[string]string) *fakerun.Runner {
		r := &fakerun.Runner{Strict: true, Files: files}
		return r.Contains("@@ssl_cert", fakerun.Reply{Stdout: "server-cert.pem\n"}).
			Contains("@@ssl_ca", fakerun.Reply{Stdout: caFile + "\n"}).
			Contains("@@datadir", fakerun.Reply{Stdout: "/var/lib/mysql/\n"})
	}
	ctx := context.Background()
	h := inventory.Host{Name: "pi4", Address: addr, Engine: "postgres"}

	ca, err := serverCA(ctx, postgres(pidbs), pg, addr)
	if err != nil || !ca.Full || string(ca.PEM) != pidbs || ca.Note(h) != "" {
		t.Errorf("pidb's certificate: %+v %v, want itself, checked with the address", ca, err)
	}
	ca, err = serverCA(ctx, postgres(snakeoil), pg, addr)
	if err != nil || ca.Full || string(ca.PEM) != snakeoil || strings.Join(ca.Names, ",") != "pi4" {
		t.Errorf("snakeoil: %+v %v, want itself, not checked with the address", ca, err)
	}
	if n := ca.Note(h); !strings.Contains(n, "names pi4, not 10.213.41.30") || !strings.Contains(n, "(verify-ca), not its name (verify-full)") {
		t.Errorf("snakeoil's note: %q", n)
	}

	files := map[string]string{"/var/lib/mysql/server-cert.pem": myLeaf, "/var/lib/mysql/ca.pem": myCAPEM}
	ca, err = serverCA(ctx, mysql("ca.pem", files), my, addr)
	if err != nil || ca.Full || string(ca.PEM) != myCAPEM {
		t.Errorf("MySQL's own: %+v %v, want its CA", ca, err)
	}
	if n := ca.Note(inventory.Host{Address: addr, Engine: "mysql"}); !strings.Contains(n, "names MySQL_Server_8.0.39_Auto_Generated_Server_Certificate") || !strings.Contains(n, "(VERIFY_CA)") {
		t.Errorf("MySQL's note: %q", n)
	}
	if _, err = serverCA(ctx, mysql("NULL", files), my, addr); err == nil || !strings.Contains(err.Error(), "the server names no CA file") {
		t.Errorf("no CA file: %v", err)
	}
	// a CA file that is a bundle (another CA beside, an intermediate
	// between): only the chain that signs the server's certificate
	inter, interKey, interPEM := certificate(t, x509.Certificate{Subject: pkix.Name{CommonName: "an intermediate"}, IsCA: true, KeyUsage: x509.KeyUsageCertSign}, myCA, myCAKey)
	_, _, interLeaf := certificate(t, x509.Certificate{Subject: pkix.Name{CommonName: "pi4"}}, inter, interKey)
	for _, leaf := range []struct{ pem, want string }{{myLeaf, myCAPEM}, {interLeaf, interPEM + myCAPEM}} {
		bundle := map[string]string{"/var/lib/mysql/server-cert.pem": leaf.pem, "/var/lib/mysql/ca.pem": otherCA + interPEM + myCAPEM}
		if ca, err = serverCA(ctx, mysql("ca.pem", bundle), my, addr); err != nil || string(ca.PEM) != leaf.want {
			t.Errorf("a bundle: %v\n%s\nwant\n%s", err, ca.PEM, leaf.want)
		}
	}
	files["/var/lib/mysql/ca.pem"] = otherCA
	if _, err = serverCA(ctx, mysql("ca.pem", files), my, addr); err == nil || !strings.Contains(err.Error(), "does not check against its CA file /var/lib/mysql/ca.pem") {
		t.Errorf("another CA: %v", err)
	}
}

// TestWriteCA: the file is the certificates, mode 0644, in place of what
// was there, with nothing left beside it.
func TestWriteCA(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pi4-ca.pem")
	if err := os.WriteFile(file, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, cert := certificate(t, x509.Certificate{Subject: pkix.Name{CommonName: "pi4"}}, nil, nil)
	if err := WriteCA(file, CA{PEM: []byte(cert)}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	st, _ := os.Stat(file)
	if err != nil || string(data) != cert || st.Mode().Perm() != 0o644 {
		t.Errorf("%s: %q %v %v, want the certificate, 0644", file, data, st.Mode().Perm(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left beside it: %v", entries)
	}
	if err := WriteCA(filepath.Join(dir, "no", "such", "ca.pem"), CA{PEM: []byte(cert)}); err == nil {
		t.Error("a file in a folder that is not there: no error")
	}
	if err := WriteCA(filepath.Join(dir, "empty.pem"), CA{}); err == nil {
		t.Error("no certificate: no error")
	}
}
