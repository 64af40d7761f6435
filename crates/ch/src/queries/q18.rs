//! CH Q18: orders worth more than 200 with their customer.
//!
//! ```sql
//! SELECT c_last, c_id, o_id, o_entry_d, o_ol_cnt, sum(ol_amount) AS amount_sum
//! FROM customer, oorder, order_line
//! WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id AND ol_w_id = o_w_id
//!   AND ol_d_id = o_d_id AND ol_o_id = o_id
//! GROUP BY o_id, o_w_id, o_d_id, c_id, c_last, o_entry_d, o_ol_cnt
//! HAVING sum(ol_amount) > 200 ORDER BY amount_sum DESC, o_entry_d
//! ```
//!
//! Plan: one order-line scan sums per order key; one orders scan keeps the
//! orders over 200.00 (cents > 20 000) and their customer key; the customers'
//! last names come from one customer scan of the customers needed. Ties are
//! ordered by the select list.

use crate::answer::{Answer, Value};
use crate::db::Snap;

use super::keys::{KeyMap, customer_key, order_key};

pub(super) fn run(s: &Snap) -> Answer {
    let db = s.tpcc();
    let mut sums: KeyMap<u64, i128> = KeyMap::default();
    db.order_line.scan(&s.snapshot, |_, ol| {
        *sums
            .entry(order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id))
            .or_default() += i128::from(ol.ol_amount);
    });
    // (customer key, c_id, o_id, o_entry_d, o_ol_cnt, amount)
    let mut big: Vec<(u64, u16, u32, u64, u8, i128)> = Vec::new();
    db.orders.scan(&s.snapshot, |_, o| {
        if let Some(&sum) = sums.get(&order_key(o.o_w_id, o.o_d_id, o.o_id))
            && sum > 20_000
        {
            big.push((
                customer_key(o.o_w_id, o.o_d_id, o.o_c_id),
                o.o_c_id,
                o.o_id,
                o.o_entry_d,
                o.o_ol_cnt,
                sum,
            ));
        }
    });
    drop(sums);
    // Customer key → its last name once seen (inner join: orders whose
    // customer is not visible drop out).
    let mut last: KeyMap<u64, Option<String>> = big.iter().map(|b| (b.0, None)).collect();
    db.customer.scan(&s.snapshot, |_, c| {
        if let Some(name) = last.get_mut(&customer_key(c.c_w_id, c.c_d_id, c.c_id)) {
            *name = Some(c.c_last.to_string());
        }
    });
    let mut rows: Vec<(&String, u16, u32, u64, u8, i128)> = big
        .iter()
        .filter_map(|&(ck, c_id, o_id, entry, ol_cnt, amount)| {
            let name = last[&ck].as_ref()?;
            Some((name, c_id, o_id, entry, ol_cnt, amount))
        })
        .collect();
    rows.sort_by(|a, b| {
        b.5.cmp(&a.5)
            .then(a.3.cmp(&b.3))
            .then_with(|| a.0.cmp(b.0))
            .then(a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .then(a.4.cmp(&b.4))
    });
    let mut answer = Answer::new(&[
        "c_last",
        "c_id",
        "o_id",
        "o_entry_d",
        "o_ol_cnt",
        "amount_sum",
    ]);
    for (c_last, c_id, o_id, entry, ol_cnt, amount) in rows {
        answer.push(vec![
            Value::Text(c_last.clone()),
            Value::Int(i64::from(c_id)),
            Value::Int(i64::from(o_id)),
            Value::Time(entry),
            Value::Int(i64::from(ol_cnt)),
            Value::money(amount),
        ]);
    }
    answer
}
