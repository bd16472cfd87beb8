package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"pidb/job"
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
			inv, err := job.LoadInventory(path)
			if err != nil {
				return err
			}
			h, err := inv.Named(c.Args().First())
			if err != nil {
				return err
			}
			u, err := job.Credentials(inv, h, c.String("database"))
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(c.App.Writer, u)
			return err
		},
	}
}
