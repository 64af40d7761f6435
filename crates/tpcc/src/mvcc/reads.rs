//! Order-Status (clause 2.6.2) and Stock-Level (clause 2.8.2) on maestro-txn:
//! read-only, so they read one snapshot and never conflict (their commit
//! only releases the snapshot).

use maestro_txn::{RowId, Transaction};

use super::db::MvccDatabase;
use super::exec::MvccAbort;
use super::payment::select_customer;
use crate::db::IndexId;
use crate::error::TpccError;
use crate::keys::*;
use crate::schema::*;
use crate::txn::{OrderStatusInput, StockLevelInput, TxnOutput};

/// Orders Stock-Level examines: the district's last 20 (clause 2.8.2.2).
const RECENT_ORDERS: u32 = 20;

/// The visible order lines of orders `o_ids` of district `(w_id, d_id)`.
pub(crate) fn order_lines(
    db: &MvccDatabase,
    txn: &mut Transaction,
    w_id: u16,
    d_id: u8,
    o_ids: (u32, u32),
) -> Result<Vec<(RowId, OrderLine)>, TpccError> {
    let key = |o_id, ol_number| OrderLineKey {
        w_id,
        d_id,
        o_id,
        ol_number,
    };
    let range = key(o_ids.0, 0).pack()?..=key(o_ids.1, MAX_OL_NUMBER).pack()?;
    let mut lines = Vec::new();
    for (_, row) in db.index.get(IndexId::OrderLine).range(range) {
        if let Some(line) = txn.read(&db.order_line, row) {
            lines.push((row, line));
        }
    }
    Ok(lines)
}

pub(crate) fn order_status(
    db: &MvccDatabase,
    txn: &mut Transaction,
    input: &OrderStatusInput,
) -> Result<TxnOutput, MvccAbort> {
    let (w_id, d_id) = (input.w_id, input.d_id);
    let (_, c) = select_customer(db, txn, w_id, d_id, input.customer)?;
    let c_id = c.c_id;
    let key = |o_id| CustomerOrderKey {
        w_id,
        d_id,
        c_id,
        o_id,
    };
    let range = key(0).pack()?..=key(u32::MAX).pack()?;
    let mut latest = None;
    for (k, row) in db
        .index
        .get(IndexId::OrdersByCustomer)
        .range_rev(range, usize::MAX)
    {
        if let Some(order) = txn.read(&db.orders, row) {
            latest = Some((CustomerOrderKey::unpack(k).o_id, order.o_carrier_id));
            break;
        }
    }
    let order = match latest {
        None => None,
        Some((o_id, carrier)) => {
            let lines = order_lines(db, txn, w_id, d_id, (o_id, o_id))?;
            Some((o_id, carrier, lines.len() as u8))
        }
    };
    Ok(TxnOutput::OrderStatus {
        c_id,
        c_balance: c.c_balance,
        order,
    })
}

pub(crate) fn stock_level(
    db: &MvccDatabase,
    txn: &mut Transaction,
    input: &StockLevelInput,
) -> Result<TxnOutput, MvccAbort> {
    let (w_id, d_id) = (input.w_id, input.d_id);
    let (_, next) = db
        .lookup_with(
            txn,
            IndexId::District,
            DistrictKey { w_id, d_id }.pack()?,
            |d: &District| d.d_next_o_id,
        )?
        .ok_or_else(|| {
            MvccAbort::Error(TpccError::NotFound {
                table: "district",
                key: format!("w={w_id} d={d_id}"),
            })
        })?;
    let mut items = Vec::new();
    if next > 1 {
        let first = next.saturating_sub(RECENT_ORDERS).max(1);
        let key = |o_id, ol_number| OrderLineKey {
            w_id,
            d_id,
            o_id,
            ol_number,
        };
        let range = key(first, 0).pack()?..=key(next - 1, MAX_OL_NUMBER).pack()?;
        for (_, row) in db.index.get(IndexId::OrderLine).range(range) {
            if let Some(i_id) = txn.read_with(&db.order_line, row, |l| l.ol_i_id) {
                items.push(i_id);
            }
        }
    }
    items.sort_unstable();
    items.dedup();
    let mut low_stock = 0;
    for i_id in items {
        let quantity = db.lookup_with(
            txn,
            IndexId::Stock,
            StockKey { w_id, i_id }.pack()?,
            |s: &Stock| s.s_quantity,
        )?;
        if let Some((_, quantity)) = quantity {
            low_stock += u32::from(quantity < input.threshold);
        }
    }
    Ok(TxnOutput::StockLevel { low_stock })
}
