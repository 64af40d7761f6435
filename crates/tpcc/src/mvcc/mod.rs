//! TPC-C on maestro-txn (issue 16, part 2): versioned tables with snapshot
//! isolation instead of strict 2PL. The 2PL path (`db`, `lock`, `txn`)
//! remains the default.
//!
//! The database and its indexes, the retry loop, the five transactions;
//! [`execute`] runs one [`TxnInput`] for the driver (`tpcc run --cc mvcc`).

mod check;
mod db;
mod delivery;
mod durable;
mod exec;
mod index;
mod new_order;
mod payment;
mod reads;

pub use db::{MvccDatabase, MvccIndexes, MvccRow, load_mvcc};
pub use durable::{DurableDatabase, Opened, open_data_dir};
pub use exec::{MvccAbort, MvccExecuted, run_with_retry, run_with_retry_cancellable};
pub use index::OrderedIndex;

use crate::error::TpccError;
use crate::schema::Timestamp;
use maestro_scheduler::CancelToken;

use crate::db::IndexId;
use crate::keys::OrderKey;
use crate::txn::{Outcome, TxnOutput};

use crate::txn::{
    DeliveryInput, NewOrderInput, OrderStatusInput, PaymentInput, StockLevelInput, TxnInput,
};

/// Runs `input` to its end (retrying write-write conflicts on a fresh
/// snapshot), stopping before an attempt once `cancel` fires; timestamps
/// written are the time of the call ([`MvccDatabase::now`]).
pub fn execute(
    db: &MvccDatabase,
    input: &TxnInput,
    cancel: Option<&CancelToken>,
) -> Result<MvccExecuted, TpccError> {
    let now = db.now();
    let done = run_with_retry_cancellable(db, cancel, |db, txn| match input {
        TxnInput::NewOrder(i) => new_order::run(db, txn, i, now),
        TxnInput::Payment(i) => payment::run(db, txn, i, now),
        TxnInput::OrderStatus(i) => reads::order_status(db, txn, i),
        TxnInput::Delivery(i) => delivery::run(db, txn, i, now),
        TxnInput::StockLevel(i) => reads::stock_level(db, txn, i),
    })?;
    if let (TxnInput::Delivery(i), Outcome::Committed(TxnOutput::Delivery { delivered })) =
        (input, &done.outcome)
    {
        retire_delivered(db, i.w_id, delivered)?;
    }
    Ok(done)
}

/// Retires the new-order index entries of the orders a committed Delivery
/// took, and removes those (of any Delivery) no snapshot needs any more.
fn retire_delivered(
    db: &MvccDatabase,
    w_id: u16,
    delivered: &[Option<u32>; 10],
) -> Result<(), TpccError> {
    for (d, o_id) in delivered.iter().enumerate() {
        if let Some(o_id) = *o_id {
            let d_id = d as u8 + 1; // d < 10
            let key = OrderKey { w_id, d_id, o_id }.pack()?;
            db.retire(IndexId::NewOrder, key);
        }
    }
    db.reclaim_index_entries();
    Ok(())
}

/// Runs New-Order to its end (retrying conflicts); `now` is its entry date.
pub fn new_order(
    db: &MvccDatabase,
    input: &NewOrderInput,
    now: Timestamp,
) -> Result<MvccExecuted, TpccError> {
    run_with_retry(db, |db, txn| new_order::run(db, txn, input, now))
}

/// Runs Payment to its end (retrying conflicts); `now` is its `h_date`.
pub fn payment(
    db: &MvccDatabase,
    input: &PaymentInput,
    now: Timestamp,
) -> Result<MvccExecuted, TpccError> {
    run_with_retry(db, |db, txn| payment::run(db, txn, input, now))
}

/// Runs Order-Status (read-only: never retried).
pub fn order_status(
    db: &MvccDatabase,
    input: &OrderStatusInput,
) -> Result<MvccExecuted, TpccError> {
    run_with_retry(db, |db, txn| reads::order_status(db, txn, input))
}

/// Runs Stock-Level (read-only: never retried).
pub fn stock_level(db: &MvccDatabase, input: &StockLevelInput) -> Result<MvccExecuted, TpccError> {
    run_with_retry(db, |db, txn| reads::stock_level(db, txn, input))
}

/// Runs Delivery to its end (retrying conflicts); `now` is `ol_delivery_d`.
pub fn delivery(
    db: &MvccDatabase,
    input: &DeliveryInput,
    now: Timestamp,
) -> Result<MvccExecuted, TpccError> {
    run_with_retry(db, |db, txn| delivery::run(db, txn, input, now))
}
