//! Payment (clause 2.5.2): the customer pays `h_amount`; the customer's
//! balance and counters (and, for bad credit, `c_data`), the district's and
//! the warehouse's year-to-date totals change, and a history row records it.
//! The steps run customer first and warehouse last: every Payment of a
//! warehouse needs its `w_ytd` lock, so taking it last holds it shortest.

use std::fmt::Write as _;

use super::undo::{Inserted, Undo, live};
use super::{Abort, PaymentInput, Txn, TxnOutput, customer};
use crate::error::TpccError;
use crate::export::format_fixed;
use crate::lock::{LockMode, LockName};
use crate::schema::*;

/// `c_data` keeps at most this many characters (clause 2.5.2.2).
pub(crate) const C_DATA_MAX_CHARS: usize = 500;

/// The largest char boundary of `s` at or below `at`.
pub(crate) fn floor_boundary(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A bad-credit customer's new `c_data` (clause 2.5.2.2): the payment's ids
/// and amount, then as much of the old data (`old`) as fits. Shared by the
/// 2PL and MVCC paths.
pub fn bad_credit_data(old: &str, c_id: u16, input: &PaymentInput) -> String {
    let mut data = String::with_capacity(C_DATA_MAX_CHARS);
    let _ = write!(
        data,
        "{c_id} {} {} {} {} {} ",
        input.c_d_id,
        input.c_w_id,
        input.d_id,
        input.w_id,
        format_fixed(input.h_amount, 2)
    );
    let keep = floor_boundary(old, C_DATA_MAX_CHARS.saturating_sub(data.len()));
    data.push_str(&old[..keep]);
    data
}

pub(super) fn run(txn: &mut Txn<'_>, input: &PaymentInput) -> Result<TxnOutput, Abort> {
    let db = txn.db;
    let (w_id, d_id, c_w_id, c_d_id) = (input.w_id, input.d_id, input.c_w_id, input.c_d_id);
    let amount = input.h_amount;
    let not_found = |table, key: String| TpccError::NotFound { table, key };

    let (c_id, c_row) = customer::select(db, txn.scratch, c_w_id, c_d_id, input.customer)?;
    txn.lock(
        LockName::customer(c_w_id, c_d_id, c_id)?,
        LockMode::Exclusive,
    )?;
    let (c_balance, bad_credit) = {
        let mut c = live(&db.customer, c_row)?.write();
        txn.log(Undo::CustomerPayment {
            row: c_row,
            c_balance: c.c_balance,
            c_ytd_payment: c.c_ytd_payment,
            c_payment_cnt: c.c_payment_cnt,
        })?;
        c.c_balance -= amount;
        c.c_ytd_payment += amount;
        c.c_payment_cnt = c.c_payment_cnt.saturating_add(1);
        let bad_credit = &*c.c_credit == "BC";
        if bad_credit {
            let data = bad_credit_data(&c.c_data, c_id, input).into();
            let old = std::mem::replace(&mut c.c_data, data);
            txn.log(Undo::CustomerData {
                row: c_row,
                c_data: old,
            })?;
        }
        (c.c_balance, bad_credit)
    };

    // Names are never updated: read without locks.
    let w_row = db
        .warehouse_row(w_id)?
        .ok_or_else(|| not_found("warehouse", format!("w={w_id}")))?;
    let d_row = db
        .district_row(w_id, d_id)?
        .ok_or_else(|| not_found("district", format!("w={w_id} d={d_id}")))?;
    let mut h_data = String::with_capacity(24);
    h_data.push_str(&live(&db.warehouse, w_row)?.read().w_name);
    h_data.push_str("    ");
    h_data.push_str(&live(&db.district, d_row)?.read().d_name);
    txn.insert(
        Inserted::History,
        History {
            h_c_id: c_id,
            h_c_d_id: c_d_id,
            h_c_w_id: c_w_id,
            h_d_id: d_id,
            h_w_id: w_id,
            h_date: txn.now,
            h_amount: amount,
            h_data: h_data.into(),
        },
    )?;

    txn.lock(LockName::district_ytd(w_id, d_id)?, LockMode::Exclusive)?;
    {
        let mut d = live(&db.district, d_row)?.write();
        txn.log(Undo::DistrictYtd {
            row: d_row,
            d_ytd: d.d_ytd,
        })?;
        d.d_ytd += amount;
    }
    txn.lock(LockName::warehouse_ytd(w_id)?, LockMode::Exclusive)?;
    {
        let mut w = live(&db.warehouse, w_row)?.write();
        txn.log(Undo::WarehouseYtd {
            row: w_row,
            w_ytd: w.w_ytd,
        })?;
        w.w_ytd += amount;
    }
    Ok(TxnOutput::Payment {
        c_id,
        c_balance,
        bad_credit,
    })
}
