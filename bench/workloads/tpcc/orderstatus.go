package tpcc

// Order-Status (clause 2.6): a customer's last order and its lines,
// read only.

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
