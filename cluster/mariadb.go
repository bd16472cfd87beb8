package cluster

import (
	"fmt"
	"strconv"
	"strings"

	"pidb/dbms"
	"pidb/engine"
)

// MariaDB's side of a cluster: each member writes a binary log; a replica
// follows its primary by GTID (MASTER_USE_GTID=slave_pos). Its report is
// read from the server's variables, its binlog dump threads (the replicas
// it sends to) and SHOW SLAVE STATUS, in one command; positions are
// counted in transactions (the sequence numbers of the GTID positions).

// myReadSQL is a MariaDB host's own side and the replicas it sends to.
const myReadSQL = "SELECT 'self', @@read_only, @@gtid_binlog_pos, @@gtid_slave_pos UNION ALL " +
	"SELECT 'sender', SUBSTRING_INDEX(host, ':', 1), state, '' FROM information_schema.processlist WHERE command = 'Binlog Dump'"

// slaveStatusMark parts myReadSQL's rows from SHOW SLAVE STATUS's in one
// command's output: a line of one value, which no row of four can be.
const slaveStatusMark = "pidb-slave-status"

// mariadbRead is the command that reads a MariaDB host's report.
func mariadbRead(e engine.Engine) string {
	return e.Query(myReadSQL) + " && echo " + slaveStatusMark + " && " + e.SQLClient() + " --batch --default-character-set=utf8mb4 -e 'SHOW SLAVE STATUS'"
}

// SlaveStatus is SHOW SLAVE STATUS's row as MariaDB prints it in batch
// mode: each column by its name, the values unescaped; nil where the
// server replicates from nobody.
func SlaveStatus(out string) (map[string]string, error) { return statusRow(out, "Slave_IO_State") }

// statusRow reads SHOW SLAVE STATUS's or SHOW REPLICA STATUS's row, whose
// first column is first.
func statusRow(out, first string) (map[string]string, error) {
	if out == "" {
		return nil, nil
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("the replication status printed %d lines, not a header and one row (pidb works with one replication source)", len(lines))
	}
	names, values := strings.Split(lines[0], "\t"), strings.Split(lines[1], "\t")
	if len(names) != len(values) || len(names) < 10 || names[0] != first {
		return nil, fmt.Errorf("the replication status printed %d names and %d values", len(names), len(values))
	}
	m := make(map[string]string, len(names))
	unescape := strings.NewReplacer(`\\`, `\`, `\t`, "\t", `\n`, "\n", `\0`, "\x00")
	for i, n := range names {
		m[n] = unescape.Replace(values[i])
	}
	return m, nil
}

// Transactions counts a GTID position's transactions: the sum of its
// domains' sequence numbers ("0-1-42,1-2-7": 49). Every member of a
// cluster writes one history, so a replica's count beside its primary's
// is how many it has not applied.
func Transactions(pos string) (uint64, error) {
	var n uint64
	for _, g := range strings.Split(pos, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		parts := strings.Split(g, "-")
		if len(parts) != 3 {
			return 0, fmt.Errorf("GTID %q", g)
		}
		seq, err := strconv.ParseUint(parts[2], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("GTID %q", g)
		}
		n += seq
	}
	return n, nil
}

// parseMariaDB reads mariadbRead's output.
func parseMariaDB(e engine.Engine, out string) (Report, error) { return mariaWords.parse(e, out) }

// statusWords are how one flavour of the MySQL family says its side of
// the replication: its replication status command and the columns pidb
// reads of it, and how its own row's positions count transactions.
type statusWords struct {
	flavor              dbms.Flavor
	command, first      string // SHOW SLAVE STATUS, its first column
	host, user, io, sql string // the source, the account, the two threads
	behind              string // the seconds behind
	gtid                func(status map[string]string) string
	positions           func(self []string) (wal, replayed uint64, err error)
}

var mariaWords = statusWords{
	flavor: dbms.MariaDB, command: "SHOW SLAVE STATUS", first: "Slave_IO_State",
	host: "Master_Host", user: "Master_User", io: "Slave_IO_Running", sql: "Slave_SQL_Running", behind: "Seconds_Behind_Master",
	gtid: func(st map[string]string) string { return st["Using_Gtid"] },
	positions: func(self []string) (wal, replayed uint64, err error) {
		if wal, err = Transactions(self[2]); err != nil {
			return 0, 0, fmt.Errorf("gtid_binlog_pos: %w", err)
		}
		if replayed, err = Transactions(self[3]); err != nil {
			return 0, 0, fmt.Errorf("gtid_slave_pos: %w", err)
		}
		return wal, replayed, nil
	},
}

// parse reads the output of the flavour's read command: its own row and
// its senders' (4 values each), the mark, then its replication status.
func (w statusWords) parse(e engine.Engine, out string) (Report, error) {
	r := Report{Flavor: w.flavor}
	own, status, ok := strings.Cut(out, slaveStatusMark+"\n")
	if !ok {
		return r, fmt.Errorf("read the replication state: no %s", w.command)
	}
	rows, err := e.Rows(own, 4)
	if err != nil {
		return r, fmt.Errorf("read the replication state: %w", err)
	}
	self := false
	for _, row := range rows {
		switch row[0] {
		case "self":
			self = true
			r.ReadOnly = row[1] == "1"
			if r.WAL, r.Replayed, err = w.positions(row); err != nil {
				return r, fmt.Errorf("read the replication state: %w", err)
			}
		case "sender":
			r.Senders = append(r.Senders, Sender{Name: row[1], State: Streaming})
		default:
			return r, fmt.Errorf("read the replication state: a row of kind %q", row[0])
		}
	}
	if !self {
		return r, fmt.Errorf("read the replication state: the server said nothing of itself")
	}
	st, err := statusRow(status, w.first)
	if err != nil {
		return r, fmt.Errorf("read the replication state: %w", err)
	}
	if st == nil || st[w.host] == "" {
		return r, nil
	}
	r.InRecovery = true
	r.ReceiveFrom, r.SourceUser, r.UsingGTID = st[w.host], st[w.user], w.gtid(st)
	io, sql := st[w.io], st[w.sql]
	switch {
	case io == "Yes" && sql == "Yes":
		r.Receiver = Streaming
	case io == "No" && sql == "No":
		r.Receiver = "stopped"
	default:
		r.Receiver = "receiving " + strings.ToLower(io) + ", applying " + strings.ToLower(sql)
	}
	r.LastError = strings.TrimSpace(st["Last_IO_Error"] + " " + st["Last_SQL_Error"])
	if d := st[w.behind]; d != "" && d != "NULL" {
		if r.ReplayDelay, err = seconds(d); err != nil {
			return r, fmt.Errorf("read the replication state: %s: %w", w.behind, err)
		}
	}
	return r, nil
}

// Behind is, on MariaDB, how far the replica that reported r is behind
// the primary that reported p: the primary's transactions it has not
// applied (none where it read past the primary's position, a moment
// later), and its Seconds_Behind_Master.
func Behind(p, r Report) (transactions *uint64, secs *float64) {
	n := p.WAL - min(p.WAL, r.Replayed)
	return &n, r.ReplayDelay
}

// replicaOf is Standby for MariaDB: a replica streams where it replicates
// from the primary's address with both its threads running (Slave_IO and
// Slave_SQL: either alone is not replicating).
func replicaOf(m, primary Member) (state, why string) {
	r := m.Report
	switch {
	case !r.InRecovery:
		return NotAStandby, m.Name + " is a server of its own, not a replica of " + primary.Name
	case r.ReceiveFrom != primary.Address:
		return NotStreaming, "it replicates from " + r.ReceiveFrom + ", not from " + primary.Name + " (" + primary.Address + ")"
	case r.Receiver != Streaming:
		why := "its replication is " + r.Receiver
		if r.LastError != "" {
			why += ": " + r.LastError
		}
		return NotStreaming, why
	}
	return Streaming, ""
}
