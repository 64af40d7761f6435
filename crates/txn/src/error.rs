//! Typed errors of the transaction core. Conflicts are errors, never panics.

use std::fmt;

use crate::RowId;

/// Why a transaction operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnError {
    /// Another transaction holds an uncommitted version of the row
    /// (first-updater-wins, no wait). Retryable: abort and run again.
    WriteConflict { table: &'static str, row: RowId },
    /// A transaction committed a newer version of the row after this
    /// transaction's snapshot was taken; updating it would lose that update.
    /// Retryable.
    SnapshotTooOld { table: &'static str, row: RowId },
    /// Serializable mode: a row this transaction read was overwritten by a
    /// transaction that committed after this one's snapshot. Retryable.
    ReadValidation { table: &'static str, row: RowId },
    /// Serializable mode: a table this transaction scanned was written by a
    /// transaction that committed after this one's snapshot (a phantom or a
    /// changed row may have been missed). Retryable.
    ScanValidation { table: &'static str },
    /// The row does not exist in this transaction's snapshot (never inserted,
    /// deleted, or inserted by a transaction it cannot see).
    RowNotFound { table: &'static str, row: RowId },
    /// The table has handed out every row id it can address.
    TableFull { table: &'static str },
    /// A transaction's additions to one counter would leave `i64`.
    CounterOverflow { table: &'static str, row: RowId },
    /// Every snapshot slot is in use; `slots_max` is the configured bound.
    SnapshotSlotsExhausted { slots_max: usize },
    /// The redo log stopped after a failed flush: the commit was refused
    /// (nothing of it happened). Not retryable: restart and recover.
    LogFailed { reason: String },
    /// The commit happened in memory but its log flush failed, so it is
    /// *not acknowledged*: after a restart it may or may not be there.
    NotDurable { reason: String },
}

impl TxnError {
    /// True when running the same transaction again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            TxnError::WriteConflict { .. }
                | TxnError::SnapshotTooOld { .. }
                | TxnError::ReadValidation { .. }
                | TxnError::ScanValidation { .. }
                | TxnError::SnapshotSlotsExhausted { .. }
        )
    }
}

impl fmt::Display for TxnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxnError::WriteConflict { table, row } => {
                write!(
                    f,
                    "write-write conflict on {table} row {row}: another transaction holds an uncommitted version"
                )
            }
            TxnError::LogFailed { reason } => write!(f, "commit refused: {reason}"),
            TxnError::NotDurable { reason } => {
                write!(f, "commit not acknowledged (durability unknown): {reason}")
            }
            TxnError::SnapshotTooOld { table, row } => {
                write!(
                    f,
                    "{table} row {row} was updated by a transaction that committed after this snapshot"
                )
            }
            TxnError::ReadValidation { table, row } => {
                write!(
                    f,
                    "serializable validation failed: {table} row {row} changed after it was read"
                )
            }
            TxnError::ScanValidation { table } => {
                write!(
                    f,
                    "serializable validation failed: {table} was written after it was scanned"
                )
            }
            TxnError::RowNotFound { table, row } => {
                write!(f, "{table} row {row} does not exist in this snapshot")
            }
            TxnError::TableFull { table } => write!(f, "table {table} is full"),
            TxnError::CounterOverflow { table, row } => {
                write!(f, "additions to counter {table} row {row} overflow 64 bits")
            }
            TxnError::SnapshotSlotsExhausted { slots_max } => {
                write!(f, "all {slots_max} snapshot slots are in use")
            }
        }
    }
}

impl std::error::Error for TxnError {}
