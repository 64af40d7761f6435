//! Order-Status (clause 2.6.2): a customer's balance and their latest order
//! with its lines. Read-only; the order is found through the by-customer
//! index, then locked and checked to be live (a New-Order that inserted it may
//! have rolled back while we waited for its lock), else looked up again.

use super::undo::live;
use super::{Abort, OrderStatusInput, Txn, TxnOutput, customer};
use crate::lock::{LockMode, LockName};

pub(super) fn run(txn: &mut Txn<'_>, input: &OrderStatusInput) -> Result<TxnOutput, Abort> {
    let db = txn.db;
    let (w_id, d_id) = (input.w_id, input.d_id);
    let (c_id, c_row) = customer::select(db, txn.scratch, w_id, d_id, input.customer)?;
    txn.lock(LockName::customer(w_id, d_id, c_id)?, LockMode::Shared)?;
    let c_balance = live(&db.customer, c_row)?.read().c_balance;

    let latest = loop {
        let Some((o_id, o_row)) = db.latest_order(w_id, d_id, c_id)? else {
            break None;
        };
        txn.lock(LockName::order(w_id, d_id, o_id)?, LockMode::Shared)?;
        if let Some(order) = db.orders.read(o_row) {
            break Some((o_id, order.o_carrier_id));
        }
    };
    let order = match latest {
        None => None,
        Some((o_id, o_carrier_id)) => {
            let mut lines = 0u8;
            let mut missing = None;
            db.order_lines(w_id, d_id, o_id..=o_id, |_, _, row| {
                // Every column of the line is shown on the output screen.
                match db.order_line.read(row) {
                    Some(line) => {
                        std::hint::black_box((
                            line.ol_i_id,
                            line.ol_supply_w_id,
                            line.ol_quantity,
                            line.ol_amount,
                            line.ol_delivery_d,
                        ));
                        lines += 1;
                    }
                    None => missing = Some(row),
                }
                true
            })?;
            if let Some(row) = missing {
                live(&db.order_line, row)?;
            }
            Some((o_id, o_carrier_id, lines))
        }
    };
    Ok(TxnOutput::OrderStatus {
        c_id,
        c_balance,
        order,
    })
}
