package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"pidb/fleet"
	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
	"pidb/remote"
)

func credentialsCommand() *cli.Command {
	return &cli.Command{
		Name:      "credentials",
		Usage:     "print a connection URL with the password pidb generated (only when asked)",
		UsageText: "pidb credentials -i FILE [--database D] [--ca FILE] HOST",
		Flags: append([]cli.Flag{
			inventoryFlag(),
			&cli.StringFlag{Name: "database", Usage: "an application database from [[host.database]] (default: pidb's own account)"},
			&cli.StringFlag{Name: "ca", Usage: "write the server's certificate, read over SSH, to `FILE` (0644) and print a URL that checks the server against it " +
				"(sslmode=verify-full, ssl-mode=VERIFY_IDENTITY; verify-ca, VERIFY_CA, with a note, where the certificate does not name the host's address)"},
		}, credentialsSSHFlags()...),
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
			// the password first: no connection for a host that has none yet
			u, err := job.Credentials(inv, h, c.String("database"))
			if err != nil {
				return err
			}
			if c.String("ca") != "" {
				if u, err = verifiedCredentials(c, inv, h); err != nil {
					return err
				}
			}
			_, err = fmt.Fprintln(c.App.Writer, u)
			return err
		},
	}
}

// credentialsSSHFlags are the fleet flags that `credentials --ca` needs to
// reach the host over SSH; --concurrency is there, hidden, for
// fleetOptions, and --limit and --json are not: it is one host.
func credentialsSSHFlags() []cli.Flag {
	flags := []cli.Flag{&cli.IntFlag{Name: "concurrency", Value: 1, Hidden: true}}
	for _, f := range fleetFlags() {
		switch f.Names()[0] {
		case "accept-new-host-keys", "connect-timeout", "quiet", "verbose", "no-color":
			flags = append(flags, f)
		}
	}
	return flags
}

// verifiedCredentials reads the server's certificate over SSH, writes what
// a client is to trust to the --ca file, and returns the URL that checks
// the server against it; where that cannot include the server's name, a
// note on stderr says why.
func verifiedCredentials(c *cli.Context, inv *inventory.Inventory, h inventory.Host) (string, error) {
	file, err := filepath.Abs(c.String("ca"))
	if err != nil {
		return "", usagef("--ca %s: %v", c.String("ca"), err)
	}
	opt, done, err := fleetOptions(c, []inventory.Host{h})
	if err != nil {
		return "", err
	}
	defer done()
	results := fleet.Run(c.Context, []inventory.Host{h}, opt, func(ctx context.Context, h inventory.Host, rc *remote.Client, r progress.Reporter) (job.CA, error) {
		return job.ServerCA(ctx, h, job.Over(rc), r)
	})
	if err := fleet.Err(results); err != nil {
		return "", err
	}
	ca := results[0].Value
	if err := job.WriteCA(file, ca); err != nil {
		return "", err
	}
	if note := ca.Note(h); note != "" {
		fmt.Fprintf(c.App.ErrWriter, "%s: note: %s\n", h.Name, progress.Sanitize(note))
	}
	return job.CredentialsVerified(inv, h, c.String("database"), job.Verify{File: file, Full: ca.Full})
}
