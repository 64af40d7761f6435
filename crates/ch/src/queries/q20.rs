//! CH Q20: German suppliers of stock whose quantity is more than half of
//! what was delivered of its item since 2010-05-23 12:00, for 'co…' items.
//!
//! ```sql
//! SELECT su_name, su_address FROM supplier, nation
//! WHERE su_suppkey IN
//!   (SELECT mod(s_i_id * s_w_id, 10000) FROM stock
//!    INNER JOIN item ON i_id = s_i_id INNER JOIN order_line ON ol_i_id = s_i_id
//!    WHERE ol_delivery_d > '2010-05-23 12:00:00' AND i_data LIKE 'co%'
//!    GROUP BY s_i_id, s_w_id, s_quantity HAVING 2*s_quantity > sum(ol_quantity))
//!   AND su_nationkey = n_nationkey AND n_name = 'Germany'
//! ORDER BY su_name
//! ```
//!
//! Plan: the 'co' items; one order-line scan sums their delivered quantity
//! per item (the join is on the item only: every warehouse's lines count for
//! every stock row of the item); one stock scan picks the supplier numbers
//! of the rows over half; the German suppliers among them, by name.

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::tables::{SUPPLIERS, supplier_of};
use crate::time::at;

use super::keys::{KeyMap, nation_named};

pub(super) fn run(s: &Snap) -> Answer {
    let after = at(2010, 5, 23, 12, 0, 0);
    let db = s.tpcc();
    let mut delivered: KeyMap<u32, Option<i64>> = KeyMap::default();
    db.item.scan(&s.snapshot, |_, i| {
        if i.i_data.starts_with("co") {
            delivered.insert(i.i_id, None);
        }
    });
    db.order_line.scan(&s.snapshot, |_, ol| {
        if ol.ol_delivery_d.is_some_and(|d| d > after)
            && let Some(sum) = delivered.get_mut(&ol.ol_i_id)
        {
            *sum.get_or_insert(0) += i64::from(ol.ol_quantity);
        }
    });
    let mut chosen = vec![false; SUPPLIERS as usize];
    db.stock.scan(&s.snapshot, |_, st| {
        // No joined line: no group, so the row cannot qualify.
        if let Some(Some(sum)) = delivered.get(&st.s_i_id)
            && 2 * i64::from(st.s_quantity) > *sum
        {
            chosen[supplier_of(st.s_w_id, st.s_i_id) as usize] = true;
        }
    });
    let mut answer = Answer::new(&["su_name", "su_address"]);
    let Some(germany) = nation_named(s, "Germany") else {
        return answer;
    };
    let mut rows: Vec<(&String, &String)> = s
        .tables()
        .suppliers
        .iter()
        .filter(|su| {
            su.su_nationkey == germany
                && chosen.get(su.su_suppkey as usize).copied().unwrap_or(false)
        })
        .map(|su| (&su.su_name, &su.su_address))
        .collect();
    rows.sort();
    for (name, address) in rows {
        answer.push(vec![
            Value::Text(name.clone()),
            Value::Text(address.clone()),
        ]);
    }
    answer
}
