//! CH Q9: per supplier nation and year, the revenue of the items whose data
//! ends in 'bb'.
//!
//! ```sql
//! SELECT n_name, extract(YEAR FROM o_entry_d) AS l_year, sum(ol_amount) AS sum_profit
//! FROM item, stock, supplier, order_line, oorder, nation
//! WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id AND MOD ((s_w_id * s_i_id), 10000) = su_suppkey
//!   AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND ol_i_id = i_id
//!   AND su_nationkey = n_nationkey AND i_data LIKE '%bb'
//! GROUP BY n_name, l_year ORDER BY n_name, l_year DESC
//! ```
//!
//! Plan: the 'bb' items as a hash set; one order-line scan keeps their lines
//! (order key, supplier nation from the stock key — TPC-C has a stock row
//! for every warehouse and item, so that join drops no line — amount); one
//! orders scan gives the entry years of just those orders.

use std::collections::BTreeMap;

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::tables::supplier_of;
use crate::time::year;

use super::keys::{KeyMap, KeySet, order_key, supplier_nations};

pub(super) fn run(s: &Snap) -> Answer {
    let (db, t) = (s.tpcc(), s.tables());
    let mut items: KeySet<u32> = KeySet::default();
    db.item.scan(&s.snapshot, |_, i| {
        if i.i_data.ends_with("bb") {
            items.insert(i.i_id);
        }
    });
    let supplier_nation = supplier_nations(s);
    // (order key, supplier nation, amount) of those items' lines.
    let mut lines: Vec<(u64, u8, i64)> = Vec::new();
    // Order key → entry year, for those lines' orders.
    let mut years: KeyMap<u64, Option<i64>> = KeyMap::default();
    db.order_line.scan(&s.snapshot, |_, ol| {
        if !items.contains(&ol.ol_i_id) {
            return;
        }
        let nation = supplier_nation[supplier_of(ol.ol_supply_w_id, ol.ol_i_id) as usize];
        if t.nation(nation).is_some() {
            let key = order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id);
            lines.push((key, nation, ol.ol_amount));
            years.insert(key, None);
        }
    });
    db.orders.scan(&s.snapshot, |_, o| {
        if let Some(y) = years.get_mut(&order_key(o.o_w_id, o.o_d_id, o.o_id)) {
            *y = Some(year(o.o_entry_d));
        }
    });
    // (n_name, year) → revenue; the names are unique.
    let mut groups: BTreeMap<(&str, i64), i128> = BTreeMap::new();
    for (key, nation, amount) in lines {
        let (Some(l_year), Some(n)) = (years[&key], t.nation(nation)) else {
            continue;
        };
        *groups.entry((n.n_name, l_year)).or_default() += i128::from(amount);
    }
    let mut rows: Vec<_> = groups.into_iter().collect();
    // ORDER BY n_name, l_year DESC (then the select list: nothing left to tie).
    rows.sort_by(|((an, ay), _), ((bn, by), _)| an.cmp(bn).then(by.cmp(ay)));
    let mut answer = Answer::new(&["n_name", "l_year", "sum_profit"]);
    for ((n_name, l_year), profit) in rows {
        answer.push(vec![
            Value::Text(n_name.to_string()),
            Value::Int(l_year),
            Value::money(profit),
        ]);
    }
    answer
}
