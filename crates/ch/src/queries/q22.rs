//! CH Q22: per first letter of the state, customers with a phone starting
//! 1–7, a balance above the average positive balance of such customers, and
//! no order.
//!
//! ```sql
//! SELECT substring(c_state from 1 for 1) AS country, count(*) AS numcust,
//!        sum(c_balance) AS totacctbal
//! FROM customer
//! WHERE substring(c_phone from 1 for 1) IN ('1', '2', '3', '4', '5', '6', '7')
//!   AND c_balance > (SELECT avg(c_balance) FROM customer WHERE c_balance > 0.00
//!                    AND substring(c_phone from 1 for 1) IN ('1', '2', '3', '4', '5', '6', '7'))
//!   AND NOT EXISTS (SELECT * FROM oorder WHERE o_c_id = c_id AND o_w_id = c_w_id AND o_d_id = c_d_id)
//! GROUP BY substring(c_state from 1 for 1) ORDER BY substring(c_state,1,1)
//! ```
//!
//! Plan: one customer scan keeps the phone-qualified customers and the
//! positive balances' sum and count; the customers with an order from one
//! orders scan; `balance > sum / count` is checked exactly as
//! `balance · count > sum` (cents).

use std::collections::BTreeMap;

use crate::answer::{Answer, Value};
use crate::db::Snap;

use super::keys::{KeySet, customer_key};

fn phone_qualifies(phone: &str) -> bool {
    matches!(phone.as_bytes().first(), Some(b'1'..=b'7'))
}

pub(super) fn run(s: &Snap) -> Answer {
    let db = s.tpcc();
    // (customer key, first character of c_state, balance in cents).
    let mut candidates: Vec<(u64, String, i64)> = Vec::new();
    let (mut positive_sum, mut positive_count) = (0i128, 0i128);
    db.customer.scan(&s.snapshot, |_, c| {
        if !phone_qualifies(&c.c_phone) {
            return;
        }
        if c.c_balance > 0 {
            positive_sum += i128::from(c.c_balance);
            positive_count += 1;
        }
        let country: String = c.c_state.chars().take(1).collect();
        candidates.push((
            customer_key(c.c_w_id, c.c_d_id, c.c_id),
            country,
            c.c_balance,
        ));
    });
    let mut answer = Answer::new(&["country", "numcust", "totacctbal"]);
    // SQL: a comparison with the NULL average of no rows is never true.
    if positive_count == 0 {
        return answer;
    }
    let mut with_orders: KeySet<u64> = KeySet::default();
    db.orders.scan(&s.snapshot, |_, o| {
        with_orders.insert(customer_key(o.o_w_id, o.o_d_id, o.o_c_id));
    });
    let mut groups: BTreeMap<String, (i64, i128)> = BTreeMap::new();
    for (key, country, balance) in candidates {
        if i128::from(balance) * positive_count > positive_sum && !with_orders.contains(&key) {
            let g = groups.entry(country).or_default();
            g.0 += 1;
            g.1 += i128::from(balance);
        }
    }
    for (country, (count, balance)) in groups {
        answer.push(vec![
            Value::Text(country),
            Value::Int(count),
            Value::money(balance),
        ]);
    }
    answer
}
