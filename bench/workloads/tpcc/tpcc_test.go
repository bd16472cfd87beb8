package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"pidb/bench/wire/rows"
)

func TestLastNames(t *testing.T) {
	// the standard's own examples (clause 4.3.2.3)
	for n, want := range map[int]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING", 40: "BARPRESBAR"} {
		if got := LastName(n); got != want {
			t.Errorf("LastName(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestRunConstants(t *testing.T) {
	for c, ok := range map[int64]bool{157 + 65: true, 157 + 64: false, 157 + 96: false, 157 - 96: false, 157 - 112: false, 157 - 119: true, 157 - 120: false, 157: false, 157 - 65: true} {
		if ValidRunC255(c) != ok {
			t.Errorf("C = %d for a load's 157: valid %v, want %v", c, !ok, ok)
		}
	}
	for seed := range uint64(200) {
		k := RunConstants(rand.New(rand.NewPCG(seed, 1)))
		if !ValidRunC255(k.C255) || k.C1023 < 0 || k.C1023 > 1023 || k.C8191 < 0 || k.C8191 > 8191 {
			t.Fatalf("seed %d: %+v", seed, k)
		}
	}
}

// TestNURand: in range, and as skewed as the standard means it to be: the
// most drawn 1% of the item ids take several times 1% of the draws.
func TestNURand(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	hits := make([]int, Items+1)
	const draws = 500000
	for range draws {
		v := NURand(r, 8191, 1234, 1, Items)
		if v < 1 || v > Items {
			t.Fatalf("NURand(8191, 1, %d) = %d", Items, v)
		}
		hits[v]++
	}
	slices.Sort(hits)
	top := 0
	for _, h := range hits[len(hits)-Items/100:] {
		top += h
	}
	if share := float64(top) / draws; share < 0.03 {
		t.Errorf("the top 1%% of items took %.1f%% of the draws: not skewed", share*100)
	}
	for range 10000 {
		if v := NURand(r, 255, 200, 0, 999); v < 0 || v > 999 {
			t.Fatalf("NURand(255, 0, 999) = %d", v)
		}
	}
}

func TestMix(t *testing.T) {
	if m, err := ParseMix(""); err != nil || m != StandardMix || m.String() != "45:43:4:4:4" {
		t.Errorf("the default mix: %v %v", m, err)
	}
	if m, err := ParseMix("10:10:1:1:1"); err != nil || m != (Mix{10, 10, 1, 1, 1}) {
		t.Errorf("sysbench-tpcc's: %v %v", m, err)
	}
	for _, bad := range []string{"1:2:3:4", "a:1:1:1:1", "-1:1:1:1:1", "0:0:0:0:0", "1:1:1:1:1:1"} {
		if _, err := ParseMix(bad); err == nil {
			t.Errorf("ParseMix(%q) took it", bad)
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	var n [5]int
	const draws = 100000
	for range draws {
		n[StandardMix.pick(r)]++
	}
	for i, want := range []float64{0.45, 0.43, 0.04, 0.04, 0.04} {
		if got := float64(n[i]) / draws; got < want-0.01 || got > want+0.01 {
			t.Errorf("%s: %.3f of the draws, want %.2f", Types[i], got, want)
		}
	}
}

// fake is a connection that records what it is sent and answers from a
// function of the statement.
type fake struct {
	sent    []string
	pending string
	answer  func(sql string) ([][]string, error)
	rs      rows.Set
}

func (f *fake) Send() error { return nil }
func (f *fake) send(sql []byte) error {
	f.pending = string(sql)
	f.sent = append(f.sent, f.pending)
	return nil
}
func (f *fake) Receive() (bool, error) {
	got, err := f.answer(f.pending)
	f.rs.Reset()
	for _, r := range got {
		f.rs.Row(len(r))
		for _, v := range r {
			if v == "NULL" {
				f.rs.AddNull()
			} else {
				f.rs.Add([]byte(v))
			}
		}
	}
	return true, err
}
func (f *fake) rows() *rows.Set { return &f.rs }
func (f *fake) Broken() bool    { return false }
func (f *fake) Fd() int         { return -1 }
func (f *fake) Close() error    { return nil }
func (f *fake) Interrupt()      {}

// answers is a fake server's answer by the statement's beginning.
func answers(t *testing.T, by map[string][][]string) func(string) ([][]string, error) {
	return func(sql string) ([][]string, error) {
		for prefix, rows := range by {
			if strings.HasPrefix(sql, prefix) {
				return rows, nil
			}
		}
		if strings.HasPrefix(sql, "SELECT") {
			t.Errorf("no answer for %s", sql)
		}
		return nil, nil
	}
}

func worker1(c conn, mix Mix, seed uint64) *worker {
	return &worker{c: c, r: rand.New(rand.NewPCG(seed, 3)), k: Constants{C255: 223, C1023: 5, C8191: 77}, mix: mix, scale: 2, tables: 1, maxTry: 3, names: allNames(1)}
}

var stdAnswers = map[string][][]string{
	"SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1": {{"0.10", "BARBARBAR", "GC", "0.05"}},
	"SELECT d_next_o_id, d_tax FROM district1":                              {{"3001", "0.07"}},
	"SELECT i_price, i_name, i_data FROM item1":                             {{"10.00", "itemname", "data"}},
	"SELECT s_quantity, s_data, s_dist_":                                    {{"15", "sdata", "distinfo0123456789abcdef"}},
}

func TestNewOrder(t *testing.T) {
	f := &fake{answer: answers(t, stdAnswers)}
	wk := worker1(f, Mix{1, 0, 0, 0, 0}, 1)
	out, err := wk.Do(context.Background())
	if err != nil || out.Op != "new_order" || out.RolledBack {
		t.Fatalf("%+v %v", out, err)
	}
	n := wk.in.n
	if len(f.sent) != 7+4*n || out.Queries != len(f.sent) || f.sent[0] != "BEGIN" || f.sent[len(f.sent)-1] != "COMMIT" {
		t.Fatalf("%d order lines, %d queries, sent %d:\n%s", n, out.Queries, len(f.sent), strings.Join(f.sent, "\n"))
	}
	if !strings.HasSuffix(f.sent[2], "FOR UPDATE") || !strings.Contains(f.sent[3], "SET d_next_o_id = 3002 ") {
		t.Errorf("the district: %s; %s", f.sent[2], f.sent[3])
	}
	if !strings.Contains(f.sent[4], "VALUES (3001, ") || !strings.HasPrefix(f.sent[5], "INSERT INTO new_orders1") {
		t.Errorf("the order: %s; %s", f.sent[4], f.sent[5])
	}
	// the first line: stock 15 less the quantity, or 91 more when that leaves less than 10
	qty := wk.in.qty[0]
	left := 15 - qty
	if left < 10 {
		left += 91
	}
	if want := "UPDATE stock1 SET s_quantity = " + itoa(left) + ", s_ytd = s_ytd + " + itoa(qty); !strings.HasPrefix(f.sent[8], want) {
		t.Errorf("stock: %s, want %s...", f.sent[8], want)
	}
	// amount: qty x 10.00 x (1 + 0.05 + 0.07) x (1 - 0.10)
	amount := float64(qty) * 10 * 1.12 * 0.9
	if want := ", " + strconv.FormatFloat(amount, 'f', 2, 64) + ", 'distinfo0123456789abcdef')"; !strings.HasSuffix(f.sent[9], want) {
		t.Errorf("order line: %s (amount %.2f)", f.sent[9], amount)
	}
}

func TestNewOrderRolledBack(t *testing.T) {
	by := map[string][][]string{}
	for k, v := range stdAnswers {
		by[k] = v
	}
	by["SELECT i_price, i_name, i_data FROM item1 WHERE i_id = 100001"] = nil // the unused item
	// a seed whose New-Order has the 1% rollback
	for seed := uint64(1); seed < 2000; seed++ {
		f := &fake{answer: answers(t, by)}
		wk := worker1(f, Mix{1, 0, 0, 0, 0}, seed)
		out, err := wk.Do(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !out.RolledBack {
			continue
		}
		last := f.sent[len(f.sent)-1]
		if last != "ROLLBACK" || slices.Contains(f.sent, "COMMIT") || !strings.HasSuffix(f.sent[len(f.sent)-2], "i_id = 100001") {
			t.Errorf("rolled back: %s", strings.Join(f.sent, "\n"))
		}
		return
	}
	t.Fatal("no New-Order with an unused item in 2,000 seeds")
}

// TestRetry: a deadlock rolls the transaction back and runs it again with
// the same inputs.
func TestRetry(t *testing.T) {
	fail := 1
	base := answers(t, map[string][][]string{
		"SELECT w_street_1": {{"s1", "s2", "city", "st", "zip", "wname"}},
		"SELECT d_street_1": {{"s1", "s2", "city", "st", "zip", "dname"}},
		"SELECT c_id FROM":  {{"11"}, {"22"}, {"33"}},
		"SELECT c_first":    {{"f", "OE", "l", "s1", "s2", "c", "st", "z", "p", "2026-01-01", "BC", "50000", "0.1", "-10"}},
	})
	f := &fake{}
	f.answer = func(sql string) ([][]string, error) {
		if strings.HasPrefix(sql, "UPDATE district1") && fail > 0 {
			fail--
			return nil, &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}
		}
		return base(sql)
	}
	wk := worker1(f, Mix{0, 1, 0, 0, 0}, 5)
	out, err := wk.Do(context.Background())
	if err != nil || out.Retries != 1 || out.Op != "payment" {
		t.Fatalf("%+v %v", out, err)
	}
	rb := slices.Index(f.sent, "ROLLBACK")
	if rb != 4 || f.sent[rb+1] != "BEGIN" || !slices.Equal(f.sent[1:4], f.sent[rb+2:rb+5]) {
		t.Errorf("not tried again the same:\n%s", strings.Join(f.sent, "\n"))
	}
	if f.sent[len(f.sent)-1] != "COMMIT" {
		t.Errorf("did not commit: %s", f.sent[len(f.sent)-1])
	}
	// bad credit: the payment goes in front of the customer's data
	upd := f.sent[len(f.sent)-3]
	if !strings.Contains(upd, "c_data = SUBSTR(CONCAT('") || !strings.Contains(upd, "c_payment_cnt = c_payment_cnt + 1") {
		t.Errorf("bad credit's update: %s", upd)
	}
	if h := f.sent[len(f.sent)-2]; !strings.HasSuffix(h, "'wname    dname')") {
		t.Errorf("history: %s", h)
	}
	// a deadlock every time: the last try's error ends it
	fail = 100
	f.sent = nil
	out, err = wk.Do(context.Background())
	var me *mysql.MySQLError
	if !errors.As(err, &me) || out.Retries != 2 {
		t.Errorf("after 3 tries: %+v %v", out, err)
	}
	w := &Workload{}
	if kind, again := w.ErrorKind(err); kind != "payment: mysql 1213" || again {
		t.Errorf("error kind %q %v", kind, again)
	}
}

// TestRetryable: what a transaction is tried again for: deadlocks, lock
// waits and serialization failures on every engine (MariaDB 11.6.2+'s
// snapshot isolation's 1020 among them), never a constraint or a
// syntax error.
func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1213}, true},
		{&mysql.MySQLError{Number: 1205}, true},
		{fmt.Errorf("payment: %w", &mysql.MySQLError{Number: 1020, Message: "Record has changed since last read in table 'district1'"}), true},
		{&mysql.MySQLError{Number: 1062}, false},
		{&mysql.MySQLError{Number: 1064}, false},
		{&pgconn.PgError{Code: "40001"}, true},
		{&pgconn.PgError{Code: "40P01"}, true},
		{&pgconn.PgError{Code: "23505"}, false},
		{errors.New("connection reset"), false},
	} {
		if got := retryable(c.err); got != c.want {
			t.Errorf("retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestByName: a customer by last name is the one in the middle of those
// of that name, by first name.
func TestByName(t *testing.T) {
	for seed := uint64(1); seed < 200; seed++ {
		f := &fake{answer: answers(t, map[string][][]string{
			"SELECT c_balance, c_first, c_middle, c_id":   {{"1", "a", "OE", "11"}, {"1", "b", "OE", "22"}, {"1", "c", "OE", "33"}, {"1", "d", "OE", "44"}},
			"SELECT c_balance, c_first, c_middle, c_last": {{"1", "a", "OE", "BAR"}},
			"SELECT o_id":    {{"7", "NULL", "2026-01-01"}},
			"SELECT ol_i_id": {{"1", "1", "5", "9.99", "NULL"}},
		})}
		wk := worker1(f, Mix{0, 0, 1, 0, 0}, seed)
		if _, err := wk.Do(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !wk.in.byName {
			continue
		}
		// 4 of that name: the 2nd (n/2 rounded up)
		if !strings.Contains(f.sent[1], "AND c_last = '"+string(wk.in.last)+"' ORDER BY c_first") || !strings.Contains(f.sent[2], "AND o_c_id = 22 ORDER BY o_id DESC LIMIT 1") ||
			!strings.HasSuffix(f.sent[3], "AND ol_o_id = 7") {
			t.Errorf("by name:\n%s", strings.Join(f.sent, "\n"))
		}
		return
	}
	t.Fatal("no Order-Status by name in 200 seeds")
}

// TestDelivery: each district's oldest new order; a district with none is skipped.
func TestDelivery(t *testing.T) {
	f := &fake{}
	base := answers(t, map[string][][]string{"SELECT o_c_id": {{"42"}}, "SELECT SUM(ol_amount)": {{"123.45"}}})
	f.answer = func(sql string) ([][]string, error) {
		if strings.HasPrefix(sql, "SELECT no_o_id") {
			if strings.Contains(sql, "no_d_id = 3 ") {
				return nil, nil
			}
			return [][]string{{"2101"}}, nil
		}
		return base(sql)
	}
	wk := worker1(f, Mix{0, 0, 0, 1, 0}, 9)
	if _, err := wk.Do(context.Background()); err != nil {
		t.Fatal(err)
	}
	deletes, credits := 0, 0
	for _, s := range f.sent {
		if strings.HasPrefix(s, "DELETE FROM new_orders1 WHERE no_o_id = 2101") {
			deletes++
			if strings.Contains(s, "no_d_id = 3 ") {
				t.Errorf("district 3 had no new order: %s", s)
			}
		}
		if strings.Contains(s, "SET c_balance = c_balance + 123.45, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = 42") {
			credits++
		}
	}
	if deletes != 9 || credits != 9 || len(f.sent) != 2+10+9*6 {
		t.Errorf("%d deletes, %d customers credited, %d statements:\n%s", deletes, credits, len(f.sent), strings.Join(f.sent, "\n"))
	}
}

func TestStockLevel(t *testing.T) {
	f := &fake{answer: answers(t, map[string][][]string{"SELECT d_next_o_id FROM": {{"3050"}}, "SELECT COUNT(DISTINCT": {{"3"}}})}
	wk := worker1(f, Mix{0, 0, 0, 0, 1}, 2)
	if _, err := wk.Do(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.sent) != 4 || !regexp.MustCompile(`AND ol_o_id < 3050 AND ol_o_id >= 3030 AND s_w_id = \d AND s_i_id = ol_i_id AND s_quantity < (1\d|20)$`).MatchString(f.sent[2]) {
		t.Errorf("%s", strings.Join(f.sent, "\n"))
	}
}

func TestSchema(t *testing.T) {
	my := strings.Join(createTables(2, true, " ENGINE=InnoDB"), ";\n")
	pg := strings.Join(createTables(2, false, ""), ";\n")
	for _, name := range []string{"warehouse2", "district2", "customer2", "history2", "orders2", "new_orders2", "order_line2", "stock2", "item2"} {
		if !strings.Contains(my, "CREATE TABLE "+name+" (") || !strings.Contains(pg, "CREATE TABLE "+name+" (") {
			t.Errorf("no table %s", name)
		}
	}
	if !strings.Contains(my, "d_id tinyint not null") || !strings.Contains(my, "PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) ENGINE=InnoDB") || strings.Contains(my, "{") {
		t.Errorf("MySQL's tables:\n%s", my)
	}
	if !strings.Contains(pg, "c_since timestamp") || strings.Contains(pg, "PRIMARY KEY") || len(primaryKeys(2)) != 8 {
		t.Errorf("PostgreSQL's tables (keys after the load):\n%s", pg)
	}
	if len(foreignKeys(1)) != 10 || len(indexes(1)) != 6 {
		t.Errorf("%d foreign keys, %d indexes", len(foreignKeys(1)), len(indexes(1)))
	}
	var bases []string // the order loadWarehouse's generators and loadItems follow
	for _, tb := range tables {
		bases = append(bases, tb.base)
	}
	if got := strings.Join(bases, ","); got != "warehouse,district,customer,history,orders,new_orders,order_line,stock,item" {
		t.Errorf("tables in the order %s", got)
	}
	if got := columnsOf(tables[0]); strings.Join(got, ",") != "w_id,w_name,w_street_1,w_street_2,w_city,w_state,w_zip,w_tax,w_ytd" {
		t.Errorf("warehouse columns %v", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
