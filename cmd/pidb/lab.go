package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/lab"
	"pidb/tables"
	"pidb/usage"
)

func labDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "dir", Usage: "lab state `DIR` (base image, caches, host roots, key, inventory)", Value: lab.DefaultDir, EnvVars: []string{"PIDB_LAB_DIR"}}
}

func labCommand() *cli.Command {
	return &cli.Command{
		Name:  "lab",
		Usage: "the simulated Pi fleet (systemd-nspawn; Linux, root)",
		Subcommands: []*cli.Command{
			{
				Name:      "up",
				Usage:     "boot the simulated Pis and print the path of the lab's inventory",
				UsageText: "pidb lab up [--hosts BOARD[=N],...] [--from SNAPSHOT] [--cpu board|full|NAME=board,...] [--storage NAME=usb-ssd|nvme,...] [--latency DURATION|NAME=DURATION,...] [--cooling case|fan|NAME=case,...] [--without-vcgencmd NAMES] [--thermal-speed N] [--dir DIR]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "hosts", Usage: "boot these `BOARDS` instead of pi4,pi3,zero: any of pi4, pi3, zero, pi5, pi5-4gb, pi4-2gb, pi3plus, zero2, cm4; BOARD=N boots N of one, numbered BOARD-1..."},
					&cli.StringFlag{Name: "from", Usage: "boot the --hosts from the disk of `SNAPSHOT` (lab snapshot) instead of a fresh image: they come up as its host was, databases and all"},
					&cli.StringFlag{Name: "cpu", Usage: "the simulated Pis' CPU: board (each its board's published capacity, as a CPU quota) or full (this machine's, shared), for all (kept for hosts booted later) or as NAME=board,NAME=full; a running host keeps its speed unless named (default board)"},
					&cli.StringFlag{Name: "storage", Usage: "plug a drive into hosts besides their cards: NAME=usb-ssd (a Pi 4 or Pi 5, seen as /dev/sda) or NAME=nvme (a Pi 5, /dev/nvme0n1), blank, limited to the kind's published figures at board speed"},
					&cli.StringFlag{Name: "latency", Usage: "the round trip a network adds between this machine and the simulated Pis (a laptop on wifi: 20ms), for all (kept for hosts booted later) or as NAME=20ms,NAME=0; a running host keeps its own unless named (default none)"},
					&cli.StringFlag{Name: "cooling", Usage: "how the simulated Pis are cooled: case or fan for all, or NAME=case,NAME=fan (default fan)"},
					&cli.StringFlag{Name: "without-vcgencmd", Usage: "leave these `NAMES` without vcgencmd, as on Ubuntu"},
					&cli.Float64Flag{Name: "thermal-speed", Usage: "simulated seconds per real second, so heat builds up faster (default 1)", Value: 1},
					labDirFlag(),
				},
				Action: func(c *cli.Context) error {
					if c.Args().Present() {
						return usage.Errorf("unexpected argument %q", c.Args().First())
					}
					l := lab.New(c.String("dir"), c.App.ErrWriter)
					var names []string
					if h := strings.TrimSpace(c.String("hosts")); h != "" {
						var err error
						if names, err = labHostsFlag(h); err != nil {
							return err
						}
					}
					if err := labUpFlags(c, l); err != nil {
						return err
					}
					up := l.Up
					if from := c.String("from"); from != "" {
						if len(names) == 0 {
							return usage.Errorf("--from needs --hosts: the hosts to boot from snapshot %s", from)
						}
						up = func(ctx context.Context, names []string) (string, error) { return l.UpFrom(ctx, names, from) }
					}
					inv, err := up(c.Context, names)
					if err != nil {
						return fmt.Errorf("lab up: %w", err)
					}
					fmt.Fprintln(c.App.Writer, inv)
					return nil
				},
			},
			{
				Name:      "snapshot",
				Usage:     "copy a running host's disk, to boot hosts from later (lab up --from)",
				UsageText: "pidb lab snapshot HOST [NAME] [--dir DIR]\n   pidb lab snapshot --list [--json] [--dir DIR]\n   pidb lab snapshot --remove NAME [--dir DIR]",
				Description: "The host is frozen while its disk is copied, so the snapshot is one moment of it: " +
					"a database on it recovers as after a power cut. NAME defaults to the host's name.",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "list", Usage: "list the lab's snapshots"},
					&cli.StringFlag{Name: "remove", Usage: "delete the snapshot `NAME`"},
					labDirFlag(), jsonFlag(),
				},
				Action: func(c *cli.Context) error {
					l := lab.New(c.String("dir"), c.App.ErrWriter)
					switch {
					case c.Bool("list"):
						if c.Args().Present() {
							return usage.Errorf("unexpected argument %q", c.Args().First())
						}
						snaps, err := l.Snapshots()
						if err != nil {
							return err
						}
						return printResults(c, snaps, tables.Snapshots(snaps), nil)
					case c.String("remove") != "":
						if c.Args().Present() {
							return usage.Errorf("unexpected argument %q", c.Args().First())
						}
						if err := l.RemoveSnapshot(c.String("remove")); err != nil {
							return fmt.Errorf("lab snapshot: %w", err)
						}
						return nil
					}
					if c.NArg() < 1 || c.NArg() > 2 {
						return usage.Errorf("name the host to snapshot: pidb lab snapshot HOST [NAME]")
					}
					host, name := c.Args().Get(0), c.Args().Get(1)
					if name == "" {
						name = host
					}
					if err := l.Snapshot(c.Context, host, name); err != nil {
						return fmt.Errorf("lab snapshot: %w", err)
					}
					return nil
				},
			},
			{
				Name:   "simulate",
				Usage:  "run the lab's thermal simulator (lab up starts it in the background)",
				Hidden: true,
				Flags:  []cli.Flag{labDirFlag()},
				Action: func(c *cli.Context) error {
					return lab.New(c.String("dir"), c.App.ErrWriter).Simulate(c.Context)
				},
			},
			{
				Name:   "link",
				Usage:  "run the lab's link, which gives hosts a network's latency (lab up --latency starts it in the background)",
				Hidden: true,
				Flags:  []cli.Flag{labDirFlag()},
				Action: func(c *cli.Context) error {
					return lab.New(c.String("dir"), c.App.ErrWriter).Link(c.Context)
				},
			},
			{
				Name:      "down",
				Usage:     "stop the simulated Pis and remove everything the lab made on this machine",
				UsageText: "pidb lab down [--hosts NAMES] [--dir DIR]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "hosts", Usage: "remove only these `NAMES` (their disks too); the rest of the lab stays up"},
					labDirFlag(),
				},
				Action: func(c *cli.Context) error {
					if c.Args().Present() {
						return usage.Errorf("unexpected argument %q", c.Args().First())
					}
					l := lab.New(c.String("dir"), c.App.ErrWriter)
					if h := strings.TrimSpace(c.String("hosts")); h != "" {
						names, err := labHostsFlag(h)
						if err != nil {
							return err
						}
						if err := l.Remove(c.Context, names); err != nil {
							return fmt.Errorf("lab down: %w", err)
						}
						return nil
					}
					if err := l.Down(c.Context); err != nil {
						return fmt.Errorf("lab down: %w", err)
					}
					return nil
				},
			},
			{
				Name:      "status",
				Usage:     "list the lab's hosts, addresses and state",
				UsageText: "pidb lab status [--dir DIR] [--json]",
				Flags:     []cli.Flag{labDirFlag(), jsonFlag()},
				Action: func(c *cli.Context) error {
					st := lab.New(c.String("dir"), c.App.ErrWriter).Status()
					return printResults(c, st, tables.LabStatus(st), nil)
				},
			},
		},
	}
}
