//! CH Q7: revenue per year between Germany and Cambodia, one way or the
//! other (supplier's nation, customer's nation).
//!
//! ```sql
//! SELECT su_nationkey AS supp_nation, substring(c_state from 1 for 1) AS cust_nation,
//! extract(YEAR FROM o_entry_d) AS l_year, sum(ol_amount) AS revenue
//! FROM supplier, stock, order_line, oorder, customer, nation n1, nation n2
//! WHERE ol_supply_w_id = s_w_id AND ol_i_id = s_i_id AND MOD ((s_w_id * s_i_id), 10000) = su_suppkey
//!   AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND c_id = o_c_id
//!   AND c_w_id = o_w_id AND c_d_id = o_d_id AND su_nationkey = n1.n_nationkey
//!   AND ascii(substring(c_state from 1 for 1)) = n2.n_nationkey
//!   AND ((n1.n_name = 'Germany' AND n2.n_name = 'Cambodia') OR (n1.n_name = 'Cambodia' AND n2.n_name = 'Germany'))
//! GROUP BY su_nationkey, cust_nation, l_year ORDER BY su_nationkey, cust_nation, l_year
//! ```
//!
//! Plan: the customers of the two nations (nation by key); one order-line
//! scan sums, per order, the lines supplied from each of the two nations
//! (supplier from the stock key: TPC-C has a stock row for every warehouse
//! and item, so that join drops no line); one orders scan pairs those sums
//! with the customer's nation and the entry year.

use std::collections::BTreeMap;

use crate::answer::{Answer, Value};
use crate::db::Snap;
use crate::tables::supplier_of;
use crate::time::year;

use super::keys::{KeyMap, customer_key, nation_named, order_key, supplier_nations};

pub(super) fn run(s: &Snap) -> Answer {
    let mut answer = Answer::new(&["supp_nation", "cust_nation", "l_year", "revenue"]);
    let (Some(germany), Some(cambodia)) = (nation_named(s, "Germany"), nation_named(s, "Cambodia"))
    else {
        return answer;
    };
    let pair = [germany, cambodia];
    let db = s.tpcc();
    // Customer key → index in `pair` of the customer's nation.
    let mut customers: KeyMap<u64, usize> = KeyMap::default();
    db.customer.scan(&s.snapshot, |_, c| {
        if let Some(first) = c.c_state.bytes().next()
            && let Some(side) = pair.iter().position(|&n| n == first)
        {
            customers.insert(customer_key(c.c_w_id, c.c_d_id, c.c_id), side);
        }
    });
    // Order key → revenue of its lines supplied from each nation of `pair`.
    let supplier_nation = supplier_nations(s);
    let mut lines: KeyMap<u64, [Option<i128>; 2]> = KeyMap::default();
    db.order_line.scan(&s.snapshot, |_, ol| {
        let nation = supplier_nation[supplier_of(ol.ol_supply_w_id, ol.ol_i_id) as usize];
        if let Some(side) = pair.iter().position(|&n| n == nation) {
            let sums = lines
                .entry(order_key(ol.ol_w_id, ol.ol_d_id, ol.ol_o_id))
                .or_default();
            *sums[side].get_or_insert(0) += i128::from(ol.ol_amount);
        }
    });
    // (supplier nation, customer state's first character, year) → revenue.
    let mut groups: BTreeMap<(u8, u8, i64), i128> = BTreeMap::new();
    db.orders.scan(&s.snapshot, |_, o| {
        let Some(sums) = lines.get(&order_key(o.o_w_id, o.o_d_id, o.o_id)) else {
            return;
        };
        let Some(&side) = customers.get(&customer_key(o.o_w_id, o.o_d_id, o.o_c_id)) else {
            return;
        };
        // The lines supplied from the other nation of the pair.
        if let Some(sum) = sums[1 - side] {
            *groups
                .entry((pair[1 - side], pair[side], year(o.o_entry_d)))
                .or_default() += sum;
        }
    });
    for ((supp, cust, l_year), revenue) in groups {
        answer.push(vec![
            Value::Int(i64::from(supp)),
            Value::Text(char::from(cust).to_string()),
            Value::Int(l_year),
            Value::money(revenue),
        ]);
    }
    answer
}
