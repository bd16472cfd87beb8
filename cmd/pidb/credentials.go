package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/internal/cmdutil"
	"pidb/progress"
	"pidb/usage"
)

// credentialsCommand is `pidb credentials`; run does the work (nil:
// runCredentials), a seam for the tests of its options.
func credentialsCommand(run func(*cli.Context, action.CredentialsOptions) error) *cli.Command {
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
		Action: cmdutil.WithOptions(credentialsOptions, cmdutil.OrWork(run, runCredentials)),
	}
}

// credentialsOptions reads credentials' flags and its one host.
func credentialsOptions(c *cli.Context) (action.CredentialsOptions, error) {
	if c.NArg() != 1 {
		return action.CredentialsOptions{}, usage.Errorf("credentials needs one host name")
	}
	f, err := fleetFlagsOf(c)
	if err != nil {
		return action.CredentialsOptions{}, err
	}
	o := action.CredentialsOptions{Fleet: f, Host: c.Args().First(), Database: c.String("database")}
	if ca := c.String("ca"); ca != "" {
		if o.CAFile, err = filepath.Abs(ca); err != nil {
			return o, usage.Errorf("--ca %s: %v", ca, err)
		}
	}
	return o, nil
}

// runCredentials prints the host's URL, and a note on stderr where the
// server's certificate cannot be checked against its name.
func runCredentials(c *cli.Context, o action.CredentialsOptions) error {
	cr, err := action.Credentials(c.Context, o)
	if err != nil {
		return err
	}
	if cr.Note != "" {
		fmt.Fprintf(c.App.ErrWriter, "%s: note: %s\n", o.Host, progress.Sanitize(cr.Note))
	}
	_, err = fmt.Fprintln(c.App.Writer, cr.URL)
	return err
}

// credentialsSSHFlags are the fleet flags that `credentials --ca` needs to
// reach the host over SSH; --concurrency is there, hidden, for
// fleetFlagsOf, and --limit and --json are not: it is one host.
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
