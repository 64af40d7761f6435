//! CH Q4: orders per line count among the orders with a line delivered at
//! or after the order's entry.
//!
//! ```sql
//! SELECT o_ol_cnt, count(*) AS order_count FROM oorder
//! WHERE exists (SELECT * FROM order_line WHERE o_id = ol_o_id AND o_w_id = ol_w_id
//!               AND o_d_id = ol_d_id AND ol_delivery_d >= o_entry_d)
//! GROUP BY o_ol_cnt ORDER BY o_ol_cnt
//! ```
//!
//! Plan: the orders by key (entry time, line count, whether a qualifying
//! line was seen); one order-line scan marks them (a NULL delivery date
//! never qualifies); the marked orders counted per line count.

use std::collections::BTreeMap;

use crate::answer::{Answer, Value};
use crate::db::Snap;

use super::keys::{KeyMap, order_key};

pub(super) fn run(s: &Snap) -> Answer {
    let db = s.tpcc();
    // Order key → (o_entry_d, o_ol_cnt, exists a line delivered since).
    let mut orders: KeyMap<u64, (u64, u8, bool)> = KeyMap::default();
    db.orders.scan(&s.snapshot, |_, o| {
        orders.insert(
            order_key(o.o_w_id, o.o_d_id, o.o_id),
            (o.o_entry_d, o.o_ol_cnt, false),
        );
    });
    db.order_line.scan(&s.snapshot, |_, ol| {
        let Some(delivered) = ol.ol_delivery_d else {
            return;
        };
        if let Some(o) = orders.get_mut(&order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id))
            && delivered >= o.0
        {
            o.2 = true;
        }
    });
    let mut counts: BTreeMap<u8, i64> = BTreeMap::new();
    for (_, ol_cnt, exists) in orders.into_values() {
        if exists {
            *counts.entry(ol_cnt).or_default() += 1;
        }
    }
    let mut answer = Answer::new(&["o_ol_cnt", "order_count"]);
    for (ol_cnt, count) in counts {
        answer.push(vec![Value::Int(i64::from(ol_cnt)), Value::Int(count)]);
    }
    answer
}
