//! `SharedDatabase`: the TPC-H tables under MVCC, so the refresh functions
//! run as transactions while queries read consistent snapshots.
//!
//! Each table is one versioned row of a catalog table of the MVCC core
//! (`maestro_txn::Table<Arc<Table>>`): a version is a whole immutable column
//! table, a refresh commits new versions of ORDERS and LINEITEM in one
//! transaction (first-updater-wins between concurrent refreshes), and a
//! query's snapshot is the eight versions one MVCC snapshot sees — taking it
//! costs eight reference counts, and the query runs on exactly the plain
//! column tables the immutable store had, so no operator pays for versioning.
//! The MVCC core's garbage collection drops a version from the catalog once
//! no snapshot can see it; its columns are freed when the last query holding
//! them ends.
//!
//! The price is on the write side: a commit copies the changed tables
//! (copy-on-write, one scheduler task per column). That suits TPC-H's bulk
//! refreshes (0.1 % of the orders each) and is why TPC-C's point writes use
//! versioned rows instead (`crates/tpcc/src/mvcc`); a delta with a background
//! merge would serve both and is not built yet (ARCHITECTURE.md).

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use maestro_scheduler::Scheduler;
use maestro_storage::column::Table;
use maestro_txn::{Isolation, RowId, Timestamp, TxnError};
use tpchgen::text::TextPool;

use crate::Database;
use crate::load::shared_text_pool;
use crate::refresh::{self, RefreshError, Versions};

/// Positions of the tables a refresh writes in [`crate::TABLE_NAMES`] order.
const ORDERS: usize = 6;
const LINEITEM: usize = 7;

/// Attempts of one refresh transaction that meets a concurrent refresh.
/// Guessed: refreshes are rare, a conflict means one just committed.
pub const REFRESH_ATTEMPTS_MAX: usize = 8;

/// Which refresh function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshFunction {
    /// Inserts new orders and their line items.
    Rf1,
    /// Deletes old orders and their line items.
    Rf2,
}

impl fmt::Display for RefreshFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RefreshFunction::Rf1 => "RF1",
            RefreshFunction::Rf2 => "RF2",
        })
    }
}

/// What one committed refresh did.
#[derive(Debug, Clone)]
pub struct RefreshReport {
    pub function: RefreshFunction,
    pub number: u32,
    pub orders_changed: usize,
    pub lineitem_changed: usize,
    /// Generating (RF1) or finding (RF2) the rows and building the versions.
    pub build: Duration,
    /// Start to commit, all attempts.
    pub total: Duration,
    pub commit_ts: Timestamp,
    pub attempts: usize,
}

/// The eight TPC-H tables, versioned. Cheap to share behind an `Arc`.
pub struct SharedDatabase {
    txn: maestro_txn::Database,
    catalog: Arc<maestro_txn::Table<Arc<Table>>>,
    /// The catalog row of each table, in [`crate::TABLE_NAMES`] order.
    rows: [RowId; 8],
    scale_factor: f64,
    /// tpchgen's 300 MiB text pool, kept once RF1 first needs it (building
    /// it takes longer than a refresh at SF 1).
    text_pool: OnceLock<Arc<TextPool>>,
}

impl fmt::Debug for SharedDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedDatabase")
            .field("scale_factor", &self.scale_factor)
            .field("last_commit_ts", &self.txn.last_commit_ts())
            .field("catalog_versions", &self.catalog.versions())
            .finish()
    }
}

fn txn_error(e: TxnError) -> RefreshError {
    RefreshError::Txn {
        retryable: e.is_retryable(),
        message: e.to_string(),
    }
}

impl SharedDatabase {
    /// `db` as the first committed version, in a database of its own.
    pub fn new(db: Database) -> Result<SharedDatabase, RefreshError> {
        SharedDatabase::within(maestro_txn::Database::default(), db)
    }

    /// `db` as the first committed version inside `txn`, whose clock and
    /// snapshots other versioned tables may share.
    pub fn within(
        txn: maestro_txn::Database,
        db: Database,
    ) -> Result<SharedDatabase, RefreshError> {
        let catalog = maestro_txn::Table::new("tpch_catalog");
        let mut t = txn.begin(Isolation::Snapshot).map_err(txn_error)?;
        let mut rows = [0; 8];
        for (row, table) in rows.iter_mut().zip(db.shared_tables()) {
            *row = t.insert(&catalog, table).map_err(txn_error)?;
        }
        t.commit().map_err(txn_error)?;
        Ok(SharedDatabase {
            txn,
            catalog,
            rows,
            scale_factor: db.scale_factor,
            text_pool: OnceLock::new(),
        })
    }

    pub fn scale_factor(&self) -> f64 {
        self.scale_factor
    }

    /// The MVCC database holding the catalog.
    pub fn txn(&self) -> &maestro_txn::Database {
        &self.txn
    }

    /// Table versions stored in the catalog now (8 when no old version is
    /// still visible to a snapshot).
    pub fn versions_stored(&self) -> usize {
        self.catalog.versions()
    }

    /// The tables as of now: a consistent snapshot of every committed refresh.
    pub fn snapshot(&self) -> Result<Database, RefreshError> {
        let snapshot = self.txn.snapshot().map_err(txn_error)?;
        let tables = self.rows.map(|row| {
            self.catalog
                .read(&snapshot, row)
                .expect("catalog rows are never deleted")
        });
        Ok(Database::from_tables(self.scale_factor, tables))
    }

    /// Runs refresh function `function` with set `number` as one transaction.
    pub fn refresh(
        &self,
        scheduler: &Scheduler,
        function: RefreshFunction,
        number: u32,
    ) -> Result<RefreshReport, RefreshError> {
        let start = Instant::now();
        let new_rows = match function {
            RefreshFunction::Rf1 => {
                self.text_pool.get_or_init(shared_text_pool);
                Some(refresh::rf1_rows(self.scale_factor, number)?)
            }
            RefreshFunction::Rf2 => None,
        };
        let keys = match function {
            RefreshFunction::Rf1 => Vec::new(),
            RefreshFunction::Rf2 => refresh::rf2_keys(self.scale_factor, number)?,
        };
        let prepared = start.elapsed();
        let mut last_error = None;
        for attempt in 1..=REFRESH_ATTEMPTS_MAX {
            let mut t = self.txn.begin(Isolation::Snapshot).map_err(txn_error)?;
            let now = Database::from_tables(
                self.scale_factor,
                self.rows
                    .map(|row| t.read(&self.catalog, row).expect("never deleted")),
            );
            let built = Instant::now();
            let versions: Versions = match &new_rows {
                Some(rows) => refresh::insert(scheduler, &now, rows)?,
                None => refresh::delete(scheduler, &now, &keys)?,
            };
            let build = prepared + built.elapsed();
            let (orders_row, lineitem_row) = (self.rows[ORDERS], self.rows[LINEITEM]);
            let written = t
                .update(&self.catalog, orders_row, Arc::new(versions.orders))
                .and_then(|()| t.update(&self.catalog, lineitem_row, Arc::new(versions.lineitem)));
            let committed = match written {
                Ok(()) => t.commit(),
                Err(e) => {
                    let blocker = t.take_blocker();
                    t.abort();
                    if let Some(b) = blocker {
                        while !b.is_finished() {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                    Err(e)
                }
            };
            match committed {
                Ok(ts) => {
                    // The versions just replaced are whole tables: free them
                    // now if no snapshot can read them (the commit's own
                    // collection ran before they were superseded).
                    self.txn.collect(self.rows.len());
                    return Ok(RefreshReport {
                        function,
                        number,
                        orders_changed: versions.orders_changed,
                        lineitem_changed: versions.lineitem_changed,
                        build,
                        total: start.elapsed(),
                        commit_ts: ts.expect("a refresh writes two rows"),
                        attempts: attempt,
                    });
                }
                Err(e) if e.is_retryable() => last_error = Some(e),
                Err(e) => return Err(txn_error(e)),
            }
        }
        Err(txn_error(last_error.expect("at least one attempt failed")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TABLE_NAMES;

    #[test]
    fn refreshed_tables_sit_where_table_names_say() {
        assert_eq!(TABLE_NAMES[ORDERS], "orders");
        assert_eq!(TABLE_NAMES[LINEITEM], "lineitem");
    }
}
