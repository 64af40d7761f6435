//! A session's transaction: none (every statement autocommits), a begun one
//! (BEGIN without a statement yet), an open one
//! (BEGIN … COMMIT/ROLLBACK: PostgreSQL's REPEATABLE READ, one
//! `maestro_txn::Transaction` that every statement reads and writes
//! through), or a failed one — a statement in it failed, so it was aborted
//! and, as in PostgreSQL, every statement but ROLLBACK/COMMIT is refused
//! with 25P02 until the client ends the block.
//!
//! The slot sits behind a mutex that a running statement holds from its
//! thread; when a client disconnects mid-transaction the session
//! and its slot are dropped, and dropping a `Transaction` aborts it.

use std::sync::{Arc, Mutex, PoisonError};

use maestro_sql::{ErrorKind, SqlError};
use maestro_txn::Transaction;
use pgwire::error::ErrorInfo;

use crate::errors::{self, error};

/// A session's transaction state.
#[derive(Debug, Default)]
pub enum TxnSlot {
    #[default]
    Idle,
    /// BEGIN ran, no statement since: the transaction — its snapshot —
    /// starts with the first statement, as PostgreSQL's REPEATABLE READ
    /// takes its snapshot then. A first INSERT, UPDATE or DELETE that meets
    /// another transaction's write of its table can therefore start over on
    /// a fresh snapshot, unseen by the client, as an autocommitted one does.
    Begun,
    Open(Transaction),
    Failed,
}

impl TxnSlot {
    /// Inside a BEGIN … COMMIT block (begun, open or failed).
    pub fn in_block(&self) -> bool {
        !matches!(self, TxnSlot::Idle)
    }
}

/// Shared between the session and its running statement's thread.
pub type SharedSlot = Arc<Mutex<TxnSlot>>;

pub fn lock(slot: &SharedSlot) -> std::sync::MutexGuard<'_, TxnSlot> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// 25P02, for a statement sent to a failed transaction.
pub fn in_failed_transaction() -> Box<ErrorInfo> {
    error(
        errors::IN_FAILED_SQL_TRANSACTION,
        "current transaction is aborted, commands ignored until end of transaction block",
    )
}

/// The error of a COMMIT that could not commit.
pub fn commit_error(e: SqlError) -> SqlError {
    if e.kind == ErrorKind::SerializationFailure {
        e
    } else {
        SqlError::new(e.kind, format!("commit failed: {}", e.message))
    }
}
