// Package inventory reads pidb's TOML inventory: the hosts to manage, their
// SSH access, engine, preset, per-host settings, application databases, and
// the [bench], [thermal] and [validate] sections, which it checks by type and
// keeps as raw values for the packages that own them.
//
// Every error names the file and line (FILE:LINE: message). Load reports all
// the errors it finds at once, not only the first. It refuses, before
// decoding, a file larger than MaxSize or nested deeper than MaxDepth.
package inventory

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"pidb/dbms"
	"pidb/usage"
)

// Inventory is a loaded, validated inventory with defaults applied.
type Inventory struct {
	Path     string // absolute path of the inventory file
	Hosts    []Host // in file order
	Bench    Section
	Thermal  Section
	Validate Section
	// Clusters are the [[cluster]] tables: primaries and their replicas,
	// each host in one at most
	Clusters []Cluster
	// Warnings are what the inventory allows but should not, each
	// "FILE:LINE: host "x": ..." (the line of the key that allows it), in
	// host order: tls = false on a host whose allow_from reaches beyond
	// loopback and the private ranges. `pidb inventory check` prints them.
	Warnings []string
}

// Host is one managed Pi with every default resolved.
type Host struct {
	Name         string
	Address      string
	Port         int
	User         string
	IdentityFile string // absolute; "" means the ssh-agent only
	KnownHosts   string // absolute
	Engine       dbms.Family
	Preset       string
	AllowFrom    []netip.Prefix // empty: the database listens on localhost only
	AllowPublic  bool           // allow_from may name addresses beyond loopback and the private ranges (privateRanges), however few; 0.0.0.0/0 is the whole internet
	TLS          bool           // logins from allow_from must use TLS (tls = true, the default)
	Storage      string         // "" = detect; else sd, usb or nvme
	// DataDevice is the drive the database's data directory moves to:
	// "/dev/sda", "/dev/nvme0n1", or "auto" (the first USB or NVMe disk with
	// nothing mounted from it); "" leaves the data where it is
	DataDevice string
	// DataDeviceWipe lets pidb erase what DataDevice holds (else it takes
	// only a blank drive, or one with pidb's own data directory)
	DataDeviceWipe bool
	// OSGovernor is the CPU frequency governor the os step sets; ""
	// means performance, "ondemand" the distribution's
	OSGovernor string
	// OSJournal is where the journal keeps its logs: "" or "persistent"
	// (on the card, bounded), "volatile" (in RAM only)
	OSJournal   string
	Connections int        // max_connections: the connections to plan for; 0 = scaled to RAM
	Settings    Section    // [host.settings]: tuner overrides, checked by the tuner
	Databases   []Database // [[host.database]]
	Bench       Section    // [bench] with this host's [host.bench] over it
	// Cluster is the [[cluster]] the host is in, as its primary or a
	// replica (Cluster.Primary names which); nil on its own
	Cluster *Cluster
	Line    int // where the host's [[host]] header is
	// Lines are where its keys of [defaults] came from: the host's own
	// line or [defaults]'s, by key; a key not there took pidb's default.
	Lines map[string]int
}

// NetworkTLS reports whether the host's logins from the network must use
// TLS: it has allow_from, and tls is not false.
func (h Host) NetworkTLS() bool { return h.TLS && len(h.AllowFrom) > 0 }

// Database is an application database and the user that owns it.
type Database struct {
	Name  string
	Owner string
	// Adopt (adopt = true) lets provisioning take over an owner that is
	// on the server already and that pidb did not make; without it such
	// an owner is refused
	Adopt bool
	Line  int
}

// Value is a raw TOML value (string, int64, float64 or bool) and its line.
type Value struct {
	Raw  any
	Line int
}

// Section is a table of raw values by key, already checked by type; package
// config decodes [bench], [thermal] and [validate] into typed structs.
type Section map[string]Value

// Keys returns the section's keys in sorted order.
func (s Section) Keys() []string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// String returns the string at key, or def when it is not set.
func (s Section) String(key, def string) string {
	if v, ok := s[key].Raw.(string); ok {
		return v
	}
	return def
}

// Error is one problem in an inventory, at a line of its file (0: the
// whole file): input refused (package usage), exit code 2.
type Error = usage.Error

// Option changes how an inventory is checked.
type Option func(*parser)

// Presets names the tuner's presets an inventory may name, and the one a
// host without a preset gets (package tune, which this package does not
// import). Without it any name passes here, the tuner refuses an unknown
// one, and a host without a preset has none.
func Presets(def string, names ...string) Option {
	return func(p *parser) { p.presets, p.defaultPreset = names, def }
}

// Keys has the inventory refuse an identity_file that check refuses (one
// that is not there: an error wrapping fs.ErrNotExist; a public key, or no
// key at all: a sentence that names the file; remote.CheckKey, which this
// package does not import), at its line, as every command would before it
// connects: the check pidb inventory check makes of the controller's own
// files. Without it the files are not looked at.
func Keys(check func(file string) error) Option {
	return func(p *parser) { p.checkKeyFile = check }
}

// Settings checks each [host.settings] value against the tuner's catalogue
// for the host's engine family (package tune, which this package does not
// import): check returns why a setting is refused, and the inventory
// reports it at the setting's line. Without it the tuner refuses a bad
// one when it runs for the host.
func Settings(check func(engine dbms.Family, name, value string) error) Option {
	return func(p *parser) { p.settings = check }
}

// Durability has the inventory warn, at its line, of each [host.settings]
// value that warn says trades the database's durability (what a power cut
// then loses; "" for none: tune.Durability, which this package does not
// import), once a line.
func Durability(warn func(engine dbms.Family, name, value string) string) Option {
	return func(p *parser) { p.durability = warn }
}

// Load reads, checks and resolves the inventory at path. It reads no more
// than MaxSize bytes of it, and refuses a larger file.
func Load(path string, opts ...Option) (*Inventory, error) {
	src, err := readCapped(path)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	inv, err := Parse(path, filepath.Dir(abs), string(src), opts...)
	if err != nil {
		return nil, err
	}
	inv.Path = abs
	return inv, nil
}

// readCapped reads the file at path, up to MaxSize bytes: a larger file is
// an error, with its size where the file can tell it.
func readCapped(path string) ([]byte, error) {
	cannot := func(err error) error {
		if u := errors.Unwrap(err); u != nil {
			err = u
		}
		return &Error{File: path, Msg: fmt.Sprintf("cannot read inventory: %v", err)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, cannot(err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, cannot(err)
	}
	if len(src) > MaxSize {
		size := int64(-1)
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
		return nil, tooBig(path, size)
	}
	return src, nil
}

// Parse checks and resolves an inventory read from name (used in errors and
// as Path), whose relative paths resolve against dir. Like Load, it refuses
// src larger than MaxSize or nested deeper than MaxDepth before decoding it.
func Parse(name, dir, src string, opts ...Option) (*Inventory, error) {
	if err := checkLimits(name, src); err != nil {
		return nil, err
	}
	var doc map[string]any
	if _, err := toml.Decode(src, &doc); err != nil {
		// a YAML or JSON inventory (Ansible's are YAML): say what the
		// file must be, not only where TOML's parser stopped
		hint := ""
		switch strings.ToLower(filepath.Ext(name)) {
		case ".yaml", ".yml":
			hint = ": pidb's inventory is TOML ([[host]] tables of name = \"value\" lines; README, The inventory), not YAML"
		case ".json":
			hint = ": pidb's inventory is TOML ([[host]] tables of name = \"value\" lines; README, The inventory), not JSON"
		}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{File: name, Line: pe.Position.Line, Msg: pe.Message + hint}
		}
		return nil, &Error{File: name, Msg: err.Error() + hint}
	}
	p := &parser{file: name, dir: dir, lines: scanKeyLines(src)}
	for _, o := range opts {
		o(p)
	}
	inv := p.inventory(doc)
	if len(p.errs) > 0 {
		sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
		// a file of thousands of mistakes (or one of a megabyte's value)
		// gets the first MaxErrors, each of a sentence's length
		var errs []error
		for i, e := range p.errs {
			if i == MaxErrors {
				errs = append(errs, &Error{File: name, Msg: fmt.Sprintf("and %d more errors: mend these first", len(p.errs)-MaxErrors)})
				break
			}
			if len(e.Msg) > maxMsg {
				cut := maxMsg
				for cut > 0 && !utf8.RuneStart(e.Msg[cut]) {
					cut--
				}
				e.Msg = e.Msg[:cut] + fmt.Sprintf("... (%d bytes more)", len(e.Msg)-cut)
			}
			errs = append(errs, e)
		}
		return nil, errors.Join(errs...)
	}
	inv.Path = name
	inv.Warnings = p.warnings
	return inv, nil
}

// MaxErrors is how many of an inventory's errors pidb reports, in the
// order of their lines; maxMsg how long each may be.
const (
	MaxErrors = 50
	maxMsg    = 1000
)

type parser struct {
	file          string
	dir           string
	lines         keyLines
	errs          []*Error
	warnings      []string                   // each FILE:LINE: message
	sections      map[string]map[string]Rule // the settings sections' keys; nil: any
	presets       []string                   // the presets [defaults] and hosts may name; nil: any
	defaultPreset string                     // a host's preset when it names none
	checkKeyFile  func(string) error         // refuse an identity_file it refuses (Keys)
	durability    func(engine dbms.Family, name, value string) string
	durableWarned map[int]bool // the lines of settings warned of (Durability)
	// defaultsAddress: [defaults] has an address, refused there (a
	// host's own); no host is then also said to have none
	defaultsAddress bool
	keysMissing     map[int]bool // the lines of those refused
	settings        func(engine dbms.Family, name, value string) error
}

// accessKeys is the schema of the keys [defaults] and a host share.
func (p *parser) accessKeys() table {
	t := table{}
	for k, c := range accessKeys {
		t[k] = c
	}
	if p.presets != nil {
		t["preset"] = oneOf(p.presets...)
	}
	return t
}

// settingsSection checks a settings section's table against its declared keys
// (the Sections option), or takes it as it is without a declaration.
func (p *parser) settingsSection(section string, path []string, m map[string]any) Section {
	if p.sections == nil {
		sec := Section{}
		for k, v := range m {
			sec[k] = Value{Raw: v, Line: p.lines.line(appendPath(path, k)...)}
		}
		return sec
	}
	for k, v := range m {
		if s, ok := v.(string); ok && s != "" && p.sections[section][k].Path {
			m[k] = p.resolvePath(s)
		}
	}
	return p.checkTable(path, m, p.sectionKeys(section))
}

func (p *parser) errorf(path []string, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: p.lines.line(path...), Msg: fmt.Sprintf(format, args...)})
}

// warnf records a warning at line, in the errors' form.
func (p *parser) warnf(line int, format string, args ...any) {
	p.warnings = append(p.warnings, (&Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}).Error())
}

// checkTable reports unknown keys and bad values in m against schema t and
// returns the values that passed, as a Section.
func (p *parser) checkTable(path []string, m map[string]any, t table, nested ...string) Section {
	sec := Section{}
	known := make([]string, 0, len(t)+len(nested))
	for k := range t {
		known = append(known, k)
	}
	known = append(known, nested...)
	for _, k := range sortedKeys(m) {
		v := m[k]
		kp := appendPath(path, k)
		if contains(nested, k) {
			continue
		}
		c, ok := t[k]
		if !ok && len(path) == 1 && path[0] == "defaults" && (k == "address" || k == "name") {
			p.errorf(kp, "%s in [defaults]: each host has its own, in its [[host]] table", k)
			continue
		}
		if !ok {
			p.errorf(kp, "unknown key %q in %s%s", k, describe(path), suggest(k, known))
			continue
		}
		if err := c(v); err != nil {
			p.errorf(kp, "%s: %v", dotted(kp), err)
			continue
		}
		sec[k] = Value{Raw: v, Line: p.lines.line(kp...)}
	}
	return sec
}

func (p *parser) inventory(doc map[string]any) *Inventory {
	inv := &Inventory{}
	for _, k := range sortedKeys(doc) {
		if !contains(topLevel, k) {
			p.errorf([]string{k}, "unknown key %q at the top level%s", k, suggest(k, topLevel))
		}
	}
	defaults := p.subtable(doc, nil, "defaults", func(path []string, m map[string]any) Section {
		_, p.defaultsAddress = m["address"]
		return p.checkTable(path, m, p.accessKeys())
	})
	for _, s := range []struct {
		name string
		to   *Section
	}{{"bench", &inv.Bench}, {"thermal", &inv.Thermal}, {"validate", &inv.Validate}} {
		*s.to = p.subtable(doc, nil, s.name, func(path []string, m map[string]any) Section {
			return p.settingsSection(s.name, path, m)
		})
	}

	raw, ok := doc["host"]
	if !ok {
		// a misspelt [[host]] ([[hosts]]) is reported at its line, with
		// "did you mean", as the cause; "no hosts" is only what follows
		if !misspelt(doc, "host", topLevel) {
			p.errs = append(p.errs, &Error{File: p.file, Msg: "no hosts: add at least one [[host]] with a name and an address"})
		}
		return inv
	}
	hosts, ok := raw.([]map[string]any)
	if !ok {
		p.errorf([]string{"host"}, "host: want an array of tables ([[host]]), not %s", tomlType(raw))
		return inv
	}
	if len(hosts) == 0 {
		p.errorf([]string{"host"}, "no hosts: add at least one [[host]] with a name and an address")
	}
	names, places := map[string]Host{}, map[string]Host{}
	for i, h := range hosts {
		path := []string{"host", strconv.Itoa(i)}
		host := p.host(path, h, defaults, inv.Bench)
		if host.Name == "" {
			continue
		}
		if first, dup := names[strings.ToLower(host.Name)]; dup {
			if first.Name == host.Name {
				p.errorf(appendPath(path, "name"), "duplicate host name %q (first defined on line %d)", host.Name, first.Line)
			} else {
				p.errorf(appendPath(path, "name"), "host name %q differs from %q (line %d) only in case: they would share one results folder on a disk that ignores case (a Mac's)", host.Name, first.Name, first.Line)
			}
			continue
		}
		names[strings.ToLower(host.Name)] = host
		if host.Address != "" {
			place := net.JoinHostPort(canonicalAddress(host.Address), strconv.Itoa(host.Port))
			if first, dup := places[place]; dup {
				p.errorf(appendPath(path, "address"), "host %q is at %s, as host %q (line %d) is: one machine would be worked on twice under two names", host.Name, place, first.Name, first.Line)
			} else {
				places[place] = host
			}
		}
		p.fits(host)
		inv.Hosts = append(inv.Hosts, host)
	}
	inv.Clusters = p.clusters(doc, inv.Hosts)
	for i, h := range inv.Hosts {
		if c, _, ok := inv.ClusterOf(h.Name); ok {
			inv.Hosts[i].Cluster = &c
		}
	}
	return inv
}

// checkKey refuses a host's identity file that Keys's check refuses, at
// the line that names it: a host's own, or once at [defaults]'s.
func (p *parser) checkKey(host, file string, own, defaults Section) {
	if p.checkKeyFile == nil {
		return
	}
	bad := p.checkKeyFile(file)
	if bad == nil {
		return
	}
	v, mine := own["identity_file"]
	if !mine {
		v = defaults["identity_file"]
	}
	if p.keysMissing[v.Line] {
		return
	}
	if p.keysMissing == nil {
		p.keysMissing = map[int]bool{}
	}
	p.keysMissing[v.Line] = true
	who := "identity_file"
	if mine {
		who = fmt.Sprintf("host %q: identity_file", host)
	}
	msg := fmt.Sprintf("%s %s does not exist: name the private key pidb logs in with, or make one with ssh-keygen -t ed25519", who, file)
	if !errors.Is(bad, fs.ErrNotExist) {
		msg = fmt.Sprintf("%s: %v", who, bad)
	}
	p.errs = append(p.errs, &Error{File: p.file, Line: v.Line, Msg: msg})
}

// canonicalAddress is an address as two hosts compare it: an IP address
// in its one form, a DNS name in lower case.
func canonicalAddress(a string) string {
	if ip, err := netip.ParseAddr(a); err == nil {
		return ip.Unmap().String()
	}
	return strings.ToLower(strings.TrimSuffix(a, "."))
}

// misspelt reports whether a table holds a key that is not one of known
// and whose nearest known key is want: the error at that key's line
// ("did you mean") is the cause of want's absence.
func misspelt(m map[string]any, want string, known []string) bool {
	for k := range m {
		if !contains(known, k) && closest(k, known) == want {
			return true
		}
	}
	return false
}

// subtable checks that doc[key] is a table and runs f on it.
func (p *parser) subtable(doc map[string]any, parent []string, key string, f func([]string, map[string]any) Section) Section {
	raw, ok := doc[key]
	if !ok {
		return Section{}
	}
	path := appendPath(parent, key)
	m, ok := raw.(map[string]any)
	if !ok {
		p.errorf(path, "%s: want a table, not %s", dotted(path), tomlType(raw))
		return Section{}
	}
	return f(path, m)
}

func (p *parser) host(path []string, m map[string]any, defaults, bench Section) Host {
	h := Host{Line: p.lines.line(path...)}
	own := p.checkTable(path, m, hostKeys(p.accessKeys()), "settings", "database", "bench")
	if _, ok := m["name"]; !ok {
		p.errorf(path, "host has no name")
	}
	// (an address in [defaults] is refused there, as the cause)
	if _, ok := m["address"]; !ok && !misspelt(m, "address", hostKeyNames(p.accessKeys())) && !p.defaultsAddress {
		name, _ := m["name"].(string)
		if name != "" {
			p.errorf(path, "host %q has no address", name)
		} else {
			p.errorf(path, "host has no address")
		}
	}
	if _, ok := own["name"]; !ok {
		return Host{} // reported above or by checkTable
	}
	h.Lines = map[string]int{}
	get := func(key string) (any, bool) {
		if v, ok := own[key]; ok {
			h.Lines[key] = v.Line
			return v.Raw, true
		}
		if v, ok := defaults[key]; ok {
			h.Lines[key] = v.Line
			return v.Raw, true
		}
		return nil, false
	}
	getString := func(key, def string) string {
		if v, ok := get(key); ok {
			return v.(string)
		}
		return def
	}
	h.Name = own["name"].Raw.(string)
	h.Address = own.String("address", "")
	h.Lines["name"], h.Lines["address"] = own["name"].Line, own["address"].Line
	h.Port = 22
	if v, ok := get("port"); ok {
		h.Port = int(v.(int64))
	}
	h.User = getString("user", "pi")
	if f := getString("identity_file", ""); f != "" {
		h.IdentityFile = p.resolvePath(f)
		p.checkKey(h.Name, h.IdentityFile, own, defaults)
	}
	h.KnownHosts = p.resolvePath(getString("known_hosts", "~/.ssh/known_hosts"))
	h.Engine = normalizeEngine(getString("engine", string(dbms.PostgresFamily)))
	h.Preset = getString("preset", p.defaultPreset)
	h.Storage = getString("storage", "")
	h.DataDevice = getString("data_device", "")
	h.OSGovernor = getString("os_governor", "")
	h.OSJournal = getString("os_journal", "")
	if v, ok := get("data_device_wipe"); ok {
		h.DataDeviceWipe = v.(bool)
		if h.DataDevice == "" {
			p.errs = append(p.errs, &Error{File: p.file, Line: h.Lines["data_device_wipe"], Msg: fmt.Sprintf("host %q: data_device_wipe without data_device: name the drive it may erase", h.Name)})
		}
	}
	// storage overrides what facts detect of the data too: "sd" beside a
	// drive the data moves to tunes its I/O for a card
	if h.Storage == "sd" && h.DataDevice != "" {
		p.warnf(h.Lines["storage"], "host %q: storage = \"sd\" beside data_device: storage overrides the data's kind too, so the tuner tunes for an SD card while the data is on the drive; leave storage out (the drive's kind is detected), or name the drive's (usb, nvme)", h.Name)
	}
	if v, ok := get("max_connections"); ok {
		h.Connections = int(v.(int64))
	}
	if v, ok := get("allow_from"); ok {
		for _, item := range v.([]any) {
			pfx, _ := parsePrefix(item.(string))
			h.AllowFrom = append(h.AllowFrom, pfx)
		}
	}
	if v, ok := get("allow_public"); ok {
		h.AllowPublic = v.(bool)
	}
	h.TLS = true
	if v, ok := get("tls"); ok {
		h.TLS = v.(bool)
	}
	allowAt := appendPath(path, "allow_from")
	if _, own := own["allow_from"]; !own {
		allowAt = []string{"defaults", "allow_from"}
	}
	var public []string
	for _, pfx := range h.AllowFrom {
		if what := wideOpen(pfx); what != "" {
			public = append(public, pfx.String())
			if !h.AllowPublic {
				p.errorf(allowAt, "host %q: allow_from %s; set allow_public = true on the host if that is meant", h.Name, what)
			}
		}
		// refused here, before provisioning's access step opens the port
		// for an account step that could not make the accounts
		if h.Engine == dbms.MySQLFamily && !pfx.Addr().Is4() {
			p.errorf(allowAt, "host %q: allow_from %s: MySQL and MariaDB accounts take IPv4 networks only", h.Name, pfx)
		}
	}
	// allowed (allow_public), and still worth saying: passwords and data
	// would cross networks no one here controls in the clear
	if !h.TLS && len(public) > 0 {
		at := defaults["tls"].Line
		if v, ok := own["tls"]; ok {
			at = v.Line
		}
		p.warnf(at, "host %q: tls = false lets logins from %s, beyond loopback and the private ranges, reach the database without TLS: passwords and data cross those networks in the clear; remove tls = false (TLS is the default) unless a tunnel or VPN carries them", h.Name, strings.Join(public, ", "))
	}

	h.Settings = p.subtable(m, path, "settings", func(sp []string, sm map[string]any) Section {
		sec := Section{}
		for _, k := range sortedKeys(sm) {
			kp := appendPath(sp, k)
			if !settingKey.MatchString(k) {
				p.errorf(kp, "%s: bad setting name %q", dotted(kp), k)
				continue
			}
			if err := checkSettingValue(sm[k]); err != nil {
				p.errorf(kp, "%s: %v", dotted(kp), err)
				continue
			}
			if p.settings != nil {
				if err := p.settings(h.Engine, k, fmt.Sprint(sm[k])); err != nil {
					p.errorf(kp, "host %q: %v", h.Name, err)
					continue
				}
			}
			name := strings.ReplaceAll(k, "-", "_")
			line := p.lines.line(kp...)
			if p.durability != nil && !p.durableWarned[line] {
				if w := p.durability(h.Engine, k, fmt.Sprint(sm[k])); w != "" {
					if p.durableWarned == nil {
						p.durableWarned = map[int]bool{}
					}
					p.durableWarned[line] = true
					p.warnf(line, "%s: %s", dotted(kp), w)
				}
			}
			sec[name] = Value{Raw: sm[k], Line: line}
		}
		return sec
	})

	// the connections to plan for, said twice, must be the same number
	if v, ok := h.Settings["max_connections"]; ok && h.Connections > 0 {
		if n, isInt := v.Raw.(int64); !isInt || int(n) != h.Connections {
			p.errorf(appendPath(path, "settings", "max_connections"), "host %q: [host.settings] max_connections = %v, but max_connections = %d plans the connections: give the number once", h.Name, v.Raw, h.Connections)
		}
	}

	h.Bench = Section{}
	for k, v := range bench {
		h.Bench[k] = v
	}
	for k, v := range p.subtable(m, path, "bench", func(bp []string, bm map[string]any) Section {
		return p.settingsSection("bench", bp, bm)
	}) {
		h.Bench[k] = v
	}

	if raw, ok := m["database"]; ok {
		dbs, ok := raw.([]map[string]any)
		if !ok {
			p.errorf(appendPath(path, "database"), "host.database: want an array of tables ([[host.database]]), not %s", tomlType(raw))
		}
		seen := map[string]bool{}
		owners := map[string]Database{} // an owner's first database
		for j, d := range dbs {
			dp := appendPath(path, "database", strconv.Itoa(j))
			sec := p.checkTable(dp, d, databaseKeys)
			db := Database{Name: sec.String("name", ""), Owner: sec.String("owner", ""), Line: p.lines.line(dp...)}
			db.Adopt, _ = sec["adopt"].Raw.(bool)
			for _, k := range []string{"name", "owner"} {
				if _, ok := d[k]; !ok {
					p.errorf(dp, "host %q: database has no %s", h.Name, k)
				}
			}
			if db.Name == "" || db.Owner == "" {
				continue
			}
			if seen[db.Name] {
				p.errorf(appendPath(dp, "name"), "host %q: duplicate database %q", h.Name, db.Name)
				continue
			}
			bad := false
			for _, x := range []struct{ key, name string }{{"name", db.Name}, {"owner", db.Owner}} {
				if why := reservedName(h.Engine, x.name); why != "" {
					p.errorf(appendPath(dp, x.key), "host %q: database %s %q %s: choose another name", h.Name, x.key, x.name, why)
					bad = true
				}
			}
			if bad {
				continue
			}
			// an owner is one account with one password, which pidb keeps
			// per database: a second database of the same owner would make
			// the account twice, with two passwords
			if first, ok := owners[db.Owner]; ok {
				p.errorf(appendPath(dp, "owner"), "host %q: owner %q owns database %q already (line %d): give each database an owner of its own", h.Name, db.Owner, first.Name, first.Line)
				continue
			}
			owners[db.Owner] = db
			seen[db.Name] = true
			h.Databases = append(h.Databases, db)
		}
	}
	return h
}

// resolvePath expands ~ and makes a relative path absolute against the
// inventory's folder.
func (p *parser) resolvePath(s string) string {
	if s == "~" || strings.HasPrefix(s, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			s = filepath.Join(home, s[1:])
		}
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(p.dir, s)
	}
	return filepath.Clean(s)
}

// Select returns the hosts limit selects, in inventory order: names,
// comma-separated, each a host's name or a pattern (pi*, pi[34], as a
// shell matches file names), and !NAME or !PATTERN to leave hosts out
// (with only those, of every host), as Ansible's --limit reads them; ""
// or "all" selects every host. A name that is no host's, a pattern that
// matches none (an exclusion too: a typo there would select a host meant
// to be left out), and a selection of no host are errors.
func (inv *Inventory) Select(limit string) ([]Host, error) {
	limit = strings.TrimSpace(limit)
	if limit == "" || limit == "all" {
		return inv.Hosts, nil
	}
	in, out := map[string]bool{}, map[string]bool{}
	includes, named := false, false
	var unknown []string
	for _, item := range strings.Split(limit, ",") {
		item = strings.TrimSpace(item)
		into := in
		if rest, ok := strings.CutPrefix(item, "!"); ok {
			item, into = strings.TrimSpace(rest), out
		} else if item != "" {
			includes = true
		}
		if item == "" {
			continue
		}
		named = true
		matched := false
		for _, h := range inv.Hosts {
			ok, err := path.Match(item, h.Name)
			if err != nil {
				return nil, &Error{File: inv.Path, Msg: fmt.Sprintf("--limit: bad pattern %q: %v", item, err)}
			}
			if ok {
				into[h.Name], matched = true, true
			}
		}
		if !matched {
			unknown = append(unknown, item)
		}
	}
	if len(unknown) > 0 {
		return nil, inv.unknown("--limit: ", unknown)
	}
	if !named {
		return nil, &Error{File: inv.Path, Msg: fmt.Sprintf("--limit %q names no host", limit)}
	}
	var hosts []Host
	for _, h := range inv.Hosts {
		if (!includes || in[h.Name]) && !out[h.Name] {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		return nil, &Error{File: inv.Path, Msg: fmt.Sprintf("--limit %q selects no host", limit)}
	}
	return hosts, nil
}

// Named returns the host called name; an unknown name is an error that
// lists the hosts there are (a command's argument, not --limit).
func (inv *Inventory) Named(name string) (Host, error) {
	for _, h := range inv.Hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return Host{}, inv.unknown("", []string{name})
}

// unknown is the error for names the inventory has no host of: the hosts
// it has, and the nearest name when one was wrong.
func (inv *Inventory) unknown(prefix string, unknown []string) error {
	names := make([]string, len(inv.Hosts))
	for i, h := range inv.Hosts {
		names[i] = h.Name
	}
	msg := fmt.Sprintf("%sno host named %s in the inventory (hosts: %s)", prefix, quoteList(unknown), strings.Join(names, ", "))
	if strings.ContainsAny(strings.Join(unknown, ""), "*?[") {
		msg = fmt.Sprintf("%sno host matches %s in the inventory (hosts: %s)", prefix, quoteList(unknown), strings.Join(names, ", "))
	}
	if len(unknown) == 1 {
		u := unknown[0]
		switch fields := strings.Fields(u); {
		case len(fields) > 1:
			// --limit 'pi4 pi3': a list, written as a shell's words
			msg += fmt.Sprintf(" (a list of hosts takes commas: --limit %s)", strings.Join(fields, ","))
		case slices.ContainsFunc(inv.Clusters, func(c Cluster) bool { return c.Name == u }):
			msg += fmt.Sprintf(" (%q is a cluster: --cluster %s names it, --limit takes hosts)", u, u)
		default:
			msg += suggest(u, names)
		}
	}
	return &Error{File: inv.Path, Msg: msg}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func appendPath(path []string, more ...string) []string {
	return append(append([]string{}, path...), more...)
}

// dotted writes a path as the user wrote it: host.settings.work_mem.
func dotted(path []string) string {
	var parts []string
	for _, s := range path {
		if _, err := strconv.Atoi(s); err == nil {
			continue
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ".")
}

func describe(path []string) string {
	if len(path) == 0 {
		return "the top level"
	}
	return "[" + dotted(path) + "]"
}
