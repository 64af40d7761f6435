//! New-Order (clause 2.4.2) on maestro-txn: the same steps as the 2PL
//! version; the district row is written first (it is the hottest write, so a
//! conflicting pair fails before doing the line work), the unused item of the
//! 1 % rollback aborts the transaction (its versions and index entries become
//! invisible; see `OrderedIndex`).

use maestro_txn::Transaction;

use super::db::MvccDatabase;
use super::exec::MvccAbort;
use crate::db::IndexId;
use crate::error::TpccError;
use crate::keys::*;
use crate::random::ORIGINAL;
use crate::schema::*;
use crate::txn::new_order::{order_line, order_rows, total_amount};
use crate::txn::{NewOrderInput, TxnOutput};

fn not_found(table: &'static str, key: String) -> MvccAbort {
    MvccAbort::Error(TpccError::NotFound { table, key })
}

pub(crate) fn run(
    db: &MvccDatabase,
    txn: &mut Transaction,
    input: &NewOrderInput,
    now: Timestamp,
) -> Result<TxnOutput, MvccAbort> {
    let (w_id, d_id, c_id) = (input.w_id, input.d_id, input.c_id);
    let lines = input.lines();
    let d_index = usize::from(d_id).wrapping_sub(1);
    if d_index >= usize::from(DISTRICTS_PER_WAREHOUSE) || lines.is_empty() {
        return Err(not_found(
            "district",
            format!("w={w_id} d={d_id} with {} lines", lines.len()),
        ));
    }
    let (_, w_tax) = db
        .lookup_with(
            txn,
            IndexId::Warehouse,
            WarehouseKey { w_id }.pack()?,
            |w: &Warehouse| w.w_tax,
        )?
        .ok_or_else(|| not_found("warehouse", format!("w={w_id}")))?;
    let (_, c_discount) = db
        .lookup_with(
            txn,
            IndexId::Customer,
            CustomerKey { w_id, d_id, c_id }.pack()?,
            |c: &Customer| c.c_discount,
        )?
        .ok_or_else(|| not_found("customer", format!("w={w_id} d={d_id} c={c_id}")))?;

    let (d_row, mut d): (_, District) = db
        .lookup(txn, IndexId::District, DistrictKey { w_id, d_id }.pack()?)?
        .ok_or_else(|| not_found("district", format!("w={w_id} d={d_id}")))?;
    let o_id = d.take_next_o_id()?;
    let d_tax = d.d_tax;
    txn.update(&db.district, d_row, d)?;

    let (order, new_order) = order_rows(input, o_id, now);
    let ol_cnt = order.o_ol_cnt;
    db.insert(txn, order)?;
    db.insert(txn, new_order)?;

    let (mut amount, mut brand_lines) = (0, 0);
    for (n, line) in lines.iter().enumerate() {
        let item = db.lookup_with(
            txn,
            IndexId::Item,
            ItemKey { i_id: line.i_id }.pack()?,
            |i: &Item| (i.i_price, i.i_data.contains(ORIGINAL)),
        )?;
        let Some((_, (i_price, item_original))) = item else {
            return Err(MvccAbort::UserRollback);
        };
        let w = line.supply_w_id;
        let (s_row, mut s): (_, Stock) = db
            .lookup(
                txn,
                IndexId::Stock,
                StockKey {
                    w_id: w,
                    i_id: line.i_id,
                }
                .pack()?,
            )?
            .ok_or_else(|| not_found("stock", format!("w={w} i={}", line.i_id)))?;
        s.take(line.quantity, w != w_id);
        let dist_info = s.s_dist[d_index];
        let brand_b = item_original && s.s_data.contains(ORIGINAL);
        txn.update(&db.stock, s_row, s)?;

        let ol_amount = Money::from(line.quantity) * i_price;
        amount += ol_amount;
        brand_lines += u8::from(brand_b);
        db.insert(txn, order_line(input, o_id, n, ol_amount, dist_info))?;
    }
    Ok(TxnOutput::NewOrder {
        o_id,
        ol_cnt,
        amount,
        total: total_amount(amount, c_discount, w_tax, d_tax),
        brand_lines,
    })
}
