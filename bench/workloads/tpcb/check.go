package tpcb

import (
	"context"
	"fmt"
	"strconv"

	"pidb/results"
)

// The conditions Check tests: every transaction of the TPC-B-like script
// adds its delta to one account, one teller and one branch and inserts
// one history row with it, so on data that lost no committed transaction
// and kept no half of one, each balance is the sum of its history, and
// the row counts are pgbench's for the scale the branches make.
var conditions = [4]string{
	"rows: branches = scale, tellers = 10 x scale, accounts = 100,000 x scale, no key twice",
	"every branch's bbalance = sum(delta) of its history",
	"every teller's tbalance = sum(delta) of its history",
	"every account's abalance = sum(delta) of its history",
}

// Check tests the conditions on the loaded tables, in one read-only
// snapshot: one result per condition, PASS or FAIL with the numbers (for
// the balances, how many rows differ and the first of them). It reads
// every account and every history row, so it takes about as long as a
// sequential scan of both; a run in flight beside it is not seen (the
// snapshot).
func (w *Workload) Check(ctx context.Context) ([]results.Check, error) {
	c, err := w.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close(ctx)
	if err := exec(ctx, c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return nil, err
	}
	defer func() { _ = exec(context.WithoutCancel(ctx), c, "ROLLBACK") }()
	out := make([]results.Check, 0, len(conditions))
	add := func(cond int, pass bool, detail string) {
		out = append(out, results.Check{Condition: cond + 1, Name: conditions[cond], Pass: pass, Detail: detail})
	}

	res, err := c.Exec(ctx, `SELECT (SELECT count(*) FROM pgbench_branches), (SELECT count(DISTINCT bid) FROM pgbench_branches),
  (SELECT count(*) FROM pgbench_tellers), (SELECT count(DISTINCT tid) FROM pgbench_tellers),
  (SELECT count(*) FROM pgbench_accounts), (SELECT count(DISTINCT aid) FROM pgbench_accounts)`).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("tpcb check: %w", err)
	}
	n, err := ints(res[0].Rows)
	if err != nil {
		return nil, err
	}
	nb, nt, na := Rows(int(n[0]))
	add(0, n[0] > 0 && n[1] == nb && n[2] == nt && n[3] == nt && n[4] == na && n[5] == na,
		fmt.Sprintf("%d branches (%d keys), %d tellers (%d keys), %d accounts (%d keys); scale %d wants %d, %d and %d",
			n[0], n[1], n[2], n[3], n[4], n[5], n[0], nb, nt, na))

	for i, t := range []struct{ table, key, balance string }{
		{"pgbench_branches", "bid", "bbalance"},
		{"pgbench_tellers", "tid", "tbalance"},
		{"pgbench_accounts", "aid", "abalance"},
	} {
		// the rows whose balance is not their history's sum, and the first
		q := fmt.Sprintf(`SELECT count(*), min(x.%[2]s), coalesce(sum(x.%[3]s), 0), coalesce(sum(x.s), 0) FROM (
  SELECT t.%[2]s, t.%[3]s, coalesce(h.s, 0) AS s FROM %[1]s t
  LEFT JOIN (SELECT %[2]s, sum(delta) AS s FROM pgbench_history GROUP BY %[2]s) h ON h.%[2]s = t.%[2]s
  WHERE t.%[3]s IS DISTINCT FROM coalesce(h.s, 0)) x`, t.table, t.key, t.balance)
		res, err := c.Exec(ctx, q).ReadAll()
		if err != nil {
			return out, fmt.Errorf("tpcb check: %s: %w", t.table, err)
		}
		row := res[0].Rows[0]
		bad, _ := strconv.ParseInt(string(row[0]), 10, 64)
		detail := fmt.Sprintf("all %s rows match their history", t.key)
		if bad > 0 {
			detail = fmt.Sprintf("%d rows differ, the first %s %s: their balances sum to %s, their history to %s", bad, t.key, row[1], row[2], row[3])
		}
		add(i+1, bad == 0, detail)
	}
	return out, nil
}

// ints reads one row of integers.
func ints(rows [][][]byte) ([]int64, error) {
	if len(rows) != 1 {
		return nil, fmt.Errorf("tpcb check: %d rows, want 1", len(rows))
	}
	out := make([]int64, len(rows[0]))
	for i, v := range rows[0] {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("tpcb check: %q: %w", v, err)
		}
		out[i] = n
	}
	return out, nil
}
