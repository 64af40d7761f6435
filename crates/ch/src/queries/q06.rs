//! CH Q6: revenue of the lines delivered in [1999, 2020) with quantity in
//! 1..=100000.
//!
//! ```sql
//! SELECT sum(ol_amount) AS revenue FROM order_line
//! WHERE ol_delivery_d >= '1999-01-01 00:00:00.000000'
//!   AND ol_delivery_d < '2020-01-01 00:00:00.000000'
//!   AND ol_quantity BETWEEN 1 AND 100000
//! ```

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::time::at;

pub(super) fn run(s: &Snap) -> Answer {
    let (from, to) = (at(1999, 1, 1, 0, 0, 0), at(2020, 1, 1, 0, 0, 0));
    let mut revenue: Option<i128> = None;
    s.tpcc().order_line.scan(&s.snapshot, |_, ol| {
        if ol.ol_delivery_d.is_some_and(|d| d >= from && d < to) && ol.ol_quantity >= 1 {
            *revenue.get_or_insert(0) += i128::from(ol.ol_amount);
        }
    });
    let mut answer = Answer::new(&["revenue"]);
    // SQL: the sum over no rows is NULL.
    answer.push(vec![revenue.map_or(Value::Null, Value::money)]);
    answer
}
