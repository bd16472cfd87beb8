package tpcc

import (
	"fmt"

	"pidb/bench/wire/rows"
)

// Payment (clause 2.5): a customer, by id or by last name, pays; the
// warehouse's and the district's year-to-date totals grow.

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
