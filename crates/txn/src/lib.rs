//! Maestro's MVCC transaction core (issue 16): commit timestamps, snapshots,
//! versioned rows with newest-first version chains, first-updater-wins
//! write-write conflicts, commutative counters whose additions never
//! conflict, an optional serializable mode (read-set validation
//! at commit), and garbage collection of versions no snapshot can read.
//!
//! See `PROTOCOL.md` for the states, the commit order and the GC argument.
//!
//! ```
//! use maestro_txn::{Database, Isolation, Table};
//! let db = Database::default();
//! let accounts = Table::<i64>::new("accounts");
//! let mut txn = db.begin(Isolation::Snapshot).unwrap();
//! let row = txn.insert(&accounts, 100).unwrap();
//! txn.commit().unwrap();
//! let snapshot = db.snapshot().unwrap();
//! assert_eq!(accounts.read(&snapshot, row), Some(100));
//! ```

mod arena;
pub mod chunks;
mod clock;
mod counter;
mod db;
mod durable;
mod error;
mod gc;
mod journal;
mod slots;
mod snapshot;
mod table;
mod txn;
mod version;

pub use arena::{ROWS_MAX, RowId};
pub use clock::Timestamp;
pub use counter::CounterTable;
pub use db::{Database, DatabaseConfig};
pub use durable::{
    CheckpointReport, DataDirState, Durability, DurabilityConfig, DurableError, FaultPlan,
    LogStats, RecoveryReport, TornTail,
};
pub use error::TxnError;
pub use gc::CollectStats;
pub use snapshot::Snapshot;
pub use table::Table;
pub use txn::{Blocker, Isolation, Newest, Transaction};
