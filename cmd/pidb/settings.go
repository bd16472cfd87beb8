package main

import (
	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/config"
	"pidb/internal/cmdutil"
)

// benchSettings are bench's flags over [bench] and [thermal].
func benchSettings() cmdutil.Settings {
	return cmdutil.Settings{"workload", "clients", "duration", "scale", "warmup", "mix", "tables", "table-size", "interval", "protocol",
		"script", "setup-script", "queries", "reload", "use-fk", "check", "threads", "via", "tls", "thermal-interval", "idle-before", "idle-after"}
}

// validateSettings are validate's flags over [bench], [validate] and
// [thermal].
func validateSettings() cmdutil.Settings {
	return cmdutil.Settings{"workload", "clients", "duration", "scale", "warmup", "mix", "script", "setup-script", "strict", "thermal-interval", "idle-before", "idle-after"}
}

// tpccCheckSettings are tpcc check's: which tables, and how to reach them.
func tpccCheckSettings() cmdutil.Settings { return cmdutil.Settings{"tables", "via", "tls"} }

// tpcbCheckSettings are pidb bench tpcb check's: the tables' rows say
// their scale.
func tpcbCheckSettings() cmdutil.Settings { return cmdutil.Settings{"via", "tls"} }

// thermalSettings are pidb thermal's: its --interval is [thermal]'s.
func thermalSettings() cmdutil.Settings { return cmdutil.Settings{"thermal-interval=interval"} }

// workloadOf is the workload the flags s ask for, over the inventory's.
func workloadOf(c *cli.Context, s cmdutil.Settings) action.Workload {
	return action.Workload{Bench: s.Values(c, config.BenchSection), Thermal: s.Values(c, config.ThermalSection)}
}
