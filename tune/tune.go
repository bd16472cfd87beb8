// Package tune decides every setting pidb writes on a Pi. It is pure: the
// board's RAM, cores and storage, the engine's flavour and version, a preset
// and overrides in; ordered, typed settings with a reason each out. It does
// no I/O, so it is tested exhaustively and used offline (`pidb tune show`).
package tune

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"pidb/dbms"
	"pidb/internal/version"
	"pidb/units"
)

// Input is what the tuner scales on.
type Input struct {
	Flavor   dbms.Flavor
	Version  string // "15", "10.11.6", "8.0.39"; "" = the flavour's default
	RAMBytes uint64 // the board's nominal RAM (4 GiB on a 4 GB Pi, not MemTotal)
	// MemBytes is what the kernel has of it (MemTotal: the firmware keeps
	// the rest); 0: unknown, taken as 85% of RAMBytes (a Zero W's 433 MB
	// of 512). The memory budget must fit in it.
	MemBytes       uint64
	CPUs           int
	Storage        string // sd, usb, nvme, unknown
	MaxConnections int    // 0 = scaled to RAM
	// ConnectionsAsk says who asked for MaxConnections, for its reason
	// ("the inventory's max_connections"); "" for "asked"
	ConnectionsAsk string
	// Replication is the host's part in a cluster; nil on its own
	Replication *Replication
	// Bits is the server's word size: 32 for a 32-bit userland (armhf,
	// Raspberry Pi OS's 32-bit image, also on a 64-bit kernel), else 64
	// (0: 64). A 32-bit process addresses at most 3 GB (Addressable).
	Bits int
	// Board is, after Normalize, the board's RAM where a 32-bit server is
	// sized within Addressable instead (RAMBytes is then Addressable); 0
	// where nothing was capped
	Board uint64
	// Asked is, after Normalize, the version asked for where it is newer
	// than any the tuner knows, and Version then the newest it knows,
	// which it tunes as (NewerThanKnown says so); else ""
	Asked string
}

// Addressable is the memory a 32-bit server is sized within: the
// address space a 32-bit process has for its own (3 GB under a 32-bit
// kernel's split), which its shared memory, caches and every
// connection's buffers must fit in, whatever the board has.
const Addressable = 3 << 30

// Capped32 is the warning for a 32-bit server on a board with more RAM
// than it can address (Normalize's Board); "" where nothing was capped.
func Capped32(in Input) string {
	if in.Board == 0 {
		return ""
	}
	return fmt.Sprintf("a 32-bit server (a 32-bit userland) addresses at most %d MiB: memory sized as on a board of that much, not the board's %d MiB (a 64-bit Raspberry Pi OS uses it all)", uint64(Addressable)>>20, in.Board>>20)
}

// Warnings are what the tuner says of its input: a release newer than it
// knows, a 32-bit server's capped memory.
func Warnings(in Input) []string {
	var out []string
	for _, w := range []string{NewerThanKnown(in), Capped32(in)} {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// newest is the newest version of each flavour the tuner knows: a newer
// one is tuned as it, with a warning, and the read-back decides.
var newest = map[dbms.Flavor]string{dbms.Postgres: "18", dbms.MySQL: "9.7", dbms.MariaDB: "11.8"}

// NewerThanKnown is the warning for a version newer than any the tuner
// knows (Normalize's Asked), tuned as the newest it knows; "" where the
// tuner knows the version.
func NewerThanKnown(in Input) string {
	if in.Asked == "" {
		return ""
	}
	return fmt.Sprintf("%s %s is newer than any pidb knows: tuned as %s %s; each value is read back from the server after the restart, and one it does not take rolls the change back", flavorName(in.Flavor), in.Asked, flavorName(in.Flavor), in.Version)
}

// newerThan says v is a newer release of flavor than known: for
// PostgreSQL a later major, for MySQL and MariaDB a later major.minor
// (8.4.6 is 8.4's, not newer).
func newerThan(flavor dbms.Flavor, v, known string) bool {
	parts := strings.Split(v, ".")
	if flavor != dbms.Postgres && len(parts) > 2 {
		parts = parts[:2]
	}
	if flavor == dbms.Postgres {
		parts = parts[:1]
	}
	return version.Less(known, strings.Join(parts, "."))
}

// DefaultVersion is the version of a flavour that current Raspberry Pi
// OS ships (Debian 13, trixie: PostgreSQL 17, MariaDB 11.8), and Ubuntu
// 26.04 for MySQL (8.4): what tune show tunes for without --version.
func DefaultVersion(f dbms.Flavor) string {
	return map[dbms.Flavor]string{dbms.Postgres: "17", dbms.MariaDB: "11.8", dbms.MySQL: "8.4"}[f]
}

// Setting is one line of the drop-in.
type Setting struct {
	Name     string // as the server spells the variable, with underscores
	Value    Value
	Why      string
	Override bool // set by [host.settings] or --set, over the preset
}

// Settings are in the order they are written.
type Settings []Setting

// Get returns the setting called name.
func (s Settings) Get(name string) (Setting, bool) {
	for _, x := range s {
		if x.Name == name {
			return x, true
		}
	}
	return Setting{}, false
}

// PresetName names a preset.
type PresetName string

// The presets.
const (
	Seed     PresetName = "seed"     // the write-ups' settings, verbatim
	Balanced PresetName = "balanced" // the default
	Fast     PresetName = "fast"     // fewer writes, commits lost at a power cut
)

// Preset is a named set of rules.
type Preset struct {
	Name        PresetName `json:"name"`
	Description string     `json:"description"`
}

// Presets lists the presets, the default first after seed. The inventory's
// schema and the flags read their names from here (PresetNames).
func Presets() []Preset {
	return []Preset{
		{Seed, "exactly what the two write-ups used: shared_buffers / innodb_buffer_pool_size at 25% of RAM, no parallel query on PostgreSQL, the binary log off and the adaptive hash index on for MySQL/MariaDB; everything else at the server's defaults"},
		{Balanced, "the default: seed plus a sound small-machine configuration (memory by RAM, connections within RAM, I/O by storage, parallel workers by cores, JIT and performance_schema off where they cost a Pi more than they give)"},
		{Fast, "balanced plus fewer writes to the SD card: synchronous_commit = off (PostgreSQL) and innodb_flush_log_at_trx_commit = 2 (MySQL/MariaDB); the last moments of commits CAN BE LOST at power loss or a crash, though the database stays consistent"},
	}
}

// Normalize checks the input and fills in defaults.
func Normalize(in Input) (Input, error) {
	f, ok := dbms.ParseFlavor(string(in.Flavor))
	if !ok {
		return in, fmt.Errorf("unknown engine %q: want postgres (or postgresql), mysql or mariadb", in.Flavor)
	}
	in.Flavor = f
	if in.Version == "" {
		in.Version = DefaultVersion(in.Flavor)
	}
	if !version.Valid(in.Version) {
		return in, fmt.Errorf("version %q: want the server's version in dotted numbers, like 15, 10.11.6 or 8.0.39", in.Version)
	}
	major := strings.SplitN(in.Version, ".", 2)[0]
	switch {
	case in.Flavor == dbms.Postgres && version.Less(major, "11"):
		return in, fmt.Errorf("PostgreSQL %s is not supported: pidb tunes 11 and later", in.Version)
	case in.Flavor == dbms.MySQL && version.Less(in.Version, "8.0"):
		return in, fmt.Errorf("MySQL %s is not supported: pidb tunes 8.0 and later", in.Version)
	case in.Flavor == dbms.MariaDB && version.Less(in.Version, "10.3"):
		return in, fmt.Errorf("MariaDB %s is not supported: pidb tunes 10.3 and later", in.Version)
	}
	// newer than any the tuner knows: tuned as the newest it knows
	// (PostgreSQL by its major; MySQL and MariaDB by major.minor)
	if n := newest[in.Flavor]; in.Asked == "" && newerThan(in.Flavor, in.Version, n) {
		in.Asked, in.Version = in.Version, n
	}
	if in.RAMBytes < 256<<20 {
		return in, fmt.Errorf("RAM %d bytes is too little: a Pi has at least 256 MB", in.RAMBytes)
	}
	if in.Bits == 32 && in.RAMBytes > Addressable {
		in.Board, in.RAMBytes = in.RAMBytes, Addressable
		in.MemBytes = min(in.MemBytes, Addressable*85/100)
	}
	if in.CPUs < 1 {
		return in, fmt.Errorf("cpus must be at least 1")
	}
	if in.Storage == "" {
		in.Storage = "unknown"
	}
	switch in.Storage {
	case "sd", "usb", "nvme", "unknown":
	default:
		return in, fmt.Errorf("unknown storage %q: want sd, usb, nvme or unknown", in.Storage)
	}
	if in.MaxConnections < 0 {
		return in, fmt.Errorf("max connections must not be negative")
	}
	if err := checkReplication(in); err != nil {
		return in, err
	}
	return in, nil
}

// OverrideError is a bad override: an unknown name, or a value of the wrong
// type or out of range. It is input error (exit code 2).
type OverrideError struct {
	Name, Value, Msg string
}

func (e *OverrideError) Error() string {
	return fmt.Sprintf("setting %s = %q: %s", e.Name, e.Value, e.Msg)
}

// Recommend returns the settings for in under preset, with overrides (by
// server name; hyphens read as underscores) over them.
func Recommend(in Input, preset PresetName, overrides map[string]string) (Settings, error) {
	in, err := Normalize(in)
	if err != nil {
		return nil, err
	}
	var s Settings
	if !slices.Contains(PresetNames(), string(preset)) {
		return nil, fmt.Errorf("unknown preset %q: want one of %s", preset, strings.Join(PresetNames(), ", "))
	}
	asked := in
	// max_connections set is the connections to plan for, as
	// --max-connections is: the per-connection memory and the budget
	// scale to it; given both ways, they must agree
	for k, v := range overrides {
		name, raw := overrideName(in.Flavor.Family(), k, v)
		if name != "max_connections" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		switch {
		case err != nil || n <= 0: // refused by the setting's own check below
		case in.MaxConnections == 0:
			in.MaxConnections, in.ConnectionsAsk = n, "the override max_connections = "+strconv.Itoa(n)
		case n != in.MaxConnections:
			return nil, &OverrideError{Name: k, Value: v, Msg: fmt.Sprintf(
				"the connections planned for are %d (the host's max_connections in the inventory, or --max-connections): give the number once", in.MaxConnections)}
		}
	}
	s = rules(in, preset)
	// what the preset says without the overrides, for their reasons: a
	// max_connections override changes the preset's own value too
	said := rules(asked, preset)
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name, raw := overrideName(in.Flavor.Family(), k, overrides[k])
		p, ok := lookup(in.Flavor, in.Version, name)
		if !ok {
			msg := fmt.Sprintf("unknown %s %s setting", flavorName(in.Flavor), in.Version)
			if why := otherVersions(in.Flavor, in.Version, name); why != "" {
				msg = why
			} else if other := otherFlavors(in.Flavor, name); other != "" {
				msg = fmt.Sprintf("%s has no %s (it is a %s setting)", flavorName(in.Flavor)+" "+in.Version, name, other)
			} else if sug := units.Closest(name, Names(in.Flavor, in.Version)); sug != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sug)
			}
			return nil, &OverrideError{Name: k, Value: raw, Msg: msg}
		}
		v, err := p.parse(raw)
		if err != nil {
			return nil, &OverrideError{Name: k, Value: raw, Msg: fmt.Sprintf("want %s: %v", p.Kind.Article(), err)}
		}
		const yours = "yours ([host.settings] or --set)"
		set := Setting{Name: name, Value: v, Why: yours, Override: true}
		replaced := false
		for i := range s {
			if s[i].Name == name {
				set.Why = yours
				for _, x := range said {
					if x.Name == name {
						set.Why = yours + "; the preset says " + x.Value.Render(in.Flavor)
					}
				}
				s[i] = set
				replaced = true
			}
		}
		if !replaced {
			s = append(s, set)
		}
	}
	// seed is the write-ups' settings verbatim, the rest at the server's
	// defaults; the other presets and every override must fit in RAM
	if preset != Seed || len(overrides) > 0 {
		if err := checkBudget(in, s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// rules are the preset's settings for in.
func rules(in Input, preset PresetName) Settings {
	s := mysqlFamily
	if in.Flavor == dbms.Postgres {
		s = postgres
	}
	if in.Replication == nil {
		return s(in, preset)
	}
	return over(s(in, preset), replication(in, preset))
}

// Check is an override as the inventory can check it before any host is
// touched, when only the engine family is known (postgres, or mysql for
// MySQL and MariaDB): the name must be one the tuner knows for some
// version of the family's flavours, and the value must parse as that
// setting's type, in its range. What needs the host's facts (its exact
// version, the memory budget) waits for Recommend. Its error is an
// *OverrideError.
func Check(family dbms.Family, name, raw string) error {
	flavors := []dbms.Flavor{dbms.Postgres}
	if family == dbms.MySQLFamily {
		flavors = []dbms.Flavor{dbms.MySQL, dbms.MariaDB}
	}
	key, raw := overrideName(family, name, raw)
	var known []string
	var firstErr error
	for _, p := range params {
		if !slices.ContainsFunc(flavors, func(f dbms.Flavor) bool { return slices.Contains(p.Flavors, f) }) {
			continue
		}
		known = append(known, p.Name)
		if p.Name != key {
			continue
		}
		if _, err := p.parse(raw); err != nil {
			firstErr = &OverrideError{Name: name, Value: raw, Msg: fmt.Sprintf("want %s: %v", p.Kind.Article(), err)}
			continue
		}
		return nil
	}
	if firstErr != nil {
		return firstErr
	}
	what := map[bool]string{true: "PostgreSQL", false: "MySQL or MariaDB"}[family == dbms.PostgresFamily]
	msg := fmt.Sprintf("pidb does not set %s on %s", key, what)
	if other := otherFamily(family, key); other != "" {
		msg = fmt.Sprintf("%s has no %s (it is a %s setting)", what, key, other)
	} else if sug := units.Closest(key, known); sug != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", sug)
	} else {
		msg += ": it sets only the settings of its catalogue (pidb tune show lists them); commands, libraries, includes and paths are never set from an inventory"
	}
	return &OverrideError{Name: name, Value: raw, Msg: msg}
}

// otherFamily names the other engine family when it has the setting.
func otherFamily(family dbms.Family, name string) string {
	for _, p := range params {
		if p.Name != name {
			continue
		}
		pgHas := slices.Contains(p.Flavors, dbms.Postgres)
		if family == dbms.PostgresFamily && !pgHas {
			return "MySQL/MariaDB"
		}
		if family != dbms.PostgresFamily && pgHas {
			return "PostgreSQL"
		}
	}
	return ""
}

// overrideName is an override's setting as the tuner names it: lower
// case, hyphens read as underscores, and on MySQL and MariaDB
// skip-log-bin = true read as log_bin = off.
func overrideName(family dbms.Family, name, raw string) (string, string) {
	key := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(name), "-", "_"))
	if family != dbms.PostgresFamily && key == "skip_log_bin" {
		return "log_bin", negate(raw)
	}
	return key, raw
}

func negate(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "yes", "1":
		return "off"
	case "off", "false", "no", "0":
		return "on"
	}
	return v
}

// PresetNames are the presets' names, in Presets' order: what the
// inventory and the flags may name.
func PresetNames() []string {
	var n []string
	for _, p := range Presets() {
		n = append(n, string(p.Name))
	}
	return n
}

func flavorName(f dbms.Flavor) string {
	return map[dbms.Flavor]string{dbms.Postgres: "PostgreSQL", dbms.MySQL: "MySQL", dbms.MariaDB: "MariaDB"}[f]
}

// otherFlavors names the flavours that do have name, for a clearer error.
func otherFlavors(flavor dbms.Flavor, name string) string {
	var has []string
	for _, f := range []dbms.Flavor{dbms.Postgres, dbms.MySQL, dbms.MariaDB} {
		if f == flavor {
			continue
		}
		for _, p := range params {
			if p.Name == name && p.has(f, versionFor(p, f)) {
				has = append(has, flavorName(f))
				break
			}
		}
	}
	return strings.Join(has, "/")
}

// otherVersions says why the flavour at version v has no name where an
// earlier or a later version of it has: "" where none has.
func otherVersions(flavor dbms.Flavor, v, name string) string {
	server := flavorName(flavor) + " " + v
	for _, p := range params {
		if p.Name != name || !slices.Contains(p.Flavors, flavor) || p.has(flavor, v) {
			continue
		}
		switch {
		case p.Until != "" && p.Successor != "":
			return fmt.Sprintf("on %s, %s is deprecated (since %s) and ignored where %s is set, as pidb sets it: set %s instead", server, name, p.Until, p.Successor, p.Successor)
		case p.Until != "":
			return fmt.Sprintf("%s has no %s: %s had it before %s", server, name, flavorName(flavor), p.Until)
		case p.Since != "":
			return fmt.Sprintf("%s has no %s: %s has it from %s on", server, name, flavorName(flavor), p.Since)
		}
	}
	return ""
}

// versionFor picks a version of flavor inside p's range, for otherFlavors.
func versionFor(p Param, flavor dbms.Flavor) string {
	if p.Since != "" {
		return p.Since
	}
	if p.Until != "" {
		return "0"
	}
	return DefaultVersion(flavor)
}

// ParseFile reads the settings of a drop-in file as Render writes it (and
// as a person might edit it): "name = value" lines under an optional
// [mysqld], "# comments", and the bare "skip-log-bin". Unknown names and bad
// values are errors naming the line.
func ParseFile(in Input, text string) (Settings, error) {
	in, err := Normalize(in)
	if err != nil {
		return nil, err
	}
	var s Settings
	for i, line := range strings.Split(text, "\n") {
		if j := strings.Index(line, "#"); j >= 0 {
			line = line[:j]
		}
		line = strings.TrimSpace(line)
		if line == "" || line == "[mysqld]" {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name = strings.ReplaceAll(strings.TrimSpace(name), "-", "_")
		value = strings.Trim(strings.TrimSpace(value), `'"`)
		if isMySQLFamily(in.Flavor) && (!ok && (name == "skip_log_bin" || name == "log_bin") || ok && name == "log_bin" && value == binlogName) {
			s = append(s, Setting{Name: "log_bin", Value: Switch(name == "log_bin")})
			continue
		}
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not name = value", i+1, line)
		}
		p, found := lookup(in.Flavor, in.Version, name)
		if !found {
			return nil, fmt.Errorf("line %d: unknown %s setting %q", i+1, flavorName(in.Flavor), name)
		}
		v, err := p.parse(value)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %v", i+1, name, err)
		}
		s = append(s, Setting{Name: name, Value: v})
	}
	return s, nil
}
