//! Delivery (clause 2.7.4), all ten districts in one transaction (clause
//! 2.7.4.2 allows it): per district, the oldest undelivered order loses its
//! new-order row, gets its carrier and delivery dates, and its customer is
//! charged the sum of its line amounts. A district without undelivered
//! orders is skipped.

use super::undo::{Undo, live};
use super::{Abort, DeliveryInput, Txn, TxnOutput};
use crate::error::TpccError;
use crate::lock::{LockMode, LockName};
use crate::schema::{DISTRICTS_PER_WAREHOUSE, NewOrder};

pub(super) fn run(txn: &mut Txn<'_>, input: &DeliveryInput) -> Result<TxnOutput, Abort> {
    let db = txn.db;
    let w_id = input.w_id;
    let mut delivered = [None; 10];
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE {
        txn.lock(LockName::delivery_queue(w_id, d_id)?, LockMode::Exclusive)?;
        // The queue head cannot move under our X lock except by a New-Order
        // rolling back its own (newest) row: lock the order, then re-check.
        let found = loop {
            let Some((o_id, no_row)) = db.oldest_new_order(w_id, d_id)? else {
                break None;
            };
            txn.lock(LockName::order(w_id, d_id, o_id)?, LockMode::Exclusive)?;
            if db.new_order.get(no_row).is_some() {
                break Some((o_id, no_row));
            }
        };
        let Some((o_id, no_row)) = found else {
            continue;
        };
        if !db.delete::<NewOrder>(no_row)? {
            return Err(Abort::Error(TpccError::NotFound {
                table: "new_order",
                key: format!("w={w_id} d={d_id} o={o_id} (locked, yet deleted)"),
            }));
        }
        txn.log(Undo::DeleteNewOrder { row: no_row })?;

        let o_row = db
            .order_row(w_id, d_id, o_id)?
            .ok_or_else(|| TpccError::NotFound {
                table: "orders",
                key: format!("w={w_id} d={d_id} o={o_id}"),
            })?;
        let c_id = {
            let mut order = live(&db.orders, o_row)?.write();
            txn.log(Undo::OrderCarrier {
                row: o_row,
                o_carrier_id: order.o_carrier_id,
            })?;
            order.o_carrier_id = Some(input.o_carrier_id);
            order.o_c_id
        };

        let (mut amount, mut missing) = (0, None);
        let now = txn.now;
        let undo = &mut *txn.undo;
        let logged_before = undo.len();
        db.order_lines(w_id, d_id, o_id..=o_id, |_, _, row| {
            let Some(mut line) = db.order_line.write(row) else {
                missing = Some(row);
                return false;
            };
            undo.push(Undo::OrderLineDelivery {
                row,
                ol_delivery_d: line.ol_delivery_d,
            });
            line.ol_delivery_d = Some(now);
            amount += line.ol_amount;
            true
        })?;
        let lines = (txn.undo.len() - logged_before) as u64;
        txn.charge(lines * std::mem::size_of::<Undo>() as u64)?;
        if let Some(row) = missing {
            live(&db.order_line, row)?;
        }

        txn.lock(LockName::customer(w_id, d_id, c_id)?, LockMode::Exclusive)?;
        let c_row = db
            .customer_row(w_id, d_id, c_id)?
            .ok_or_else(|| TpccError::NotFound {
                table: "customer",
                key: format!("w={w_id} d={d_id} c={c_id}"),
            })?;
        {
            let mut c = live(&db.customer, c_row)?.write();
            txn.log(Undo::CustomerDelivery {
                row: c_row,
                c_balance: c.c_balance,
                c_delivery_cnt: c.c_delivery_cnt,
            })?;
            c.c_balance += amount;
            c.c_delivery_cnt = c.c_delivery_cnt.saturating_add(1);
        }
        delivered[usize::from(d_id) - 1] = Some(o_id);
    }
    Ok(TxnOutput::Delivery { delivered })
}
