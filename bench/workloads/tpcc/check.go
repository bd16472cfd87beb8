package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"pidb/results"
)

// The standard's consistency conditions (clause 3.3.2) that Check tests.
var conditions = [4]string{
	"W_YTD = sum(D_YTD)",
	"D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
	"max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW_ORDER)",
	"sum(O_OL_CNT) = count(ORDER_LINE)",
}

// Check tests the standard's consistency conditions 1-4 on every
// warehouse of every table copy: one result per warehouse and condition,
// PASS or FAIL with the numbers (for conditions 2-4, which hold per
// district, the first district that fails, else the warehouse's). It
// reads only, so it can run beside a run, but a transaction in flight
// can then make a condition look broken for a moment.
func (w *Workload) Check(ctx context.Context) ([]results.Check, error) {
	w.defaults()
	db, err := w.DB.Open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// one snapshot per table copy, where the engine gives one
	var out []results.Check
	for c := 1; c <= w.Tables; c++ {
		got, err := w.checkCopy(ctx, db, c)
		if err != nil {
			return out, fmt.Errorf("tpcc check: table copy %d: %w", c, err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// district is what the conditions read of one district.
type district struct {
	nextMinus1, maxO, maxNO, minNO, countNO, sumOL, countOL int64
	hasNO                                                   bool
}

func (w *Workload) checkCopy(ctx context.Context, db *sql.DB, copy int) ([]results.Check, error) {
	n := namesOf(copy)
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	type wh struct {
		ytd, sumD string
	}
	whs := map[int64]*wh{}
	var order []int64
	rows, err := tx.QueryContext(ctx, "SELECT w_id, w_ytd, (SELECT SUM(d_ytd) FROM "+n.district+" WHERE d_w_id = w_id) FROM "+n.warehouse+" ORDER BY w_id")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		var ytd, sum sql.NullString
		if err := rows.Scan(&id, &ytd, &sum); err != nil {
			rows.Close()
			return nil, err
		}
		whs[id] = &wh{ytd: ytd.String, sumD: sum.String}
		order = append(order, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ds := map[[2]int64]*district{}
	get := func(w, d int64) *district {
		k := [2]int64{w, d}
		if ds[k] == nil {
			ds[k] = &district{}
		}
		return ds[k]
	}
	for _, q := range []struct {
		sql  string
		scan func(x *district, v []sql.NullInt64)
		cols int
	}{
		{"SELECT d_w_id, d_id, d_next_o_id - 1 FROM " + n.district, func(x *district, v []sql.NullInt64) { x.nextMinus1 = v[0].Int64 }, 1},
		{"SELECT o_w_id, o_d_id, MAX(o_id), SUM(o_ol_cnt) FROM " + n.orders + " GROUP BY o_w_id, o_d_id", func(x *district, v []sql.NullInt64) { x.maxO, x.sumOL = v[0].Int64, v[1].Int64 }, 2},
		{"SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM " + n.newOrders + " GROUP BY no_w_id, no_d_id", func(x *district, v []sql.NullInt64) {
			x.maxNO, x.minNO, x.countNO, x.hasNO = v[0].Int64, v[1].Int64, v[2].Int64, true
		}, 3},
		{"SELECT ol_w_id, ol_d_id, COUNT(*) FROM " + n.orderLine + " GROUP BY ol_w_id, ol_d_id", func(x *district, v []sql.NullInt64) { x.countOL = v[0].Int64 }, 1},
	} {
		rows, err := tx.QueryContext(ctx, q.sql)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var wid, did int64
			v := make([]sql.NullInt64, q.cols)
			dest := []any{&wid, &did}
			for i := range v {
				dest = append(dest, &v[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, err
			}
			q.scan(get(wid, did), v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	var out []results.Check
	for _, id := range order {
		res := func(cond int, pass bool, detail string) {
			out = append(out, results.Check{Table: copy, Warehouse: id, Condition: cond + 1, Name: conditions[cond], Pass: pass, Detail: detail})
		}
		x := whs[id]
		res(0, decimalEqual(x.ytd, x.sumD), fmt.Sprintf("W_YTD %s, sum(D_YTD) %s", x.ytd, x.sumD))
		var fail [3]string
		var total district
		for d := int64(1); d <= DistrictsPerWarehouse; d++ {
			y := ds[[2]int64{id, d}]
			if y == nil {
				y = &district{}
			}
			total.countNO += y.countNO
			total.sumOL += y.sumOL
			total.countOL += y.countOL
			pfx := "district " + strconv.FormatInt(d, 10) + ": "
			if ok := y.nextMinus1 == y.maxO && (!y.hasNO || y.maxNO == y.maxO); !ok && fail[0] == "" {
				fail[0] = pfx + fmt.Sprintf("D_NEXT_O_ID - 1 %d, max(O_ID) %d, max(NO_O_ID) %s", y.nextMinus1, y.maxO, maxNO(y))
			}
			if y.hasNO && y.maxNO-y.minNO+1 != y.countNO && fail[1] == "" {
				fail[1] = pfx + fmt.Sprintf("max(NO_O_ID) - min(NO_O_ID) + 1 = %d, count(NEW_ORDER) %d", y.maxNO-y.minNO+1, y.countNO)
			}
			if y.sumOL != y.countOL && fail[2] == "" {
				fail[2] = pfx + fmt.Sprintf("sum(O_OL_CNT) %d, count(ORDER_LINE) %d", y.sumOL, y.countOL)
			}
		}
		ok := [3]string{
			fmt.Sprintf("%d districts hold it", DistrictsPerWarehouse),
			fmt.Sprintf("%d new orders, none missing between", total.countNO),
			fmt.Sprintf("sum(O_OL_CNT) %d, count(ORDER_LINE) %d", total.sumOL, total.countOL),
		}
		for i := range fail {
			if fail[i] != "" {
				res(i+1, false, fail[i])
			} else {
				res(i+1, true, ok[i])
			}
		}
	}
	return out, tx.Commit()
}

func maxNO(d *district) string {
	if !d.hasNO {
		return "none (no new orders)"
	}
	return strconv.FormatInt(d.maxNO, 10)
}

// decimalEqual compares two DECIMAL values as their text gives them
// (300000.00 and 300000 are equal).
func decimalEqual(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	d := x - y
	return d < 0.005 && d > -0.005
}
