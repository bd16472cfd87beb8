package tpcc

import (
	"errors"

	"pidb/bench/wire/rows"
)

// New-Order (clause 2.4): an order of 5 to 15 lines, the district's next
// order id, the stock of each item.

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
