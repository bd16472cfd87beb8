package tpcc

// Stock-Level (clause 2.8): the items of a district's last 20 orders
// whose stock is below a threshold, read only.

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
