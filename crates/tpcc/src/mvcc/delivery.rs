//! Delivery (clause 2.7.4) on maestro-txn: per district, the oldest new-order
//! row visible to the snapshot is deleted (two Deliveries of a warehouse
//! racing for it conflict on that row; the loser re-runs on a fresh
//! snapshot), its order gets the carrier, its lines the delivery date, and
//! the customer the lines' total. Once committed, the delivered new-order
//! keys are retired from the index (`mvcc::execute`).

use maestro_txn::Transaction;

use super::db::MvccDatabase;
use super::exec::MvccAbort;
use super::reads::order_lines;
use crate::db::IndexId;
use crate::error::TpccError;
use crate::keys::*;
use crate::schema::*;
use crate::txn::{DeliveryInput, TxnOutput};

fn not_found(table: &'static str, key: String) -> MvccAbort {
    MvccAbort::Error(TpccError::NotFound { table, key })
}

pub(crate) fn run(
    db: &MvccDatabase,
    txn: &mut Transaction,
    input: &DeliveryInput,
    now: Timestamp,
) -> Result<TxnOutput, MvccAbort> {
    let w_id = input.w_id;
    let mut delivered = [None; 10];
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE {
        let key = |o_id| OrderKey { w_id, d_id, o_id };
        let range = key(0).pack()?..=key(MAX_O_ID).pack()?;
        let oldest = db.index.get(IndexId::NewOrder).find_map(range, |k, row| {
            txn.read(&db.new_order, row)
                .map(|_| (OrderKey::unpack(k).o_id, row))
        });
        let Some((o_id, no_row)) = oldest else {
            continue;
        };
        txn.delete(&db.new_order, no_row)?;

        let (o_row, mut order): (_, Order) = db
            .lookup(txn, IndexId::Orders, key(o_id).pack()?)?
            .ok_or_else(|| not_found("orders", format!("w={w_id} d={d_id} o={o_id}")))?;
        let c_id = order.o_c_id;
        order.o_carrier_id = Some(input.o_carrier_id);
        txn.update(&db.orders, o_row, order)?;

        let mut amount = 0;
        for (row, mut line) in order_lines(db, txn, w_id, d_id, (o_id, o_id))? {
            line.ol_delivery_d = Some(now);
            amount += line.ol_amount;
            txn.update(&db.order_line, row, line)?;
        }

        let (c_row, mut c): (_, Customer) = db
            .lookup(
                txn,
                IndexId::Customer,
                CustomerKey { w_id, d_id, c_id }.pack()?,
            )?
            .ok_or_else(|| not_found("customer", format!("w={w_id} d={d_id} c={c_id}")))?;
        c.c_balance += amount;
        c.c_delivery_cnt = c.c_delivery_cnt.saturating_add(1);
        txn.update(&db.customer, c_row, c)?;
        delivered[usize::from(d_id) - 1] = Some(o_id);
    }
    Ok(TxnOutput::Delivery { delivered })
}
