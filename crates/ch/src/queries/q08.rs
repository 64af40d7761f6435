//! CH Q8: per year, Germany's share (as supplier) of the European customers'
//! revenue on the 'b' items below 1000.
//!
//! ```sql
//! SELECT extract(YEAR FROM o_entry_d) AS l_year,
//! sum(CASE WHEN n2.n_name = 'Germany' THEN ol_amount ELSE 0 END) / sum(ol_amount) AS mkt_share
//! FROM item, supplier, stock, order_line, oorder, customer, nation n1, nation n2, region
//! WHERE i_id = s_i_id AND ol_i_id = s_i_id AND ol_supply_w_id = s_w_id
//!   AND MOD ((s_w_id * s_i_id), 10000) = su_suppkey AND ol_w_id = o_w_id AND ol_d_id = o_d_id
//!   AND ol_o_id = o_id AND c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id
//!   AND n1.n_nationkey = ascii(substring(c_state from 1 for 1)) AND n1.n_regionkey = r_regionkey
//!   AND ol_i_id < 1000 AND r_name = 'Europe' AND su_nationkey = n2.n_nationkey
//!   AND i_data LIKE '%b' AND i_id = ol_i_id
//! GROUP BY l_year ORDER BY l_year
//! ```
//!
//! Plan: the 'b' items below 1000 as a bitmap, the European customers as a
//! hash set; one order-line scan sums, per order, its lines of those items
//! (all, and Germany's), the supplier from the stock key (TPC-C has a stock
//! row for every warehouse and item, so that join drops no line); one orders
//! scan groups the sums of the European customers' orders by entry year.
//! The share is a DOUBLE, as in DuckDB (decimal ÷ decimal).

use std::collections::BTreeMap;

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::tables::supplier_of;
use crate::time::year;

use super::keys::{
    KeyMap, KeySet, customer_key, nation_named, nations_in_region, order_key, supplier_nations,
};

const ITEMS_BELOW: u32 = 1000;

pub(super) fn run(s: &Snap) -> Answer {
    let (db, t) = (s.tpcc(), s.tables());
    let germany = nation_named(s, "Germany");
    let mut items = vec![false; ITEMS_BELOW as usize];
    db.item.scan(&s.snapshot, |_, i| {
        if i.i_id < ITEMS_BELOW && i.i_data.ends_with('b') {
            items[i.i_id as usize] = true;
        }
    });
    let europe = nations_in_region(s, |r| r == "Europe");
    let mut customers: KeySet<u64> = KeySet::default();
    db.customer.scan(&s.snapshot, |_, c| {
        if c.c_state
            .bytes()
            .next()
            .is_some_and(|n| europe[usize::from(n)])
        {
            customers.insert(customer_key(c.c_w_id, c.c_d_id, c.c_id));
        }
    });
    // Order key → (Germany's revenue, revenue) of its lines of those items.
    let supplier_nation = supplier_nations(s);
    let mut lines: KeyMap<u64, (i128, i128)> = KeyMap::default();
    db.order_line.scan(&s.snapshot, |_, ol| {
        if ol.ol_i_id >= ITEMS_BELOW || !items[ol.ol_i_id as usize] {
            return;
        }
        let nation = supplier_nation[supplier_of(ol.ol_supply_w_id, ol.ol_i_id) as usize];
        if t.nation(nation).is_none() {
            return; // no supplier, or a supplier without a nation
        }
        let sums = lines
            .entry(order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id))
            .or_default();
        let amount = i128::from(ol.ol_amount);
        if Some(nation) == germany {
            sums.0 += amount;
        }
        sums.1 += amount;
    });
    let mut groups: BTreeMap<i64, (i128, i128)> = BTreeMap::new();
    db.orders.scan(&s.snapshot, |_, o| {
        if let Some(&(ours, all)) = lines.get(&order_key(o.o_w_id, o.o_d_id, o.o_id))
            && customers.contains(&customer_key(o.o_w_id, o.o_d_id, o.o_c_id))
        {
            let g = groups.entry(year(o.o_entry_d)).or_default();
            g.0 += ours;
            g.1 += all;
        }
    });
    let mut answer = Answer::new(&["l_year", "mkt_share"]);
    for (l_year, (ours, all)) in groups {
        // 0 / 0 (a year of lines of amount 0, as the loaded orders' are):
        // NaN, as DuckDB's DOUBLE division gives.
        answer.push(vec![
            Value::Int(l_year),
            Value::Float(ours as f64 / all as f64),
        ]);
    }
    answer
}
