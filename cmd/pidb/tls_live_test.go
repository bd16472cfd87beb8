package main

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/results"
)

// TestTLSOnTheLab: logins from the network use TLS by default, and the
// servers say so themselves. The URLs of `pidb credentials` ask for it and
// log in with it (pg_stat_ssl, MariaDB's Ssl_version), the same logins
// without it are refused (pg_hba has hostssl lines only; the MariaDB
// accounts at the network REQUIRE SSL, at localhost and 127.0.0.1 not), MariaDB gets
// pidb's own certificate (it has none), and `pidb bench` logs in with TLS
// (MariaDB counts the TLS logins), pinned to the certificate read over
// SSH, and is refused with --tls off. Then tls = false: TLS no longer
// required but still offered; then back as the lab has it. On a Pi 4 and
// a Pi 3 of its own, clones of provisioned ones: the Pi 3's carries the
// certificate pidb made for its original's address, which the provision
// makes again for the clone's (the --ca URLs check it), and MariaDB runs
// the new one.
func TestTLSOnTheLab(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4", "pi3")
	root := func(name string) inventory.Host { return labtest.RootHost(t, inv, name) }
	code, res, errOut := provisionLab(t, "-i", inv.Path, "--limit", "pi4,pi3")
	if code != 0 {
		t.Fatalf("provision: exit %d %+v\n%s", code, res, errOut)
	}
	if notes := strings.Join(res["pi3"].Notes, "\n"); !strings.Contains(notes, "pidb's certificate names IP:10.213.41.30, not this host's address (IP:"+labtest.Host(t, inv, "pi3").Address+")") {
		t.Errorf("pi3: the clone's certificate, made for the Pi 3 it was cloned from, was not made again; notes:\n%s", notes)
	}
	out := t.TempDir()
	pg, my := credentials(t, inv.Path, "pi4", ""), credentials(t, inv.Path, "pi3", "")
	pgPlain, myPlain := strings.TrimSuffix(pg, "?sslmode=require"), strings.TrimSuffix(my, "?ssl-mode=REQUIRED")
	sslAccepts := func() int64 {
		f := strings.Fields(labtest.MustSSH(t, root("pi3"), `mariadb -NBe "SHOW GLOBAL STATUS LIKE 'Ssl_accepts'"`))
		n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			t.Fatalf("Ssl_accepts: %v", f)
		}
		return n
	}

	t.Run("logins from the network need TLS", func(t *testing.T) {
		if pg == pgPlain || my == myPlain {
			t.Fatalf("the URLs do not ask for TLS: %s %s", redact(pg), redact(my))
		}
		if got := pgQuery(t, pg, "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()"); got != "true" {
			t.Errorf("pi4: the login with the URL is not over TLS by pg_stat_ssl: %q", got)
		}
		if _, err := pgTry(pgPlain); err == nil || !strings.Contains(err.Error(), "no encryption") {
			t.Errorf("pi4: a login without TLS: %v; want pg_hba's refusal", err)
		}
		if got := myQuery(t, my, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_VERSION'"); !strings.HasPrefix(got, "TLSv1.") {
			t.Errorf("pi3: the login with the URL is not over TLS by Ssl_version: %q", got)
		}
		if _, err := myTry(myPlain); err == nil || !strings.Contains(err.Error(), "1045") {
			t.Errorf("pi3: a login without TLS: %v; want access denied", err)
		}
		if got := labtest.MustSSH(t, root("pi3"), `mariadb -NBe "SELECT CONCAT(host, '=', ssl_type) FROM mysql.user WHERE user = 'pidb' ORDER BY host"`); strings.Join(strings.Fields(got), " ") != "10.213.41.0/255.255.255.0=ANY 127.0.0.1= localhost=" {
			t.Errorf("pi3: pidb's accounts and what they require: %q", got)
		}
		if got := labtest.MustSSH(t, root("pi3"), "stat -c '%U %a' /etc/mysql/pidb-server.key /etc/mysql/pidb-server.crt"); strings.Join(strings.Fields(got), " ") != "mysql 600 mysql 644" {
			t.Errorf("pi3: pidb's certificate and key: %q", got)
		}
		if got := labtest.MustSSH(t, root("pi4"), "grep -c '^hostssl' "+labtest.PGEtc+"/pg_hba.conf; grep -c '^host ' "+labtest.PGEtc+"/pg_hba.conf || true"); strings.Fields(got)[0] == "0" {
			t.Errorf("pi4: no hostssl line in pg_hba.conf: %q", got)
		}
	})

	t.Run("credentials --ca: URLs that check the server", func(t *testing.T) {
		dir := t.TempDir()
		urls := map[string]string{}
		// pi4 runs Debian's snakeoil certificate, which names the host's
		// name, not its address: verify-ca; pi3 pidb's, which names the
		// address: the full check
		for host, want := range map[string]string{"pi4": "sslmode=verify-ca&sslrootcert=", "pi3": "ssl-mode=VERIFY_IDENTITY&ssl-ca="} {
			ca := filepath.Join(dir, host+".pem")
			code, out, errOut := runPidb(t, "credentials", "-i", inv.Path, "--ca", ca, host)
			if code != 0 {
				t.Fatalf("credentials --ca %s: exit %d\n%s", host, code, errOut)
			}
			urls[host] = strings.TrimSpace(out)
			if !strings.Contains(urls[host], want) {
				t.Errorf("%s: %s, want %q", host, redact(urls[host]), want)
			}
			if fi, err := os.Stat(ca); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: the CA file: %v, %v", host, fi, err)
			}
		}
		if got := pgQuery(t, urls["pi4"], "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()"); got != "true" {
			t.Errorf("pi4: the --ca login is not over TLS: %q", got)
		}
		if err := myCATry(urls["pi3"], ""); err != nil {
			t.Errorf("pi3: the --ca login, the certificate checked against the file and the address: %v", err)
		}
		// the check is real: pi3 against pi4's certificate is refused
		if err := myCATry(urls["pi3"], filepath.Join(dir, "pi4.pem")); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("pi3 checked against pi4's certificate: %v; want a certificate error", err)
		}
	})

	t.Run("bench logs in with TLS", func(t *testing.T) {
		before := sslAccepts()
		b := benchOne(t, "bench", "-i", inv.Path, "--limit", "pi3", "--workload", "oltp-read-only", "--tables", "1", "--table-size", "1000",
			"--clients", "2", "--duration", "2s", "--warmup", "0s", "--via", "direct", "--out", out)
		if n := sslAccepts() - before; !b.TLS || n < 2 {
			t.Errorf("pi3: tls %v, %d TLS logins counted by the server; want true and one per client at least", b.TLS, n)
		}
		if run := readRun(t, b.RunDir); !run.Workload.TLS {
			t.Errorf("pi3: the saved run does not say TLS")
		}
		b = benchOne(t, "bench", "-i", inv.Path, "--limit", "pi4", "--workload", "tpcb", "--scale", "1", "--clients", "2", "--duration", "2s", "--warmup", "0s", "--via", "direct", "--out", out)
		if !b.TLS || b.Transactions == 0 {
			t.Errorf("pi4: tls %v, %d transactions", b.TLS, b.Transactions)
		}
		if _, err := benchResult(t, "bench", "-i", inv.Path, "--limit", "pi4", "--workload", "tpcb", "--scale", "1", "--clients", "1", "--duration", "1s", "--warmup", "0s", "--via", "direct", "--tls", "off", "--out", out); err == nil || !strings.Contains(err.Error(), "no encryption") {
			t.Errorf("pi4 with --tls off: %v; want pg_hba's refusal", err)
		}
	})

	t.Run("tls = false: offered, not required", func(t *testing.T) {
		src, _ := os.ReadFile(inv.Path)
		p := filepath.Join(t.TempDir(), "notls.toml")
		os.WriteFile(p, []byte(strings.Replace(string(src), "[defaults]\n", "[defaults]\ntls = false\n", 1)), 0o644)
		if code, res, errOut := provisionLab(t, "-i", p, "--limit", "pi4,pi3"); code != 0 || !contains(res["pi4"].Changed, "access") || !contains(res["pi3"].Changed, "accounts") {
			t.Fatalf("tls = false: exit %d %+v\n%s", code, res, errOut)
		}
		if got := labtest.MustSSH(t, root("pi3"), `mariadb -NBe "SELECT ssl_type FROM mysql.user WHERE user = 'pidb' AND host <> 'localhost'"`); strings.TrimSpace(got) != "" {
			t.Errorf("pi3: the network account still requires %q", got)
		}
		for _, host := range []string{"pi4", "pi3"} {
			u := credentials(t, p, host, "")
			if strings.Contains(u, "?") {
				t.Errorf("%s: the URL asks for TLS with tls = false: %s", host, redact(u))
			}
			try := map[string]func(string) (string, error){"pi4": pgTry, "pi3": myTry}[host]
			if _, err := try(u); err != nil {
				t.Errorf("%s: a login without TLS, tls = false: %v", host, err)
			}
		}
		b := benchOne(t, "bench", "-i", p, "--limit", "pi3", "--workload", "oltp-read-only", "--tables", "1", "--table-size", "1000", "--clients", "1", "--duration", "1s", "--warmup", "0s", "--via", "direct", "--out", out)
		if b.TLS {
			t.Errorf("pi3: bench with TLS by default after tls = false")
		}
		before := sslAccepts()
		b = benchOne(t, "bench", "-i", p, "--limit", "pi3", "--workload", "oltp-read-only", "--tables", "1", "--table-size", "1000", "--clients", "1", "--duration", "1s", "--warmup", "0s", "--via", "direct", "--tls", "on", "--out", out)
		if !b.TLS || sslAccepts() == before {
			t.Errorf("pi3: --tls on after tls = false: tls %v, no TLS login counted; pidb's certificate should stay in use", b.TLS)
		}
	})

	// back as the lab inventory has it: required again
	if code, _, errOut := provisionLab(t, "-i", inv.Path, "--limit", "pi4,pi3"); code != 0 {
		t.Fatalf("provision again: exit %d\n%s", code, errOut)
	}
	if _, err := myTry(myPlain); err == nil {
		t.Errorf("pi3: a login without TLS after tls = true again")
	}
}

// readRun reads a saved run.
func readRun(t *testing.T, dir string) results.Run {
	t.Helper()
	l, err := results.Load(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// myCATry logs in with a mysql:// URL of `credentials --ca`: TLS, the
// server's certificate checked against the ssl-ca file (or ca, when given)
// and the URL's address, as ssl-mode=VERIFY_IDENTITY asks; against the
// file alone where the URL says VERIFY_CA (a certificate that does not
// name the address: MySQL's own, made at its first start).
func myCATry(u, ca string) error {
	p, err := url.Parse(u)
	if err != nil {
		return err
	}
	if ca == "" {
		ca = p.Query().Get("ssl-ca")
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return os.ErrInvalid
	}
	pw, _ := p.User.Password()
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName, c.Timeout = p.User.Username(), pw, "tcp", p.Host, strings.TrimPrefix(p.Path, "/"), 5*time.Second
	c.TLS = &tls.Config{RootCAs: pool, ServerName: p.Hostname(), MinVersion: tls.VersionTLS12}
	if p.Query().Get("ssl-mode") == "VERIFY_CA" {
		c.TLS.InsecureSkipVerify = true // the chain is checked below, without the name
		c.TLS.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("the server sent no certificate")
			}
			leaf, err := x509.ParseCertificate(raw[0])
			if err != nil {
				return err
			}
			inter := x509.NewCertPool()
			for _, r := range raw[1:] {
				if ic, err := x509.ParseCertificate(r); err == nil {
					inter.AddCert(ic)
				}
			}
			_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter})
			return err
		}
	}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	return db.Ping()
}
