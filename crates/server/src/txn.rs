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

/// How strongly a block's statements are isolated from other
/// transactions (PostgreSQL's names; `SET default_transaction_isolation`,
/// `BEGIN ISOLATION LEVEL …`, `SET TRANSACTION ISOLATION LEVEL …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Each statement reads a snapshot taken when it starts, with the
    /// block's own writes on top; an UPDATE or DELETE that waited for a row
    /// another transaction changed runs again on the newest rows
    /// (`maestro_sql::Rerun`). READ UNCOMMITTED means this too, as in
    /// PostgreSQL.
    ReadCommitted,
    /// Snapshot isolation: every statement reads the snapshot of the
    /// block's first; a row another transaction changed since is 40001.
    RepeatableRead,
    /// Asked for, never granted: the engine has no serializable mode for
    /// SQL (write skew is possible under snapshot isolation), so a block
    /// asking for it is refused rather than silently weakened.
    Serializable,
}

impl Isolation {
    /// A level's name as PostgreSQL spells it (`read committed`, …), any
    /// case and spacing; `None` for anything else.
    pub fn parse(text: &str) -> Option<Isolation> {
        let words: Vec<String> = text
            .split_whitespace()
            .map(str::to_ascii_lowercase)
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        match words.as_slice() {
            ["read", "committed"] | ["read", "uncommitted"] => Some(Isolation::ReadCommitted),
            ["repeatable", "read"] => Some(Isolation::RepeatableRead),
            ["serializable"] => Some(Isolation::Serializable),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read committed",
            Isolation::RepeatableRead => "repeatable read",
            Isolation::Serializable => "serializable",
        }
    }

    /// 0A000 for a level the engine cannot give.
    pub fn granted(self) -> Result<Isolation, Box<ErrorInfo>> {
        match self {
            Isolation::Serializable => Err(error(
                errors::FEATURE_NOT_SUPPORTED,
                "SERIALIZABLE is not supported: the strongest isolation level here is \
                 REPEATABLE READ (snapshot isolation, which allows write skew)",
            )),
            level => Ok(level),
        }
    }
}

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
    Begun(Isolation),
    Open(Transaction, Isolation),
    Failed,
}

impl TxnSlot {
    /// Inside a BEGIN … COMMIT block (begun, open or failed).
    pub fn in_block(&self) -> bool {
        !matches!(self, TxnSlot::Idle)
    }

    /// The isolation level of the block, if one is begun or open.
    pub fn isolation(&self) -> Option<Isolation> {
        match self {
            TxnSlot::Begun(level) | TxnSlot::Open(_, level) => Some(*level),
            TxnSlot::Idle | TxnSlot::Failed => None,
        }
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
