//! CH Q1: per order-line number, quantities and amounts of the lines
//! delivered after 2007-01-02.
//!
//! ```sql
//! SELECT ol_number, sum(ol_quantity) AS sum_qty, sum(ol_amount) AS sum_amount,
//!        avg(ol_quantity) AS avg_qty, avg(ol_amount) AS avg_amount,
//!        count(*) AS count_order
//! FROM order_line WHERE ol_delivery_d > '2007-01-02 00:00:00.000000'
//! GROUP BY ol_number ORDER BY ol_number
//! ```

use std::collections::BTreeMap;

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::time::at;

pub(super) fn run(s: &Snap) -> Answer {
    let after = at(2007, 1, 2, 0, 0, 0);
    // ol_number → (sum quantity, sum amount in cents, count)
    let mut groups: BTreeMap<u8, (i64, i128, i64)> = BTreeMap::new();
    s.tpcc().order_line.scan(&s.snapshot, |_, ol| {
        if ol.ol_delivery_d.is_some_and(|d| d > after) {
            let g = groups.entry(ol.ol_number).or_default();
            g.0 += i64::from(ol.ol_quantity);
            g.1 += i128::from(ol.ol_amount);
            g.2 += 1;
        }
    });
    let mut answer = Answer::new(&[
        "ol_number",
        "sum_qty",
        "sum_amount",
        "avg_qty",
        "avg_amount",
        "count_order",
    ]);
    for (number, (qty, amount, count)) in groups {
        answer.push(vec![
            Value::Int(i64::from(number)),
            Value::Int(qty),
            Value::money(amount),
            Value::Float(qty as f64 / count as f64),
            Value::Float(amount as f64 / 100.0 / count as f64),
            Value::Int(count),
        ]);
    }
    answer
}
