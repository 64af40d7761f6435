//! CH Q21: per German supplier, the order lines delivered last in their
//! order and after the order's entry.
//!
//! ```sql
//! SELECT su_name, count(*) AS numwait FROM supplier, order_line l1, oorder, stock, nation
//! WHERE ol_o_id = o_id AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_w_id = s_w_id
//!   AND ol_i_id = s_i_id AND mod((s_w_id * s_i_id),10000) = su_suppkey
//!   AND l1.ol_delivery_d > o_entry_d
//!   AND NOT EXISTS (SELECT * FROM order_line l2 WHERE l2.ol_o_id = l1.ol_o_id
//!                   AND l2.ol_w_id = l1.ol_w_id AND l2.ol_d_id = l1.ol_d_id
//!                   AND l2.ol_delivery_d > l1.ol_delivery_d)
//!   AND su_nationkey = n_nationkey AND n_name = 'Germany'
//! GROUP BY su_name ORDER BY numwait DESC, su_name
//! ```
//!
//! Plan: the NOT EXISTS holds exactly for lines delivered at their order's
//! latest delivery date (NULL dates never compare greater), so one
//! order-line scan finds each order's latest date, a second counts the
//! lines at it that were delivered after the order's entry, per supplier
//! number (the stock row is `(ol_w_id, ol_i_id)`, which TPC-C always has).

use std::collections::BTreeMap;

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::tables::{SUPPLIERS, supplier_of};

use super::keys::{KeyMap, nation_named, order_key, supplier_nations};

pub(super) fn run(s: &Snap) -> Answer {
    let mut answer = Answer::new(&["su_name", "numwait"]);
    let Some(germany) = nation_named(s, "Germany") else {
        return answer;
    };
    let nation_of = supplier_nations(s);
    let db = s.tpcc();
    let mut latest: KeyMap<u64, u64> = KeyMap::default();
    db.order_line.scan(&s.snapshot, |_, ol| {
        if let Some(d) = ol.ol_delivery_d {
            let l = latest
                .entry(order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id))
                .or_insert(d);
            *l = (*l).max(d);
        }
    });
    let mut entry: KeyMap<u64, u64> = KeyMap::default();
    db.orders.scan(&s.snapshot, |_, o| {
        let key = order_key(o.o_w_id, o.o_d_id, o.o_id);
        if latest.contains_key(&key) {
            entry.insert(key, o.o_entry_d);
        }
    });
    let mut per_supplier = vec![0i64; SUPPLIERS as usize];
    db.order_line.scan(&s.snapshot, |_, ol| {
        let Some(d) = ol.ol_delivery_d else {
            return;
        };
        let key = order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id);
        if latest.get(&key) == Some(&d) && entry.get(&key).is_some_and(|&e| d > e) {
            per_supplier[supplier_of(ol.ol_w_id, ol.ol_i_id) as usize] += 1;
        }
    });
    // su_name → count (suppliers with the same name add up, as GROUP BY su_name).
    let mut groups: BTreeMap<&str, i64> = BTreeMap::new();
    for (no, &n) in per_supplier.iter().enumerate() {
        if n == 0 || nation_of.get(no) != Some(&germany) {
            continue;
        }
        if let Some(su) = s.tables().supplier(no as u32) {
            *groups.entry(su.su_name.as_str()).or_default() += n;
        }
    }
    let mut rows: Vec<(&str, i64)> = groups.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    for (name, n) in rows {
        answer.push(vec![Value::Text(name.to_string()), Value::Int(n)]);
    }
    answer
}
