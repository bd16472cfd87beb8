package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// rowWriter takes a table's rows, value by value, as a load writes them:
// COPY's text on PostgreSQL, multi-row INSERTs on MySQL and MariaDB.
type rowWriter interface {
	Int(int64)
	Money(float64) // two decimals
	Text([]byte)   // letters, digits and spaces only: nothing to escape
	Null()
	Now() // the load's time
	End() error
}

// columnsOf are a table's column names, in order.
func columnsOf(t table) []string {
	var out []string
	for _, c := range strings.Split(t.columns, ", ") {
		out = append(out, strings.Fields(c)[0])
	}
	return out
}

// copyWriter writes COPY's text format to w, in blocks.
type copyWriter struct {
	w     io.Writer
	buf   []byte
	first bool // no value yet in this row
	now   string
}

func (c *copyWriter) sep() {
	if !c.first {
		c.buf = append(c.buf, '\t')
	}
	c.first = false
}
func (c *copyWriter) Int(n int64)     { c.sep(); c.buf = strconv.AppendInt(c.buf, n, 10) }
func (c *copyWriter) Money(f float64) { c.sep(); c.buf = strconv.AppendFloat(c.buf, f, 'f', 2, 64) }
func (c *copyWriter) Text(b []byte)   { c.sep(); c.buf = append(c.buf, b...) }
func (c *copyWriter) Null()           { c.sep(); c.buf = append(c.buf, '\\', 'N') }
func (c *copyWriter) Now()            { c.sep(); c.buf = append(c.buf, c.now...) }
func (c *copyWriter) End() error {
	c.buf, c.first = append(c.buf, '\n'), true
	if len(c.buf) < 64<<10 {
		return nil
	}
	return c.flush()
}
func (c *copyWriter) flush() error {
	_, err := c.w.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// insertWriter writes multi-row INSERTs of up to batchRows rows (or about
// batchBytes) and runs each.
type insertWriter struct {
	exec   func(string) error
	prefix string
	buf    []byte
	rows   int
	first  bool
	now    string
}

const (
	batchRows  = 1000
	batchBytes = 1 << 20
)

func (i *insertWriter) sep() {
	switch {
	case i.first && i.rows == 0:
		i.buf = append(append(i.buf[:0], i.prefix...), '(')
	case i.first:
		i.buf = append(i.buf, ',', '(')
	default:
		i.buf = append(i.buf, ',')
	}
	i.first = false
}
func (i *insertWriter) Int(n int64)     { i.sep(); i.buf = strconv.AppendInt(i.buf, n, 10) }
func (i *insertWriter) Money(f float64) { i.sep(); i.buf = strconv.AppendFloat(i.buf, f, 'f', 2, 64) }
func (i *insertWriter) Text(b []byte) {
	i.sep()
	i.buf = append(append(append(i.buf, '\''), b...), '\'')
}
func (i *insertWriter) Null() { i.sep(); i.buf = append(i.buf, "NULL"...) }
func (i *insertWriter) Now()  { i.sep(); i.buf = append(append(append(i.buf, '\''), i.now...), '\'') }
func (i *insertWriter) End() error {
	i.buf, i.first = append(i.buf, ')'), true
	if i.rows++; i.rows < batchRows && len(i.buf) < batchBytes {
		return nil
	}
	return i.flush()
}
func (i *insertWriter) flush() error {
	if i.rows == 0 {
		return nil
	}
	err := i.exec(string(i.buf))
	i.rows = 0
	return err
}

// loader loads one table's rows, which gen writes.
type loader interface {
	load(ctx context.Context, name string, cols []string, gen func(rowWriter) error) error
}

// pgLoader loads with COPY on one PostgreSQL connection.
type pgLoader struct {
	c   *pgconn.PgConn
	now string
}

func (l pgLoader) load(ctx context.Context, name string, cols []string, gen func(rowWriter) error) error {
	pr, pw := io.Pipe()
	go func() {
		w := &copyWriter{w: pw, first: true, now: l.now}
		err := gen(w)
		if err == nil {
			err = w.flush()
		}
		pw.CloseWithError(err)
	}()
	_, err := l.c.CopyFrom(ctx, pr, "COPY "+name+" ("+strings.Join(cols, ", ")+") FROM STDIN")
	pr.CloseWithError(io.ErrClosedPipe) // ends the generator if COPY failed first
	return err
}

// myLoader loads with multi-row INSERTs through database/sql.
type myLoader struct {
	db  *sql.DB
	now string
}

func (l myLoader) load(ctx context.Context, name string, cols []string, gen func(rowWriter) error) error {
	w := &insertWriter{first: true, now: l.now, prefix: "INSERT INTO " + name + " (" + strings.Join(cols, ", ") + ") VALUES ",
		exec: func(q string) error { _, err := l.db.ExecContext(ctx, q); return err }}
	if err := gen(w); err != nil {
		return err
	}
	return w.flush()
}

// loadTime is the time the loaded rows carry (sysbench-tpcc's NOW()).
func loadTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// gen is the data of one copy's warehouse: sysbench-tpcc's rows (its
// load_tables), with the standard's distributions where it has them.
type gen struct {
	r   *rand.Rand
	w   int64
	buf []byte
}

func (g *gen) letters(lo, hi int) []byte {
	g.buf = appendLetters(g.buf[:0], g.r, int(uniform(g.r, int64(lo), int64(hi))))
	return g.buf
}

func (g *gen) prefixed(prefix string, n int) []byte {
	g.buf = appendLetters(append(g.buf[:0], prefix...), g.r, n)
	return g.buf
}

func (g *gen) zip() []byte {
	g.buf = appendDigits(append(g.buf[:0], "zip-"...), g.r, 5)
	return g.buf
}

// original is the standard's data of items and stock: 26 to 50 letters,
// one row in ten with "ORIGINAL" in it (clause 4.3.3.1).
func (g *gen) original() []byte {
	b := g.letters(26, 50)
	if g.r.IntN(10) == 0 {
		at := g.r.IntN(len(b) - 8)
		copy(b[at:], "ORIGINAL")
	}
	return b
}

// address writes name, street 1 and 2, city, state and zip.
func (g *gen) address(w rowWriter) {
	w.Text(g.prefixed("name-", 5))
	w.Text(g.prefixed("street1-", 10))
	w.Text(g.prefixed("street2-", 10))
	w.Text(g.prefixed("city-", 10))
	w.Text(g.prefixed("", 2))
	w.Text(g.zip())
}

func (g *gen) warehouse(w rowWriter) error {
	w.Int(g.w)
	g.address(w)
	w.Money(float64(g.r.IntN(2001)) / 10000) // w_tax 0.0000..0.2000, to two decimals
	w.Int(300000)
	return w.End()
}

func (g *gen) district(w rowWriter) error {
	for d := int64(1); d <= DistrictsPerWarehouse; d++ {
		w.Int(d)
		w.Int(g.w)
		g.address(w)
		w.Money(float64(g.r.IntN(2001)) / 10000)
		w.Int(30000)
		w.Int(initialOrders + 1)
		if err := w.End(); err != nil {
			return err
		}
	}
	return nil
}

func (g *gen) customer(w rowWriter) error {
	var last []byte
	for d := int64(1); d <= DistrictsPerWarehouse; d++ {
		for c := int64(1); c <= CustomersPerDistrict; c++ {
			w.Int(c)
			w.Int(d)
			w.Int(g.w)
			w.Text(g.prefixed("first-", int(uniform(g.r, 2, 10))))
			w.Text([]byte("OE"))
			n := c - 1
			if c > customersByName {
				n = NURand(g.r, 255, cLoad255, 0, lastNameCount-1)
			}
			last = AppendLastName(last[:0], int(n))
			w.Text(last)
			w.Text(g.prefixed("street1-", 10))
			w.Text(g.prefixed("street2-", 10))
			w.Text(g.prefixed("city-", 10))
			w.Text(g.prefixed("", 2))
			w.Text(g.zip())
			g.buf = appendDigits(g.buf[:0], g.r, 16)
			w.Text(g.buf)
			w.Now()
			if g.r.IntN(100) < bcCreditPercent {
				w.Text([]byte("BC"))
			} else {
				w.Text([]byte("GC"))
			}
			w.Int(50000)
			w.Money(float64(g.r.IntN(5001)) / 10000) // c_discount 0..0.5
			w.Int(-10)
			w.Int(10)
			w.Int(1)
			w.Int(0)
			w.Text(g.letters(300, 500))
			if err := w.End(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *gen) history(w rowWriter) error {
	for d := int64(1); d <= DistrictsPerWarehouse; d++ {
		for c := int64(1); c <= CustomersPerDistrict; c++ {
			w.Int(c)
			w.Int(d)
			w.Int(g.w)
			w.Int(d)
			w.Int(g.w)
			w.Now()
			w.Int(10)
			w.Text(g.letters(12, 24))
			if err := w.End(); err != nil {
				return err
			}
		}
	}
	return nil
}

// orders are a district's initial orders: each customer's one order, in
// a random order of customers, and each order's line count.
type orders struct {
	customer [initialOrders + 1]int64
	lines    [initialOrders + 1]int64
}

func (g *gen) orders() *[DistrictsPerWarehouse + 1]orders {
	var all [DistrictsPerWarehouse + 1]orders
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		o := &all[d]
		for i := 1; i <= initialOrders; i++ {
			o.customer[i] = int64(i)
		}
		for i := initialOrders; i > 1; i-- {
			j := 1 + g.r.IntN(i)
			o.customer[i], o.customer[j] = o.customer[j], o.customer[i]
		}
		for i := 1; i <= initialOrders; i++ {
			o.lines[i] = uniform(g.r, 5, maxOrderLines)
		}
	}
	return &all
}

func (g *gen) ordersTable(all *[DistrictsPerWarehouse + 1]orders) func(rowWriter) error {
	return func(w rowWriter) error {
		for d := int64(1); d <= DistrictsPerWarehouse; d++ {
			for o := int64(1); o <= initialOrders; o++ {
				w.Int(o)
				w.Int(d)
				w.Int(g.w)
				w.Int(all[d].customer[o])
				w.Now()
				if o < firstNewOrder {
					w.Int(uniform(g.r, 1, 10))
				} else {
					w.Null()
				}
				w.Int(all[d].lines[o])
				w.Int(1)
				if err := w.End(); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

func (g *gen) newOrders(w rowWriter) error {
	for d := int64(1); d <= DistrictsPerWarehouse; d++ {
		for o := int64(firstNewOrder); o <= initialOrders; o++ {
			w.Int(o)
			w.Int(d)
			w.Int(g.w)
			if err := w.End(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *gen) orderLines(all *[DistrictsPerWarehouse + 1]orders) func(rowWriter) error {
	return func(w rowWriter) error {
		for d := int64(1); d <= DistrictsPerWarehouse; d++ {
			for o := int64(1); o <= initialOrders; o++ {
				for l := int64(1); l <= all[d].lines[o]; l++ {
					w.Int(o)
					w.Int(d)
					w.Int(g.w)
					w.Int(l)
					w.Int(uniform(g.r, 1, Items))
					w.Int(g.w)
					if o < firstNewOrder {
						w.Now()
					} else {
						w.Null()
					}
					w.Int(5)
					if o < firstNewOrder {
						w.Money(0)
					} else {
						w.Money(float64(uniform(g.r, 1, 999999)) / 100)
					}
					w.Text(g.prefixed("", 24))
					if err := w.End(); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
}

func (g *gen) stock(w rowWriter) error {
	for i := int64(1); i <= Items; i++ {
		w.Int(i)
		w.Int(g.w)
		w.Int(uniform(g.r, 10, 100))
		for range 10 {
			w.Text(g.prefixed("", 24))
		}
		w.Int(0)
		w.Int(0)
		w.Int(0)
		w.Text(g.original())
		if err := w.End(); err != nil {
			return err
		}
	}
	return nil
}

func (g *gen) item(w rowWriter) error {
	for i := int64(1); i <= Items; i++ {
		w.Int(i)
		w.Int(uniform(g.r, 1, 10000))
		w.Text(g.letters(14, 24))
		w.Money(float64(uniform(g.r, 100, 10000)) / 100)
		w.Text(g.original())
		if err := w.End(); err != nil {
			return err
		}
	}
	return nil
}

// loadTable loads table i of tables, in its copy, with gen's rows.
func loadTable(ctx context.Context, l loader, i, copy int, gen func(rowWriter) error) error {
	name := tables[i].base + strconv.Itoa(copy)
	if err := l.load(ctx, name, columnsOf(tables[i]), gen); err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	return nil
}

// loadWarehouse loads one copy's rows of warehouse w: every table but
// item, whose generators come in the order of tables.
func loadWarehouse(ctx context.Context, l loader, copy int, w int64, seed uint64) error {
	g := &gen{r: rand.New(rand.NewPCG(seed, uint64(copy)<<32|uint64(w))), w: w}
	all := g.orders()
	for i, gen := range []func(rowWriter) error{g.warehouse, g.district, g.customer, g.history, g.ordersTable(all), g.newOrders, g.orderLines(all), g.stock} {
		if err := loadTable(ctx, l, i, copy, gen); err != nil {
			return fmt.Errorf("warehouse %d: %w", w, err)
		}
	}
	return nil
}

// loadItems loads one copy's item table, the last of tables.
func loadItems(ctx context.Context, l loader, copy int, seed uint64) error {
	g := &gen{r: rand.New(rand.NewPCG(seed, uint64(copy)<<32))}
	return loadTable(ctx, l, len(tables)-1, copy, g.item)
}
