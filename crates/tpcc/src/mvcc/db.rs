//! The TPC-C database on maestro-txn: the nine tables as versioned
//! `maestro_txn::Table`s and the same ten indexes as the 2PL path (same
//! packed keys, from each row's [`Row::index_entries`]) as [`OrderedIndex`]es.
//!
//! The year-to-date balances `w_ytd` and `d_ytd` live in commutative
//! counters ([`CounterTable`]), not in the warehouse and district rows (whose
//! `w_ytd`/`d_ytd` fields keep the loaded value and are never read here):
//! Payment only *adds* to them, so concurrent Payments of one warehouse never
//! conflict, and a Payment no longer writes the district row New-Order
//! updates (`d_next_o_id`). Counter row ids are dense in key order:
//! warehouse `w` → `w − 1`, district `(w, d)` → `(w − 1)·10 + d − 1`.
//!
//! Loading reuses the 2PL loader: [`load_mvcc`] generates the data into a
//! 2PL [`Database`] (same generator, same seed → same rows) and copies every
//! table into the MVCC tables in one committed transaction per table.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use parking_lot::Mutex;

use maestro_txn::{
    CounterTable, Database as TxnDatabase, DatabaseConfig, Isolation, RowId, Snapshot, Table,
    Transaction,
};

use super::index::OrderedIndex;
use crate::db::{Database, IndexId, Row};
use crate::error::TpccError;
use crate::load::{LoadConfig, LoadProgress, LoadReport, load};
use crate::schema::*;
use crate::txn::unix_now;

/// The ten indexes, in [`IndexId`] order.
pub struct MvccIndexes([OrderedIndex; 10]);

impl MvccIndexes {
    pub fn get(&self, id: IndexId) -> &OrderedIndex {
        let i = match id {
            IndexId::Warehouse => 0,
            IndexId::District => 1,
            IndexId::Customer => 2,
            IndexId::CustomerName => 3,
            IndexId::Orders => 4,
            IndexId::OrdersByCustomer => 5,
            IndexId::NewOrder => 6,
            IndexId::OrderLine => 7,
            IndexId::Item => 8,
            IndexId::Stock => 9,
        };
        &self.0[i]
    }
}

pub struct MvccDatabase {
    warehouses: u16,
    pub txn: TxnDatabase,
    pub warehouse: Arc<Table<Warehouse>>,
    pub district: Arc<Table<District>>,
    pub customer: Arc<Table<Customer>>,
    pub history: Arc<Table<History>>,
    pub new_order: Arc<Table<NewOrder>>,
    pub orders: Arc<Table<Order>>,
    pub order_line: Arc<Table<OrderLine>>,
    pub item: Arc<Table<Item>>,
    pub stock: Arc<Table<Stock>>,
    /// `w_ytd` per warehouse (see the module docs for the row ids).
    pub warehouse_ytd: Arc<CounterTable>,
    /// `d_ytd` per district.
    pub district_ytd: Arc<CounterTable>,
    pub index: MvccIndexes,
    /// Index entries of deleted rows, oldest first, each removable once no
    /// snapshot reads below its timestamp.
    retired: Mutex<VecDeque<Retired>>,
    /// Seconds added to the system clock for the timestamps transactions
    /// write ([`MvccDatabase::start_clock_at`]); 0 by default.
    clock_offset_s: AtomicI64,
    /// [`MvccDatabase::freeze_clock_at`]'s instant, or `NOT_FROZEN`.
    frozen_clock: AtomicU64,
}

const NOT_FROZEN: u64 = u64::MAX;

/// An index entry whose row was deleted by a transaction committed at or
/// before `after_ts`.
struct Retired {
    after_ts: maestro_txn::Timestamp,
    index: IndexId,
    key: u64,
}

/// A row type's MVCC table.
pub trait MvccRow: Row + Clone {
    fn mvcc_table(db: &MvccDatabase) -> &Arc<Table<Self>>;
}

macro_rules! mvcc_row {
    ($($ty:ty => $field:ident),* $(,)?) => {$(
        impl MvccRow for $ty {
            fn mvcc_table(db: &MvccDatabase) -> &Arc<Table<Self>> {
                &db.$field
            }
        }
    )*};
}

mvcc_row!(
    Warehouse => warehouse,
    District => district,
    Customer => customer,
    History => history,
    NewOrder => new_order,
    Order => orders,
    OrderLine => order_line,
    Item => item,
    Stock => stock,
);

impl MvccDatabase {
    /// An empty database of `warehouses` warehouses.
    pub fn new(warehouses: u16, config: DatabaseConfig) -> Self {
        MvccDatabase {
            warehouses,
            txn: TxnDatabase::new(config),
            warehouse: Table::new("warehouse"),
            district: Table::new("district"),
            customer: Table::new("customer"),
            history: Table::new("history"),
            new_order: Table::new("new_order"),
            orders: Table::new("orders"),
            order_line: Table::new("order_line"),
            item: Table::new("item"),
            stock: Table::new("stock"),
            warehouse_ytd: CounterTable::new("warehouse_ytd"),
            district_ytd: CounterTable::new("district_ytd"),
            index: MvccIndexes(Default::default()),
            retired: Mutex::new(VecDeque::new()),
            clock_offset_s: AtomicI64::new(0),
            frozen_clock: AtomicU64::new(NOT_FROZEN),
        }
    }

    pub fn warehouses(&self) -> u16 {
        self.warehouses
    }

    /// The warehouse count read from a recovered data directory.
    pub(super) fn set_warehouses(&mut self, warehouses: u16) {
        self.warehouses = warehouses;
    }

    /// Makes the clock transactions read start at `start` now and advance
    /// with real time (deterministic timestamps for tests and snapshots).
    pub fn start_clock_at(&self, start: Timestamp) {
        let offset = start as i64 - unix_now() as i64;
        // Relaxed: set before the terminals start (thread spawn orders it).
        self.clock_offset_s.store(offset, Ordering::Relaxed);
    }

    /// Makes every transaction read `at` as "now" (deterministic tests).
    pub fn freeze_clock_at(&self, at: Timestamp) {
        // Relaxed: as in `start_clock_at`.
        self.frozen_clock.store(at, Ordering::Relaxed);
    }

    /// "Now" for a transaction: the frozen instant if any, else the system
    /// clock plus the offset.
    pub fn now(&self) -> Timestamp {
        match self.frozen_clock.load(Ordering::Relaxed) {
            NOT_FROZEN => {
                let offset = self.clock_offset_s.load(Ordering::Relaxed);
                (unix_now() as i64).saturating_add(offset).max(0) as Timestamp
            }
            at => at,
        }
    }

    /// Queues `key` of `index` for removal: its row was deleted by a
    /// transaction that has committed (now, so at or before the newest commit
    /// timestamp). Removed by [`MvccDatabase::reclaim_index_entries`] once
    /// every live snapshot reads at or after that timestamp — none of them
    /// can see the row then, so none needs the entry.
    pub fn retire(&self, index: IndexId, key: u64) {
        let after_ts = self.txn.last_commit_ts();
        self.retired.lock().push_back(Retired {
            after_ts,
            index,
            key,
        });
    }

    /// Removes the retired entries no snapshot needs any more; returns how
    /// many. Cheap when there are none.
    pub fn reclaim_index_entries(&self) -> usize {
        let low_watermark = self.txn.low_watermark();
        let mut removed = 0;
        let mut retired = self.retired.lock();
        while retired.front().is_some_and(|r| r.after_ts <= low_watermark) {
            let r = retired.pop_front().expect("front checked");
            self.index.get(r.index).remove(r.key);
            removed += 1;
        }
        removed
    }

    /// Row versions stored in all tables (live ones, older ones some
    /// snapshot may read, uncommitted ones, tombstones) plus unfolded counter
    /// deltas: compare with the live rows for the version overhead.
    pub fn versions_stored(&self) -> usize {
        self.warehouse.versions()
            + self.district.versions()
            + self.customer.versions()
            + self.history.versions()
            + self.new_order.versions()
            + self.orders.versions()
            + self.order_line.versions()
            + self.item.versions()
            + self.stock.versions()
            + self.warehouse_ytd.deltas()
            + self.district_ytd.deltas()
    }

    /// Retired index entries not removed yet.
    pub fn index_entries_retired(&self) -> usize {
        self.retired.lock().len()
    }

    /// The counter row of warehouse `w_id`'s `w_ytd`.
    pub fn warehouse_ytd_row(w_id: u16) -> RowId {
        u64::from(w_id).wrapping_sub(1)
    }

    /// The counter row of district `(w_id, d_id)`'s `d_ytd`.
    pub fn district_ytd_row(w_id: u16, d_id: u8) -> RowId {
        Self::warehouse_ytd_row(w_id)
            .wrapping_mul(u64::from(DISTRICTS_PER_WAREHOUSE))
            .wrapping_add(u64::from(d_id).wrapping_sub(1))
    }

    /// The WAREHOUSE rows `snapshot` sees, each with its `w_ytd` from its
    /// counter in the same snapshot (the row's own `w_ytd` is not kept
    /// current: payments add to the counter).
    pub fn warehouses_at(&self, snapshot: &Snapshot) -> Result<Vec<Warehouse>, TpccError> {
        let mut rows = Vec::new();
        self.warehouse.scan(snapshot, |_, w| rows.push(w.clone()));
        for w in &mut rows {
            w.w_ytd = self
                .warehouse_ytd
                .read(snapshot, Self::warehouse_ytd_row(w.w_id))
                .ok_or_else(|| TpccError::NotFound {
                    table: "warehouse_ytd",
                    key: format!("w={}", w.w_id),
                })?;
        }
        Ok(rows)
    }

    /// The DISTRICT rows `snapshot` sees, each with its `d_ytd` from its
    /// counter in the same snapshot.
    pub fn districts_at(&self, snapshot: &Snapshot) -> Result<Vec<District>, TpccError> {
        let mut rows = Vec::new();
        self.district.scan(snapshot, |_, d| rows.push(d.clone()));
        for d in &mut rows {
            d.d_ytd = self
                .district_ytd
                .read(snapshot, Self::district_ytd_row(d.d_w_id, d.d_id))
                .ok_or_else(|| TpccError::NotFound {
                    table: "district_ytd",
                    key: format!("w={} d={}", d.d_w_id, d.d_id),
                })?;
        }
        Ok(rows)
    }

    /// `w_ytd` of warehouse `w_id` as `txn` sees it.
    pub fn warehouse_ytd(&self, txn: &mut Transaction, w_id: u16) -> Result<Money, TpccError> {
        txn.read_counter(&self.warehouse_ytd, Self::warehouse_ytd_row(w_id))
            .ok_or_else(|| TpccError::NotFound {
                table: "warehouse_ytd",
                key: format!("w={w_id}"),
            })
    }

    /// `d_ytd` of district `(w_id, d_id)` as `txn` sees it.
    pub fn district_ytd(
        &self,
        txn: &mut Transaction,
        w_id: u16,
        d_id: u8,
    ) -> Result<Money, TpccError> {
        txn.read_counter(&self.district_ytd, Self::district_ytd_row(w_id, d_id))
            .ok_or_else(|| TpccError::NotFound {
                table: "district_ytd",
                key: format!("w={w_id} d={d_id}"),
            })
    }

    /// Inserts `row` in `txn` and adds its index entries (visible to others
    /// once `txn` commits; see [`OrderedIndex`]).
    pub fn insert<R: MvccRow>(&self, txn: &mut Transaction, row: R) -> Result<RowId, TpccError> {
        let entries = row.index_entries()?;
        let id = txn.insert(R::mvcc_table(self), row)?;
        for (index, key) in entries.into_iter().flatten() {
            self.index.get(index).insert(key, id);
        }
        Ok(id)
    }

    /// The visible row under the unique `key` of `index`, with its id.
    pub fn lookup<R: MvccRow>(
        &self,
        txn: &mut Transaction,
        index: IndexId,
        key: u64,
    ) -> Result<Option<(RowId, R)>, TpccError> {
        let Some(id) = self.index.get(index).get(key) else {
            return Ok(None);
        };
        Ok(txn.read(R::mvcc_table(self), id).map(|r| (id, r)))
    }

    /// `f` of the visible row under the unique `key` of `index`, with its id,
    /// without copying the row.
    pub fn lookup_with<R: MvccRow, T>(
        &self,
        txn: &mut Transaction,
        index: IndexId,
        key: u64,
        f: impl FnOnce(&R) -> T,
    ) -> Result<Option<(RowId, T)>, TpccError> {
        let Some(id) = self.index.get(index).get(key) else {
            return Ok(None);
        };
        Ok(txn.read_with(R::mvcc_table(self), id, f).map(|t| (id, t)))
    }

    /// Copies every row of `source` into this database, one committed
    /// transaction per table.
    pub fn copy_from(&self, source: &Database) -> Result<(), TpccError> {
        self.copy_table(&source.item)?;
        self.copy_table(&source.warehouse)?;
        self.copy_table(&source.district)?;
        self.copy_table(&source.customer)?;
        self.copy_table(&source.history)?;
        self.copy_table(&source.orders)?;
        self.copy_table(&source.new_order)?;
        self.copy_table(&source.order_line)?;
        self.copy_table(&source.stock)?;
        self.create_ytd_counters(source)
    }

    /// One counter per warehouse and per district, in key order, holding the
    /// loaded `w_ytd`/`d_ytd`.
    fn create_ytd_counters(&self, source: &Database) -> Result<(), TpccError> {
        let mut warehouses = Vec::new();
        source
            .warehouse
            .scan(|_, w| warehouses.push((w.w_id, w.w_ytd)));
        let mut districts = Vec::new();
        source
            .district
            .scan(|_, d| districts.push(((d.d_w_id, d.d_id), d.d_ytd)));
        warehouses.sort_unstable();
        districts.sort_unstable();
        let mut txn = self.txn.begin(Isolation::Snapshot)?;
        for (w_id, ytd) in warehouses {
            let row = txn.create_counter(&self.warehouse_ytd, ytd)?;
            dense(row, Self::warehouse_ytd_row(w_id), "warehouse_ytd")?;
        }
        for ((w_id, d_id), ytd) in districts {
            let row = txn.create_counter(&self.district_ytd, ytd)?;
            dense(row, Self::district_ytd_row(w_id, d_id), "district_ytd")?;
        }
        txn.commit()?;
        Ok(())
    }

    fn copy_table<R: MvccRow>(&self, source: &crate::table::Table<R>) -> Result<(), TpccError> {
        let mut rows = Vec::new();
        source.scan(|_, row| rows.push(row.clone()));
        let mut txn = self.txn.begin(Isolation::Snapshot)?;
        for row in rows {
            self.insert(&mut txn, row)?;
        }
        txn.commit()?;
        Ok(())
    }
}

/// Checks that a counter landed on the row id its key maps to (a load with
/// a missing warehouse or district would shift every later one).
fn dense(row: RowId, expected: RowId, table: &'static str) -> Result<(), TpccError> {
    if row == expected {
        return Ok(());
    }
    Err(TpccError::NotFound {
        table,
        key: format!("counter row {expected} (created as row {row}: keys are not dense)"),
    })
}

/// Generates a database with the 2PL loader and copies it into an MVCC one.
pub fn load_mvcc(
    config: &LoadConfig,
    progress: &(dyn Fn(&LoadProgress) + Sync),
) -> Result<(MvccDatabase, LoadReport), TpccError> {
    let (source, report) = load(config, progress)?;
    let db = MvccDatabase::new(config.warehouses, DatabaseConfig::default());
    db.copy_from(&source)?;
    Ok((db, report))
}
