//! CH Q16: per item name, brand and price, the number of distinct suppliers
//! (without complaints) of its stock, for items not 'zz…'.
//!
//! ```sql
//! SELECT i_name, substring(i_data from 1 for 3) AS brand, i_price,
//!        count(DISTINCT (mod((s_w_id * s_i_id),10000))) AS supplier_cnt
//! FROM stock, item
//! WHERE i_id = s_i_id AND i_data NOT LIKE 'zz%'
//!   AND (mod((s_w_id * s_i_id),10000) NOT IN (SELECT su_suppkey FROM supplier WHERE su_comment LIKE '%bad%'))
//! GROUP BY i_name, brand, i_price ORDER BY supplier_cnt DESC
//! ```
//!
//! Plan: the complaining suppliers as a bitmap; one item scan keys the
//! qualifying items' groups; one stock scan collects each group's distinct
//! supplier numbers. Ties of `supplier_cnt` are ordered by the select list.

use maestro_tpcc::schema::Text;
use std::collections::BTreeSet;

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::tables::{SUPPLIERS, supplier_of};

use super::keys::KeyMap;

pub(super) fn run(s: &Snap) -> Answer {
    let mut complained = vec![false; SUPPLIERS as usize + 1];
    for su in &s.tables().suppliers {
        if su.su_comment.contains("bad") {
            complained[su.su_suppkey as usize] = true;
        }
    }
    let db = s.tpcc();
    // Group key (i_name, brand, i_price) → index; item id → group index.
    let mut group_of_key: KeyMap<(Text, String, i64), usize> = KeyMap::default();
    let mut groups: Vec<((Text, String, i64), BTreeSet<u32>)> = Vec::new();
    let mut item_group: KeyMap<u32, usize> = KeyMap::default();
    db.item.scan(&s.snapshot, |_, i| {
        if i.i_data.starts_with("zz") {
            return;
        }
        let brand: String = i.i_data.chars().take(3).collect();
        let key = (i.i_name.clone(), brand, i.i_price);
        let g = *group_of_key.entry(key.clone()).or_insert_with(|| {
            groups.push((key, BTreeSet::new()));
            groups.len() - 1
        });
        item_group.insert(i.i_id, g);
    });
    let mut present = vec![false; groups.len()];
    db.stock.scan(&s.snapshot, |_, st| {
        let Some(&g) = item_group.get(&st.s_i_id) else {
            return;
        };
        let no = supplier_of(st.s_w_id, st.s_i_id);
        if !complained[no as usize] {
            groups[g].1.insert(no);
            present[g] = true;
        }
    });
    let mut rows: Vec<(&(Text, String, i64), usize)> = groups
        .iter()
        .zip(&present)
        .filter(|(_, p)| **p)
        .map(|((key, suppliers), _)| (key, suppliers.len()))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut answer = Answer::new(&["i_name", "brand", "i_price", "supplier_cnt"]);
    for ((name, brand, price), count) in rows {
        answer.push(vec![
            Value::Text(name.to_string()),
            Value::Text(brand.clone()),
            Value::money(i128::from(*price)),
            Value::Int(count as i64),
        ]);
    }
    answer
}
