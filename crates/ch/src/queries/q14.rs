//! CH Q14: the share of revenue from promotional items ('PR…') among the
//! lines delivered in [2007-01-02, 2020-01-02).
//!
//! ```sql
//! SELECT (100.00 * sum(CASE WHEN i_data LIKE 'PR%' THEN ol_amount ELSE 0 END)
//!         / (1 + sum(ol_amount))) AS promo_revenue
//! FROM order_line, item
//! WHERE ol_i_id = i_id AND ol_delivery_d >= '2007-01-02 00:00:00.000000'
//!   AND ol_delivery_d < '2020-01-02 00:00:00.000000'
//! ```
//!
//! Plan: a bitmap of promotional items from one item scan; one order-line
//! scan sums in cents (exact); the ratio is a DOUBLE as in DuckDB, computed
//! as 100·p / (100 + t) over cents so no scale is lost.

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::time::at;

pub(super) fn run(s: &Snap) -> Answer {
    let (from, to) = (at(2007, 1, 2, 0, 0, 0), at(2020, 1, 2, 0, 0, 0));
    let db = s.tpcc();
    // Item id → Some(promotional?) for items that exist.
    let mut promo: Vec<Option<bool>> = Vec::new();
    db.item.scan(&s.snapshot, |_, i| {
        let at = i.i_id as usize;
        if promo.len() <= at {
            promo.resize(at + 1, None);
        }
        promo[at] = Some(i.i_data.starts_with("PR"));
    });
    let (mut promo_cents, mut total_cents, mut rows) = (0i128, 0i128, 0u64);
    db.order_line.scan(&s.snapshot, |_, ol| {
        if !ol.ol_delivery_d.is_some_and(|d| d >= from && d < to) {
            return;
        }
        let Some(Some(is_promo)) = promo.get(ol.ol_i_id as usize) else {
            return;
        };
        rows += 1;
        total_cents += i128::from(ol.ol_amount);
        if *is_promo {
            promo_cents += i128::from(ol.ol_amount);
        }
    });
    let mut answer = Answer::new(&["promo_revenue"]);
    answer.push(vec![if rows == 0 {
        Value::Null
    } else {
        Value::Float((100 * promo_cents) as f64 / (100 + total_cents) as f64)
    }]);
    answer
}
