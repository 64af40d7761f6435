//! CH Q17: half the revenue of the lines of 'b' items whose quantity is
//! below that item's average line quantity.
//!
//! ```sql
//! SELECT SUM(ol_amount) / 2.0 AS avg_yearly FROM order_line,
//!   (SELECT i_id, AVG (ol_quantity) AS a FROM item, order_line
//!    WHERE i_data LIKE '%b' AND ol_i_id = i_id GROUP BY i_id) t
//! WHERE ol_i_id = t.i_id AND ol_quantity < t.a
//! ```
//!
//! Plan: the 'b' items from one item scan; one order-line scan collects
//! their lines' (item, quantity, amount) and each item's quantity sum and
//! count; `q < sum / count` is checked exactly as `q · count < sum`.

use crate::answer::{Answer, Value};
use crate::db::Snap;

use super::keys::KeyMap;

pub(super) fn run(s: &Snap) -> Answer {
    let db = s.tpcc();
    let mut b_items: KeyMap<u32, (i64, i64)> = KeyMap::default();
    db.item.scan(&s.snapshot, |_, i| {
        if i.i_data.ends_with('b') {
            b_items.insert(i.i_id, (0, 0));
        }
    });
    let mut lines: Vec<(u32, i64, i64)> = Vec::new();
    db.order_line.scan(&s.snapshot, |_, ol| {
        if let Some((sum, count)) = b_items.get_mut(&ol.ol_i_id) {
            let q = i64::from(ol.ol_quantity);
            *sum += q;
            *count += 1;
            lines.push((ol.ol_i_id, q, ol.ol_amount));
        }
    });
    let mut revenue: Option<i128> = None;
    for (i_id, q, amount) in lines {
        let (sum, count) = b_items[&i_id];
        if q * count < sum {
            *revenue.get_or_insert(0) += i128::from(amount);
        }
    }
    let mut answer = Answer::new(&["avg_yearly"]);
    answer.push(vec![
        revenue.map_or(Value::Null, |cents| Value::Float(cents as f64 / 200.0)),
    ]);
    answer
}
