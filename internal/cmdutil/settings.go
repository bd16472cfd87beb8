package cmdutil

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"pidb/config"
	"pidb/inventory"
	"pidb/usage"
)

// Settings are a command's flags over the inventory's settings: config's
// keys by their flags' names, in the order help lists them. A name written
// "flag=as" gives the key's flag another name in this command (pidb
// thermal's --interval is [thermal]'s thermal-interval).
type Settings []string

// Flags are the command's setting flags, with the defaults of kind's
// command in their help, each checked by its key's rule as it is read.
func (s Settings) Flags(kind config.Kind) []cli.Flag {
	out := make([]cli.Flag, 0, len(s))
	keys := config.KeysByFlag()
	for _, n := range s {
		flag, as := splitAs(n)
		k, ok := keys[flag]
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
	flag, as, renamed := strings.Cut(n, "=")
	if !renamed {
		as = flag
	}
	return flag, as
}

// Values are the values of the command's setting flags given on the
// command line, by their keys in section.
func (s Settings) Values(c *cli.Context, section config.Section) config.Values {
	v := config.Values{}
	keys := config.KeysByFlag()
	for _, n := range s {
		flag, as := splitAs(n)
		if k, ok := keys[flag]; ok && k.Section == section && c.IsSet(as) {
			v[k.Name] = c.Value(as) // int, float64, string, bool or time.Duration, as config reads them
		}
	}
	return v
}
