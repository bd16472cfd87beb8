package main

import (
	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/internal/cmdutil"
	"pidb/tables"
)

// clusterCommand is `pidb cluster` with its subcommand status; run does
// status's work (nil: runClusterStatus), a seam for the tests of its
// options.
func clusterCommand(run func(*cli.Context, action.ClusterOptions) error) *cli.Command {
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
		}},
	}
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
