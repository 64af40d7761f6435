//! CH Q2: for each item whose data ends in 'b', the European suppliers
//! whose stock of it is the smallest among European suppliers.
//!
//! ```sql
//! SELECT su_suppkey, su_name, n_name, i_id, i_name, su_address, su_phone, su_comment
//! FROM item, supplier, stock, nation, region,
//!  (SELECT s_i_id AS m_i_id, MIN(s_quantity) AS m_s_quantity
//!   FROM stock, supplier, nation, region
//!   WHERE MOD((s_w_id*s_i_id), 10000)=su_suppkey AND su_nationkey=n_nationkey
//!     AND n_regionkey=r_regionkey AND r_name LIKE 'Europ%' GROUP BY s_i_id) m
//! WHERE i_id = s_i_id AND MOD((s_w_id * s_i_id), 10000) = su_suppkey
//!   AND su_nationkey = n_nationkey AND n_regionkey = r_regionkey AND i_data LIKE '%b'
//!   AND r_name LIKE 'Europ%' AND i_id=m_i_id AND s_quantity = m_s_quantity
//! ORDER BY n_name, su_name, i_id
//! ```
//!
//! Plan: the 'b' items (name by id) from one item scan; one stock scan keeps
//! the European-supplied stock of those items, with the minimum quantity per
//! item (the subquery's minimum only matters for the items the outer query
//! keeps); the rows at the minimum join supplier and nation by key.

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::tables::supplier_of;

use super::keys::{KeyMap, nations_in_region};

pub(super) fn run(s: &Snap) -> Answer {
    let t = s.tables();
    let europe = nations_in_region(s, |r| r.starts_with("Europ"));
    // Supplier key → European (index 0, no supplier, stays false).
    let mut european = vec![false; t.suppliers.len() + 1];
    for su in &t.suppliers {
        european[su.su_suppkey as usize] = europe[usize::from(su.su_nationkey)];
    }
    // i_id → i_name of the items whose data ends in 'b'.
    let mut items: KeyMap<u32, String> = KeyMap::default();
    s.tpcc().item.scan(&s.snapshot, |_, i| {
        if i.i_data.ends_with('b') {
            items.insert(i.i_id, i.i_name.to_string());
        }
    });
    // (i_id, supplier, quantity) of the European stock of those items, and
    // the minimum quantity per item.
    let mut stock: Vec<(u32, u32, i32)> = Vec::new();
    let mut min: KeyMap<u32, i32> = KeyMap::default();
    s.tpcc().stock.scan(&s.snapshot, |_, st| {
        let su = supplier_of(st.s_w_id, st.s_i_id);
        if european[su as usize] && items.contains_key(&st.s_i_id) {
            stock.push((st.s_i_id, su, st.s_quantity));
            let m = min.entry(st.s_i_id).or_insert(st.s_quantity);
            *m = (*m).min(st.s_quantity);
        }
    });
    let mut rows = Vec::new();
    for (i_id, su, quantity) in stock {
        if min[&i_id] != quantity {
            continue;
        }
        let Some(supplier) = t.supplier(su) else {
            continue;
        };
        let Some(nation) = t.nation(supplier.su_nationkey) else {
            continue;
        };
        rows.push((nation.n_name, supplier, i_id, items[&i_id].as_str()));
    }
    // ORDER BY n_name, su_name, i_id, then the select list.
    rows.sort_by(|a, b| {
        (a.0, &a.1.su_name, a.2)
            .cmp(&(b.0, &b.1.su_name, b.2))
            .then_with(|| {
                (
                    a.1.su_suppkey,
                    a.3,
                    &a.1.su_address,
                    &a.1.su_phone,
                    &a.1.su_comment,
                )
                    .cmp(&(
                        b.1.su_suppkey,
                        b.3,
                        &b.1.su_address,
                        &b.1.su_phone,
                        &b.1.su_comment,
                    ))
            })
    });
    let mut answer = Answer::new(&[
        "su_suppkey",
        "su_name",
        "n_name",
        "i_id",
        "i_name",
        "su_address",
        "su_phone",
        "su_comment",
    ]);
    for (n_name, su, i_id, i_name) in rows {
        answer.push(vec![
            Value::Int(i64::from(su.su_suppkey)),
            Value::Text(su.su_name.clone()),
            Value::Text(n_name.to_string()),
            Value::Int(i64::from(i_id)),
            Value::Text(i_name.to_string()),
            Value::Text(su.su_address.clone()),
            Value::Text(su.su_phone.clone()),
            Value::Text(su.su_comment.clone()),
        ]);
    }
    answer
}
