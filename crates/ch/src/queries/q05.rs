//! CH Q5: revenue per European nation of the orders since 2007-01-02 whose
//! lines' stock is supplied from the customer's own nation.
//!
//! ```sql
//! SELECT n_name, sum(ol_amount) AS revenue
//! FROM customer, oorder, order_line, stock, supplier, nation, region
//! WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id AND ol_o_id = o_id
//!   AND ol_w_id = o_w_id AND ol_d_id=o_d_id AND ol_w_id = s_w_id AND ol_i_id = s_i_id
//!   AND MOD((s_w_id * s_i_id), 10000) = su_suppkey
//!   AND ascii(substring(c_state from 1 for 1)) = su_nationkey
//!   AND su_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'Europe'
//!   AND o_entry_d >= '2007-01-02 00:00:00.000000'
//! GROUP BY n_name ORDER BY revenue DESC
//! ```
//!
//! Plan: the customers of European nations (nation by key), the orders since
//! the date of those customers (nation by order key), one order-line scan
//! summing the lines whose supplier is of the order's nation. The stock row
//! `(ol_w_id, ol_i_id)` is not read: TPC-C keeps a stock row for every
//! warehouse and item (rows are never inserted or deleted), and a line's
//! item is always a valid item, so the join never drops a line; the supplier
//! key is computed from the stock key.

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::tables::supplier_of;
use crate::time::at;

use super::keys::{KeyMap, customer_key, nations_in_region, order_key, supplier_nations};

pub(super) fn run(s: &Snap) -> Answer {
    let since = at(2007, 1, 2, 0, 0, 0);
    let (db, t) = (s.tpcc(), s.tables());
    let europe = nations_in_region(s, |r| r == "Europe");
    // Customer key → nation key, for the European customers.
    let mut customers: KeyMap<u64, u8> = KeyMap::default();
    db.customer.scan(&s.snapshot, |_, c| {
        if let Some(nation) = c.c_state.bytes().next()
            && europe[usize::from(nation)]
        {
            customers.insert(customer_key(c.c_w_id, c.c_d_id, c.c_id), nation);
        }
    });
    // Order key → the customer's nation key.
    let mut orders: KeyMap<u64, u8> = KeyMap::default();
    db.orders.scan(&s.snapshot, |_, o| {
        if o.o_entry_d >= since
            && let Some(&nation) = customers.get(&customer_key(o.o_w_id, o.o_d_id, o.o_c_id))
        {
            orders.insert(order_key(o.o_w_id, o.o_d_id, o.o_id), nation);
        }
    });
    let supplier_nation = supplier_nations(s);
    let mut revenue: [Option<i128>; 256] = [None; 256];
    db.order_line.scan(&s.snapshot, |_, ol| {
        if let Some(&nation) = orders.get(&order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id))
            && supplier_nation[supplier_of(ol.ol_w_id, ol.ol_i_id) as usize] == nation
        {
            *revenue[usize::from(nation)].get_or_insert(0) += i128::from(ol.ol_amount);
        }
    });
    let mut rows: Vec<(&str, i128)> = revenue
        .iter()
        .enumerate()
        .filter_map(|(key, r)| Some((t.nation(key as u8)?.n_name, (*r)?)))
        .collect();
    // ORDER BY revenue DESC, then the select list.
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut answer = Answer::new(&["n_name", "revenue"]);
    for (name, revenue) in rows {
        answer.push(vec![Value::Text(name.to_string()), Value::money(revenue)]);
    }
    answer
}
