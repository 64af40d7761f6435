//! CH Q13: how many customer ids have each number of orders with a carrier
//! above 8.
//!
//! ```sql
//! SELECT c_count, count(*) AS custdist FROM
//!   (SELECT c_id, count(o_id) AS c_count FROM customer LEFT OUTER JOIN oorder ON
//!     (c_w_id = o_w_id AND c_d_id = o_d_id AND c_id = o_c_id AND o_carrier_id > 8)
//!    GROUP BY c_id) AS c_orders
//! GROUP BY c_count ORDER BY custdist DESC, c_count DESC
//! ```
//!
//! Plan: the inner query groups by `c_id` alone (as the text says), so the
//! customers of every district with one `c_id` share a count. One orders
//! scan counts the matching orders per customer key; one customer scan adds
//! each customer's count to its `c_id` (0 for none: the outer join keeps it).

use std::collections::BTreeMap;

use crate::answer::{Answer, Value};
use crate::db::Snap;

use super::keys::{KeyMap, customer_key};

pub(super) fn run(s: &Snap) -> Answer {
    let db = s.tpcc();
    let mut orders: KeyMap<u64, i64> = KeyMap::default();
    db.orders.scan(&s.snapshot, |_, o| {
        if o.o_carrier_id.is_some_and(|c| c > 8) {
            *orders
                .entry(customer_key(o.o_w_id, o.o_d_id, o.o_c_id))
                .or_default() += 1;
        }
    });
    let mut per_c_id: KeyMap<u16, i64> = KeyMap::default();
    db.customer.scan(&s.snapshot, |_, c| {
        let n = orders
            .get(&customer_key(c.c_w_id, c.c_d_id, c.c_id))
            .copied()
            .unwrap_or(0);
        *per_c_id.entry(c.c_id).or_default() += n;
    });
    let mut dist: BTreeMap<i64, i64> = BTreeMap::new();
    for count in per_c_id.into_values() {
        *dist.entry(count).or_default() += 1;
    }
    let mut rows: Vec<(i64, i64)> = dist.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    let mut answer = Answer::new(&["c_count", "custdist"]);
    for (c_count, custdist) in rows {
        answer.push(vec![Value::Int(c_count), Value::Int(custdist)]);
    }
    answer
}
