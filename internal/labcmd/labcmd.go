// Package labcmd is the simulated lab's command line: pidb lab up, down,
// status and snapshot (and the hidden simulate and link the lab starts),
// and the syntax of their flags, read into what package lab takes (its
// fields), which knows no flag. Its seams and its tests are its own, as a
// command group's are in cli/cli.
package labcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"pidb/internal/cmdutil"
	"pidb/lab"
	"pidb/tables"
	"pidb/usage"
)

func DirFlag() cli.Flag {
	return &cli.StringFlag{Name: "dir", Usage: "lab state `DIR` (base image, caches, host roots, key, inventory)", Value: lab.DefaultDir, EnvVars: []string{"PIDB_LAB_DIR"}}
}

// labUpOptions is what `lab up` is asked: the lab with what its flags set, the
// hosts (none: the default fleet) and the snapshot to boot them from.
type labUpOptions struct {
	Lab   *lab.Lab
	Hosts []string
	From  string
}

// labSnapshotOptions is what `lab snapshot` is asked: to list, to remove Remove,
// or to copy Host's disk into the snapshot Name.
type labSnapshotOptions struct {
	Lab        *lab.Lab
	List       bool
	Remove     string
	Host, Name string
}

// labDownOptions is what `lab down` is asked: remove Hosts, or (none) the lab.
type labDownOptions struct {
	Lab   *lab.Lab
	Hosts []string
}

// Run does the work of lab's subcommands; a nil one is the command's
// own: a seam for the tests of their options.
type Run struct {
	up       func(*cli.Context, labUpOptions) error
	snapshot func(*cli.Context, labSnapshotOptions) error
	down     func(*cli.Context, labDownOptions) error
}

// Command is `pidb lab` with its subcommands, doing their work with run's
// functions (a zero Run: the lab's own).
func Command(run Run) *cli.Command {
	labOf := func(c *cli.Context) *lab.Lab { return lab.New(c.String("dir"), c.App.ErrWriter).Own() }
	return &cli.Command{
		Name:  "lab",
		Usage: "the simulated Pi fleet (systemd-nspawn; Linux, root)",
		Subcommands: []*cli.Command{
			{
				Name:      "up",
				Usage:     "boot the simulated Pis and print the path of the lab's inventory",
				UsageText: "pidb lab up [--hosts BOARD[=N],...] [--from SNAPSHOT] [--cpu board|full|NAME=board,...] [--storage NAME=usb-ssd|nvme,...] [--release RELEASE|NAME=RELEASE,...] [--latency DURATION|NAME=DURATION,...] [--cooling case|fan|NAME=case,...] [--without-vcgencmd NAMES] [--thermal-speed N] [--dir DIR]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "hosts", Usage: "boot these `BOARDS` instead of pi4,pi3,zero: any of pi4, pi3, zero, pi5, pi5-4gb, pi4-2gb, pi3plus, zero2, cm4; BOARD=N boots N of one, numbered BOARD-1..."},
					&cli.StringFlag{Name: "from", Usage: "boot the --hosts from the disk of `SNAPSHOT` (lab snapshot) instead of a fresh image: they come up as its host was, databases and all"},
					&cli.StringFlag{Name: "cpu", Usage: "the simulated Pis' CPU: board (each its board's published capacity, as a CPU quota) or full (this machine's, shared), for all (kept for hosts booted later) or as NAME=board,NAME=full; a running host keeps its speed unless named (default board)"},
					&cli.StringFlag{Name: "release", Usage: "the operating system hosts boot, for all (\"trixie\") or per host (pi4=trixie,zero=bookworm): " + releasesUsage() + "; default " + lab.DefaultRelease + "; a host that is up keeps its own"},
					&cli.StringFlag{Name: "storage", Usage: "plug a drive into hosts besides their cards: NAME=usb-ssd (a Pi 4 or Pi 5, seen as /dev/sda) or NAME=nvme (a Pi 5, /dev/nvme0n1), blank, limited to the kind's published figures at board speed"},
					&cli.StringFlag{Name: "latency", Usage: "the round trip a network adds between this machine and the simulated Pis (a laptop on wifi: 20ms), for all (kept for hosts booted later) or as NAME=20ms,NAME=0; a running host keeps its own unless named (default none)"},
					&cli.StringFlag{Name: "cooling", Usage: "how the simulated Pis are cooled: case or fan for all, or NAME=case,NAME=fan (default fan)"},
					&cli.StringFlag{Name: "without-vcgencmd", Usage: "leave these `NAMES` without vcgencmd, as on Ubuntu"},
					&cli.Float64Flag{Name: "thermal-speed", Usage: "simulated seconds per real second, so heat builds up faster (default 1)", Value: 1},
					DirFlag(),
				},
				Action: cmdutil.WithOptions(func(c *cli.Context) (labUpOptions, error) {
					o := labUpOptions{Lab: labOf(c), From: c.String("from")}
					if err := cmdutil.NoArguments(c); err != nil {
						return o, err
					}
					if h := strings.TrimSpace(c.String("hosts")); h != "" {
						var err error
						if o.Hosts, err = labHostsFlag(h); err != nil {
							return o, err
						}
					}
					if o.From != "" && len(o.Hosts) == 0 {
						return o, usage.Errorf("--from needs --hosts: the hosts to boot from snapshot %s", o.From)
					}
					return o, labUpFlags(c, o.Lab)
				}, cmdutil.OrWork(run.up, func(c *cli.Context, o labUpOptions) error {
					up := o.Lab.Up
					if o.From != "" {
						up = func(ctx context.Context, names []string) (string, error) { return o.Lab.UpFrom(ctx, names, o.From) }
					}
					inv, err := up(c.Context, o.Hosts)
					if err != nil {
						return fmt.Errorf("lab up: %w", err)
					}
					_, err = fmt.Fprintln(c.App.Writer, inv)
					return err
				})),
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
					DirFlag(), cmdutil.JSONFlag(),
				},
				Action: cmdutil.WithOptions(func(c *cli.Context) (labSnapshotOptions, error) {
					o := labSnapshotOptions{Lab: labOf(c), List: c.Bool("list"), Remove: c.String("remove"), Host: c.Args().Get(0), Name: c.Args().Get(1)}
					switch {
					case o.List || o.Remove != "":
						return o, cmdutil.NoArguments(c)
					case c.NArg() < 1 || c.NArg() > 2:
						return o, usage.Errorf("name the host to snapshot: pidb lab snapshot HOST [NAME]")
					}
					if o.Name == "" {
						o.Name = o.Host
					}
					return o, nil
				}, cmdutil.OrWork(run.snapshot, func(c *cli.Context, o labSnapshotOptions) error {
					switch {
					case o.List:
						snaps, err := o.Lab.Snapshots()
						if err != nil {
							return err
						}
						return cmdutil.PrintResults(c, snaps, tables.Snapshots(snaps), nil)
					case o.Remove != "":
						return wrap("lab snapshot", o.Lab.RemoveSnapshot(o.Remove))
					}
					return wrap("lab snapshot", o.Lab.Snapshot(c.Context, o.Host, o.Name))
				})),
			},
			{
				Name:      "power-cut",
				Usage:     "pull a running host's plug and power it on again: what its kernel had not written to its card is lost",
				UsageText: "pidb lab power-cut HOST [--dir DIR]",
				Description: "The host is frozen, its card's image copied as it is (what was fsync'd is in it; what the kernel " +
					"still held in memory is not), and it boots from the copy: its file systems replay their journals and its " +
					"databases recover, as on a Pi whose power lead was pulled. A drive plugged in (lab up --storage) loses its unwritten data too.",
				Flags: []cli.Flag{DirFlag()},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usage.Errorf("name the host whose power to cut: pidb lab power-cut HOST")
					}
					return wrap("lab power-cut", labOf(c).PowerCut(c.Context, c.Args().First()))
				},
			},
			{
				Name:   "simulate",
				Usage:  "run the lab's thermal simulator (lab up starts it in the background)",
				Hidden: true,
				Flags:  []cli.Flag{DirFlag()},
				Action: func(c *cli.Context) error { return labOf(c).Simulate(c.Context) },
			},
			{
				Name:   "link",
				Usage:  "run the lab's link, which gives hosts a network's latency (lab up --latency starts it in the background)",
				Hidden: true,
				Flags:  []cli.Flag{DirFlag()},
				Action: func(c *cli.Context) error { return labOf(c).Link(c.Context) },
			},
			{
				Name:      "down",
				Usage:     "stop the simulated Pis and remove everything the lab made on this machine",
				UsageText: "pidb lab down [--hosts NAMES] [--dir DIR]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "hosts", Usage: "remove only these `NAMES` (their disks too); the rest of the lab stays up"},
					DirFlag(),
				},
				Action: cmdutil.WithOptions(func(c *cli.Context) (labDownOptions, error) {
					o := labDownOptions{Lab: labOf(c)}
					if err := cmdutil.NoArguments(c); err != nil {
						return o, err
					}
					var err error
					if h := strings.TrimSpace(c.String("hosts")); h != "" {
						o.Hosts, err = labHostsFlag(h)
					}
					return o, err
				}, cmdutil.OrWork(run.down, func(c *cli.Context, o labDownOptions) error {
					if len(o.Hosts) > 0 {
						return wrap("lab down", o.Lab.Remove(c.Context, o.Hosts))
					}
					return wrap("lab down", o.Lab.Down(c.Context))
				})),
			},
			{
				Name:      "images",
				Usage:     "build every release's image that is not built yet (lab up builds a host's at its first boot)",
				UsageText: "pidb lab images [--dir DIR]",
				Flags:     []cli.Flag{DirFlag()},
				Action: func(c *cli.Context) error {
					return wrap("lab images", labOf(c).Images(c.Context))
				},
			},
			{
				Name:      "status",
				Usage:     "list the lab's hosts, addresses and state",
				UsageText: "pidb lab status [--dir DIR] [--json]",
				Flags:     []cli.Flag{DirFlag(), cmdutil.JSONFlag()},
				Action: func(c *cli.Context) error {
					st := labOf(c).Status()
					return cmdutil.PrintResults(c, st, tables.LabStatus(st), nil)
				},
			},
		},
	}
}

// releasesUsage names the lab's releases and what each stands for.
func releasesUsage() string {
	var out []string
	for _, r := range lab.Releases() {
		out = append(out, r.Name+" ("+r.About+")")
	}
	return strings.Join(out, ", ")
}

// wrap says what failed: "lab down: ...".
func wrap(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
