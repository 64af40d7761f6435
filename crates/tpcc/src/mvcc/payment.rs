//! Payment (clause 2.5.2) on maestro-txn, and the customer choice by id or
//! last name it shares with Order-Status.
//!
//! `d_ytd` and `w_ytd` are commutative counters (see `db`): Payment adds to
//! them and writes neither the district nor the warehouse row, so two
//! Payments of a warehouse, or a Payment and a New-Order of a district, no
//! longer conflict. What still conflicts: two transactions on one customer.

use maestro_txn::{RowId, Transaction};

use super::db::MvccDatabase;
use super::exec::MvccAbort;
use crate::db::IndexId;
use crate::error::TpccError;
use crate::keys::*;
use crate::schema::*;
use crate::txn::customer::first_name_key;
use crate::txn::payment::bad_credit_data;
use crate::txn::{CustomerSelector, PaymentInput, TxnOutput};

fn not_found(table: &'static str, key: String) -> MvccAbort {
    MvccAbort::Error(TpccError::NotFound { table, key })
}

/// The customer the selector names, as this transaction sees it.
pub(crate) fn select_customer(
    db: &MvccDatabase,
    txn: &mut Transaction,
    w_id: u16,
    d_id: u8,
    selector: CustomerSelector,
) -> Result<(RowId, Customer), MvccAbort> {
    match selector {
        CustomerSelector::Id(c_id) => db
            .lookup(
                txn,
                IndexId::Customer,
                CustomerKey { w_id, d_id, c_id }.pack()?,
            )?
            .ok_or_else(|| not_found("customer", format!("w={w_id} d={d_id} c={c_id}"))),
        CustomerSelector::LastName(name) => {
            let key = |c_id| CustomerNameKey {
                w_id,
                d_id,
                name,
                c_id,
            };
            let range = key(0).pack()?..=key(MAX_C_ID).pack()?;
            let mut matches = Vec::new();
            for (_, row) in db.index.get(IndexId::CustomerName).range(range) {
                if let Some(first) =
                    txn.read_with(&db.customer, row, |c| first_name_key(&c.c_first))
                {
                    matches.push((first, row));
                }
            }
            let missing = || {
                not_found(
                    "customer",
                    format!("w={w_id} d={d_id} last name number {name}"),
                )
            };
            if matches.is_empty() {
                return Err(missing());
            }
            // Stable sort by c_first of rows in c_id order; position ⌈n/2⌉.
            matches.sort_by_key(|m| m.0);
            let (_, row) = matches[matches.len().div_ceil(2) - 1];
            let c = txn.read(&db.customer, row).ok_or_else(missing)?;
            Ok((row, c))
        }
    }
}

pub(crate) fn run(
    db: &MvccDatabase,
    txn: &mut Transaction,
    input: &PaymentInput,
    now: Timestamp,
) -> Result<TxnOutput, MvccAbort> {
    let (w_id, d_id, c_w_id, c_d_id) = (input.w_id, input.d_id, input.c_w_id, input.c_d_id);
    let amount = input.h_amount;
    let (c_row, mut c) = select_customer(db, txn, c_w_id, c_d_id, input.customer)?;
    let c_id = c.c_id;
    c.c_balance -= amount;
    c.c_ytd_payment += amount;
    c.c_payment_cnt = c.c_payment_cnt.saturating_add(1);
    let bad_credit = &*c.c_credit == "BC";
    if bad_credit {
        c.c_data = bad_credit_data(&c.c_data, c_id, input).into();
    }
    let c_balance = c.c_balance;
    txn.update(&db.customer, c_row, c)?;

    // h_data = w_name, four spaces, d_name (clause 2.5.2.2), built in place.
    let mut h_data = String::with_capacity(24);
    db.lookup_with(
        txn,
        IndexId::Warehouse,
        WarehouseKey { w_id }.pack()?,
        |w: &Warehouse| h_data.push_str(&w.w_name),
    )?
    .ok_or_else(|| not_found("warehouse", format!("w={w_id}")))?;
    h_data.push_str("    ");
    db.lookup_with(
        txn,
        IndexId::District,
        DistrictKey { w_id, d_id }.pack()?,
        |d: &District| h_data.push_str(&d.d_name),
    )?
    .ok_or_else(|| not_found("district", format!("w={w_id} d={d_id}")))?;
    db.insert(
        txn,
        History {
            h_c_id: c_id,
            h_c_d_id: c_d_id,
            h_c_w_id: c_w_id,
            h_d_id: d_id,
            h_w_id: w_id,
            h_date: now,
            h_amount: amount,
            h_data: h_data.into(),
        },
    )?;
    txn.add(
        &db.district_ytd,
        MvccDatabase::district_ytd_row(w_id, d_id),
        amount,
    )?;
    txn.add(
        &db.warehouse_ytd,
        MvccDatabase::warehouse_ytd_row(w_id),
        amount,
    )?;
    Ok(TxnOutput::Payment {
        c_id,
        c_balance,
        bad_credit,
    })
}
