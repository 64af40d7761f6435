//! CH Q19: revenue of small-quantity lines of items ending in 'a', 'b' or
//! 'c', each letter with its own set of warehouses.
//!
//! ```sql
//! SELECT sum(ol_amount) AS revenue FROM order_line, item
//! WHERE (ol_i_id = i_id AND i_data LIKE '%a' AND ol_quantity >= 1 AND ol_quantity <= 10
//!        AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 2, 3))
//!    OR (ol_i_id = i_id AND i_data LIKE '%b' AND ol_quantity >= 1 AND ol_quantity <= 10
//!        AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 2, 4))
//!    OR (ol_i_id = i_id AND i_data LIKE '%c' AND ol_quantity >= 1 AND ol_quantity <= 10
//!        AND i_price BETWEEN 1 AND 400000 AND ol_w_id IN (1, 5, 3))
//! ```
//!
//! Plan: per item, its last letter if it is a, b or c and its price lies in
//! [1, 400000] (cents: [100, 40 000 000]); one order-line scan.

use crate::answer::{Answer, Value};
use crate::db::Snap;

pub(super) fn run(s: &Snap) -> Answer {
    let db = s.tpcc();
    let mut letter: Vec<u8> = Vec::new();
    db.item.scan(&s.snapshot, |_, i| {
        let at = i.i_id as usize;
        if letter.len() <= at {
            letter.resize(at + 1, 0);
        }
        if (100..=40_000_000).contains(&i.i_price) {
            letter[at] = match i.i_data.as_bytes().last() {
                Some(&c @ (b'a' | b'b' | b'c')) => c,
                _ => 0,
            };
        }
    });
    let mut revenue: Option<i128> = None;
    db.order_line.scan(&s.snapshot, |_, ol| {
        if !(1..=10).contains(&ol.ol_quantity) {
            return;
        }
        let warehouses: &[u16] = match letter.get(ol.ol_i_id as usize) {
            Some(b'a') => &[1, 2, 3],
            Some(b'b') => &[1, 2, 4],
            Some(b'c') => &[1, 5, 3],
            _ => return,
        };
        if warehouses.contains(&ol.ol_w_id) {
            *revenue.get_or_insert(0) += i128::from(ol.ol_amount);
        }
    });
    let mut answer = Answer::new(&["revenue"]);
    answer.push(vec![revenue.map_or(Value::Null, Value::money)]);
    answer
}
