package main

import (
	"github.com/urfave/cli/v2"

	"pidb/tables"
)

func inventoryCommand() *cli.Command {
	return &cli.Command{
		Name:  "inventory",
		Usage: "work with the inventory file",
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "validate the inventory and print the resolved hosts",
			UsageText: "pidb inventory check -i FILE [--limit NAMES] [--json]",
			Flags:     []cli.Flag{inventoryFlag(), limitFlag(), jsonFlag()},
			Action: func(c *cli.Context) error {
				_, hosts, err := loadHosts(c)
				if err != nil {
					return err
				}
				return printResults(c, tables.HostsJSON(hosts), tables.Hosts(hosts), nil)
			},
		}},
	}
}
