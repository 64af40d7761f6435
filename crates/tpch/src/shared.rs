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
use crate::refresh::{self, NewRows, RefreshError, Versions};

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
    /// Producing the set's rows or keys ([`SharedDatabase::prepare`]; zero
    /// when [`SharedDatabase::apply`] was given a prepared set).
    pub generate: Duration,
    /// Finding the deleted rows and building the new versions (last attempt).
    pub build: Duration,
    /// The transaction: first begin to commit, all attempts (without
    /// `generate`).
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

    /// Produces the rows of refresh function `function`, set `number` (what
    /// dbgen writes to its update files before a test): RF1's new rows or
    /// RF2's keys. The first RF1 builds tpchgen's text pool.
    pub fn prepare(
        &self,
        function: RefreshFunction,
        number: u32,
    ) -> Result<RefreshSet, RefreshError> {
        Ok(match function {
            RefreshFunction::Rf1 => {
                self.text_pool.get_or_init(shared_text_pool);
                RefreshSet::Insert(refresh::rf1_rows(self.scale_factor, number)?)
            }
            RefreshFunction::Rf2 => RefreshSet::Delete {
                number,
                keys: refresh::rf2_keys(self.scale_factor, number)?,
            },
        })
    }

    /// [`SharedDatabase::prepare`] then [`SharedDatabase::apply`]; the report's
    /// `generate` is the preparation's time.
    pub fn refresh(
        &self,
        scheduler: &Scheduler,
        function: RefreshFunction,
        number: u32,
    ) -> Result<RefreshReport, RefreshError> {
        let start = Instant::now();
        let set = self.prepare(function, number)?;
        let generate = start.elapsed();
        let mut report = self.apply(scheduler, &set)?;
        report.generate = generate;
        Ok(report)
    }

    /// Applies a prepared refresh set as one transaction: builds the new
    /// versions of ORDERS and LINEITEM from the transaction's snapshot and
    /// commits them, retrying (from a new snapshot) when a concurrent refresh
    /// committed first.
    pub fn apply(
        &self,
        scheduler: &Scheduler,
        set: &RefreshSet,
    ) -> Result<RefreshReport, RefreshError> {
        let start = Instant::now();
        let mut last_error = None;
        for attempt in 1..=REFRESH_ATTEMPTS_MAX {
            let mut t = self.txn.begin(Isolation::Snapshot).map_err(txn_error)?;
            let now = Database::from_tables(
                self.scale_factor,
                self.rows
                    .map(|row| t.read(&self.catalog, row).expect("never deleted")),
            );
            let built = Instant::now();
            let versions: Versions = match set {
                RefreshSet::Insert(rows) => refresh::insert(scheduler, &now, rows)?,
                RefreshSet::Delete { keys, .. } => refresh::delete(scheduler, &now, keys)?,
            };
            let build = built.elapsed();
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
                        function: set.function(),
                        number: set.number(),
                        orders_changed: versions.orders_changed,
                        lineitem_changed: versions.lineitem_changed,
                        generate: Duration::ZERO,
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

/// A prepared refresh: the rows RF1 inserts or the keys RF2 deletes.
#[derive(Debug, Clone)]
pub enum RefreshSet {
    Insert(NewRows),
    Delete { number: u32, keys: Vec<i64> },
}

impl RefreshSet {
    pub fn function(&self) -> RefreshFunction {
        match self {
            RefreshSet::Insert(_) => RefreshFunction::Rf1,
            RefreshSet::Delete { .. } => RefreshFunction::Rf2,
        }
    }

    pub fn number(&self) -> u32 {
        match self {
            RefreshSet::Insert(rows) => rows.number,
            RefreshSet::Delete { number, .. } => *number,
        }
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
