package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"pidb/action"
	"pidb/config"
	"pidb/inventory"
	"pidb/usage"
)

// settingFlags are the flags of config's keys with these flag names, in
// that order, with the defaults of kind's command in their help. A name
// written "flag=as" gives the key's flag another name in this command
// (pidb thermal's --interval is [thermal]'s thermal-interval).
func settingFlags(kind config.Kind, names ...string) []cli.Flag {
	out := make([]cli.Flag, 0, len(names))
	for _, n := range names {
		flag, as := splitAs(n)
		k, ok := config.KeyByFlag(flag)
		if !ok {
			panic("no setting has the flag " + flag) // a mistake in this file: the tests catch it
		}
		use, check := k.Usage(kind), checkAs(k, as)
		switch k.Kind {
		case inventory.Int:
			out = append(out, &cli.IntFlag{Name: as, Usage: use, Action: func(_ *cli.Context, v int) error { return check(v) }})
		case inventory.Number:
			out = append(out, &cli.Float64Flag{Name: as, Usage: use, Action: func(_ *cli.Context, v float64) error { return check(v) }})
		case inventory.Bool:
			out = append(out, &cli.BoolFlag{Name: as, Usage: use})
		case inventory.Duration:
			out = append(out, &cli.DurationFlag{Name: as, Usage: use, Action: func(_ *cli.Context, v time.Duration) error { return check(v) }})
		default:
			out = append(out, &cli.StringFlag{Name: as, Usage: use, Action: func(_ *cli.Context, v string) error { return check(v) }})
		}
	}
	return out
}

// checkAs checks a flag's value by its key's rule as it is read, and
// names the flag as this command calls it.
func checkAs(k config.Key, as string) func(any) error {
	return func(v any) error {
		if err := k.Check(v); err != nil {
			return usage.Errorf("--%s: %v", as, err)
		}
		return nil
	}
}

// splitAs reads "flag=as" (or "flag", as itself).
func splitAs(n string) (flag, as string) {
	for i := range n {
		if n[i] == '=' {
			return n[:i], n[i+1:]
		}
	}
	return n, n
}

// settingValues are the values of the setting flags given on the command
// line, by their keys in section; renamed flags as settingFlags names them.
func settingValues(c *cli.Context, section config.Section, renamed ...string) config.Values {
	v := config.Values{}
	as := map[string]string{}
	for _, n := range renamed {
		flag, name := splitAs(n)
		as[flag] = name
	}
	for _, k := range config.Keys() {
		name := k.Flag
		if a, ok := as[k.Flag]; ok {
			name = a
		}
		if k.Section == section && name != "" && c.IsSet(name) {
			v[k.Name] = c.Value(name) // int, float64, string, bool or time.Duration, as config reads them
		}
	}
	return v
}

// workloadFlags are the workload's flags that bench and validate share.
func workloadFlags(kind config.Kind) []cli.Flag {
	return settingFlags(kind, "workload", "clients", "duration", "scale", "warmup", "mix")
}

// thermalFlags are the flags over [thermal] beside a workload.
func thermalFlags(kind config.Kind) []cli.Flag {
	return settingFlags(kind, "thermal-interval", "idle-before", "idle-after")
}

// workloadOf is the workload the flags ask for, over the inventory's.
func workloadOf(c *cli.Context) action.Workload {
	return action.Workload{Bench: settingValues(c, config.BenchSection), Thermal: settingValues(c, config.ThermalSection)}
}
