package main

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"pidb/fleet"
	"pidb/inventory"
	"pidb/remote"
)

// fleetFlags are the flags of every fleet command, new for each command:
// urfave/cli writes into a flag as it parses, so two apps running at once
// (in tests) must not share one.
func fleetFlags() []cli.Flag {
	return []cli.Flag{inventoryFlag(), limitFlag(), jsonFlag(),
		&cli.IntFlag{Name: "concurrency", Usage: "hosts to work on at once", Value: 10},
		&cli.BoolFlag{Name: "accept-new-host-keys", Usage: "record the SSH host key of a host known_hosts does not know yet (a changed key is always refused)"},
		&cli.DurationFlag{Name: "connect-timeout", Usage: "give up on a host that does not answer SSH within `D`", Value: 10 * time.Second},
	}
}

// fleetOptions reads the fleet flags and the hosts' credentials: the
// identity files (a passphrase is asked for on a terminal) and the agent.
func fleetOptions(c *cli.Context, hosts []inventory.Host) (fleet.Options, func(), error) {
	if c.Duration("connect-timeout") <= 0 {
		return fleet.Options{}, nil, usagef("--connect-timeout must be more than zero")
	}
	if c.Int("concurrency") < 1 {
		return fleet.Options{}, nil, usagef("--concurrency must be at least 1")
	}
	var files []string
	for _, h := range hosts {
		files = append(files, h.IdentityFile)
	}
	var ask remote.PassphraseFunc
	if term.IsTerminal(int(os.Stdin.Fd())) {
		ask = func(file string) ([]byte, error) {
			fmt.Fprintf(c.App.ErrWriter, "Passphrase for %s: ", file)
			defer fmt.Fprintln(c.App.ErrWriter)
			return term.ReadPassword(int(os.Stdin.Fd()))
		}
	}
	auth, err := remote.NewAuth(files, os.Getenv("SSH_AUTH_SOCK"), ask)
	if err != nil {
		return fleet.Options{}, nil, usageError{err}
	}
	return fleet.Options{
		Concurrency:       c.Int("concurrency"),
		Progress:          c.App.ErrWriter,
		Auth:              auth,
		AcceptNewHostKeys: c.Bool("accept-new-host-keys"),
		ConnectTimeout:    c.Duration("connect-timeout"),
	}, auth.Close, nil
}
