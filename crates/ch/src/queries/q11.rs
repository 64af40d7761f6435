//! CH Q11: the items whose stock supplied from Germany takes more than 0.5 %
//! of Germany's orders.
//!
//! ```sql
//! SELECT s_i_id, sum(s_order_cnt) AS ordercount FROM stock, supplier, nation
//! WHERE mod((s_w_id * s_i_id), 10000) = su_suppkey AND su_nationkey = n_nationkey AND n_name = 'Germany'
//! GROUP BY s_i_id HAVING sum(s_order_cnt) >
//!  (SELECT sum(s_order_cnt) * .005 FROM stock, supplier, nation
//!   WHERE mod((s_w_id * s_i_id), 10000) = su_suppkey AND su_nationkey = n_nationkey AND n_name = 'Germany')
//! ORDER BY ordercount DESC
//! ```
//!
//! Plan: the German suppliers as a bitmap; one stock scan sums the order
//! counts per item and in all (the subquery is the same join); HAVING
//! compared exactly in integers (`sum · 1000 > total · 5`).

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::tables::supplier_of;

use super::keys::{KeyMap, nation_named, supplier_nations};

pub(super) fn run(s: &Snap) -> Answer {
    let mut answer = Answer::new(&["s_i_id", "ordercount"]);
    let Some(germany) = nation_named(s, "Germany") else {
        return answer;
    };
    let german: Vec<bool> = supplier_nations(s)
        .into_iter()
        .map(|n| n == germany)
        .collect();
    let mut counts: KeyMap<u32, i128> = KeyMap::default();
    let mut total: i128 = 0;
    s.tpcc().stock.scan(&s.snapshot, |_, st| {
        if german[supplier_of(st.s_w_id, st.s_i_id) as usize] {
            let count = i128::from(st.s_order_cnt);
            *counts.entry(st.s_i_id).or_default() += count;
            total += count;
        }
    });
    let mut rows: Vec<(u32, i128)> = counts
        .into_iter()
        .filter(|&(_, count)| count * 1000 > total * 5)
        .collect();
    // ORDER BY ordercount DESC, then the select list.
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (i_id, count) in rows {
        answer.push(vec![
            Value::Int(i64::from(i_id)),
            Value::Int(count as i64), // < 2^32 per warehouse: fits
        ]);
    }
    answer
}
