//! CH Q3: revenue of the undelivered orders (those with a new-order row)
//! entered after 2007-01-02 by customers of a state starting with 'A'.
//!
//! ```sql
//! SELECT ol_o_id, ol_w_id, ol_d_id, sum(ol_amount) AS revenue, o_entry_d
//! FROM customer, new_order, oorder, order_line
//! WHERE c_state LIKE 'A%' AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id
//!   AND no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id AND ol_w_id = o_w_id
//!   AND ol_d_id = o_d_id AND ol_o_id = o_id AND o_entry_d > '2007-01-02 00:00:00.000000'
//! GROUP BY ol_o_id, ol_w_id, ol_d_id, o_entry_d ORDER BY revenue DESC, o_entry_d
//! ```
//!
//! Plan: the 'A' customers and the new-order keys as hash sets; the orders
//! that pass both, by key; one order-line scan sums their lines (an order
//! without lines forms no group).

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::time::at;

use super::keys::{KeyMap, KeySet, customer_key, order_key};

pub(super) fn run(s: &Snap) -> Answer {
    let after = at(2007, 1, 2, 0, 0, 0);
    let db = s.tpcc();
    let mut customers: KeySet<u64> = KeySet::default();
    db.customer.scan(&s.snapshot, |_, c| {
        if c.c_state.starts_with('A') {
            customers.insert(customer_key(c.c_w_id, c.c_d_id, c.c_id));
        }
    });
    let mut new_orders: KeySet<u64> = KeySet::default();
    db.new_order.scan(&s.snapshot, |_, no| {
        new_orders.insert(order_key(no.no_w_id, no.no_d_id, no.no_o_id));
    });
    // Order key → (o_entry_d, revenue in cents if it has lines).
    let mut orders: KeyMap<u64, (u64, Option<i128>)> = KeyMap::default();
    db.orders.scan(&s.snapshot, |_, o| {
        let key = order_key(o.o_w_id, o.o_d_id, o.o_id);
        if o.o_entry_d > after
            && new_orders.contains(&key)
            && customers.contains(&customer_key(o.o_w_id, o.o_d_id, o.o_c_id))
        {
            orders.insert(key, (o.o_entry_d, None));
        }
    });
    db.order_line.scan(&s.snapshot, |_, ol| {
        if let Some(o) = orders.get_mut(&order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id)) {
            *o.1.get_or_insert(0) += i128::from(ol.ol_amount);
        }
    });
    // (o_id, w_id, d_id, revenue, o_entry_d)
    let mut rows: Vec<(u32, u16, u8, i128, u64)> = orders
        .into_iter()
        .filter_map(|(key, (entry, revenue))| {
            Some((
                key as u32,
                (key >> 40) as u16,
                (key >> 32) as u8,
                revenue?,
                entry,
            ))
        })
        .collect();
    // ORDER BY revenue DESC, o_entry_d, then the select list.
    rows.sort_by(|a, b| {
        b.3.cmp(&a.3)
            .then(a.4.cmp(&b.4))
            .then((a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)))
    });
    let mut answer = Answer::new(&["ol_o_id", "ol_w_id", "ol_d_id", "revenue", "o_entry_d"]);
    for (o_id, w_id, d_id, revenue, entry) in rows {
        answer.push(vec![
            Value::Int(i64::from(o_id)),
            Value::Int(i64::from(w_id)),
            Value::Int(i64::from(d_id)),
            Value::money(revenue),
            Value::Time(entry),
        ]);
    }
    answer
}
