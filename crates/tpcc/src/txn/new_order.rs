//! New-Order (clause 2.4.2): take the district's next order id, insert the
//! order and its new-order row, then per line read the item, update the
//! stock and insert the order line. An unused item id (the 1 % of clause
//! 2.4.1.4, always the last line) rolls the whole transaction back through
//! the undo log, after the work of the earlier lines was done — a real
//! rollback, not a check ahead.

use super::undo::{Inserted, Undo, live};
use super::{Abort, NewOrderInput, Txn, TxnOutput};
use crate::error::TpccError;
use crate::lock::{LockMode, LockName};
use crate::random::ORIGINAL;
use crate::schema::*;

fn not_found(table: &'static str, key: String) -> TpccError {
    TpccError::NotFound { table, key }
}

/// `amount · (1 − c_discount) · (1 + w_tax + d_tax)` in cents, rounded half up
/// (rates are ten-thousandths, so the product carries a factor 10^8).
/// The order and new-order rows New-Order inserts for order `o_id` of
/// district `(w_id, d_id)` (clause 2.4.2.2), entered at `now`.
pub(crate) fn order_rows(input: &NewOrderInput, o_id: u32, now: Timestamp) -> (Order, NewOrder) {
    let (w_id, d_id) = (input.w_id, input.d_id);
    let lines = input.lines();
    let order = Order {
        o_id,
        o_d_id: d_id,
        o_w_id: w_id,
        o_c_id: input.c_id,
        o_entry_d: now,
        o_carrier_id: None,
        o_ol_cnt: lines.len() as u8, // ≤ MAX_ORDER_LINES
        o_all_local: u8::from(lines.iter().all(|l| l.supply_w_id == w_id)),
    };
    let new_order = NewOrder {
        no_o_id: o_id,
        no_d_id: d_id,
        no_w_id: w_id,
    };
    (order, new_order)
}

/// Line `n` (0-based) of order `o_id`, undelivered.
pub(crate) fn order_line(
    input: &NewOrderInput,
    o_id: u32,
    n: usize,
    ol_amount: Money,
    dist_info: DistInfo,
) -> OrderLine {
    let line = &input.lines()[n];
    OrderLine {
        ol_o_id: o_id,
        ol_d_id: input.d_id,
        ol_w_id: input.w_id,
        ol_number: n as u8 + 1, // ≤ 15
        ol_i_id: line.i_id,
        ol_supply_w_id: line.supply_w_id,
        ol_delivery_d: None,
        ol_quantity: line.quantity,
        ol_amount,
        ol_dist_info: dist_info,
    }
}

/// `total-amount` of clause 2.4.3.5: the lines' `amount` (cents) less the
/// customer's discount, plus warehouse and district tax (rates in 1/10 000),
/// rounded to cents.
pub fn total_amount(amount: Money, c_discount: Rate, w_tax: Rate, d_tax: Rate) -> Money {
    const SCALE: i128 = 10_000 * 10_000;
    let factor = i128::from(10_000 - c_discount) * i128::from(10_000 + w_tax + d_tax);
    let scaled = i128::from(amount) * factor;
    // Amounts are below 15 · 10 · 100.00 per order, so the result fits.
    ((scaled + SCALE / 2).div_euclid(SCALE)) as Money
}

pub(super) fn run(txn: &mut Txn<'_>, input: &NewOrderInput) -> Result<TxnOutput, Abort> {
    let db = txn.db;
    let (w_id, d_id, c_id) = (input.w_id, input.d_id, input.c_id);
    let lines = input.lines();
    let d_index = usize::from(d_id).wrapping_sub(1);
    if d_index >= usize::from(DISTRICTS_PER_WAREHOUSE) || lines.is_empty() {
        return Err(not_found(
            "district",
            format!("w={w_id} d={d_id} with {} lines", lines.len()),
        )
        .into());
    }

    // Columns no transaction updates: read without locks.
    let w_row = db.warehouse_row(w_id)?;
    let w_tax = live(
        &db.warehouse,
        w_row.ok_or_else(|| not_found("warehouse", format!("w={w_id}")))?,
    )?
    .read()
    .w_tax;
    let c_row = db.customer_row(w_id, d_id, c_id)?;
    let c_discount = live(
        &db.customer,
        c_row.ok_or_else(|| not_found("customer", format!("w={w_id} d={d_id} c={c_id}")))?,
    )?
    .read()
    .c_discount;

    txn.lock(
        LockName::district_next_o_id(w_id, d_id)?,
        LockMode::Exclusive,
    )?;
    let d_row = db
        .district_row(w_id, d_id)?
        .ok_or_else(|| not_found("district", format!("w={w_id} d={d_id}")))?;
    let (o_id, before, d_tax) = {
        let mut d = live(&db.district, d_row)?.write();
        let before = d.d_next_o_id;
        (d.take_next_o_id()?, before, d.d_tax)
    };
    txn.log(Undo::DistrictNextOId {
        row: d_row,
        d_next_o_id: before,
    })?;

    txn.lock(LockName::order(w_id, d_id, o_id)?, LockMode::Exclusive)?;
    let (order, new_order) = order_rows(input, o_id, txn.now);
    let ol_cnt = order.o_ol_cnt;
    txn.insert(Inserted::Orders, order)?;
    txn.insert(Inserted::NewOrder, new_order)?;

    // Every line's stock lock, in (warehouse, item) order, before the first
    // line: New-Orders sharing items (NURand makes some hot) and Stock-Level
    // (which locks in item order too) then never deadlock on stock rows. An
    // unused item's name is locked too, harmlessly: it rolls back below.
    let mut stocks = std::mem::take(&mut txn.scratch.stocks);
    stocks.clear();
    for line in lines {
        stocks.push(LockName::stock(line.supply_w_id, line.i_id)?);
    }
    stocks.sort_unstable();
    stocks.dedup();
    let locked = stocks
        .iter()
        .try_for_each(|&name| txn.lock(name, LockMode::Exclusive));
    txn.scratch.stocks = stocks;
    locked?;

    let (mut amount, mut brand_lines) = (0, 0);
    for (n, line) in lines.iter().enumerate() {
        let Some(i_row) = db.item_row(line.i_id)? else {
            return Err(Abort::UserRollback);
        };
        let (i_price, item_original) = {
            let item = live(&db.item, i_row)?.read();
            (item.i_price, item.i_data.contains(ORIGINAL))
        };

        let w = line.supply_w_id; // its stock lock is held (above)
        let s_row = db
            .stock_row(w, line.i_id)?
            .ok_or_else(|| not_found("stock", format!("w={w} i={}", line.i_id)))?;
        let (dist_info, brand_b) = {
            let mut s = live(&db.stock, s_row)?.write();
            txn.log(Undo::Stock {
                row: s_row,
                s_quantity: s.s_quantity,
                s_ytd: s.s_ytd,
                s_order_cnt: s.s_order_cnt,
                s_remote_cnt: s.s_remote_cnt,
            })?;
            s.take(line.quantity, w != w_id);
            // Brand 'B' needs both to hold "ORIGINAL": skip the stock's search
            // (and its cache miss) for the 90 % of items without it.
            (
                s.s_dist[d_index],
                item_original && s.s_data.contains(ORIGINAL),
            )
        };

        let ol_amount = Money::from(line.quantity) * i_price;
        amount += ol_amount;
        brand_lines += u8::from(brand_b);
        txn.insert(
            Inserted::OrderLine,
            order_line(input, o_id, n, ol_amount, dist_info),
        )?;
    }
    Ok(TxnOutput::NewOrder {
        o_id,
        ol_cnt,
        amount,
        total: total_amount(amount, c_discount, w_tax, d_tax),
        brand_lines,
    })
}

#[cfg(test)]
mod tests {
    use super::total_amount;

    #[test]
    fn total_applies_discount_and_taxes() {
        // 100.00 with 10 % discount and 5 % + 5 % taxes: 100 · 0.9 · 1.1 = 99.00.
        assert_eq!(total_amount(10_000, 1_000, 500, 500), 9_900);
        assert_eq!(total_amount(1, 0, 0, 0), 1);
        assert_eq!(total_amount(0, 5_000, 2_000, 2_000), 0);
    }
}
