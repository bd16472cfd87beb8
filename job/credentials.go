package job

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	"pidb/engine"
	"pidb/inventory"
	"pidb/secrets"
)

// Credentials is a connection URL for one of a host's accounts, with the
// password pidb generated for it: pidb's own (database "") or the owner of
// an application database from [[host.database]], asking for TLS where the
// host's network logins need it. It is a secret: only `pidb credentials`
// prints it, when asked.
func Credentials(inv *inventory.Inventory, h inventory.Host, database string) (string, error) {
	sec, err := secrets.Load(inv.Path, h.Name)
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
	scheme := map[string]string{"postgres": "postgres", "mysql": "mysql"}[h.Engine]
	u := url.URL{Scheme: scheme, User: url.UserPassword(user, pw), Host: net.JoinHostPort(h.Address, strconv.Itoa(engine.Port(h.Engine))), Path: "/" + db}
	if h.NetworkTLS() {
		// the server refuses a login from the network without TLS: the
		// URL asks for it as libpq and MySQL's clients spell it
		u.RawQuery = map[string]string{"postgres": "sslmode=require", "mysql": "ssl-mode=REQUIRED"}[h.Engine]
	}
	return u.String(), nil
}
