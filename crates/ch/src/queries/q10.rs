//! CH Q10: per customer, the revenue of the lines delivered at or after
//! their order's entry, for the orders since 2007-01-02.
//!
//! ```sql
//! SELECT c_id, c_last, sum(ol_amount) AS revenue, c_city, c_phone, n_name
//! FROM customer, oorder, order_line, nation
//! WHERE c_id = o_c_id AND c_w_id = o_w_id AND c_d_id = o_d_id AND ol_w_id = o_w_id
//!   AND ol_d_id = o_d_id AND ol_o_id = o_id AND o_entry_d >= '2007-01-02 00:00:00.000000'
//!   AND o_entry_d <= ol_delivery_d AND n_nationkey = ascii(substring(c_state from 1 for 1))
//! GROUP BY c_id, c_last, c_city, c_phone, n_name ORDER BY revenue DESC
//! ```
//!
//! Plan: the orders since the date by key (customer key, entry); one
//! order-line scan sums the qualifying lines per order, then per customer
//! key; one customer scan copies the grouped columns of just the customers
//! with revenue. The groups are the text's (`c_id` without warehouse and
//! district: customers of different districts with equal columns form one
//! group, merged after a sort by the grouped columns).

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::time::at;
use maestro_tpcc::schema::Text;

use super::keys::{KeyMap, customer_key, order_key};

pub(super) fn run(s: &Snap) -> Answer {
    let since = at(2007, 1, 2, 0, 0, 0);
    let (db, t) = (s.tpcc(), s.tables());
    // Order key → (customer key, o_entry_d, revenue of its qualifying lines).
    let mut orders: KeyMap<u64, (u64, u64, Option<i128>)> = KeyMap::default();
    db.orders.scan(&s.snapshot, |_, o| {
        if o.o_entry_d >= since {
            orders.insert(
                order_key(o.o_w_id, o.o_d_id, o.o_id),
                (
                    customer_key(o.o_w_id, o.o_d_id, o.o_c_id),
                    o.o_entry_d,
                    None,
                ),
            );
        }
    });
    db.order_line.scan(&s.snapshot, |_, ol| {
        if let Some(delivered) = ol.ol_delivery_d
            && let Some((_, entry, sum)) =
                orders.get_mut(&order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id))
            && *entry <= delivered
        {
            *sum.get_or_insert(0) += i128::from(ol.ol_amount);
        }
    });
    // Customer key → revenue.
    let mut revenue: KeyMap<u64, i128> = KeyMap::default();
    for (customer, _, sum) in orders.into_values() {
        if let Some(sum) = sum {
            *revenue.entry(customer).or_default() += sum;
        }
    }
    // (c_id, c_last, c_city, c_phone, n_name) and revenue per customer.
    type Group = (u16, Text, Text, Text, &'static str);
    let mut rows: Vec<(Group, i128)> = Vec::with_capacity(revenue.len());
    db.customer.scan(&s.snapshot, |_, c| {
        if let Some(&sum) = revenue.get(&customer_key(c.c_w_id, c.c_d_id, c.c_id))
            && let Some(nation) = c.c_state.bytes().next().and_then(|n| t.nation(n))
        {
            let group = (
                c.c_id,
                c.c_last.clone(),
                c.c_city.clone(),
                c.c_phone.clone(),
                nation.n_name,
            );
            rows.push((group, sum));
        }
    });
    // GROUP BY: customers with equal columns (of different districts or
    // warehouses) merge.
    rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    rows.dedup_by(|next, kept| {
        let same = next.0 == kept.0;
        if same {
            kept.1 += next.1;
        }
        same
    });
    // ORDER BY revenue DESC, then the select list.
    rows.sort_by(|(a, ar), (b, br)| br.cmp(ar).then_with(|| a.cmp(b)));
    let mut answer = Answer::new(&["c_id", "c_last", "revenue", "c_city", "c_phone", "n_name"]);
    for ((c_id, c_last, c_city, c_phone, n_name), sum) in rows {
        answer.push(vec![
            Value::Int(i64::from(c_id)),
            Value::Text(c_last.to_string()),
            Value::money(sum),
            Value::Text(c_city.to_string()),
            Value::Text(c_phone.to_string()),
            Value::Text(n_name.to_string()),
        ]);
    }
    answer
}
