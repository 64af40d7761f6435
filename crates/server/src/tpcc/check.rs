//! TPC-C's consistency conditions 1–4 (clause 3.3.2) as SQL queries on the
//! store, all on one snapshot: each query gives the districts or
//! warehouses that violate its condition, so an empty answer is a pass.
//! Written from the spec's text, independent of the row engines' checker
//! (`maestro_tpcc::check_consistency`).

use maestro_scheduler::CancelToken;

use crate::Answer;
use crate::Engine;
use crate::txn::{Isolation, TxnSlot};

/// `(condition, query of its violations)`.
const CONDITIONS: [(&str, &str); 4] = [
    (
        "1: W_YTD = sum(D_YTD)",
        "SELECT w_id, w_ytd, total FROM warehouse, \
         (SELECT d_w_id, SUM(d_ytd) AS total FROM district GROUP BY d_w_id) d \
         WHERE w_id = d_w_id AND w_ytd <> total",
    ),
    (
        "2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
        "SELECT d_w_id, d_id, d_next_o_id, o_max, no_max FROM district, \
         (SELECT o_w_id, o_d_id, MAX(o_id) AS o_max FROM oorder GROUP BY o_w_id, o_d_id) o, \
         (SELECT no_w_id, no_d_id, MAX(no_o_id) AS no_max FROM new_order \
          GROUP BY no_w_id, no_d_id) n \
         WHERE o_w_id = d_w_id AND o_d_id = d_id AND no_w_id = d_w_id AND no_d_id = d_id \
         AND (d_next_o_id - 1 <> o_max OR d_next_o_id - 1 <> no_max)",
    ),
    (
        "3: max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER",
        "SELECT no_w_id, no_d_id, MIN(no_o_id), MAX(no_o_id), COUNT(*) FROM new_order \
         GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)",
    ),
    (
        "4: sum(O_OL_CNT) = rows in ORDER-LINE",
        "SELECT o_w_id, o_d_id, lines, line_rows FROM \
         (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS lines FROM oorder GROUP BY o_w_id, o_d_id) o, \
         (SELECT ol_w_id, ol_d_id, COUNT(*) AS line_rows FROM order_line \
          GROUP BY ol_w_id, ol_d_id) l \
         WHERE o_w_id = ol_w_id AND o_d_id = ol_d_id AND lines <> line_rows",
    ),
];

/// Districts that hold orders and order lines: every one of the
/// `warehouses`' ten must (the load gives each 3 000 orders), or the
/// conditions' joins above would pass by leaving a district out.
const DISTRICTS_PRESENT: &str = "SELECT COUNT(*) FROM district, \
     (SELECT o_w_id, o_d_id FROM oorder GROUP BY o_w_id, o_d_id) o, \
     (SELECT ol_w_id, ol_d_id FROM order_line GROUP BY ol_w_id, ol_d_id) l \
     WHERE o_w_id = d_w_id AND o_d_id = d_id AND ol_w_id = d_w_id AND ol_d_id = d_id";

/// The violations of conditions 1–4 in `engine`'s store at one snapshot
/// (empty: all hold), each as the condition and a violating row.
pub fn check_consistency(engine: &Engine, warehouses: u16) -> Result<Vec<String>, String> {
    let mut slot = TxnSlot::Begun(Isolation::RepeatableRead);
    let mut query = |sql: &str| match engine.execute(sql, &[], CancelToken::new(), &mut slot) {
        Ok(Answer::Rows { rows, .. }) => Ok(rows),
        Ok(_) => Err(format!("{sql}: not a query")),
        Err(e) => Err(format!("{sql}: {e}")),
    };
    let mut violations = Vec::new();
    for (condition, sql) in CONDITIONS {
        for row in query(sql)? {
            violations.push(format!("condition {condition}: {row:?}"));
        }
    }
    let present = query(DISTRICTS_PRESENT)?;
    let expected = i64::from(warehouses) * 10;
    if !matches!(present.as_slice(), [row] if row.first() == Some(&maestro_tpch::queries::Value::Int(expected)))
    {
        violations.push(format!(
            "districts with orders and order lines: {present:?}, expected {expected}"
        ));
    }
    if let TxnSlot::Open(txn, _) = slot {
        txn.abort();
    }
    Ok(violations)
}
