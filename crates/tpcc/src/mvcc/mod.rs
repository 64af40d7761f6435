//! TPC-C on maestro-txn (issue 16, part 2): versioned tables with snapshot
//! isolation instead of strict 2PL. The 2PL path (`db`, `lock`, `txn`)
//! remains the default.

mod db;
mod index;

pub use db::{MvccDatabase, MvccIndexes, MvccRow, load_mvcc};
pub use index::OrderedIndex;
