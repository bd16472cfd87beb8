package main

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"pidb/action"
	"pidb/internal/cmdutil"
	"pidb/usage"
)

// fleetFlags are the flags of every fleet command, new for each command:
// urfave/cli writes into a flag as it parses, so two apps running at once
// (in tests) must not share one.
func fleetFlags() []cli.Flag {
	return append([]cli.Flag{inventoryFlag(), limitFlag(), cmdutil.JSONFlag(),
		&cli.IntFlag{Name: "concurrency", Usage: "hosts to work on at once", Value: 10},
		&cli.BoolFlag{Name: "accept-new-host-keys", Usage: "record the SSH host key of a host known_hosts does not know yet (a changed key is always refused)"},
		&cli.DurationFlag{Name: "connect-timeout", Usage: "give up on a host that does not answer SSH within `D`", Value: 10 * time.Second, EnvVars: []string{"PIDB_CONNECT_TIMEOUT"}},
	}, cmdutil.ViewFlags()...)
}

// fleetOf reads the fleet flags: the inventory, the hosts, how to reach
// them (a key's passphrase is asked for on a terminal), and the progress
// view.
func fleetOf(c *cli.Context) (action.Fleet, error) {
	if err := cmdutil.NoArguments(c); err != nil {
		return action.Fleet{}, err
	}
	return fleetFlagsOf(c)
}

// fleetFlagsOf is fleetOf for a command that takes arguments.
func fleetFlagsOf(c *cli.Context) (action.Fleet, error) {
	if c.String("inventory") == "" {
		return action.Fleet{}, action.ErrNoInventory
	}
	if c.Duration("connect-timeout") <= 0 {
		return action.Fleet{}, usage.Errorf("--connect-timeout must be more than zero")
	}
	if c.Int("concurrency") < 1 {
		return action.Fleet{}, usage.Errorf("--concurrency must be at least 1")
	}
	var ask func(file string) ([]byte, error)
	if term.IsTerminal(int(os.Stdin.Fd())) {
		ask = func(file string) ([]byte, error) {
			fmt.Fprintf(c.App.ErrWriter, "Passphrase for %s: ", file)
			defer fmt.Fprintln(c.App.ErrWriter)
			return term.ReadPassword(int(os.Stdin.Fd()))
		}
	}
	return action.Fleet{
		Inventory:         c.String("inventory"),
		Limit:             c.String("limit"),
		Concurrency:       c.Int("concurrency"),
		AcceptNewHostKeys: c.Bool("accept-new-host-keys"),
		ConnectTimeout:    c.Duration("connect-timeout"),
		View:              cmdutil.NewView(c),
		Agent:             os.Getenv("SSH_AUTH_SOCK"),
		Passphrase:        ask,
		Warnings:          c.App.ErrWriter,
	}, nil
}
