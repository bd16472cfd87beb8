package job

import (
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"pidb/inventory"
	"pidb/secrets"
)

func TestCredentials(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
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
		tls.Engine, tls.TLS, tls.AllowFrom = c.engine, true, []netip.Prefix{netip.MustParsePrefix("10.213.41.0/24")}
		if u, err := Credentials(inv, tls, ""); err != nil || u != c.want {
			t.Errorf("%s with TLS: %s %v, want %s", c.engine, u, err, c.want)
		}
		tls.TLS = false
		if u, _ := Credentials(inv, tls, ""); strings.Contains(u, "?") {
			t.Errorf("%s with tls = false: %s", c.engine, u)
		}
	}
	var ue UsageError
	if _, err := Credentials(inv, h, "nope"); !errors.As(err, &ue) || !strings.Contains(err.Error(), `host pi3 has no database "nope"`) {
		t.Errorf("unknown database: %v", err)
	}
}
