//! The SQL texts of TPC-C's five transactions (clause 2), parsed once per
//! run: each execution binds its `$n` parameters and plans anew (there is no
//! plan cache).
//!
//! Texts follow the spec's steps with two liberties that keep the statement
//! count down without changing what is read or written: New-Order reads its
//! items with one `IN` list and inserts its order lines with one
//! multi-row `INSERT`, and every update returns what the next step needs
//! (`RETURNING`) instead of a separate read.

use maestro_sql::{SqlError, Statement};
use maestro_tpcc::DISTRICTS_PER_WAREHOUSE;
use maestro_tpcc::txn::{MAX_ORDER_LINES, MIN_ORDER_LINES};

/// Every statement of the five transactions, parsed.
pub(super) struct Statements {
    pub district_next_order: Statement,
    pub warehouse_tax: Statement,
    pub customer_discount: Statement,
    /// `$1..$15`: item ids (a New-Order with fewer lines repeats its first).
    pub items: Statement,
    pub insert_order: Statement,
    pub insert_new_order: Statement,
    /// Per district (index `d_id - 1`): the stock update returning that
    /// district's `s_dist_xx`.
    pub stock_update: Vec<Statement>,
    /// Per line count (index `count - MIN_ORDER_LINES`): one INSERT of
    /// that many order lines.
    pub insert_order_lines: Vec<Statement>,
    pub warehouse_payment: Statement,
    pub district_payment: Statement,
    pub customer_by_name: Statement,
    pub customer_payment: Statement,
    pub customer_bad_credit: Statement,
    pub insert_history: Statement,
    pub customer_balance: Statement,
    pub last_order: Statement,
    pub order_lines_of: Statement,
    pub oldest_new_order: Statement,
    pub delete_new_order: Statement,
    pub deliver_order: Statement,
    pub deliver_lines: Statement,
    pub customer_delivery: Statement,
    pub district_next: Statement,
    pub low_stock: Statement,
}

impl Statements {
    pub(super) fn parse() -> Result<Statements, SqlError> {
        let p = |sql: &str| maestro_sql::parse(sql);
        let items = format!(
            "SELECT i_id, i_price, i_data FROM item WHERE i_id IN ({})",
            placeholders(1, MAX_ORDER_LINES)
        );
        Ok(Statements {
            district_next_order: p("UPDATE district SET d_next_o_id = d_next_o_id + 1 \
                 WHERE d_w_id = $1 AND d_id = $2 RETURNING d_next_o_id, d_tax")?,
            warehouse_tax: p("SELECT w_tax FROM warehouse WHERE w_id = $1")?,
            customer_discount: p("SELECT c_discount, c_last, c_credit FROM customer \
                 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3")?,
            items: p(&items)?,
            insert_order: p(
                "INSERT INTO oorder (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, \
                 o_carrier_id, o_ol_cnt, o_all_local) VALUES ($1, $2, $3, $4, $5, NULL, $6, $7)",
            )?,
            insert_new_order: p(
                "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)",
            )?,
            stock_update: (1..=DISTRICTS_PER_WAREHOUSE)
                .map(|d| {
                    p(&format!(
                        "UPDATE stock SET s_quantity = CASE WHEN s_quantity >= $3 + 10 \
                         THEN s_quantity - $3 ELSE s_quantity - $3 + 91 END, \
                         s_ytd = s_ytd + $3, s_order_cnt = s_order_cnt + 1, \
                         s_remote_cnt = s_remote_cnt + $4 \
                         WHERE s_w_id = $1 AND s_i_id = $2 RETURNING s_dist_{d:02}, s_data"
                    ))
                })
                .collect::<Result<_, _>>()?,
            insert_order_lines: (MIN_ORDER_LINES..=MAX_ORDER_LINES)
                .map(|n| p(&order_lines_insert(n)))
                .collect::<Result<_, _>>()?,
            warehouse_payment: p("UPDATE warehouse SET w_ytd = w_ytd + $2 WHERE w_id = $1 \
                 RETURNING w_name")?,
            district_payment: p("UPDATE district SET d_ytd = d_ytd + $3 \
                 WHERE d_w_id = $1 AND d_id = $2 RETURNING d_name")?,
            customer_by_name: p("SELECT c_id, c_balance FROM customer \
                 WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first, c_id")?,
            customer_payment: p("UPDATE customer SET c_balance = c_balance - $4, \
                 c_ytd_payment = c_ytd_payment + $4, c_payment_cnt = c_payment_cnt + 1 \
                 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 \
                 RETURNING c_balance, c_credit, c_data")?,
            customer_bad_credit: p("UPDATE customer SET c_data = $4 \
                 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3")?,
            insert_history: p("INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, \
                 h_w_id, h_date, h_amount, h_data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)")?,
            customer_balance: p("SELECT c_balance FROM customer \
                 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3")?,
            last_order: p("SELECT o_id, o_carrier_id FROM oorder \
                 WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1")?,
            order_lines_of: p("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, \
                 ol_delivery_d FROM order_line \
                 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3")?,
            oldest_new_order: p("SELECT MIN(no_o_id) FROM new_order \
                 WHERE no_w_id = $1 AND no_d_id = $2")?,
            delete_new_order: p("DELETE FROM new_order \
                 WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3")?,
            deliver_order: p("UPDATE oorder SET o_carrier_id = $4 \
                 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3 RETURNING o_c_id")?,
            deliver_lines: p("UPDATE order_line SET ol_delivery_d = $4 \
                 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 RETURNING ol_amount")?,
            customer_delivery: p("UPDATE customer SET c_balance = c_balance + $4, \
                 c_delivery_cnt = c_delivery_cnt + 1 \
                 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3")?,
            district_next: p("SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2")?,
            low_stock: p("SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock \
                 WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id < $3 AND ol_o_id >= $4 \
                 AND s_w_id = $1 AND s_i_id = ol_i_id AND s_quantity < $5")?,
        })
    }
}

/// `$from, …, $(from + n - 1)`.
fn placeholders(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One INSERT of `n` undelivered order lines: per line 9 parameters
/// (`ol_delivery_d` is NULL).
fn order_lines_insert(n: usize) -> String {
    let rows: Vec<String> = (0..n)
        .map(|l| {
            let p = |k: usize| format!("${}", l * 9 + k);
            format!(
                "({}, {}, {}, {}, {}, {}, NULL, {}, {}, {})",
                p(1),
                p(2),
                p(3),
                p(4),
                p(5),
                p(6),
                p(7),
                p(8),
                p(9)
            )
        })
        .collect();
    format!(
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
         ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES {}",
        rows.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_parses_and_the_variable_ones_have_their_parameters() {
        let s = Statements::parse().unwrap();
        assert_eq!(s.stock_update.len(), usize::from(DISTRICTS_PER_WAREHOUSE));
        assert_eq!(
            s.insert_order_lines.len(),
            MAX_ORDER_LINES - MIN_ORDER_LINES + 1
        );
        assert_eq!(placeholders(2, 3), "$2, $3, $4");
        let five = order_lines_insert(5);
        assert!(five.contains("$45") && !five.contains("$46"), "{five}");
    }
}
