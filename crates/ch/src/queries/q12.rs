//! CH Q12: per line count, the lines delivered before 2020 (and at or after
//! their order's entry) of orders with carrier 1 or 2 and of the others.
//!
//! ```sql
//! SELECT o_ol_cnt,
//! sum(CASE WHEN o_carrier_id = 1 OR o_carrier_id = 2 THEN 1 ELSE 0 END) AS high_line_count,
//! sum(CASE WHEN o_carrier_id <> 1 AND o_carrier_id <> 2 THEN 1 ELSE 0 END) AS low_line_count
//! FROM oorder, order_line
//! WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND o_entry_d <= ol_delivery_d
//!   AND ol_delivery_d < '2020-01-01 00:00:00.000000'
//! GROUP BY o_ol_cnt ORDER BY o_ol_cnt
//! ```
//!
//! Plan: the orders by key (entry, line count, carrier); one order-line
//! scan counts the qualifying lines per line count. A NULL carrier makes
//! both CASEs take their ELSE: the line counts in neither sum, but its group
//! still exists.

use std::collections::BTreeMap;

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::time::at;

use super::keys::{KeyMap, order_key};

pub(super) fn run(s: &Snap) -> Answer {
    let before = at(2020, 1, 1, 0, 0, 0);
    let db = s.tpcc();
    // Order key → (o_entry_d, o_ol_cnt, o_carrier_id).
    let mut orders: KeyMap<u64, (u64, u8, Option<u8>)> = KeyMap::default();
    db.orders.scan(&s.snapshot, |_, o| {
        orders.insert(
            order_key(o.o_w_id, o.o_d_id, o.o_id),
            (o.o_entry_d, o.o_ol_cnt, o.o_carrier_id),
        );
    });
    // o_ol_cnt → (high, low).
    let mut groups: BTreeMap<u8, (i64, i64)> = BTreeMap::new();
    db.order_line.scan(&s.snapshot, |_, ol| {
        let Some(delivered) = ol.ol_delivery_d else {
            return;
        };
        if delivered >= before {
            return;
        }
        if let Some(&(entry, ol_cnt, carrier)) =
            orders.get(&order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id))
            && entry <= delivered
        {
            let g = groups.entry(ol_cnt).or_default();
            match carrier {
                Some(1 | 2) => g.0 += 1,
                Some(_) => g.1 += 1,
                None => {}
            }
        }
    });
    let mut answer = Answer::new(&["o_ol_cnt", "high_line_count", "low_line_count"]);
    for (ol_cnt, (high, low)) in groups {
        answer.push(vec![
            Value::Int(i64::from(ol_cnt)),
            Value::Int(high),
            Value::Int(low),
        ]);
    }
    answer
}
