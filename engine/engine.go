// Package engine is what pidb knows about each database server flavour
// (postgres, mysql, mariadb), below provisioning, the benchmarks and
// validation: its port, its service, where pidb's drop-in goes, how to check
// a configuration, restart the server and see that it is up, its
// administrator's client on the host, and how to read settings back and
// compare them with the tuner's. It does no I/O but Live, which runs the
// read-back through a remote.Runner.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"pidb/facts"
	"pidb/inventory"
	"pidb/remote"
	"pidb/tune"
)

// BenchDatabase is pidb's own database, where the workloads keep their
// data; BenchUser is the account that owns it and that the workloads log in as.
// The inventory refuses both names for applications.
const (
	BenchDatabase = inventory.Pidb
	BenchUser     = inventory.Pidb
)

// Engine is an installed server (or, before the install, the one the
// distribution would install).
type Engine struct {
	Flavor   string // postgres, mysql, mariadb
	Version  string // as installed: "15.18", "10.11.6", "8.0.39"
	TuneAs   string // the version the tuner models: a minor upgrade changes no setting
	Major    string // PostgreSQL's major version: its folders are named after it
	Service  string // the unit to restart
	ConfPath string // pidb's drop-in with the tuner's settings
}

// Of describes the server the facts found.
func Of(f facts.Facts) (Engine, error) { return New(f.Engine.Flavor, f.Engine.Version) }

// New describes a server by flavour and version.
func New(flavor, version string) (Engine, error) {
	e := Engine{Flavor: flavor, Version: version}
	switch e.Flavor {
	case "postgres":
		e.Major = strings.SplitN(e.Version, ".", 2)[0]
		e.TuneAs = e.Major
		e.Service = "postgresql@" + e.Major + "-main"
		e.ConfPath = "/etc/postgresql/" + e.Major + "/main/conf.d/90-pidb.conf"
	case "mariadb":
		e.TuneAs = majorMinor(e.Version)
		e.Service = "mariadb"
		e.ConfPath = "/etc/mysql/mariadb.conf.d/90-pidb.cnf"
	case "mysql":
		e.TuneAs = e.Version // 8.0.30 changed how the redo log is sized
		e.Service = "mysql"
		e.ConfPath = "/etc/mysql/mysql.conf.d/90-pidb.cnf"
	default:
		return e, errors.New("no PostgreSQL, MySQL or MariaDB is installed on the host: pidb provision installs one")
	}
	return e, nil
}

// CheckCmd parses the configuration with the server's own code without
// starting it; it fails on a bad value or an unknown setting.
func (e Engine) CheckCmd() string {
	switch e.Flavor {
	case "postgres":
		return "cd /tmp && runuser -u postgres -- /usr/lib/postgresql/" + e.Major + "/bin/postgres -C data_directory -D /etc/postgresql/" + e.Major + "/main >/dev/null"
	case "mysql":
		return "cd /tmp && mysqld --validate-config"
	default:
		return "cd /tmp && mariadbd --user=mysql --verbose --help >/dev/null"
	}
}

// RestartCmd restarts the server. It first clears systemd's start limit
// (five starts in ten seconds): a rollback right after a failed start, or a
// few quick `tune apply` runs, must not be refused by it.
func (e Engine) RestartCmd() string {
	return "systemctl reset-failed " + e.Service + " 2>/dev/null; systemctl restart " + e.Service
}

// ReadyCmd succeeds once the server accepts connections.
func (e Engine) ReadyCmd() string {
	switch e.Flavor {
	case "postgres":
		return "pg_isready -q"
	case "mysql":
		return "mysqladmin ping --silent"
	default:
		return "mariadb-admin ping --silent"
	}
}

// Client is the command that runs SQL as the server's administrator over the local socket.
func (e Engine) Client(sql string) string {
	switch e.Flavor {
	case "postgres":
		return "cd /tmp && runuser -u postgres -- psql -AtqX -F '|' -c " + remote.Quote(sql)
	case "mysql":
		return "mysql -NB -e " + remote.Quote(sql)
	default:
		return "mariadb -NB -e " + remote.Quote(sql)
	}
}

// ReadBackSQL asks for the live values of the settings.
func (e Engine) ReadBackSQL(s tune.Settings) string {
	if e.Flavor == "postgres" {
		var names []string
		for _, x := range s {
			names = append(names, "'"+x.Name+"'")
		}
		return "SELECT name, setting, coalesce(unit, '') FROM pg_settings WHERE name IN (" + strings.Join(names, ", ") + ")"
	}
	var cols []string
	for _, x := range s {
		cols = append(cols, "@@"+x.Name)
	}
	return "SELECT " + strings.Join(cols, ", ")
}

// Mismatch is a setting whose live value is not what was written.
type Mismatch struct {
	Name, Want, Live string
}

// CompareLive parses the output of ReadBackSQL and lists every setting whose
// live value differs from the tuner's.
func (e Engine) CompareLive(s tune.Settings, out string) []Mismatch {
	live := map[string][2]string{} // name -> value, unit
	if e.Flavor == "postgres" {
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Split(line, "|")
			if len(f) == 3 {
				live[f[0]] = [2]string{f[1], f[2]}
			}
		}
	} else {
		f := strings.Split(strings.TrimRight(out, "\n"), "\t")
		for i, x := range s {
			if i < len(f) {
				live[x.Name] = [2]string{f[i], ""}
			}
		}
	}
	var bad []Mismatch
	for _, x := range s {
		l, ok := live[x.Name]
		want := x.Value.Render(e.Flavor)
		if !ok {
			bad = append(bad, Mismatch{x.Name, want, "(not reported)"})
			continue
		}
		if !sameValue(x.Value, l[0], l[1]) {
			shown := l[0]
			if l[1] != "" {
				shown += " x " + l[1]
			}
			bad = append(bad, Mismatch{x.Name, want, shown})
		}
	}
	return bad
}

// pgUnits are pg_settings' units in bytes or milliseconds.
var pgUnits = map[string]float64{"B": 1, "kB": 1 << 10, "8kB": 8 << 10, "16kB": 16 << 10, "MB": 1 << 20, "GB": 1 << 30,
	"ms": 1, "s": 1000, "min": 60000, "h": 3600000, "d": 86400000}

// sameValue compares a tuner value with a live one: PostgreSQL's setting
// and unit, or MySQL's @@variable.
func sameValue(v tune.Value, raw, unit string) bool {
	raw = strings.TrimSpace(raw)
	num := func() (float64, bool) {
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return 0, false
		}
		if unit != "" {
			m, ok := pgUnits[unit]
			if !ok {
				return 0, false
			}
			f *= m
		}
		return f, true
	}
	switch v.Kind {
	case tune.Bytes:
		f, ok := num()
		return ok && f == float64(v.Bytes)
	case tune.Int:
		f, ok := num()
		return ok && f == float64(v.Int)
	case tune.Float:
		f, ok := num()
		return ok && math.Abs(f-v.Float) < 1e-9
	case tune.Duration:
		f, ok := num()
		return ok && f == float64(v.Dur.Milliseconds())
	case tune.Bool:
		switch strings.ToLower(raw) {
		case "on", "1", "true", "yes":
			return v.Bool
		case "off", "0", "false", "no":
			return !v.Bool
		}
		return false
	case tune.Enum:
		return strings.EqualFold(raw, v.Word)
	}
	return false
}

// majorMinor keeps the first two parts of a version: "10.11.6" -> "10.11".
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	return strings.Join(parts[:min(2, len(parts))], ".")
}

// Family is the engine family of a flavour, as the inventory names it:
// "postgres", or "mysql" for MySQL and MariaDB.
func Family(flavor string) string {
	if flavor == "postgres" {
		return "postgres"
	}
	return "mysql"
}

// Port is the TCP port of an engine ("postgres", or the MySQL family by
// any of its names): the servers' defaults, which provisioning keeps.
func Port(engine string) int {
	if engine == "postgres" {
		return 5432
	}
	return 3306
}

// Port is the server's TCP port.
func (e Engine) Port() int { return Port(e.Flavor) }

// Desired is what the tuner wants for a host running e: its board (the
// facts), its preset and its [host.settings]. An override the tuner refuses
// is an *inventory.Error at its line in the inventory file invPath.
func Desired(e Engine, f facts.Facts, h inventory.Host, invPath, preset string) (tune.Input, tune.Settings, error) {
	in := tune.Input{Flavor: e.Flavor, Version: e.TuneAs, RAMBytes: f.RAMBytes, CPUs: f.CPUs, Storage: f.Storage,
		MaxConnections: h.Connections}
	overrides := map[string]string{}
	for k, v := range h.Settings {
		overrides[k] = fmt.Sprint(v.Raw)
	}
	s, err := tune.Recommend(in, preset, overrides)
	if err != nil {
		var oe *tune.OverrideError
		if errors.As(err, &oe) {
			if v, ok := h.Settings[strings.ReplaceAll(oe.Name, "-", "_")]; ok {
				return in, nil, &inventory.Error{File: invPath, Line: v.Line, Msg: err.Error()}
			}
		}
		return in, nil, err
	}
	in, _ = tune.Normalize(in)
	return in, s, nil
}

// Live reads the live values of s as the server's administrator, through
// root on the host, and lists those that differ.
func Live(ctx context.Context, root remote.Runner, e Engine, s tune.Settings) ([]Mismatch, error) {
	res, err := root.Run(ctx, e.Client(e.ReadBackSQL(s)))
	if err != nil {
		return nil, fmt.Errorf("read the live settings: %w", err)
	}
	return e.CompareLive(s, string(res.Stdout)), nil
}

// Sentences are the mismatches as people read them: "NAME is LIVE, not WANT".
func Sentences(bad []Mismatch) []string {
	var out []string
	for _, m := range bad {
		out = append(out, fmt.Sprintf("%s is %s, not %s", m.Name, m.Live, m.Want))
	}
	return out
}
