//! TPC-H's refresh functions on the SQL store's ORDERS and LINEITEM (issue
//! 16 part 4 on main + delta): RF1 appends a set's rows to the two tables'
//! deltas, RF2 marks the rows of a set's orders deleted — each one
//! transaction of two writes, O(delta) plus, for RF2, one scan of the two
//! key columns. The same sets as `maestro_tpch::SharedDatabase`'s
//! copy-on-write refresh (tpchgen's rows after the loaded population).
//!
//! The hand-written TPC-H plans read the same tables
//! ([`Store::tpch_database`]): each of a snapshot's eight versions as a
//! plain column table ([`Entry::plain`]: the main, or main and delta merged
//! once per version).

use std::time::{Duration, Instant};

use maestro_tpch::{NewRows, RefreshFunction};
use maestro_txn::Transaction;

use super::unique::{Keys, rows_holding};
use super::{Entry, Store, View};
use crate::error::{ErrorKind, Result, SqlError};

/// Attempts of one refresh against concurrent writers of its tables
/// (first updater wins): guessed, as `maestro_tpch`'s refresh.
const REFRESH_ATTEMPTS_MAX: u32 = 16;

/// Who reads the tables a refresh writes, which decides what its
/// transaction builds before it commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshReaders {
    /// SQL statements, which read a delta: the refresh writes the deltas
    /// and nothing more (O(delta)).
    Sql,
    /// The hand-written plans ([`Store::tpch_database`]), which read plain
    /// tables: the transaction also builds its versions' plain tables
    /// before it commits (O(table), as a copy-on-write refresh), so no
    /// query that reads the committed versions waits for them.
    Plans,
}

/// What one refresh on the store did.
#[derive(Debug, Clone)]
pub struct StoreRefresh {
    pub function: RefreshFunction,
    pub orders_changed: usize,
    pub lineitem_changed: usize,
    /// From the first attempt's start to the commit.
    pub total: Duration,
    pub attempts: u32,
}

impl Store {
    /// RF1: `rows` appended to ORDERS and LINEITEM in one transaction.
    /// An error if one of its orders is in the table already (the set was
    /// applied before).
    pub fn tpch_rf1(&self, rows: &NewRows, readers: RefreshReaders) -> Result<StoreRefresh> {
        self.refresh_txn(RefreshFunction::Rf1, readers, |store, txn, view| {
            // ORDERS' key is declared unique: the write checks it.
            store
                .replace(txn, view, "orders", Vec::new(), rows.orders.clone())
                .map_err(|e| match e.kind {
                    ErrorKind::UniqueViolation => SqlError::invalid(format!(
                        "RF1 set {}: its orders are in the table already ({})",
                        rows.number, e.message
                    )),
                    _ => e,
                })?;
            store.replace(txn, view, "lineitem", Vec::new(), rows.lineitem.clone())?;
            Ok((rows.orders.num_rows(), rows.lineitem.num_rows()))
        })
    }

    /// RF2: the orders of `keys` and their line items deleted in one
    /// transaction (keys not present delete nothing).
    pub fn tpch_rf2(&self, keys: &[i64], readers: RefreshReaders) -> Result<StoreRefresh> {
        let doomed = Keys::ints(keys.iter().copied().collect());
        self.refresh_txn(RefreshFunction::Rf2, readers, |store, txn, view| {
            let (_, orders) = view.entry("orders")?;
            let (_, lineitem) = view.entry("lineitem")?;
            let order_ids = live_rows_with_key(orders, "o_orderkey", &doomed)?;
            let line_ids = live_rows_with_key(lineitem, "l_orderkey", &doomed)?;
            let changed = (order_ids.len(), line_ids.len());
            let (no_orders, no_lines) = (orders.data.empty_like(), lineitem.data.empty_like());
            store.replace(txn, view, "orders", order_ids, no_orders)?;
            store.replace(txn, view, "lineitem", line_ids, no_lines)?;
            Ok(changed)
        })
    }

    /// The eight TPC-H tables one snapshot sees, as plain column tables
    /// for the hand-written plans (`maestro_tpch::queries`): a table
    /// without a delta is its main (a reference count), one with a delta
    /// is merged once per version and shared by every reader of it. An
    /// error if a table is missing or its columns are not TPC-H's (a
    /// plan reads them by position and type).
    pub fn tpch_database(&self, scale_factor: f64) -> Result<maestro_tpch::Database> {
        let mut txn = self.begin()?;
        let view = self.view(&mut txn);
        let tables = maestro_tpch::TABLE_NAMES.map(|name| {
            let (_, entry) = view.entry(name)?;
            let expected = maestro_tpch::table_schema(name).expect("one of the eight");
            let fields = entry.data.schema().fields();
            let same = fields.len() == expected.len()
                && fields
                    .iter()
                    .zip(expected)
                    .all(|(f, (n, ty))| f.name == *n && f.data_type == *ty);
            if !same {
                return Err(SqlError::invalid(format!(
                    "table {name} does not have TPC-H's columns (changed since it was loaded?): \
                     the hand-written plans cannot read it"
                )));
            }
            entry.plain()
        });
        txn.abort();
        let [a, b, c, d, e, f, g, h] = tables;
        Ok(maestro_tpch::Database::from_tables(
            scale_factor,
            [a?, b?, c?, d?, e?, f?, g?, h?],
        ))
    }

    /// Runs `write` in a transaction and commits it, again from a new
    /// snapshot while a concurrent writer of the tables wins. For
    /// [`RefreshReaders::Plans`] the written versions' plain tables are
    /// built before the commit: the commit installs those very versions
    /// when no other writer committed meanwhile (`rebase.rs`, "install"),
    /// else they are built by their first reader.
    fn refresh_txn(
        &self,
        function: RefreshFunction,
        readers: RefreshReaders,
        write: impl Fn(&Store, &mut Transaction, &View) -> Result<(usize, usize)>,
    ) -> Result<StoreRefresh> {
        let start = Instant::now();
        let mut last = None;
        for attempt in 1..=REFRESH_ATTEMPTS_MAX {
            let mut txn = self.begin()?;
            let view = self.view(&mut txn);
            let outcome = write(self, &mut txn, &view).and_then(|changed| {
                if readers == RefreshReaders::Plans {
                    let written = self.view(&mut txn);
                    for table in ["orders", "lineitem"] {
                        written.entry(table)?.1.plain()?;
                    }
                }
                self.commit(txn)?;
                Ok(changed)
            });
            match outcome {
                Ok((orders_changed, lineitem_changed)) => {
                    return Ok(StoreRefresh {
                        function,
                        orders_changed,
                        lineitem_changed,
                        total: start.elapsed(),
                        attempts: attempt,
                    });
                }
                Err(e) if e.kind == ErrorKind::SerializationFailure => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("an attempt failed"))
    }
}

/// The combined ids of `entry`'s live rows whose `column` (an integer
/// key) is in `keys`, ascending: the main's rows, then the delta's.
fn live_rows_with_key(entry: &Entry, column: &str, keys: &Keys) -> Result<Vec<u32>> {
    let i = entry.data.column_index(column).map_err(SqlError::store)?;
    // A refresh set's keys are a narrow range of the table's (RF2 deletes
    // the oldest orders): the range test spares most rows the hash probe.
    let mut ids: Vec<u32> = rows_holding(entry.data.column_at(i), keys)
        .map(|r| r as u32)
        .collect();
    if let Some(d) = entry.live_delta() {
        let base = d.main_rows() as u32;
        ids.extend(rows_holding(d.appended().column_at(i), keys).map(|r| base + r as u32));
        // Rows deleted before (an earlier RF2, an UPDATE) are not rows.
        ids.retain(|id| d.deleted().binary_search(id).is_err());
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, OnceLock};

    use maestro_scheduler::Scheduler;

    use super::*;

    const SF: f64 = 0.01;

    fn loaded() -> &'static maestro_tpch::Database {
        static DB: OnceLock<maestro_tpch::Database> = OnceLock::new();
        DB.get_or_init(|| {
            let scheduler = Arc::new(Scheduler::with_preset("single-hints", 2).unwrap());
            maestro_tpch::load(&scheduler, SF, &|_| {}).unwrap()
        })
    }

    /// Whether `table`'s newest version holds its plain table already.
    fn plain_built(store: &Store, table: &str) -> bool {
        let mut txn = store.begin().unwrap();
        let view = store.view(&mut txn);
        let built = view.entry(table).unwrap().1.plain.lock().is_some();
        txn.abort();
        built
    }

    #[test]
    fn a_refresh_for_the_plans_commits_versions_with_their_plain_tables() {
        for (readers, built) in [(RefreshReaders::Sql, false), (RefreshReaders::Plans, true)] {
            let store = Store::new();
            store.put_tpch(loaded()).unwrap();
            let rows = maestro_tpch::rf1_rows(SF, 1).unwrap();
            store.tpch_rf1(&rows, readers).unwrap();
            for table in ["orders", "lineitem"] {
                assert_eq!(plain_built(&store, table), built, "{readers:?} RF1 {table}");
            }
            let keys = maestro_tpch::rf2_keys(SF, 1).unwrap();
            store.tpch_rf2(&keys, readers).unwrap();
            assert_eq!(plain_built(&store, "lineitem"), built, "{readers:?} RF2");
            assert!(
                !plain_built(&store, "part"),
                "an unwritten table has no delta"
            );
        }
    }
}
