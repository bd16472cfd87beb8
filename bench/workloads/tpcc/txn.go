package tpcc

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"strconv"

	"pidb/bench"
	"pidb/bench/sqldb"
	"pidb/bench/wire/mywire"
	"pidb/bench/wire/netx"
	"pidb/bench/wire/pgwire"
	"pidb/bench/wire/rows"
)

// conn is a client's connection: one statement per round trip, in the
// simple protocol, with the answer's rows kept. On a non-blocking socket
// Receive reads what has come and reports whether the answer is
// complete; on a blocking one it waits for all of it.
type conn interface {
	send(sql []byte) error
	rows() *rows.Set
	wire
}

// wire is what pgwire.Conn and mywire.Conn both are.
type wire interface {
	Send() error
	Receive() (done bool, err error)
	Broken() bool
	Fd() int
	Close() error
	Interrupt()
}

// lean is a conn on either engine's lean wire client: set puts a
// statement's text in its request (pgwire's SetQuery, mywire's
// SetQueryBytes).
type lean struct {
	wire
	set func(sql []byte)
	rs  rows.Set
}

func (c *lean) send(sql []byte) error { c.set(sql); return c.Send() }
func (c *lean) rows() *rows.Set       { return &c.rs }

// dial connects a client with the lean wire client of db's engine.
func dial(ctx context.Context, db sqldb.DB) (conn, error) {
	if db.Engine() == "postgres" {
		c, err := pgwire.Connect(ctx, &db.Postgres.Config, nil)
		if err != nil {
			return nil, err
		}
		l := &lean{wire: c, set: c.SetQuery}
		c.Keep(&l.rs)
		return l, nil
	}
	c, err := mywire.Connect(ctx, db.MySQL, netx.Dial)
	if err != nil {
		return nil, err
	}
	l := &lean{wire: c, set: c.SetQueryBytes}
	c.Keep(&l.rs)
	return l, nil
}

// stmt is a statement's text, built with the values in it.
type stmt struct{ b []byte }

func (s *stmt) sql(x string) *stmt    { s.b = append(s.b[:0], x...); return s }
func (s *stmt) lit(x string) *stmt    { s.b = append(s.b, x...); return s }
func (s *stmt) int(n int64) *stmt     { s.b = strconv.AppendInt(s.b, n, 10); return s }
func (s *stmt) money(f float64) *stmt { s.b = strconv.AppendFloat(s.b, f, 'f', 2, 64); return s }
func (s *stmt) raw(b []byte) *stmt    { s.b = append(s.b, b...); return s }

// text appends b quoted (' doubled; the values here are letters, digits
// and spaces).
func (s *stmt) text(b []byte) *stmt {
	s.b = append(s.b, '\'')
	for _, c := range b {
		if c == '\'' {
			s.b = append(s.b, '\'')
		}
		s.b = append(s.b, c)
	}
	s.b = append(s.b, '\'')
	return s
}

// inputs are one transaction's random inputs, drawn before it runs so
// that a retry runs the same transaction.
type inputs struct {
	copy      int // the table copy
	w, d      int64
	c         int64 // customer id (when not by name)
	cw, cd    int64 // Payment: the customer's warehouse and district
	byName    bool
	last      []byte // a last name, for byName
	amount    float64
	n         int // New-Order: order lines
	item      [maxOrderLines]int64
	supply    [maxOrderLines]int64
	qty       [maxOrderLines]int64
	allLocal  int64
	carrier   int64 // Delivery
	threshold int64 // Stock-Level
}

// worker is one TPC-C client (a terminal, in the standard's words).
type worker struct {
	c      conn
	r      *rand.Rand
	k      Constants
	mix    Mix
	scale  int64
	tables int
	maxTry int
	names  []names
	s      stmt
	in     inputs
	sent   int // statements sent in this try
	// rolledBack says this try ended in New-Order's ROLLBACK of an unused item
	rolledBack bool
	keep       []byte // a value kept from one answer for a later statement
	// the coroutine that runs the transactions (see Begin), and its yield
	next  func() (state, bool)
	yield func(state) bool
}

// state is what the transactions' coroutine reports when it stops: a
// request is out and its answer awaited, or the transaction is done.
type state struct {
	done bool
	out  bench.Outcome
	err  error
}

// errStopped ends a transaction whose coroutine was stopped.
var errStopped = errors.New("tpcc: the client was stopped")

// Begin starts the client's next transaction and sends its first
// statement (bench.Async). The transactions are written as one goes,
// statement after statement; they run in a coroutine (iter.Pull) that
// gives control back to the driver each time a statement is out, so that
// one thread can wait on many clients' sockets at once, and goes on when
// the driver sees the answer come (Readable). The coroutine is made on
// the first Begin, on the thread that drives the client from then on (a
// coroutine must stay on a locked thread's).
func (wk *worker) Begin() error {
	if wk.next == nil {
		wk.next, _ = iter.Pull(func(yield func(state) bool) {
			wk.yield = yield
			for {
				out, err := wk.transaction()
				if err == errStopped || !yield(state{done: true, out: out, err: err}) {
					return
				}
			}
		})
	}
	st, ok := wk.next()
	switch {
	case !ok:
		return errStopped
	case st.done: // it ended before it waited: its first statement could not be sent
		if st.err == nil {
			return errors.New("tpcc: a transaction ended without a round trip")
		}
		return st.err
	}
	return nil
}

// Readable takes what the server sent and moves the transaction on to
// its next statement, or to its end (bench.Async).
func (wk *worker) Readable() (bool, bench.Outcome, error) {
	st, ok := wk.next()
	if !ok {
		return true, bench.Outcome{}, errStopped
	}
	return st.done, st.out, st.err
}

// Do runs one transaction on a blocking socket (bench.DoAsync).
func (wk *worker) Do(context.Context) (bench.Outcome, error) { return bench.DoAsync(wk) }

// Fd is the socket, for the driver's multiplexing (bench.Async).
func (wk *worker) Fd() int { return wk.c.Fd() }

// query sends one statement and waits for its answer: it hands control
// back to the driver until the answer is complete.
func (wk *worker) query(sql []byte) (*rows.Set, error) {
	if err := wk.c.send(sql); err != nil {
		return nil, err
	}
	for {
		if !wk.yield(state{}) {
			return nil, errStopped
		}
		if done, err := wk.c.Receive(); done {
			return wk.c.rows(), err
		}
	}
}

// transaction runs one transaction of a type the mix draws. A deadlock,
// lock wait timeout or serialization failure rolls it back and runs it
// again with the same inputs, up to MaxTry times; another error rolls it
// back and ends it.
func (wk *worker) transaction() (bench.Outcome, error) {
	t := wk.mix.pick(wk.r)
	wk.draw(t)
	out := bench.Outcome{Op: Types[t]}
	for try := 1; ; try++ {
		wk.sent, wk.rolledBack = 0, false
		err := wk.run(t)
		out.Queries += wk.sent
		if err == nil {
			out.RolledBack = wk.rolledBack
			return out, nil
		}
		if err == errStopped {
			return out, err
		}
		if wk.c.Broken() {
			return out, &txError{Types[t], err}
		}
		if _, rerr := wk.query(rollback); rerr != nil {
			return out, &txError{Types[t], rerr}
		}
		out.Queries++
		if retryable(err) && try < wk.maxTry {
			out.Retries++
			continue
		}
		return out, &txError{Types[t], err}
	}
}

var (
	begin    = []byte("BEGIN")
	commit   = []byte("COMMIT")
	rollback = []byte("ROLLBACK")
)

// do sends a statement whose answer has no rows to read (BEGIN, COMMIT,
// ROLLBACK), counted.
func (wk *worker) do(b []byte) error {
	wk.sent++
	_, err := wk.query(b)
	return err
}

// one checks that an answer has a row.
func one(rs *rows.Set, what string) error {
	if rs.Len() == 0 {
		return fmt.Errorf("tpcc: no %s", what)
	}
	return nil
}

// other is a warehouse other than w, when there is one.
func (wk *worker) other(w int64) int64 {
	if wk.scale == 1 {
		return w
	}
	x := uniform(wk.r, 1, wk.scale-1)
	if x >= w {
		x++
	}
	return x
}

// draw draws the inputs of a transaction of type t (clauses 2.4.1, 2.5.1,
// 2.6.1, 2.7.1 and 2.8.1).
func (wk *worker) draw(t int) {
	in := &wk.in
	in.copy = 1 + wk.r.IntN(wk.tables)
	in.w = uniform(wk.r, 1, wk.scale)
	in.d = uniform(wk.r, 1, DistrictsPerWarehouse)
	in.c = NURand(wk.r, 1023, wk.k.C1023, 1, CustomersPerDistrict)
	in.byName = false
	switch t {
	case NewOrder:
		in.n = int(uniform(wk.r, 5, maxOrderLines))
		rbk := uniform(wk.r, 1, 100)
		in.allLocal = 1
		for i := range in.n {
			in.item[i] = NURand(wk.r, 8191, wk.k.C8191, 1, Items)
			in.supply[i] = in.w
			if wk.scale > 1 && uniform(wk.r, 1, 1000) <= remoteItemPerMil {
				in.supply[i] = wk.other(in.w)
				in.allLocal = 0
			}
			in.qty[i] = uniform(wk.r, 1, 10)
		}
		if rbk == 1 {
			in.item[in.n-1] = Items + 1 // an unused item: the order is rolled back
		}
	case Payment, OrderStatus:
		in.cw, in.cd = in.w, in.d
		if t == Payment && uniform(wk.r, 1, 100) > 85 {
			in.cw, in.cd = wk.other(in.w), uniform(wk.r, 1, DistrictsPerWarehouse)
		}
		if uniform(wk.r, 1, 100) <= 60 {
			in.byName = true
			in.last = AppendLastName(in.last[:0], int(NURand(wk.r, 255, wk.k.C255, 0, lastNameCount-1)))
		}
		in.amount = float64(uniform(wk.r, 100, 500000)) / 100
	case Delivery:
		in.carrier = uniform(wk.r, 1, 10)
	case StockLevel:
		in.threshold = uniform(wk.r, 10, 20)
	}
}

func (wk *worker) run(t int) error {
	switch t {
	case NewOrder:
		return wk.newOrder()
	case Payment:
		return wk.payment()
	case OrderStatus:
		return wk.orderStatus()
	case Delivery:
		return wk.delivery()
	default:
		return wk.stockLevel()
	}
}

// newOrder is the New-Order transaction (clause 2.4.2).
func (wk *worker) newOrder() error {
	in, n, s := &wk.in, &wk.names[wk.in.copy], &wk.s
	if err := wk.do(begin); err != nil {
		return err
	}
	rs, err := s.sql("SELECT c_discount, c_last, c_credit, w_tax FROM ").lit(n.customer).lit(", ").lit(n.warehouse).
		lit(" WHERE w_id = ").int(in.w).lit(" AND c_w_id = w_id AND c_d_id = ").int(in.d).lit(" AND c_id = ").int(in.c).q(wk)
	if err != nil {
		return err
	}
	if err := one(rs, "customer"); err != nil {
		return err
	}
	discount, err1 := rs.Float(0, 0)
	wTax, err2 := rs.Float(0, 3)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if rs, err = s.sql("SELECT d_next_o_id, d_tax FROM ").lit(n.district).lit(" WHERE d_w_id = ").int(in.w).lit(" AND d_id = ").int(in.d).lit(" FOR UPDATE").q(wk); err != nil {
		return err
	}
	if err := one(rs, "district"); err != nil {
		return err
	}
	oid, err1 := rs.Int(0, 0)
	dTax, err2 := rs.Float(0, 1)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if _, err := s.sql("UPDATE ").lit(n.district).lit(" SET d_next_o_id = ").int(oid + 1).lit(" WHERE d_w_id = ").int(in.w).lit(" AND d_id = ").int(in.d).q(wk); err != nil {
		return err
	}
	if _, err := s.sql("INSERT INTO ").lit(n.orders).lit(" (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (").
		int(oid).lit(", ").int(in.d).lit(", ").int(in.w).lit(", ").int(in.c).lit(", NOW(), NULL, ").int(int64(in.n)).lit(", ").int(in.allLocal).lit(")").q(wk); err != nil {
		return err
	}
	if _, err := s.sql("INSERT INTO ").lit(n.newOrders).lit(" (no_o_id, no_d_id, no_w_id) VALUES (").int(oid).lit(", ").int(in.d).lit(", ").int(in.w).lit(")").q(wk); err != nil {
		return err
	}
	for i := range in.n {
		rs, err := s.sql("SELECT i_price, i_name, i_data FROM ").lit(n.item).lit(" WHERE i_id = ").int(in.item[i]).q(wk)
		if err != nil {
			return err
		}
		if rs.Len() == 0 { // the unused item: the whole order is rolled back (clause 2.4.2.3), and counts as done
			wk.rolledBack = true
			return wk.do(rollback)
		}
		price, err := rs.Float(0, 0)
		if err != nil {
			return err
		}
		if rs, err = s.sql("SELECT s_quantity, s_data, s_dist_").lit(distCol[in.d]).lit(" FROM ").lit(n.stock).lit(" WHERE s_i_id = ").int(in.item[i]).
			lit(" AND s_w_id = ").int(in.supply[i]).lit(" FOR UPDATE").q(wk); err != nil {
			return err
		}
		if err := one(rs, "stock"); err != nil {
			return err
		}
		q, err := rs.Int(0, 0)
		if err != nil {
			return err
		}
		wk.keep = append(wk.keep[:0], rs.Bytes(0, 2)...)
		if q-in.qty[i] >= 10 {
			q -= in.qty[i]
		} else {
			q += 91 - in.qty[i]
		}
		remote := int64(0)
		if in.supply[i] != in.w {
			remote = 1
		}
		if _, err := s.sql("UPDATE ").lit(n.stock).lit(" SET s_quantity = ").int(q).lit(", s_ytd = s_ytd + ").int(in.qty[i]).
			lit(", s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ").int(remote).
			lit(" WHERE s_i_id = ").int(in.item[i]).lit(" AND s_w_id = ").int(in.supply[i]).q(wk); err != nil {
			return err
		}
		amount := float64(in.qty[i]) * price * (1 + wTax + dTax) * (1 - discount)
		if _, err := s.sql("INSERT INTO ").lit(n.orderLine).lit(" (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (").
			int(oid).lit(", ").int(in.d).lit(", ").int(in.w).lit(", ").int(int64(i + 1)).lit(", ").int(in.item[i]).lit(", ").int(in.supply[i]).
			lit(", NULL, ").int(in.qty[i]).lit(", ").money(amount).lit(", ").text(wk.keep).lit(")").q(wk); err != nil {
			return err
		}
	}
	return wk.do(commit)
}

// distCol are the stock's s_dist_NN columns by district.
var distCol = [DistrictsPerWarehouse + 1]string{"", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10"}

// q sends the statement as the worker's, counted (a chain's end).
func (s *stmt) q(wk *worker) (*rows.Set, error) {
	wk.sent++
	return wk.query(s.b)
}

// customerByName finds the customer of a last name in a district: the
// one in the middle, by first name, of those of that name (clause
// 2.5.2.2: position n/2 rounded up). cols are the columns to select,
// the customer id at idCol.
func (wk *worker) customerByName(tbl string, w, d int64, cols string, idCol int) (*rows.Set, int, error) {
	rs, err := wk.s.sql("SELECT ").lit(cols).lit(" FROM ").lit(tbl).lit(" WHERE c_w_id = ").int(w).lit(" AND c_d_id = ").int(d).
		lit(" AND c_last = ").text(wk.in.last).lit(" ORDER BY c_first").q(wk)
	if err != nil {
		return nil, 0, err
	}
	if rs.Len() == 0 {
		return nil, 0, fmt.Errorf("tpcc: no customer named %s in district %d of warehouse %d", wk.in.last, d, w)
	}
	row := (rs.Len() - 1) / 2
	if wk.in.c, err = rs.Int(row, idCol); err != nil {
		return nil, 0, err
	}
	return rs, row, nil
}

// payment is the Payment transaction (clause 2.5.2).
func (wk *worker) payment() error {
	in, n, s := &wk.in, &wk.names[wk.in.copy], &wk.s
	if err := wk.do(begin); err != nil {
		return err
	}
	if _, err := s.sql("UPDATE ").lit(n.warehouse).lit(" SET w_ytd = w_ytd + ").money(in.amount).lit(" WHERE w_id = ").int(in.w).q(wk); err != nil {
		return err
	}
	rs, err := s.sql("SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM ").lit(n.warehouse).lit(" WHERE w_id = ").int(in.w).q(wk)
	if err != nil {
		return err
	}
	if err := one(rs, "warehouse"); err != nil {
		return err
	}
	wk.keep = append(wk.keep[:0], rs.Bytes(0, 5)...)
	if _, err := s.sql("UPDATE ").lit(n.district).lit(" SET d_ytd = d_ytd + ").money(in.amount).lit(" WHERE d_w_id = ").int(in.w).lit(" AND d_id = ").int(in.d).q(wk); err != nil {
		return err
	}
	if rs, err = s.sql("SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM ").lit(n.district).lit(" WHERE d_w_id = ").int(in.w).lit(" AND d_id = ").int(in.d).q(wk); err != nil {
		return err
	}
	if err := one(rs, "district"); err != nil {
		return err
	}
	wk.keep = append(append(wk.keep, "    "...), rs.Bytes(0, 5)...) // h_data: the warehouse's and the district's names
	if in.byName {
		if _, _, err := wk.customerByName(n.customer, in.cw, in.cd, "c_id", 0); err != nil {
			return err
		}
	}
	if rs, err = s.sql("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM ").
		lit(n.customer).lit(" WHERE c_w_id = ").int(in.cw).lit(" AND c_d_id = ").int(in.cd).lit(" AND c_id = ").int(in.c).lit(" FOR UPDATE").q(wk); err != nil {
		return err
	}
	if err := one(rs, "customer"); err != nil {
		return err
	}
	bad := string(rs.Bytes(0, 10)) == "BC"
	s.sql("UPDATE ").lit(n.customer).lit(" SET c_balance = c_balance - ").money(in.amount).lit(", c_ytd_payment = c_ytd_payment + ").money(in.amount).
		lit(", c_payment_cnt = c_payment_cnt + 1")
	if bad { // bad credit: the payment goes in front of the customer's data, kept to 500 characters (clause 2.5.2.2)
		s.lit(", c_data = SUBSTR(CONCAT('").int(in.c).lit(" ").int(in.cd).lit(" ").int(in.cw).lit(" ").int(in.d).lit(" ").int(in.w).lit(" ").money(in.amount).lit(" ', c_data), 1, 500)")
	}
	if _, err := s.lit(" WHERE c_w_id = ").int(in.cw).lit(" AND c_d_id = ").int(in.cd).lit(" AND c_id = ").int(in.c).q(wk); err != nil {
		return err
	}
	if _, err := s.sql("INSERT INTO ").lit(n.history).lit(" (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (").
		int(in.c).lit(", ").int(in.cd).lit(", ").int(in.cw).lit(", ").int(in.d).lit(", ").int(in.w).lit(", NOW(), ").money(in.amount).lit(", ").text(wk.keep).lit(")").q(wk); err != nil {
		return err
	}
	return wk.do(commit)
}

// orderStatus is the Order-Status transaction (clause 2.6.2).
func (wk *worker) orderStatus() error {
	in, n, s := &wk.in, &wk.names[wk.in.copy], &wk.s
	if err := wk.do(begin); err != nil {
		return err
	}
	if in.byName {
		if _, _, err := wk.customerByName(n.customer, in.w, in.d, "c_balance, c_first, c_middle, c_id", 3); err != nil {
			return err
		}
	} else {
		rs, err := s.sql("SELECT c_balance, c_first, c_middle, c_last FROM ").lit(n.customer).lit(" WHERE c_w_id = ").int(in.w).lit(" AND c_d_id = ").int(in.d).lit(" AND c_id = ").int(in.c).q(wk)
		if err != nil {
			return err
		}
		if err := one(rs, "customer"); err != nil {
			return err
		}
	}
	rs, err := s.sql("SELECT o_id, o_carrier_id, o_entry_d FROM ").lit(n.orders).lit(" WHERE o_w_id = ").int(in.w).lit(" AND o_d_id = ").int(in.d).
		lit(" AND o_c_id = ").int(in.c).lit(" ORDER BY o_id DESC LIMIT 1").q(wk)
	if err != nil {
		return err
	}
	if rs.Len() > 0 {
		oid, err := rs.Int(0, 0)
		if err != nil {
			return err
		}
		if _, err := s.sql("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM ").lit(n.orderLine).lit(" WHERE ol_w_id = ").int(in.w).
			lit(" AND ol_d_id = ").int(in.d).lit(" AND ol_o_id = ").int(oid).q(wk); err != nil {
			return err
		}
	}
	return wk.do(commit)
}

// delivery is the Delivery transaction (clause 2.7.4), run at once as
// sysbench-tpcc runs it rather than queued: each district's oldest new
// order is delivered, a district with none is skipped.
func (wk *worker) delivery() error {
	in, n, s := &wk.in, &wk.names[wk.in.copy], &wk.s
	if err := wk.do(begin); err != nil {
		return err
	}
	for d := int64(1); d <= DistrictsPerWarehouse; d++ {
		rs, err := s.sql("SELECT no_o_id FROM ").lit(n.newOrders).lit(" WHERE no_d_id = ").int(d).lit(" AND no_w_id = ").int(in.w).
			lit(" ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE").q(wk)
		if err != nil {
			return err
		}
		if rs.Len() == 0 {
			continue
		}
		oid, err := rs.Int(0, 0)
		if err != nil {
			return err
		}
		if _, err := s.sql("DELETE FROM ").lit(n.newOrders).lit(" WHERE no_o_id = ").int(oid).lit(" AND no_d_id = ").int(d).lit(" AND no_w_id = ").int(in.w).q(wk); err != nil {
			return err
		}
		if rs, err = s.sql("SELECT o_c_id FROM ").lit(n.orders).lit(" WHERE o_id = ").int(oid).lit(" AND o_d_id = ").int(d).lit(" AND o_w_id = ").int(in.w).q(wk); err != nil {
			return err
		}
		if err := one(rs, "order"); err != nil {
			return err
		}
		cid, err := rs.Int(0, 0)
		if err != nil {
			return err
		}
		if _, err := s.sql("UPDATE ").lit(n.orders).lit(" SET o_carrier_id = ").int(in.carrier).lit(" WHERE o_id = ").int(oid).lit(" AND o_d_id = ").int(d).lit(" AND o_w_id = ").int(in.w).q(wk); err != nil {
			return err
		}
		if _, err := s.sql("UPDATE ").lit(n.orderLine).lit(" SET ol_delivery_d = NOW() WHERE ol_o_id = ").int(oid).lit(" AND ol_d_id = ").int(d).lit(" AND ol_w_id = ").int(in.w).q(wk); err != nil {
			return err
		}
		if rs, err = s.sql("SELECT SUM(ol_amount) FROM ").lit(n.orderLine).lit(" WHERE ol_o_id = ").int(oid).lit(" AND ol_d_id = ").int(d).lit(" AND ol_w_id = ").int(in.w).q(wk); err != nil {
			return err
		}
		if err := one(rs, "order line sum"); err != nil {
			return err
		}
		wk.keep = append(wk.keep[:0], rs.Bytes(0, 0)...)
		if rs.Null(0, 0) {
			wk.keep = append(wk.keep, '0')
		}
		if _, err := s.sql("UPDATE ").lit(n.customer).lit(" SET c_balance = c_balance + ").raw(wk.keep).lit(", c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = ").int(cid).
			lit(" AND c_d_id = ").int(d).lit(" AND c_w_id = ").int(in.w).q(wk); err != nil {
			return err
		}
	}
	return wk.do(commit)
}

// stockLevel is the Stock-Level transaction (clause 2.8.2): the items of
// the district's last 20 orders whose stock is under the threshold.
func (wk *worker) stockLevel() error {
	in, n, s := &wk.in, &wk.names[wk.in.copy], &wk.s
	if err := wk.do(begin); err != nil {
		return err
	}
	rs, err := s.sql("SELECT d_next_o_id FROM ").lit(n.district).lit(" WHERE d_w_id = ").int(in.w).lit(" AND d_id = ").int(in.d).q(wk)
	if err != nil {
		return err
	}
	if err := one(rs, "district"); err != nil {
		return err
	}
	next, err := rs.Int(0, 0)
	if err != nil {
		return err
	}
	if _, err := s.sql("SELECT COUNT(DISTINCT (s_i_id)) FROM ").lit(n.orderLine).lit(", ").lit(n.stock).lit(" WHERE ol_w_id = ").int(in.w).lit(" AND ol_d_id = ").int(in.d).
		lit(" AND ol_o_id < ").int(next).lit(" AND ol_o_id >= ").int(next - 20).lit(" AND s_w_id = ").int(in.w).lit(" AND s_i_id = ol_i_id AND s_quantity < ").int(in.threshold).q(wk); err != nil {
		return err
	}
	return wk.do(commit)
}

// Interrupt ends a wait on the server, from another goroutine (bench.Interrupter).
func (wk *worker) Interrupt() { wk.c.Interrupt() }

// Close closes the connection. A coroutine waiting on it is left to
// wait (stopping it from here could be from another thread than its
// own): one small goroutine a client, for the rest of the process.
func (wk *worker) Close() error { return wk.c.Close() }
