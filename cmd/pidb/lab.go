package main

import "github.com/urfave/cli/v2"

func labCommand() *cli.Command {
	return &cli.Command{Name: "lab", Usage: "the simulated Pi fleet (systemd-nspawn)"}
}
