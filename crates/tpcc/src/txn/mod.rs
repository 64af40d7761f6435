//! The five TPC-C transactions (clause 2) under strict two-phase locking.
//!
//! [`execute`] runs one input to the end: it takes a timestamp, runs the
//! transaction's body, and when the lock manager picks it as a deadlock
//! victim rolls back and retries the same input as the next attempt of the
//! same timestamp ([`crate::lock::TxnTs::retry`]: same age) until it commits; New-Order's
//! unused item rolls back for good. A transaction dropped without commit or
//! rollback (its body panicked) applies its undo log and releases its locks
//! in `Drop`.
//!
//! # Locking rules
//!
//! Every read of a mutable column happens under a shared lock and every
//! write under an exclusive one, taken before the row's latch and held until
//! the end (`Txn::commit`/`Txn::rollback` release after the undo log is
//! applied or dropped). Columns no transaction updates (`w_tax`, `d_tax`,
//! names, `c_discount`, `c_credit`, `c_first`, the item table, `s_dist_xx`,
//! `s_data`, an order's `o_c_id`, an order line's `ol_i_id`) are read without
//! locks. Per transaction (X exclusive, S shared; names of
//! [`crate::lock::LockSpace`]):
//!
//! | transaction | locks |
//! |---|---|
//! | New-Order | X `DistrictNextOId` (takes `o_id`), X `Order` (the new one), X `Stock` per line (all before the first line, in (warehouse, item) order, as Stock-Level takes its S `Stock`: no deadlock on stock rows) |
//! | Payment | X `Customer`, X `DistrictYtd`, X `WarehouseYtd` (hottest last: held shortest) |
//! | Order-Status | S `Customer`, S `Order` (the customer's latest) |
//! | Delivery | per district: X `DeliveryQueue`, X `Order` (the oldest), X `Customer` |
//! | Stock-Level | S `DistrictNextOId`, S `Stock` per distinct item |
//!
//! Phantoms: an order and its lines and new-order row are inserted under the
//! new order's X lock, and whoever finds an order through an index
//! (Order-Status, Delivery) locks it and then checks it is still live (a
//! New-Order may have rolled it back meanwhile), looking again if not.
//! Stock-Level's range of the last 20 orders is guarded by S on
//! `DistrictNextOId`: no order below `d_next_o_id` can still be uncommitted
//! (its New-Order held X on it until commit). Delivery serializes on the
//! queue head with X `DeliveryQueue`, so two Deliveries cannot take the same
//! order, nor one skip an order another might still roll back.

pub(crate) mod customer;
mod delivery;
mod input;
pub(crate) mod new_order;
pub use new_order::total_amount;
mod order_status;
pub(crate) mod payment;
pub use payment::bad_credit_data;
mod stock_level;
mod undo;

use crate::db::Database;
use crate::error::TpccError;
use maestro_scheduler::{CancelToken, Cancelled};

use crate::lock::{Deadlock, LockManager, LockMode, LockName, LockSet, WaitError};
use crate::schema::{Money, Timestamp};
use crate::table::RowId;

pub use input::*;
use undo::{Inserted, Undo};

/// Why a transaction body stopped before commit.
#[derive(Debug)]
pub(crate) enum Abort {
    /// Chosen as a deadlock victim: roll back and retry (same age).
    Deadlock,
    /// New-Order met an unused item (clause 2.4.2.3): roll back for good.
    UserRollback,
    /// The transaction's token was cancelled or timed out: roll back, report.
    Cancelled(Cancelled),
    /// A data-layer error (a limit or a broken invariant): roll back, report.
    Error(TpccError),
}

impl From<TpccError> for Abort {
    fn from(e: TpccError) -> Self {
        Abort::Error(e)
    }
}

/// What a committed transaction returns (the parts of its output screen the
/// tests and reports use).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnOutput {
    NewOrder {
        o_id: u32,
        ol_cnt: u8,
        /// Sum of `ol_amount` (cents) before discount and taxes.
        amount: Money,
        /// `total-amount` of clause 2.4.3.5, rounded to cents.
        total: Money,
        /// Lines whose item and stock data both hold "ORIGINAL" (brand 'B').
        brand_lines: u8,
    },
    Payment {
        c_id: u16,
        c_balance: Money,
        /// Whether the customer has bad credit ("BC": `c_data` was updated).
        bad_credit: bool,
    },
    OrderStatus {
        c_id: u16,
        c_balance: Money,
        /// The latest order: `(o_id, o_carrier_id, order lines)`.
        order: Option<(u32, Option<u8>, u8)>,
    },
    Delivery {
        /// Per district (index `d_id - 1`), the order delivered, or None when
        /// the district had no undelivered order (clause 2.7.4.2).
        delivered: [Option<u32>; 10],
    },
    StockLevel {
        low_stock: u32,
    },
}

/// How an executed transaction ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Committed(TxnOutput),
    /// New-Order's 1 % rollback.
    RolledBack,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executed {
    pub outcome: Outcome,
    /// Times it was a deadlock victim (each followed by a rollback and a
    /// retry).
    pub deadlock_aborts: u32,
}

/// Buffers a terminal reuses from one transaction to the next, so a
/// transaction allocates nothing for its bookkeeping once warm.
#[derive(Default)]
pub struct TxnState {
    held: Vec<LockName>,
    undo: Vec<Undo>,
    scratch: Scratch,
}

#[derive(Default)]
pub(crate) struct Scratch {
    /// Stock-Level's item ids.
    items: Vec<u32>,
    /// New-Order's stock locks, sorted.
    stocks: Vec<LockName>,
    /// Customers of one last name: (`c_first` key, `c_id`, row).
    customers: Vec<([u8; 16], u16, RowId)>,
}

/// One attempt of a transaction: its locks, undo log and scratch space.
pub(crate) struct Txn<'a> {
    pub(crate) db: &'a Database,
    /// Released at commit/rollback, or by its own drop, which runs after
    /// `Drop for Txn` applied the undo log.
    locks: LockSet<'a>,
    /// "The current date and time" of the transaction.
    pub(crate) now: Timestamp,
    undo: &'a mut Vec<Undo>,
    pub(crate) scratch: &'a mut Scratch,
    /// Stops the transaction at its next lock request or lock wait.
    cancel: Option<&'a CancelToken>,
}

impl Txn<'_> {
    /// Locks `name` in `mode` until the end of the transaction.
    pub(crate) fn lock(&mut self, name: LockName, mode: LockMode) -> Result<(), Abort> {
        match self.cancel {
            None => self
                .locks
                .acquire(name, mode)
                .map(drop)
                .map_err(|_: Deadlock| Abort::Deadlock),
            Some(cancel) => self
                .locks
                .acquire_cancellable(name, mode, cancel)
                .map(drop)
                .map_err(|e| match e {
                    WaitError::Deadlock(_) => Abort::Deadlock,
                    WaitError::Cancelled(c) => Abort::Cancelled(c),
                }),
        }
    }

    /// Logs the inverse of a write (made just before or just after) and
    /// charges the entry to the transaction's memory account; over its
    /// limit the transaction stops. The entry is in the log before the
    /// charge is refused, so the rollback restores the row either way.
    pub(crate) fn log(&mut self, undo: Undo) -> Result<(), Abort> {
        let bytes = undo.bytes();
        self.undo.push(undo);
        self.charge(bytes)
    }

    /// Charges `bytes` of undo entries pushed directly (inside a row scan)
    /// to the transaction's memory account (issue 13 part 3).
    pub(crate) fn charge(&self, bytes: u64) -> Result<(), Abort> {
        match self.cancel {
            Some(cancel) => cancel.charge(bytes).map_err(Abort::Cancelled),
            None => Ok(()),
        }
    }

    /// Inserts a row (its lock must be held) and logs the inverse delete.
    pub(crate) fn insert<R: crate::db::Row>(
        &mut self,
        table: Inserted,
        row: R,
    ) -> Result<RowId, Abort> {
        let id = self.db.insert(row)?;
        self.log(Undo::Insert { table, row: id })?;
        Ok(id)
    }

    /// Ends with commit: forgets the undo log, then releases every lock.
    fn commit(mut self) {
        self.undo.clear();
        self.locks.release_all();
    }

    /// Ends with rollback: applies the undo log newest first, then releases
    /// every lock (also after a failed undo step, reporting the first error).
    fn rollback(mut self) -> Result<(), TpccError> {
        let first_error = self.undo_all();
        self.locks.release_all();
        first_error.map_or(Ok(()), Err)
    }

    /// Applies the undo log newest first; the first error, if any.
    fn undo_all(&mut self) -> Option<TpccError> {
        let mut first_error = None;
        while let Some(entry) = self.undo.pop() {
            if let Err(e) = entry.apply(self.db) {
                first_error.get_or_insert(e);
            }
        }
        first_error
    }
}

/// A transaction that ends without `commit` or `rollback` — its body
/// panicked — rolls back here: its writes are undone (an undo error cannot be
/// reported from a drop and is ignored), then the lock set's own drop
/// releases its locks, so other transactions neither wait forever nor see
/// its uncommitted writes. After `commit`/`rollback` both are empty: no-op.
impl Drop for Txn<'_> {
    fn drop(&mut self) {
        let _ = self.undo_all();
    }
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn unix_now() -> Timestamp {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Runs `input` until it commits or rolls back for good (see the module docs).
pub fn execute(
    db: &Database,
    locks: &LockManager,
    state: &mut TxnState,
    input: &TxnInput,
) -> Result<Executed, TpccError> {
    execute_inner(db, locks, state, input, None)
}

/// [`execute`] that stops once `cancel` is cancelled or times out: at the
/// transaction's next lock request, or within [`crate::lock::CANCEL_POLL`]
/// of a lock wait. It then rolls back (undo log, then every lock released)
/// and returns [`TpccError::Cancelled`]; deadlock retries stop too.
pub fn execute_cancellable(
    db: &Database,
    locks: &LockManager,
    state: &mut TxnState,
    input: &TxnInput,
    cancel: &CancelToken,
) -> Result<Executed, TpccError> {
    execute_inner(db, locks, state, input, Some(cancel))
}

fn execute_inner(
    db: &Database,
    locks: &LockManager,
    state: &mut TxnState,
    input: &TxnInput,
    cancel: Option<&CancelToken>,
) -> Result<Executed, TpccError> {
    let mut ts = locks.begin();
    let now = unix_now();
    let mut deadlock_aborts = 0;
    loop {
        let mut txn = Txn {
            db,
            locks: locks.lock_set(ts, &mut state.held),
            now,
            undo: &mut state.undo,
            scratch: &mut state.scratch,
            cancel,
        };
        let result = match input {
            TxnInput::NewOrder(i) => new_order::run(&mut txn, i),
            TxnInput::Payment(i) => payment::run(&mut txn, i),
            TxnInput::OrderStatus(i) => order_status::run(&mut txn, i),
            TxnInput::Delivery(i) => delivery::run(&mut txn, i),
            TxnInput::StockLevel(i) => stock_level::run(&mut txn, i),
        };
        match result {
            Ok(output) => {
                txn.commit();
                return Ok(Executed {
                    outcome: Outcome::Committed(output),
                    deadlock_aborts,
                });
            }
            Err(Abort::UserRollback) => {
                txn.rollback()?;
                return Ok(Executed {
                    outcome: Outcome::RolledBack,
                    deadlock_aborts,
                });
            }
            Err(Abort::Deadlock) => {
                txn.rollback()?;
                deadlock_aborts += 1;
                ts = ts.retry();
            }
            Err(Abort::Error(e)) => {
                txn.rollback()?;
                return Err(e);
            }
            Err(Abort::Cancelled(c)) => {
                txn.rollback()?;
                return Err(TpccError::Cancelled(c));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::NewOrder;

    /// A transaction body that panics while holding locks and having
    /// inserted a row: the unwinding drop undoes the insert and releases the
    /// locks, so another transaction gets the same locks at once.
    #[test]
    fn a_panicking_transaction_rolls_back_and_releases_its_locks() {
        let db = Database::new(1).unwrap();
        let locks = LockManager::new();
        let mut state = TxnState::default();
        let order = LockName::order(1, 1, 3001).unwrap();
        let district = LockName::district_next_o_id(1, 1).unwrap();
        let body = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut txn = Txn {
                db: &db,
                locks: locks.lock_set(locks.begin(), &mut state.held),
                now: 0,
                undo: &mut state.undo,
                scratch: &mut state.scratch,
                cancel: None,
            };
            txn.lock(district, LockMode::Exclusive).unwrap();
            txn.lock(order, LockMode::Exclusive).unwrap();
            let row = NewOrder {
                no_o_id: 3001,
                no_d_id: 1,
                no_w_id: 1,
            };
            txn.insert(Inserted::NewOrder, row).unwrap();
            assert_eq!(txn.db.counts().new_order, 1);
            panic!("the body fails mid-transaction");
        }));
        assert!(body.is_err());
        assert_eq!(db.counts().new_order, 0, "the insert was undone");
        assert!(state.held.is_empty() && state.undo.is_empty());
        assert_eq!(locks.locks_in_use(), 0);
        let other = locks.begin();
        for name in [district, order] {
            assert_eq!(
                locks.acquire(other, name, LockMode::Exclusive),
                Ok(crate::lock::Grant::Acquired)
            );
            assert!(locks.release(other, name));
        }
        assert_eq!(locks.stats().waits, 0, "granted at once");
    }
}
