package tpcc

import (
	"strconv"
	"strings"
)

// table is one of the nine tables as sysbench-tpcc's create_tables makes
// it: its columns (with {tiny} and {time} for the engines' types), its
// primary key, and the columns loaded (every one, in order).
type table struct {
	base    string
	columns string
	pk      string
}

// tables are the nine, in sysbench-tpcc's order of creation.
var tables = []table{
	{"warehouse", `w_id smallint not null, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), w_tax decimal(4,2), w_ytd decimal(12,2)`, "w_id"},
	{"district", `d_id {tiny} not null, d_w_id smallint not null, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4,2), d_ytd decimal(12,2), d_next_o_id int`, "d_w_id, d_id"},
	{"customer", `c_id int not null, c_d_id {tiny} not null, c_w_id smallint not null, c_first varchar(16), c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since {time}, c_credit char(2), c_credit_lim bigint, c_discount decimal(4,2), c_balance decimal(12,2), c_ytd_payment decimal(12,2), c_payment_cnt smallint, c_delivery_cnt smallint, c_data text`, "c_w_id, c_d_id, c_id"},
	{"history", `h_c_id int, h_c_d_id {tiny}, h_c_w_id smallint, h_d_id {tiny}, h_w_id smallint, h_date {time}, h_amount decimal(6,2), h_data varchar(24)`, ""},
	{"orders", `o_id int not null, o_d_id {tiny} not null, o_w_id smallint not null, o_c_id int, o_entry_d {time}, o_carrier_id {tiny}, o_ol_cnt {tiny}, o_all_local {tiny}`, "o_w_id, o_d_id, o_id"},
	{"new_orders", `no_o_id int not null, no_d_id {tiny} not null, no_w_id smallint not null`, "no_w_id, no_d_id, no_o_id"},
	{"order_line", `ol_o_id int not null, ol_d_id {tiny} not null, ol_w_id smallint not null, ol_number {tiny} not null, ol_i_id int, ol_supply_w_id smallint, ol_delivery_d {time}, ol_quantity {tiny}, ol_amount decimal(6,2), ol_dist_info char(24)`, "ol_w_id, ol_d_id, ol_o_id, ol_number"},
	{"stock", `s_i_id int not null, s_w_id smallint not null, s_quantity smallint, s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd decimal(8,0), s_order_cnt smallint, s_remote_cnt smallint, s_data varchar(50)`, "s_w_id, s_i_id"},
	{"item", `i_id int not null, i_im_id int, i_name varchar(24), i_price decimal(5,2), i_data varchar(50)`, "i_id"},
}

// names are one copy's table names (sysbench-tpcc's --tables: warehouse1,
// district1 ... for copy 1).
type names struct {
	warehouse, district, customer, history, orders, newOrders, orderLine, stock, item string
}

func namesOf(copy int) names {
	n := strconv.Itoa(copy)
	return names{"warehouse" + n, "district" + n, "customer" + n, "history" + n, "orders" + n, "new_orders" + n, "order_line" + n, "stock" + n, "item" + n}
}

// engineTypes puts an engine's types in a table's columns: MySQL's and
// MariaDB's tinyint and datetime, PostgreSQL's smallint and timestamp.
func engineTypes(cols string, mysql bool) string {
	if mysql {
		return strings.NewReplacer("{tiny}", "tinyint", "{time}", "datetime").Replace(cols)
	}
	return strings.NewReplacer("{tiny}", "smallint", "{time}", "timestamp").Replace(cols)
}

// createTables are one copy's CREATE TABLEs. On MySQL and MariaDB the
// primary key is in the table from the start (InnoDB's rows are kept in
// its order, and the load comes in that order); on PostgreSQL it is added
// after the load (keys, as pgbench -i adds them).
func createTables(copy int, mysql bool, options string) []string {
	n := strconv.Itoa(copy)
	var out []string
	for _, t := range tables {
		cols := engineTypes(t.columns, mysql)
		if mysql && t.pk != "" {
			cols += ", PRIMARY KEY (" + t.pk + ")"
		}
		out = append(out, "CREATE TABLE "+t.base+n+" ("+cols+")"+options)
	}
	return out
}

// primaryKeys are the ALTER TABLEs that add one copy's primary keys after
// the load (PostgreSQL).
func primaryKeys(copy int) []string {
	n := strconv.Itoa(copy)
	var out []string
	for _, t := range tables {
		if t.pk != "" {
			out = append(out, "ALTER TABLE "+t.base+n+" ADD PRIMARY KEY ("+t.pk+")")
		}
	}
	return out
}

// indexes are sysbench-tpcc's secondary indexes of one copy.
func indexes(copy int) []string {
	n := strconv.Itoa(copy)
	return []string{
		"CREATE INDEX idx_customer" + n + " ON customer" + n + " (c_w_id,c_d_id,c_last,c_first)",
		"CREATE INDEX idx_orders" + n + " ON orders" + n + " (o_w_id,o_d_id,o_c_id,o_id)",
		"CREATE INDEX fkey_stock_2" + n + " ON stock" + n + " (s_i_id)",
		"CREATE INDEX fkey_order_line_2" + n + " ON order_line" + n + " (ol_supply_w_id,ol_i_id)",
		"CREATE INDEX fkey_history_1" + n + " ON history" + n + " (h_c_w_id,h_c_d_id,h_c_id)",
		"CREATE INDEX fkey_history_2" + n + " ON history" + n + " (h_w_id,h_d_id)",
	}
}

// foreignKeys are sysbench-tpcc's foreign keys of one copy (--use-fk).
func foreignKeys(copy int) []string {
	n := strconv.Itoa(copy)
	fk := func(tbl, name, cols, ref, refCols string) string {
		return "ALTER TABLE " + tbl + n + " ADD CONSTRAINT " + name + "_" + n + " FOREIGN KEY(" + cols + ") REFERENCES " + ref + n + "(" + refCols + ")"
	}
	return []string{
		fk("new_orders", "fkey_new_orders_1", "no_w_id,no_d_id,no_o_id", "orders", "o_w_id,o_d_id,o_id"),
		fk("orders", "fkey_orders_1", "o_w_id,o_d_id,o_c_id", "customer", "c_w_id,c_d_id,c_id"),
		fk("customer", "fkey_customer_1", "c_w_id,c_d_id", "district", "d_w_id,d_id"),
		fk("history", "fkey_history_1", "h_c_w_id,h_c_d_id,h_c_id", "customer", "c_w_id,c_d_id,c_id"),
		fk("history", "fkey_history_2", "h_w_id,h_d_id", "district", "d_w_id,d_id"),
		fk("district", "fkey_district_1", "d_w_id", "warehouse", "w_id"),
		fk("order_line", "fkey_order_line_1", "ol_w_id,ol_d_id,ol_o_id", "orders", "o_w_id,o_d_id,o_id"),
		fk("order_line", "fkey_order_line_2", "ol_supply_w_id,ol_i_id", "stock", "s_w_id,s_i_id"),
		fk("stock", "fkey_stock_1", "s_w_id", "warehouse", "w_id"),
		fk("stock", "fkey_stock_2", "s_i_id", "item", "i_id"),
	}
}

// dropTables drops one copy's tables, those that refer to others first
// (sysbench-tpcc's cleanup order).
func dropTables(copy int, postgres bool) []string {
	n := strconv.Itoa(copy)
	cascade := ""
	if postgres {
		cascade = " CASCADE"
	}
	var out []string
	for _, b := range []string{"history", "new_orders", "order_line", "orders", "customer", "district", "stock", "item", "warehouse"} {
		out = append(out, "DROP TABLE IF EXISTS "+b+n+cascade)
	}
	return out
}
