package tune

import (
	"fmt"
	"strings"

	"pidb/dbms"
)

// Render writes the drop-in file exactly as provisioning writes it: a header
// naming the preset and the inputs, then one line per setting with its
// reason. No timestamps, so the same inputs give the same bytes.
func Render(in Input, preset PresetName, s Settings) string {
	var b strings.Builder
	// a cluster's host says its cluster, not its role: a switchover
	// changes the roles, and a header that said them would make every
	// host's file new, and its server restart, for a comment
	cluster := ""
	if r := in.Replication; r != nil {
		cluster = fmt.Sprintf(", in cluster %q", r.Cluster)
	}
	server := in.Version
	if in.Asked != "" {
		server = in.Asked + " (tuned as " + in.Version + ", the newest pidb knows)"
	}
	ram := fmt.Sprintf("%d MiB RAM", in.RAMBytes>>20)
	if in.Board != 0 {
		ram = fmt.Sprintf("%d MiB RAM (a 32-bit server on a board of %d MiB)", in.RAMBytes>>20, in.Board>>20)
	}
	fmt.Fprintf(&b, "# Managed by pidb: preset %q for %s %s, %s, %d CPUs, storage %s%s.\n",
		preset, flavorName(in.Flavor), server, ram, in.CPUs, in.Storage, cluster)
	b.WriteString("# pidb rewrites this file: put per-host changes in the inventory's [host.settings].\n")
	if isMySQLFamily(in.Flavor) {
		b.WriteString("[mysqld]\n")
	}
	for _, x := range s {
		why := x.Why
		if x.Override {
			why = "OVERRIDE: " + why
		}
		fmt.Fprintf(&b, "%s  # %s\n", Line(in.Flavor, x), why)
	}
	return b.String()
}

// binlogName is the binary log's base name (pidb-bin.000001, in the data
// directory).
const binlogName = "pidb-bin"

// Line is a setting as written in the file, without its comment.
func Line(flavor dbms.Flavor, x Setting) string {
	if isMySQLFamily(flavor) && x.Name == "log_bin" {
		if x.Value.Bool {
			// the binary log on, named for pidb: the server's default
			// name is the host name's, which a renamed Pi would lose
			return "log_bin = " + binlogName
		}
		return "skip-log-bin"
	}
	return x.Name + " = " + x.Value.Render(flavor)
}

// JSONSetting is a setting as `pidb tune show --format json` prints it.
type JSONSetting struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Bytes    *uint64 `json:"bytes,omitempty"`
	Why      string  `json:"why"`
	Override bool    `json:"override"`
	Line     string  `json:"line"`
}

// JSON returns the settings in the order written, values rendered as in the
// file; sizes carry their bytes too, and line is the setting's whole line.
func JSON(flavor dbms.Flavor, s Settings) []JSONSetting {
	out := make([]JSONSetting, 0, len(s))
	for _, x := range s {
		j := JSONSetting{Name: x.Name, Value: x.Value.Render(flavor), Why: x.Why, Override: x.Override, Line: Line(flavor, x)}
		if x.Value.Kind == Bytes {
			b := x.Value.Bytes
			j.Bytes = &b
		}
		out = append(out, j)
	}
	return out
}
