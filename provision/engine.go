package provision

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"pidb/facts"
	"pidb/remote"
	"pidb/tune"
)

// engine is what provisioning needs to know about an installed server: where
// its drop-in goes, how to check a configuration, restart it, see that it
// is up, and read its live settings.
type engine struct {
	flavor   string // postgres, mysql, mariadb
	version  string // as installed: "15.18", "10.11.6", "8.0.39"
	tuneAs   string // the version the tuner models: a minor upgrade changes no setting
	major    string // PostgreSQL's major version: its folders are named after it
	service  string // the unit to restart
	confPath string
}

// engineOf describes the server the facts found.
func engineOf(f facts.Facts) (engine, error) {
	e := engine{flavor: f.Engine.Flavor, version: f.Engine.Version}
	switch e.flavor {
	case "postgres":
		e.major = strings.SplitN(e.version, ".", 2)[0]
		e.tuneAs = e.major
		e.service = "postgresql@" + e.major + "-main"
		e.confPath = "/etc/postgresql/" + e.major + "/main/conf.d/90-pidb.conf"
	case "mariadb":
		e.tuneAs = majorMinor(e.version)
		e.service = "mariadb"
		e.confPath = "/etc/mysql/mariadb.conf.d/90-pidb.cnf"
	case "mysql":
		e.tuneAs = e.version // 8.0.30 changed how the redo log is sized
		e.service = "mysql"
		e.confPath = "/etc/mysql/mysql.conf.d/90-pidb.cnf"
	default:
		return e, fmt.Errorf("no database engine installed")
	}
	return e, nil
}

// checkCmd parses the configuration with the server's own code without
// starting it; it fails on a bad value or an unknown setting.
func (e engine) checkCmd() string {
	switch e.flavor {
	case "postgres":
		return "cd /tmp && runuser -u postgres -- /usr/lib/postgresql/" + e.major + "/bin/postgres -C data_directory -D /etc/postgresql/" + e.major + "/main >/dev/null"
	case "mysql":
		return "cd /tmp && mysqld --validate-config"
	default:
		return "cd /tmp && mariadbd --user=mysql --verbose --help >/dev/null"
	}
}

// restartCmd restarts the server. It first clears systemd's start limit
// (five starts in ten seconds): a rollback right after a failed start, or a
// few quick `tune apply` runs, must not be refused by it.
func (e engine) restartCmd() string {
	return "systemctl reset-failed " + e.service + " 2>/dev/null; systemctl restart " + e.service
}

// readyCmd succeeds once the server accepts connections.
func (e engine) readyCmd() string {
	switch e.flavor {
	case "postgres":
		return "pg_isready -q"
	case "mysql":
		return "mysqladmin ping --silent"
	default:
		return "mariadb-admin ping --silent"
	}
}

// client runs SQL as the server's administrator over the local socket.
func (e engine) client(sql string) string {
	switch e.flavor {
	case "postgres":
		return "cd /tmp && runuser -u postgres -- psql -AtqX -F '|' -c " + remote.Quote(sql)
	case "mysql":
		return "mysql -NB -e " + remote.Quote(sql)
	default:
		return "mariadb -NB -e " + remote.Quote(sql)
	}
}

// readBackSQL asks for the live values of the settings.
func (e engine) readBackSQL(s tune.Settings) string {
	if e.flavor == "postgres" {
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

// compareLive parses the output of readBackSQL and lists every setting whose
// live value differs from the tuner's.
func (e engine) compareLive(s tune.Settings, out string) []Mismatch {
	live := map[string][2]string{} // name -> value, unit
	if e.flavor == "postgres" {
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
		want := x.Value.Render(e.flavor)
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
