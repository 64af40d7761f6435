//! Why a TPC-C data-layer operation failed. Every limit of the data layer (key
//! bit widths, table capacity, load options) is reported through [`TpccError`]
//! instead of a panic or a silent wrap-around.

use std::fmt;

#[derive(Debug)]
#[non_exhaustive]
pub enum TpccError {
    /// A key component does not fit its bit field (see [`crate::keys`]).
    KeyOutOfRange {
        field: &'static str,
        value: u64,
        max: u64,
    },
    /// A table has handed out every row id it can address.
    TableFull { table: &'static str },
    /// An insert found its primary key already indexed; nothing was changed.
    DuplicateKey { table: &'static str, key: u64 },
    /// A row cannot be indexed (e.g. a `c_last` that no name number spells).
    InvalidRow { table: &'static str, reason: String },
    /// A load option is out of range.
    InvalidOption {
        option: &'static str,
        reason: String,
    },
    /// A row a transaction needs is missing: a key its input names that the
    /// database lacks, or a locked row that vanished (a broken invariant).
    NotFound { table: &'static str, key: String },
    /// Writing the CSV export failed.
    Io(std::io::Error),
    /// The transaction was cancelled or hit its timeout (while waiting for a
    /// lock, or before it started one); it rolled back and left nothing.
    Cancelled(maestro_scheduler::Cancelled),
    /// An MVCC operation failed (`--cc mvcc`); retryable ones are re-run by
    /// the MVCC transactions' retry loop before they get here.
    Txn(maestro_txn::TxnError),
    /// Opening, checkpointing or recovering a data directory failed.
    Durable(maestro_txn::DurableError),
    /// A statement of an engine outside this crate failed (`--cc sql`:
    /// the SQL store), with the engine's message; retryable conflicts are
    /// re-run by that engine before they get here.
    Engine(String),
}

impl fmt::Display for TpccError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TpccError::KeyOutOfRange { field, value, max } => {
                write!(f, "{field} = {value} exceeds the key limit {max}")
            }
            TpccError::TableFull { table } => write!(f, "table {table} is full"),
            TpccError::DuplicateKey { table, key } => {
                write!(f, "duplicate primary key {key:#x} in table {table}")
            }
            TpccError::InvalidRow { table, reason } => {
                write!(f, "invalid {table} row: {reason}")
            }
            TpccError::InvalidOption { option, reason } => {
                write!(f, "invalid TPC-C option {option}: {reason}")
            }
            TpccError::NotFound { table, key } => write!(f, "no {table} row {key}"),
            TpccError::Io(e) => write!(f, "export failed: {e}"),
            TpccError::Cancelled(c) => write!(f, "transaction rolled back: {c}"),
            TpccError::Txn(e) => write!(f, "MVCC transaction failed: {e}"),
            TpccError::Durable(e) => write!(f, "data directory: {e}"),
            TpccError::Engine(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TpccError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TpccError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for TpccError {
    fn from(e: std::io::Error) -> Self {
        TpccError::Io(e)
    }
}

impl From<maestro_txn::DurableError> for TpccError {
    fn from(e: maestro_txn::DurableError) -> Self {
        TpccError::Durable(e)
    }
}

impl From<maestro_txn::TxnError> for TpccError {
    fn from(e: maestro_txn::TxnError) -> Self {
        TpccError::Txn(e)
    }
}
