package main

import (
	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/internal/cmdutil"
	"pidb/tables"
	"pidb/usage"
)

// clusterCommand is `pidb cluster` with its subcommand status; run does
// status's work (nil: runClusterStatus), a seam for the tests of its
// options.
func clusterCommand(run func(*cli.Context, action.ClusterOptions) error) *cli.Command {
	return clusterCommands(run, nil)
}

// clusterCommands is `pidb cluster` with both its subcommands' seams.
func clusterCommands(run func(*cli.Context, action.ClusterOptions) error, switchover func(*cli.Context, action.SwitchoverOptions) error) *cli.Command {
	return &cli.Command{
		Name:  "cluster",
		Usage: "see the inventory's clusters: a primary and its replicas",
		Subcommands: []*cli.Command{{
			Name:      "status",
			Usage:     "show each replica's state, how far behind its primary it is, and the WAL kept for it; exit 1 where one does not stream",
			UsageText: "pidb cluster status -i FILE [CLUSTER...] [--json]",
			Flags:     clusterFlags(),
			Action: cmdutil.WithOptions(func(c *cli.Context) (action.ClusterOptions, error) {
				f, err := fleetFlagsOf(c)
				return action.ClusterOptions{Fleet: f, Clusters: c.Args().Slice()}, err
			}, cmdutil.OrWork(run, runClusterStatus)),
		}, {
			Name:      "switchover",
			Usage:     "make a replica the primary, as planned: the primary stopped cleanly, the replica promoted once it has all of it, the others following it, the inventory rewritten",
			UsageText: "pidb cluster switchover -i FILE [--dry-run] CLUSTER NEW_PRIMARY",
			Flags:     append(clusterFlags(), &cli.BoolFlag{Name: "dry-run", Usage: "check and say what would be done; change nothing"}),
			Action: cmdutil.WithOptions(func(c *cli.Context) (action.SwitchoverOptions, error) {
				f, err := fleetFlagsOf(c)
				if err != nil {
					return action.SwitchoverOptions{}, err
				}
				if c.NArg() != 2 {
					return action.SwitchoverOptions{}, usage.Errorf("want CLUSTER NEW_PRIMARY: the cluster, and the replica to make its primary")
				}
				return action.SwitchoverOptions{Fleet: f, Cluster: c.Args().Get(0), To: c.Args().Get(1), DryRun: c.Bool("dry-run")}, nil
			}, cmdutil.OrWork(switchover, runSwitchover)),
		}},
	}
}

// runSwitchover makes the switchover and says what it did; a failed one
// writes nothing to stdout (its error says what happened, on stderr).
func runSwitchover(c *cli.Context, o action.SwitchoverOptions) error {
	r, err := action.Switchover(c.Context, o)
	if err != nil {
		return err
	}
	return cmdutil.PrintResults(c, r, tables.Switchover(r), nil)
}

// runClusterStatus reads the clusters and prints them.
func runClusterStatus(c *cli.Context, o action.ClusterOptions) error {
	sts, err := action.ClusterStatus(c.Context, o)
	if sts == nil {
		return err
	}
	return cmdutil.PrintResults(c, sts, tables.ClusterStatus(sts), err)
}

// clusterFlags are the fleet's flags but --limit: a cluster is read
// whole, its hosts named by the cluster.
func clusterFlags() []cli.Flag {
	var out []cli.Flag
	for _, f := range fleetFlags() {
		if f.Names()[0] != "limit" {
			out = append(out, f)
		}
	}
	return out
}
