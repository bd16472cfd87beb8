package job

import (
	"context"
	"encoding/pem"
	"fmt"
	"path"
	"strings"

	"pidb/engine"
	"pidb/facts"
	"pidb/remote"
)

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
	file, dir := "SHOW ssl_cert_file", "SHOW data_directory"
	if e.Flavor != "postgres" {
		file, dir = "SELECT @@ssl_cert", "SELECT @@datadir"
	}
	read := func(sql string) (string, error) {
		r, err := root.Run(ctx, e.Client(sql))
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(r.Stdout)), nil
	}
	p, err := read(file)
	if err != nil {
		return nil, err
	}
	if p == "" || p == "NULL" {
		return nil, fmt.Errorf("%s names no certificate (TLS is off on the server): run pidb provision, or bench with --tls off", e.Flavor)
	}
	if !path.IsAbs(p) {
		d, err := read(dir)
		if err != nil {
			return nil, err
		}
		p = path.Join(d, p)
	}
	data, err := root.ReadFile(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("read the server's certificate %s: %w", p, err)
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
