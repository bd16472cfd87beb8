package job

import (
	"context"
	"encoding/pem"
	"fmt"
	"path"
	"strings"

	"pidb/config"
	"pidb/dbms"
	"pidb/engine"
	"pidb/facts"
	"pidb/inventory"
	"pidb/remote"
)

// clearLogin refuses a direct run without TLS to Oracle MySQL, before
// any connection: MySQL 8 logs pidb in by caching_sha2_password, which
// asks for the password itself whenever the server has no login of the
// account cached (after every restart), and go-sql-driver/mysql, without
// TLS, sends it encrypted with a public key that whoever answers hands
// out. mywire breaks such a login off (mywire.AuthError) on every flavour;
// on MySQL that would stop any run whose login the server has not cached
// (the first after each restart), so the run is refused here, every time,
// before it starts, saying what to do. MariaDB's logins (mysql_native_password,
// ed25519) send a proof of the password and never ask for it; through the
// SSH forward, the key comes from the host, and with TLS the password goes
// to the pinned certificate's server.
func clearLogin(h inventory.Host, f facts.Facts, p Plan) error {
	if f.Engine.Flavor != dbms.MySQL || p.Bench.Via != config.ViaDirect || p.Bench.TLS == config.TLSOn {
		return nil
	}
	return fmt.Errorf("%s: MySQL %s logs in by caching_sha2_password, which without TLS has pidb send the password encrypted with a public key that whoever answers at %s hands out, unchecked: "+
		"run with TLS (tls = true in the inventory, the default, or --tls on) or through SSH (--via ssh)", h.Name, f.Engine.Version, h.Address)
}

// serverCert reads, over SSH as root, the certificate the database server
// presents to TLS logins, from the file its configuration names (a
// relative name is in the data directory, as MySQL's own are): DER, for
// the bench clients to pin. Through SSH, whose host key pidb checks, it is
// the host's own; a server that answers TLS with another is not it.
func serverCert(ctx context.Context, root remote.Runner, f facts.Facts) ([]byte, error) {
	e, err := engine.Of(f)
	if err != nil {
		return nil, err
	}
	p, data, err := serverTLSFile(ctx, root, e, "ssl_cert_file", "ssl_cert", "certificate")
	if err != nil {
		return nil, err
	}
	if p == "" {
		return nil, fmt.Errorf("%s names no certificate (TLS is off on the server): run pidb provision, or bench with --tls off", e.Flavor)
	}
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil, fmt.Errorf("the server's certificate %s holds no PEM certificate", p)
		}
		if b.Type == "CERTIFICATE" {
			return b.Bytes, nil
		}
	}
}

// serverTLSFile reads the file that a server's TLS setting names
// (PostgreSQL's pg, MySQL's @@my), from its data directory where the path
// is relative; "" and no data where the server names none. A file that
// cannot be read is named in the error as the server's what.
func serverTLSFile(ctx context.Context, root remote.Runner, e engine.Engine, pg, my, what string) (string, []byte, error) {
	file, dir := "SHOW "+pg, "SHOW data_directory"
	if e.Flavor != dbms.Postgres {
		file, dir = "SELECT @@"+my, "SELECT @@datadir"
	}
	read := func(sql string) (string, error) {
		r, err := root.Run(ctx, e.Client(sql))
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(r.Stdout)), nil
	}
	p, err := read(file)
	if err != nil || p == "" || p == "NULL" {
		return "", nil, err
	}
	if !path.IsAbs(p) {
		d, err := read(dir)
		if err != nil {
			return "", nil, err
		}
		p = path.Join(d, p)
	}
	data, err := root.ReadFile(ctx, p)
	if err != nil {
		return "", nil, fmt.Errorf("read the server's %s %s: %w", what, p, err)
	}
	return p, data, nil
}
