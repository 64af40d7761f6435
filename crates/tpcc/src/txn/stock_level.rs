//! Stock-Level (clause 2.8.2): how many distinct items of the district's last
//! 20 orders have a stock quantity below the threshold. The shared lock on
//! `d_next_o_id` makes those 20 orders committed ones (see the module docs of
//! `txn`); their lines' item ids never change, so only the stock rows are
//! locked, each once (the ids are deduplicated first).

use super::undo::live;
use super::{Abort, StockLevelInput, Txn, TxnOutput};
use crate::error::TpccError;
use crate::lock::{LockMode, LockName};

/// Orders examined: the district's last 20 (clause 2.8.2.2).
const RECENT_ORDERS: u32 = 20;

pub(super) fn run(txn: &mut Txn<'_>, input: &StockLevelInput) -> Result<TxnOutput, Abort> {
    let db = txn.db;
    let (w_id, d_id) = (input.w_id, input.d_id);
    txn.lock(LockName::district_next_o_id(w_id, d_id)?, LockMode::Shared)?;
    let d_row = db
        .district_row(w_id, d_id)?
        .ok_or_else(|| TpccError::NotFound {
            table: "district",
            key: format!("w={w_id} d={d_id}"),
        })?;
    let next = live(&db.district, d_row)?.read().d_next_o_id;

    // Borrow the buffer out of the scratch space, so locking can borrow `txn`.
    let mut items = std::mem::take(&mut txn.scratch.items);
    items.clear();
    if next > 1 {
        let first = next.saturating_sub(RECENT_ORDERS).max(1);
        db.order_lines(w_id, d_id, first..=next - 1, |_, _, row| {
            if let Some(line) = db.order_line.read(row) {
                items.push(line.ol_i_id);
            }
            true
        })?;
    }
    items.sort_unstable();
    items.dedup();
    let result = low_stock(txn, w_id, &items, input.threshold);
    txn.scratch.items = items;
    Ok(TxnOutput::StockLevel { low_stock: result? })
}

fn low_stock(txn: &mut Txn<'_>, w_id: u16, items: &[u32], threshold: i32) -> Result<u32, Abort> {
    let db = txn.db;
    let mut low = 0;
    for &i_id in items {
        txn.lock(LockName::stock(w_id, i_id)?, LockMode::Shared)?;
        let Some(s_row) = db.stock_row(w_id, i_id)? else {
            return Err(TpccError::NotFound {
                table: "stock",
                key: format!("w={w_id} i={i_id}"),
            }
            .into());
        };
        low += u32::from(live(&db.stock, s_row)?.read().s_quantity < threshold);
    }
    Ok(low)
}
