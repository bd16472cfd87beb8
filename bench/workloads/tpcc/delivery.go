package tpcc

// Delivery (clause 2.7): the oldest new order of each district of a
// warehouse delivered, in one transaction.

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
