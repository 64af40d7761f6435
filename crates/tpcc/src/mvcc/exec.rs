//! Running one MVCC transaction to its end: a retryable error (first-updater
//! conflict, a snapshot too old, a failed validation) aborts it and runs the
//! same input again on a fresh snapshot, counting the retries.
//!
//! After a write-write conflict the retry waits for the transaction holding
//! the row's uncommitted version to finish ([`wait_for`]): retrying earlier
//! meets the same version again, and with more terminals than cores the
//! holder may be descheduled for a whole time slice, which immediate retries
//! used to spend in thousands of useless attempts.

use maestro_scheduler::{CancelToken, Cancelled};
use std::time::Duration;

use maestro_txn::{Blocker, Isolation, Transaction};

use super::db::MvccDatabase;
use crate::error::TpccError;
use crate::txn::{Outcome, TxnOutput};

/// Why an MVCC transaction body stopped before commit.
#[derive(Debug)]
pub enum MvccAbort {
    /// New-Order's unused item (clause 2.4.2.3): abort for good.
    UserRollback,
    /// A data-layer or MVCC error; retryable MVCC errors are retried.
    Error(TpccError),
}

impl From<TpccError> for MvccAbort {
    fn from(e: TpccError) -> Self {
        MvccAbort::Error(e)
    }
}

impl From<maestro_txn::TxnError> for MvccAbort {
    fn from(e: maestro_txn::TxnError) -> Self {
        MvccAbort::Error(TpccError::Txn(e))
    }
}

/// A finished MVCC transaction and how often it was retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MvccExecuted {
    pub outcome: Outcome,
    /// Attempts aborted by a retryable error before the final one.
    pub retries: u32,
}

fn retryable(e: &TpccError) -> bool {
    matches!(e, TpccError::Txn(t) if t.is_retryable())
}

/// Runs `body` until it commits, rolls back for good, or fails with an error
/// that is not retryable.
pub fn run_with_retry(
    db: &MvccDatabase,
    body: impl FnMut(&MvccDatabase, &mut Transaction) -> Result<TxnOutput, MvccAbort>,
) -> Result<MvccExecuted, TpccError> {
    run_with_retry_cancellable(db, None, body)
}

/// [`run_with_retry`] that stops before an attempt once `cancel` is
/// cancelled or timed out, with [`TpccError::Cancelled`] (an attempt holds no
/// locks, so there is nothing to interrupt inside one: it aborts or commits
/// within its few microseconds).
pub fn run_with_retry_cancellable(
    db: &MvccDatabase,
    cancel: Option<&CancelToken>,
    mut body: impl FnMut(&MvccDatabase, &mut Transaction) -> Result<TxnOutput, MvccAbort>,
) -> Result<MvccExecuted, TpccError> {
    let mut retries = 0u32;
    loop {
        if let Some(reason) = cancel.and_then(CancelToken::reason) {
            return Err(TpccError::Cancelled(Cancelled { reason }));
        }
        let mut txn = match db.txn.begin(Isolation::Snapshot) {
            Ok(t) => t,
            Err(e) if e.is_retryable() => {
                retries += 1;
                std::thread::yield_now();
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let mut blocker = None;
        let err = match body(db, &mut txn) {
            Ok(output) => match txn.commit() {
                Ok(_) => {
                    return Ok(MvccExecuted {
                        outcome: Outcome::Committed(output),
                        retries,
                    });
                }
                Err(e) => TpccError::Txn(e),
            },
            Err(MvccAbort::UserRollback) => {
                txn.abort();
                return Ok(MvccExecuted {
                    outcome: Outcome::RolledBack,
                    retries,
                });
            }
            Err(MvccAbort::Error(e)) => {
                blocker = txn.take_blocker();
                txn.abort();
                e
            }
        };
        if !retryable(&err) {
            return Err(err);
        }
        retries += 1;
        match blocker {
            Some(blocker) => wait_for(&blocker, cancel),
            None => std::thread::yield_now(),
        }
    }
}

/// A conflict wait gives up after this long and retries anyway (the holder
/// may itself be waiting). Guessed; far above a transaction's length.
const BLOCKER_WAIT_MAX: Duration = Duration::from_millis(50);

/// Waits until `blocker` committed or aborted (or `cancel` fired, or
/// [`BLOCKER_WAIT_MAX`] passed): [`Blocker::wait`], as a scheduler
/// inactive region — a transaction run by its terminal as a counted guest
/// gives its context back while it waits, so the holder (perhaps handed to
/// a worker) can run (as the SQL store's waits: `row_locks::wait_inactive`).
fn wait_for(blocker: &Blocker, cancel: Option<&CancelToken>) {
    maestro_scheduler::sync::blocking(|| {
        blocker.wait(BLOCKER_WAIT_MAX, || {
            cancel.is_some_and(CancelToken::is_cancelled)
        })
    });
}
