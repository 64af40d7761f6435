//! CH Q15: the suppliers with the most revenue from lines delivered since
//! 2007-01-02.
//!
//! ```sql
//! WITH revenue0 (supplier_no, total_revenue) AS
//!   (SELECT mod((s_w_id * s_i_id),10000) as supplier_no, sum(ol_amount) as total_revenue
//!    FROM order_line, stock WHERE ol_i_id = s_i_id AND ol_supply_w_id = s_w_id
//!      AND ol_delivery_d >= '2007-01-02 00:00:00.000000' GROUP BY supplier_no)
//! SELECT su_suppkey, su_name, su_address, su_phone, total_revenue FROM supplier, revenue0
//! WHERE su_suppkey = supplier_no AND total_revenue = (select max(total_revenue) from revenue0)
//! ORDER BY su_suppkey
//! ```
//!
//! Plan: one order-line scan sums per supplier number (a line's stock row is
//! `(ol_supply_w_id, ol_i_id)`, which TPC-C always has); the maximum is taken
//! over every supplier number, 0 included (no supplier has key 0, so a
//! maximum there yields no row, as in SQL).

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::tables::{SUPPLIERS, supplier_of};
use crate::time::at;

pub(super) fn run(s: &Snap) -> Answer {
    let since = at(2007, 1, 2, 0, 0, 0);
    let mut revenue: Vec<Option<i128>> = vec![None; SUPPLIERS as usize];
    s.tpcc().order_line.scan(&s.snapshot, |_, ol| {
        if ol.ol_delivery_d.is_some_and(|d| d >= since) {
            let no = supplier_of(ol.ol_supply_w_id, ol.ol_i_id) as usize;
            *revenue[no].get_or_insert(0) += i128::from(ol.ol_amount);
        }
    });
    let mut answer = Answer::new(&[
        "su_suppkey",
        "su_name",
        "su_address",
        "su_phone",
        "total_revenue",
    ]);
    let Some(max) = revenue.iter().flatten().copied().max() else {
        return answer;
    };
    for (no, total) in revenue.iter().enumerate() {
        if *total != Some(max) {
            continue;
        }
        if let Some(su) = s.tables().supplier(no as u32) {
            answer.push(vec![
                Value::Int(i64::from(su.su_suppkey)),
                Value::Text(su.su_name.clone()),
                Value::Text(su.su_address.clone()),
                Value::Text(su.su_phone.clone()),
                Value::money(max),
            ]);
        }
    }
    answer
}
