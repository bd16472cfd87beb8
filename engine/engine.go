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
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"

	"pidb/dbms"
	"pidb/facts"
	"pidb/internal/version"
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

// ReplicationUser is the account a cluster's replicas log in to its
// primary as, for replication and nothing else; the inventory refuses
// it for applications too.
const ReplicationUser = inventory.PidbReplication

// Engine is an installed server (or, before the install, the one the
// distribution would install).
type Engine struct {
	Flavor   dbms.Flavor
	Version  string // as installed: "15.18", "10.11.6", "8.0.39"
	TuneAs   string // the version the tuner models: a minor upgrade changes no setting
	Major    string // PostgreSQL's major version: its folders are named after it
	Service  string // the unit to restart
	ConfPath string // pidb's drop-in with the tuner's settings
}

// For is a flavour's engine before its version is known: what needs no
// version (the administrator's client, Query, Rows, Script, ReadyCmd), its
// programs by their newest names. Paths, units and the tuner need New.
func For(flavor dbms.Flavor) Engine { return Engine{Flavor: flavor} }

// Of describes the server the facts found.
func Of(f facts.Facts) (Engine, error) { return New(f.Engine.Flavor, f.Engine.Version) }

// New describes a server by flavour and version. A version that is not one
// (facts.CheckVersion) is an error: it goes into paths, unit names and
// commands run as root.
func New(flavor dbms.Flavor, ver string) (Engine, error) {
	e := Engine{Flavor: flavor, Version: ver}
	switch e.Flavor {
	case dbms.Postgres, dbms.MariaDB, dbms.MySQL:
		if err := facts.CheckVersion(flavor, ver); err != nil {
			return e, err
		}
	}
	switch e.Flavor {
	case dbms.Postgres:
		e.Major = strings.SplitN(e.Version, ".", 2)[0]
		e.TuneAs = e.Major
		e.Service = "postgresql@" + e.Major + "-main"
		e.ConfPath = "/etc/postgresql/" + e.Major + "/main/conf.d/90-pidb.conf"
	case dbms.MariaDB:
		e.TuneAs = majorMinor(e.Version)
		e.Service = "mariadb"
		e.ConfPath = "/etc/mysql/mariadb.conf.d/90-pidb.cnf"
	case dbms.MySQL:
		e.TuneAs = e.Version // 8.0.30 changed how the redo log is sized
		e.Service = "mysql"
		// after Ubuntu's mysqld.cnf (key_buffer_size = 16M, bind-address):
		// MySQL reads a folder's files in name order, the last one wins
		e.ConfPath = "/etc/mysql/mysql.conf.d/zz-pidb.cnf"
	default:
		return e, errors.New("no PostgreSQL, MySQL or MariaDB is installed on the host: pidb provision installs one")
	}
	return e, nil
}

// CheckCmd parses the configuration with the server's own code without
// starting it; it fails on a bad value or an unknown setting.
func (e Engine) CheckCmd() string {
	switch e.Flavor {
	case dbms.Postgres:
		return "cd /tmp && runuser -u postgres -- " +
			remote.Command("/usr/lib/postgresql/"+e.Major+"/bin/postgres", "-C", "data_directory", "-D", "/etc/postgresql/"+e.Major+"/main") + " >/dev/null"
	case dbms.MySQL:
		return "cd /tmp && mysqld --validate-config"
	default:
		return "cd /tmp && " + e.Daemon() + " --user=mysql --verbose --help >/dev/null"
	}
}

// mariadbNames is the first MariaDB whose programs answer to MariaDB's
// own names (mariadb, mariadb-admin, mariadb-dump, mariadbd): 10.4.6 made
// them symlinks, 10.5.2 the programs' names. Before it (Debian 10's and
// Ubuntu 20.04's 10.3) only MySQL's names exist; 10.4 is taken as before
// it, since a distribution's 10.4 may leave the links out.
const mariadbNames = "10.5"

// program is the name of one of the server's programs on the host: its
// MariaDB name, or its MySQL name on Oracle MySQL and on a MariaDB before
// mariadbNames. An engine of no version (a cluster's, read before its
// hosts' versions are known) takes MariaDB's names.
func (e Engine) program(maria, mysql string) string {
	if e.Flavor == dbms.MySQL || (e.Flavor == dbms.MariaDB && e.Version != "" && version.Less(e.Version, mariadbNames)) {
		return mysql
	}
	return maria
}

// Daemon is the MySQL family's server program on the host: mariadbd, or
// mysqld (Oracle MySQL, and MariaDB before mariadbNames).
func (e Engine) Daemon() string { return e.program("mariadbd", "mysqld") }

// SQLClient is the MySQL family's command-line client on the host:
// mariadb, or mysql (Oracle MySQL, and MariaDB before mariadbNames).
func (e Engine) SQLClient() string { return e.program("mariadb", "mysql") }

// DumpClient is the MySQL family's dump client on the host: mariadb-dump,
// or mysqldump (Oracle MySQL, and MariaDB before mariadbNames).
func (e Engine) DumpClient() string { return e.program("mariadb-dump", "mysqldump") }

// RestartCmd restarts the server. It first clears systemd's start limit
// (five starts in ten seconds): a rollback right after a failed start, or a
// few quick `tune apply` runs, must not be refused by it.
func (e Engine) RestartCmd() string {
	return "systemctl reset-failed " + remote.Quote(e.Service) + " 2>/dev/null; systemctl restart " + remote.Quote(e.Service)
}

// StartCmd starts the server, after clearing systemd's start limit as
// RestartCmd does.
func (e Engine) StartCmd() string {
	return "systemctl reset-failed " + remote.Quote(e.Service) + " 2>/dev/null; systemctl start " + remote.Quote(e.Service)
}

// PostgresScript runs the SQL on its standard input as PostgreSQL's
// administrator (psql as postgres over the local socket), stopping at the
// first error: for statements that carry a password's verifier, which no
// command line may show.
const PostgresScript = "cd /tmp && runuser -u postgres -- psql -qAtX -v ON_ERROR_STOP=1 -f -"

// Script runs the SQL on its standard input as the server's administrator,
// stopping at the first error: PostgresScript, or mysql or mariadb in
// batch mode without column names, in utf8mb4 (so that a string's escapes
// mean what they say).
func (e Engine) Script() string {
	if e.Flavor == dbms.Postgres {
		return PostgresScript
	}
	return e.SQLClient() + " --batch --skip-column-names --default-character-set=utf8mb4"
}

// ReadyCmd succeeds once the server accepts connections.
func (e Engine) ReadyCmd() string {
	switch e.Flavor {
	case dbms.Postgres:
		return "pg_isready -q"
	default:
		return e.program("mariadb-admin", "mysqladmin") + " ping --silent"
	}
}

// Settle is the command that writes what the server holds in memory to
// its disk and waits for the disk, before a measured run: PostgreSQL
// checkpoints (as pgbench's users do after pgbench -i), then the kernel
// writes back; on MySQL and MariaDB, whose loads are small, the kernel
// writes back. Without it, a run after a load measures the load's
// writeback too: on an SD card, tens of seconds of it.
func (e Engine) Settle() string {
	if e.Flavor == dbms.Postgres {
		return e.Client("CHECKPOINT") + " && sync"
	}
	return "sync"
}

// Client is the command that runs SQL as the server's administrator over
// the local socket. Its output is for one value (SHOW ssl, SELECT
// @@datadir): a query whose rows pidb reads goes through Query and Rows.
func (e Engine) Client(sql string) string {
	switch e.Flavor {
	case dbms.Postgres:
		return "cd /tmp && runuser -u postgres -- psql -AtqX -F '|' -c " + remote.Quote(sql)
	default:
		return e.SQLClient() + " -NB -e " + remote.Quote(sql)
	}
}

// Query is the command that runs SQL as the server's administrator over
// the local socket and prints its rows so that no value can pass for
// another value or another row (Rows reads them): psql unaligned, tuples
// only, with a NUL byte after each value and each row (-z -0), which no
// PostgreSQL text can hold; mysql and mariadb in batch mode, a tab between
// values and a newline after each row, which the client escapes inside
// values (\t, \n, \0 and \\), in utf8mb4 whatever the host's locale (no
// utf8mb4 character's bytes hold a tab, a newline or a backslash; some
// other character sets' would, and the client prints those unescaped).
// A NULL prints as an empty value on PostgreSQL and as NULL on MySQL:
// queries that read a nullable column coalesce it.
func (e Engine) Query(sql string) string {
	switch e.Flavor {
	case dbms.Postgres:
		return "cd /tmp && runuser -u postgres -- psql -X -A -t -q -z -0 -c " + remote.Quote(sql)
	default:
		return e.Script() + " -e " + remote.Quote(sql)
	}
}

// Rows reads the output of Query: rows of exactly cols values each, every
// value as the server holds it. Output of any other shape is an error, so
// a value can never make a row or a column of its own. On MySQL several
// statements' rows follow each other, so every statement of one Query
// gives the same number of columns.
func (e Engine) Rows(out string, cols int) ([][]string, error) {
	if cols < 1 {
		return nil, fmt.Errorf("rows of %d values", cols)
	}
	if out == "" {
		return nil, nil
	}
	var rows [][]string
	if e.Flavor == dbms.Postgres {
		if !strings.HasSuffix(out, "\x00") {
			return nil, fmt.Errorf("psql's output does not end its last row with a NUL byte (%d bytes)", len(out))
		}
		f := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
		if len(f)%cols != 0 {
			return nil, fmt.Errorf("psql printed %d values, not rows of %d", len(f), cols)
		}
		for i := 0; i < len(f); i += cols {
			rows = append(rows, f[i:i+cols:i+cols])
		}
		return rows, nil
	}
	if !strings.HasSuffix(out, "\n") {
		return nil, fmt.Errorf("the client's output does not end its last row with a newline (%d bytes)", len(out))
	}
	for n, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != cols {
			return nil, fmt.Errorf("row %d has %d values, not %d", n+1, len(f), cols)
		}
		for i, v := range f {
			u, err := unescapeBatch(v)
			if err != nil {
				return nil, fmt.Errorf("row %d, value %d: %w", n+1, i+1, err)
			}
			f[i] = u
		}
		rows = append(rows, f)
	}
	return rows, nil
}

// unescapeBatch undoes the mysql client's batch-mode escapes: \0, \t, \n
// and \\. Any other backslash is not the client's output.
func unescapeBatch(v string) (string, error) {
	if !strings.Contains(v, `\`) {
		return v, nil
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			b.WriteByte(v[i])
			continue
		}
		if i+1 == len(v) {
			return "", errors.New("a value ends in a lone backslash")
		}
		i++
		switch v[i] {
		case '0':
			b.WriteByte(0)
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case '\\':
			b.WriteByte('\\')
		default:
			return "", fmt.Errorf("unknown escape \\%c", v[i])
		}
	}
	return b.String(), nil
}

// ReadBackSQL asks for the live values of the settings, for Query: its
// rows (Rows) hold every value whole, whatever it holds.
func (e Engine) ReadBackSQL(s tune.Settings) string {
	if e.Flavor == dbms.Postgres {
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

// CompareLive parses the output of ReadBackSQL, run through Query (Rows),
// and lists every setting whose live value differs from the tuner's. Output
// that is not what ReadBackSQL asks for is an error: on PostgreSQL a row
// that is not three values, a setting not asked for or reported twice; on
// MySQL anything but one row (the client's batch output, Rows) of a value
// per setting. No output at all reports no setting.
func (e Engine) CompareLive(s tune.Settings, out string) ([]Mismatch, error) {
	live := map[string][2]string{} // name -> value, unit
	if e.Flavor == dbms.Postgres {
		asked := map[string]bool{}
		for _, x := range s {
			asked[x.Name] = true
		}
		rows, err := e.Rows(out, 3)
		if err != nil {
			return nil, fmt.Errorf("read the live settings: %w", err)
		}
		for n, f := range rows {
			if _, twice := live[f[0]]; !asked[f[0]] || twice {
				return nil, fmt.Errorf("read the live settings: row %d names %q, which was not asked for or came twice", n+1, f[0])
			}
			live[f[0]] = [2]string{f[1], f[2]}
		}
	} else if len(s) > 0 {
		rows, err := e.Rows(out, len(s))
		if err != nil {
			return nil, fmt.Errorf("read the live settings: %w", err)
		}
		if len(rows) > 1 {
			return nil, fmt.Errorf("read the live settings: %d rows, not one", len(rows))
		}
		for _, r := range rows {
			for i, x := range s {
				live[x.Name] = [2]string{r[i], ""}
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
	return bad, nil
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
	case tune.Quoted:
		return raw == v.Word
	}
	return false
}

// majorMinor keeps the first two parts of a version: "10.11.6" -> "10.11".
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	return strings.Join(parts[:min(2, len(parts))], ".")
}

// PostgresQuiet keeps a session's statements out of PostgreSQL's logs,
// whatever the server's settings (log_statement, log_min_duration_statement,
// log_min_error_statement, which logs a failed statement's text), and makes
// any password hashed as SCRAM, as pg_hba requires (the default from 14 on):
// the start of every session that carries a password or its verifier.
const PostgresQuiet = "SET log_statement = 'none';\nSET log_min_duration_statement = -1;\nSET log_duration = off;\n" +
	"SET log_min_error_statement = panic;\nSET password_encryption = 'scram-sha-256';\n"

// MySQLQuiet keeps a MySQL or MariaDB session's statements out of the
// general log, the slow log and the binary log, whatever the server's
// settings: the start of every session that carries a password, or that
// must not replicate.
const MySQLQuiet = "SET SESSION sql_log_off = ON;\nSET SESSION long_query_time = 31536000;\nSET SESSION sql_log_bin = OFF;\n"

// MySQLString quotes s as a MySQL string literal: a quote doubled, which
// reads the same with and without NO_BACKSLASH_ESCAPES, and a backslash
// and a NUL escaped. What the server holds (a host read from mysql.user)
// goes back into SQL through it only: under NO_BACKSLASH_ESCAPES a value
// with a backslash names another account, and still never ends the
// literal. The session's character set is utf8mb4 (Script), in which no
// character's bytes hold a quote or a backslash.
func MySQLString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`, "\x00", `\0`).Replace(s) + "'"
}

// PostgresString quotes s as a PostgreSQL string literal: a quote
// doubled; a value with a backslash as an escape string (E'...') with the
// backslash doubled, which reads the same whatever
// standard_conforming_strings says. No value ends the literal, and psql,
// which reads a script's quoted strings as such, takes no command from it.
func PostgresString(s string) string {
	q := strings.ReplaceAll(s, "'", "''")
	if strings.Contains(s, `\`) {
		return "E'" + strings.ReplaceAll(q, `\`, `\\`) + "'"
	}
	return "'" + q + "'"
}

// PostgresIdent quotes name as a PostgreSQL identifier: in double quotes,
// a double quote doubled.
func PostgresIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// PostgresConfString quotes s as a string value of postgresql.conf (and
// postgresql.auto.conf): in single quotes, a quote and a backslash
// escaped. A value with a control character, which would end the line and
// begin a setting of its own, is refused.
func PostgresConfString(s string) (string, error) {
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return "", fmt.Errorf("%q holds a control character: it goes into no configuration file", s)
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'", nil
}

// PostgresUser is the system account Debian's PostgreSQL runs as, which
// owns its files.
const PostgresUser = "postgres"

// Port is the TCP port of an engine family: the servers' defaults, which
// provisioning keeps.
func Port(family dbms.Family) int {
	if family == dbms.PostgresFamily {
		return 5432
	}
	return 3306
}

// Port is the server's TCP port.
func (e Engine) Port() int { return Port(e.Flavor.Family()) }

// Desired is what the tuner wants for a host running e: its board (the
// facts), its preset and its [host.settings]. An override the tuner refuses
// is an *inventory.Error at its line in the inventory file invPath.
func Desired(e Engine, f facts.Facts, h inventory.Host, invPath, preset string) (tune.Input, tune.Settings, error) {
	in := tune.Input{Flavor: e.Flavor, Version: e.TuneAs, RAMBytes: f.RAMBytes, MemBytes: f.MemBytes, CPUs: f.CPUs, Storage: f.DataOn(), Bits: f.WordBits(),
		MaxConnections: h.Connections, ConnectionsAsk: "the inventory's max_connections", Replication: Replication(h)}
	// a standby runs only with at least its primary's max_connections,
	// and any host of a cluster may become its primary: where the
	// inventory plans none (it gives all of them the same, or none),
	// they plan the server's default
	if in.Replication != nil && e.Flavor == dbms.Postgres && in.MaxConnections == 0 && h.Settings["max_connections"].Raw == nil {
		in.MaxConnections, in.ConnectionsAsk = 100, fmt.Sprintf("cluster %q (100, the server's default, on every host of it: a standby runs only with at least its primary's max_connections)", h.Cluster.Name)
	}
	overrides := map[string]string{}
	for k, v := range h.Settings {
		overrides[k] = fmt.Sprint(v.Raw)
	}
	s, err := tune.Recommend(in, tune.PresetName(preset), overrides)
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

// Replication is the host's part in its cluster as the tuner takes it;
// nil for a host on its own. Its server_id is its IPv4 address as a
// number, which the inventory keeps unique in a cluster.
func Replication(h inventory.Host) *tune.Replication {
	c := h.Cluster
	if c == nil {
		return nil
	}
	r := &tune.Replication{Cluster: c.Name, Primary: c.Primary == h.Name, Hosts: len(c.Members()), Synchronous: c.Synchronous, Standbys: c.Replicas}
	if a, err := netip.ParseAddr(h.Address); err == nil && a.Unmap().Is4() {
		b := a.Unmap().As4()
		r.ServerID = binary.BigEndian.Uint32(b[:])
	}
	return r
}

// Live reads the live values of s as the server's administrator, through
// root on the host, and lists those that differ.
func Live(ctx context.Context, root remote.Runner, e Engine, s tune.Settings) ([]Mismatch, error) {
	s = s.Variables(e.Flavor, e.TuneAs) // plugin_load_add: the plugins' variables are read instead
	res, err := root.Run(ctx, e.Query(e.ReadBackSQL(s)))
	if err != nil {
		return nil, fmt.Errorf("read the live settings: %w", err)
	}
	return e.CompareLive(s, string(res.Stdout))
}

// Sentences are the mismatches as people read them: "NAME is LIVE, not WANT".
func Sentences(bad []Mismatch) []string {
	var out []string
	for _, m := range bad {
		out = append(out, fmt.Sprintf("%s is %s, not %s", m.Name, m.Live, m.Want))
	}
	return out
}
