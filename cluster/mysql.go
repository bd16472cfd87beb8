package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"pidb/dbms"
	"pidb/engine"
	"pidb/remote"
)

// Oracle MySQL's side of a cluster: each member writes a binary log with
// GTIDs (gtid_mode ON); a replica follows its primary by them
// (SOURCE_AUTO_POSITION). Its report is read from the server's variables,
// its binlog dump threads and SHOW REPLICA STATUS, in one command, as
// MariaDB's is; positions are counted in transactions (the GTIDs in
// gtid_executed, which on every member of one cluster hold one history).

// mysqlReadSQL is a MySQL host's own side and the replicas it sends to.
// gtid_executed is printed without the line breaks MySQL puts after its
// commas.
const mysqlReadSQL = "SELECT 'self', @@read_only, REPLACE(@@GLOBAL.gtid_executed, '\\n', ''), '' UNION ALL " +
	"SELECT 'sender', SUBSTRING_INDEX(host, ':', 1), state, '' FROM information_schema.processlist WHERE command LIKE 'Binlog Dump%'"

// mysqlRead is the command that reads a MySQL host's report.
func mysqlRead(e engine.Engine) string {
	return e.Query(mysqlReadSQL) + " && echo " + slaveStatusMark + " && mysql --batch --default-character-set=utf8mb4 -e 'SHOW REPLICA STATUS'"
}

// flavorMark starts the family's report with the flavour that answered:
// a cluster of the MySQL family is MariaDB or Oracle MySQL by its hosts'
// distribution, which the inventory does not say.
const flavorMark = "pidb-flavor "

// familyRead reads a MySQL-family host's report with the client its
// server has: mariadb where it is there, else MySQL's mysql.
func familyRead() string {
	return "if command -v mariadb >/dev/null 2>&1; then echo " + flavorMark + "mariadb && " + mariadbRead(engine.For(dbms.MariaDB)) +
		"; else echo " + flavorMark + "mysql && " + mysqlRead(engine.For(dbms.MySQL)) + "; fi"
}

// readFamily asks a MySQL-family host for its side of the replication.
func readFamily(ctx context.Context, root remote.Runner) (Report, error) {
	res, err := root.Run(ctx, familyRead())
	if err != nil {
		return Report{}, fmt.Errorf("read the replication state: %w", err)
	}
	first, rest, _ := strings.Cut(string(res.Stdout), "\n")
	switch strings.TrimPrefix(first, flavorMark) {
	case "mariadb":
		return parseMariaDB(engine.For(dbms.MariaDB), rest)
	case "mysql":
		return parseMySQL(rest)
	}
	return Report{}, fmt.Errorf("read the replication state: %q", first)
}

// GTIDCount counts the transactions of a MySQL GTID set
// ("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:11-18,uuid2:1-3": 16; a
// tag, as in "uuid:tag:1-5", names no transactions). Every member of a
// cluster holds one history, so a replica's count beside its primary's
// is how many it has not applied.
func GTIDCount(set string) (uint64, error) {
	var n uint64
	for _, g := range strings.Split(set, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		parts := strings.Split(g, ":")
		if len(parts) < 2 {
			return 0, fmt.Errorf("GTID set %q", g)
		}
		for _, iv := range parts[1:] {
			if iv == "" || (iv[0] < '0' || iv[0] > '9') {
				continue // a tag
			}
			lo, hi, ranged := strings.Cut(iv, "-")
			a, err := strconv.ParseUint(lo, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("GTID set %q", g)
			}
			b := a
			if ranged {
				if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a {
					return 0, fmt.Errorf("GTID set %q", g)
				}
			}
			n += b - a + 1
		}
	}
	return n, nil
}

// parseMySQL reads mysqlRead's output.
func parseMySQL(out string) (Report, error) { return mysqlWords.parse(engine.For(dbms.MySQL), out) }

var mysqlWords = statusWords{
	flavor: dbms.MySQL, command: "SHOW REPLICA STATUS", first: "Replica_IO_State",
	host: "Source_Host", user: "Source_User", io: "Replica_IO_Running", sql: "Replica_SQL_Running", behind: "Seconds_Behind_Source",
	gtid: func(st map[string]string) string {
		if st["Auto_Position"] == "1" {
			return AutoPosition
		}
		return ""
	},
	// gtid_executed is both what it wrote and what it applied
	positions: func(self []string) (wal, replayed uint64, err error) {
		if wal, err = GTIDCount(self[2]); err != nil {
			return 0, 0, fmt.Errorf("gtid_executed: %w", err)
		}
		return wal, wal, nil
	},
}

// AutoPosition is a MySQL replica's UsingGTID where it follows its source
// by GTID (Auto_Position 1), as MariaDB's Slave_Pos is.
const AutoPosition = "Auto_Position"

// ByGTID reports whether a replica follows its source by GTID as pidb
// sets it up: MariaDB's slave_pos, MySQL's auto-position.
func (r Report) ByGTID() bool {
	return r.UsingGTID == "Slave_Pos" || r.UsingGTID == AutoPosition
}

// ChangeSource is the statement that makes an Oracle MySQL server
// replicate from the primary at address by GTID (auto-position), as
// pidb_replication, over TLS with the primary's certificate verified,
// its address too (the one kept at PrimaryCert).
func ChangeSource(address string, port int, password string) string {
	return fmt.Sprintf("CHANGE REPLICATION SOURCE TO SOURCE_HOST = %s, SOURCE_PORT = %d, SOURCE_USER = %s, SOURCE_PASSWORD = %s, SOURCE_SSL = 1, SOURCE_SSL_CA = %s, SOURCE_SSL_VERIFY_SERVER_CERT = 1, SOURCE_AUTO_POSITION = 1, SOURCE_CONNECT_RETRY = 10;\n",
		engine.MySQLString(address), port, engine.MySQLString(engine.ReplicationUser), engine.MySQLString(password), engine.MySQLString(PrimaryCert(engine.For(dbms.MySQL))))
}
