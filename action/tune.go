package action

import (
	"fmt"
	"maps"
	"slices"

	"pidb/dbms"
	"pidb/tune"
	"pidb/usage"
)

// Preset is one of the tuner's presets.
type Preset = tune.Preset

// Presets are the tuner's presets, in order.
func Presets() []Preset { return tune.Presets() }

// PresetNames are the presets' names, in order.
func PresetNames() []string { return tune.PresetNames() }

// DefaultPreset is the preset of a host whose inventory names none.
const DefaultPreset = string(tune.Balanced)

// TuneShowOptions are `pidb tune show`'s: a board described by hand, for
// the tuner offline.
type TuneShowOptions struct {
	Engine         string // postgres (or postgresql), mysql or mariadb
	Version        string // the server's; "": the distribution's
	RAMBytes       uint64 // the board's nominal RAM
	CPUs           int
	Storage        string // sd, usb, nvme or unknown
	Bits           int    // the server's word size: 32 or 64 (0: 64)
	MaxConnections int    // 0: scaled to RAM
	Preset         string
	Set            map[string]string // settings overridden, by name
}

// Tuned is what the tuner recommends for a board: the drop-in file, and
// the settings as `--json` prints them.
type Tuned struct {
	Conf string
	JSON []tune.JSONSetting
	// Warnings are what the board and settings allow but should be said,
	// for stderr: a release newer than the tuner knows, a board beyond any
	// Pi, and each override that trades durability, with what a power cut
	// then loses (tune.Durability)
	Warnings []string
}

// TuneShow is the tuner's recommendation for the board described, offline.
// A board or a setting the tuner refuses is a usage error.
func TuneShow(o TuneShowOptions) (Tuned, error) {
	in := tune.Input{Flavor: dbms.Flavor(o.Engine), Version: o.Version, RAMBytes: o.RAMBytes, CPUs: o.CPUs, Storage: o.Storage, Bits: o.Bits, MaxConnections: o.MaxConnections,
		ConnectionsAsk: "--max-connections"}
	s, err := tune.Recommend(in, tune.PresetName(o.Preset), o.Set)
	if err != nil {
		return Tuned{}, usage.Wrap(err)
	}
	in, _ = tune.Normalize(in)
	var warn []string
	warn = append(warn, tune.Warnings(in)...)
	// beyond any Pi: the rules scale, but nothing here measured them there
	if o.RAMBytes > 16<<30 {
		warn = append(warn, fmt.Sprintf("--mem %d GiB is more than any Raspberry Pi has (16 GB, the Pi 5's largest): the rules scale to it, but were made and measured for Pis", o.RAMBytes>>30))
	}
	if o.CPUs > 4 {
		warn = append(warn, fmt.Sprintf("--cpus %d is more than any Raspberry Pi has (4 cores): the rules scale to it, but were made and measured for Pis", o.CPUs))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Set)) {
		if w := tune.Durability(in.Flavor.Family(), k, o.Set[k]); w != "" {
			warn = append(warn, "--set "+w)
		}
	}
	return Tuned{Conf: tune.Render(in, tune.PresetName(o.Preset), s), JSON: tune.JSON(in.Flavor, s), Warnings: warn}, nil
}
