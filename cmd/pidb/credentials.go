package main

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	"github.com/urfave/cli/v2"

	"pidb/engine"
	"pidb/inventory"
	"pidb/secrets"
)

func credentialsCommand() *cli.Command {
	return &cli.Command{
		Name:      "credentials",
		Usage:     "print a connection URL with the password pidb generated (only when asked)",
		UsageText: "pidb credentials -i FILE [--database D] HOST",
		Flags: []cli.Flag{
			inventoryFlag(),
			&cli.StringFlag{Name: "database", Usage: "an application database from [[host.database]] (default: pidb's own account)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("credentials needs one host name (flags go before it)")
			}
			path := c.String("inventory")
			if path == "" {
				return usagef("no inventory: give -i FILE (or set PIDB_INVENTORY)")
			}
			inv, err := inventory.Load(path)
			if err != nil {
				return err
			}
			hosts, err := inv.Select(c.Args().First())
			if err != nil {
				return err
			}
			h := hosts[0]
			sec, err := secrets.Load(inv.Path, h.Name)
			if err != nil {
				return err
			}
			user, pw, db := "pidb", sec.Pidb, "pidb"
			if d := c.String("database"); d != "" {
				found := false
				for _, x := range h.Databases {
					found = found || x.Name == d
				}
				if !found {
					return usagef("host %s has no database %q in the inventory", h.Name, d)
				}
				s := sec.Databases[d]
				user, pw, db = s.Owner, s.Password, d
			}
			if pw == "" {
				return fmt.Errorf("%s: no password for %s yet: run pidb provision first", h.Name, user)
			}
			scheme, port := "postgres", engine.Port(h.Engine)
			if h.Engine != "postgres" {
				scheme = "mysql"
			}
			u := url.URL{Scheme: scheme, User: url.UserPassword(user, pw), Host: net.JoinHostPort(h.Address, strconv.Itoa(port)), Path: "/" + db}
			_, err = fmt.Fprintln(c.App.Writer, u.String())
			return err
		},
	}
}
