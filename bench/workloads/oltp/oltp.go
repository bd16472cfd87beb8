// Package oltp is sysbench's oltp_read_only on PostgreSQL, MySQL and
// MariaDB, native in Go: the sbtest tables as sysbench's oltp_common
// prepares them on each engine, and per
// transaction 10 point selects, a simple range, a sum range, an order range
// and a distinct range of 100 rows, between BEGIN and COMMIT, with server-
// side prepared statements, as sysbench sends them. The clients speak to
// the servers themselves (packages mywire and pgwire); database/sql only
// loads the tables.
package oltp

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"

	"pidb/bench/sqldb"
	"pidb/dbms"
)

// Workload is oltp_read_only.
type Workload struct {
	DB        sqldb.DB // pidb's database
	Tables    int      // sbtest1..N; default DefaultTables
	TableSize int      // rows per table; default DefaultTableSize
	Reload    bool     // load the tables even when they hold TableSize rows
	Log       func(string)
}

const (
	pointSelects = 10
	rangeSize    = 100
)

// Name is the workload's name.
func (w *Workload) Name() string { return Name }

// Name is the workload's name, as the command line and the inventory give it.
const Name = "oltp-read-only"

// The defaults, as sysbench's oltp_read_only has them at --tables=1 and
// pidb's small-board table size.
const (
	DefaultTables    = 1
	DefaultTableSize = 10000
)

func (w *Workload) defaults() {
	if w.Tables < 1 {
		w.Tables = DefaultTables
	}
	if w.TableSize < 1 {
		w.TableSize = DefaultTableSize
	}
}

func (w *Workload) open() (*sql.DB, error) { return w.DB.Open() }

// createTable is sysbench's table on each engine.
func (w *Workload) createTable(name string) string {
	if w.DB.Engine() == dbms.PostgresFamily {
		return "CREATE TABLE " + name + " (id SERIAL NOT NULL, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))"
	}
	return "CREATE TABLE " + name + " (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))" + w.DB.TableOptions()
}

// Prepare creates and fills the tables unless each already holds TableSize rows.
func (w *Workload) Prepare(ctx context.Context) error {
	w.defaults()
	db, err := w.open()
	if err != nil {
		return err
	}
	defer db.Close()
	rnd := rand.New(rand.NewPCG(1, 2))
	for t := 1; t <= w.Tables; t++ {
		name := fmt.Sprintf("sbtest%d", t)
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+name).Scan(&n); err == nil && n == w.TableSize && !w.Reload {
			continue
		}
		w.log(fmt.Sprintf("oltp-read-only: loading %s (%d rows)", name, w.TableSize))
		stmts := []string{
			"DROP TABLE IF EXISTS " + name,
			w.createTable(name),
		}
		for _, s := range stmts {
			if _, err := db.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("oltp-read-only: %w", err)
			}
		}
		for start := 1; start <= w.TableSize; start += 1000 {
			var b strings.Builder
			b.WriteString("INSERT INTO " + name + " (k, c, pad) VALUES ")
			for id := start; id < start+1000 && id <= w.TableSize; id++ {
				if id > start {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "(%d,'%s','%s')", rnd.IntN(w.TableSize)+1, digits(rnd, 10), digits(rnd, 5))
			}
			if _, err := db.ExecContext(ctx, b.String()); err != nil {
				return fmt.Errorf("oltp-read-only: load %s: %w", name, err)
			}
		}
		// sysbench creates the secondary index after the load
		if _, err := db.ExecContext(ctx, "CREATE INDEX k_1 ON "+name+"(k)"); err != nil {
			return fmt.Errorf("oltp-read-only: %w", err)
		}
	}
	return nil
}

// digits is sysbench's c and pad text: groups of 11 random digits joined by '-' (10 groups, 119 characters, for c; 5 for pad).
func digits(rnd *rand.Rand, groups int) string {
	b := make([]byte, 0, groups*12)
	for g := 0; g < groups; g++ {
		if g > 0 {
			b = append(b, '-')
		}
		for i := 0; i < 11; i++ {
			b = append(b, byte('0'+rnd.IntN(10)))
		}
	}
	return string(b)
}

func (w *Workload) log(s string) {
	if w.Log != nil {
		w.Log(s)
	}
}

// ErrorKind names server errors by number or SQLSTATE; a lost connection reconnects.
func (w *Workload) ErrorKind(err error) (string, bool) { return w.DB.ErrorKind(err) }
