package main

import (
	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/internal/cmdutil"
	"pidb/tables"
)

// inventoryCommand is `pidb inventory` with its subcommand check; run
// does check's work (nil: runInventoryCheck), a seam for the tests of its
// options.
func inventoryCommand(run func(*cli.Context, action.Fleet) error) *cli.Command {
	if run == nil {
		run = runInventoryCheck
	}
	return &cli.Command{
		Name:  "inventory",
		Usage: "work with the inventory file",
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "validate the inventory and print the resolved hosts",
			UsageText: "pidb inventory check -i FILE [--limit NAMES] [--json]",
			Flags:     []cli.Flag{inventoryFlag(), limitFlag(), cmdutil.JSONFlag()},
			Action: func(c *cli.Context) error {
				if err := cmdutil.NoArguments(c); err != nil {
					return err
				}
				return run(c, action.Fleet{Inventory: c.String("inventory"), Limit: c.String("limit"), Warnings: c.App.ErrWriter})
			},
		}},
	}
}

// runInventoryCheck prints the resolved hosts.
func runInventoryCheck(c *cli.Context, f action.Fleet) error {
	hosts, err := action.InventoryCheck(f)
	if err != nil {
		return err
	}
	return cmdutil.PrintResults(c, tables.HostsJSON(hosts), tables.Hosts(hosts), nil)
}
