//! Column mains of the CH database's row tables, kept current by merges,
//! and the per-query deltas on top of them: the analytical side of "one
//! storage for both workloads" (issue 16).
//!
//! TPC-C's transactions write MVCC row tables (`maestro_txn::Table`, the
//! write-optimized part, with the OLC indexes over row ids). For the
//! analytical queries each row table also has a **column main**: the
//! column table of the rows one snapshot (`Main::ts`) saw. A query at
//! snapshot `S` reads that main plus a **delta**: the table's change journal
//! (`Table::track_changes`) names the rows written by transactions
//! committed in `(Main::ts, S]`; their main positions are deleted and their
//! versions visible at `S` appended — the SQL store's `Delta` layout, so
//! the SQL engine's scans, filters and joins read both parts unchanged.
//! Each table's newest delta is cached and the next view extends it by the
//! rows written in between (`delta.rs`). This is the dual format of Oracle
//! Database In-Memory (Lahiri et al., ICDE 2015: row store the authority,
//! column units invalidated by journaled changes and repopulated) rather
//! than HANA's rows-move-into-the-main: the row table keeps every row, so a
//! transaction never reads columns and its indexes never change.
//!
//! A merge ([`ColumnMirror::merge_due`]) folds a table's delta into a new
//! main (O(table), columnar copies) once the delta is large against the
//! main ([`MergePolicy`]); `ch run` runs it from a background loop as a
//! default-priority scheduler job, one merge at a time. Each table has its
//! own main and snapshot timestamp.
//!
//! Protocol (why a query's main and delta describe exactly snapshot `S`).
//! Locks, always in this order: `merging`, then `state`, then a table's
//! `built` cache.
//! - A view, *holding `state`*, takes the current mains and its snapshot
//!   `S`, and extends every table's cached delta to `S` (a cache of an
//!   older main or of a later snapshot is not used: that table's delta is
//!   built from its main). Views thus extend caches in snapshot order, and
//!   each change is converted once.
//! - A merge, holding `merging`, takes its snapshot `M'` and extends the
//!   due tables' deltas to it *under `state`*, folds them into new mains
//!   outside it, then, under `state` again, installs them, drops those
//!   tables' caches and forgets the journal entries up to `M'`.
//!
//! Every journal read (a delta's extension) happens under `state`, so none
//! runs between an install and its forget; after them a view reads the new
//! main, took `S` after `M'` was taken, so `S ≥ M'` (snapshots never go
//! back in time), and reads `(M', S]` — still in the journal. Views of the
//! old main made before the install read the journal then, not after. The
//! journal holds every write a snapshot sees (`txn/src/journal.rs`), so no
//! range misses one. A view's snapshot keeps the versions it read from GC
//! until the query drops it. Tests: `tests/columns.rs` (answers equal the
//! hand-written plans' on main + delta, merged, and extended deltas).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use maestro_scheduler::Scheduler;

use maestro_sql::store::LoadedTable;
use maestro_tpcc::mvcc::MvccDatabase;
use maestro_txn::{RowId, Snapshot, Table, Timestamp};
use parking_lot::Mutex;

use super::convert::{ColumnRow, build};
use super::delta::{Built, Extend, Main};
use super::view::{ColumnView, ViewTable};
use crate::db::ChDatabase;

/// When a table's delta is folded into a new main: when the rows written
/// since its main reach `changes_min` and `1 / main_fraction` of the
/// main's rows. Extending a delta for a view copies it (its appended rows
/// and deletion list: O(delta) per view), a merge copies the whole table:
/// the fraction bounds the first against the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergePolicy {
    pub changes_min: usize,
    pub main_fraction: usize,
}

/// Journal entries below which a table is never merged: guessed (a delta
/// this small costs a query about a millisecond).
pub const MERGE_CHANGES_MIN: usize = 20_000;
/// A delta of 1/8 of its main is merged: guessed.
pub const MERGE_MAIN_FRACTION: usize = 8;

impl MergePolicy {
    /// What `ch run` uses.
    pub const DEFAULT: MergePolicy = MergePolicy {
        changes_min: MERGE_CHANGES_MIN,
        main_fraction: MERGE_MAIN_FRACTION,
    };
    /// Merge every table with any change (tests, a final fold).
    pub const ANY_CHANGE: MergePolicy = MergePolicy {
        changes_min: 1,
        main_fraction: usize::MAX,
    };

    fn due(self, pending: usize, main_rows: usize) -> bool {
        pending >= self.changes_min.max(1) && pending >= main_rows / self.main_fraction.max(1)
    }
}

/// The column mains of the CH database and what keeps them current.
pub struct ColumnMirror {
    tracked: Vec<Box<dyn Tracked>>,
    /// See the module docs for what this lock orders.
    state: Mutex<State>,
    /// Held by the one merge that runs.
    merging: Mutex<()>,
    /// Per tracked table, the newest delta built (extended by the next
    /// reader with a later snapshot on the same main).
    built: Vec<Mutex<Option<Built>>>,
    /// SUPPLIER, NATION and REGION (read-only: built once).
    fixed: Vec<Arc<ViewTable>>,
    merges: AtomicU64,
    /// Time spent merging and building queries' deltas (nanoseconds).
    merge_ns: AtomicU64,
    delta_ns: AtomicU64,
}

/// Where the column mirror's time went so far.
#[derive(Debug, Clone, Copy, Default)]
pub struct MirrorStats {
    /// Tables given a new main.
    pub merges: u64,
    pub merge_seconds: f64,
    /// Building queries' deltas from the journals (all queries).
    pub delta_seconds: f64,
    /// Allocated bytes of the current mains (columns, dictionaries, NULL
    /// masks, row-id maps), now. Mains a running query still reads after a
    /// merge replaced them are not counted.
    pub main_bytes: u64,
    /// Allocated bytes of the newest delta built per table, now.
    pub delta_bytes: u64,
}

struct State {
    /// Per tracked table (in `ColumnMirror::tracked`'s order), its main.
    current: Vec<Arc<Main>>,
}

/// What one call of [`ColumnMirror::merge_due`] did.
#[derive(Debug, Clone, Copy)]
pub struct MergeReport {
    /// Tables given a new main.
    pub tables: usize,
    /// Rows (written since their mains) the new mains include.
    pub changes: usize,
    pub seconds: f64,
}

impl ColumnMirror {
    /// Starts tracking the TPC-C tables' changes and builds every main from
    /// one snapshot. Call it before terminals run: writes committed while
    /// it starts could be missed (`Table::track_changes`).
    pub fn new(db: &ChDatabase) -> Result<ColumnMirror, String> {
        let t = &db.tpcc;
        let tracked: Vec<Box<dyn Tracked>> = vec![
            source("customer", &t.customer),
            source("history", &t.history),
            source("new_order", &t.new_order),
            source("orders", &t.orders),
            source("order_line", &t.order_line),
            source("item", &t.item),
            source("stock", &t.stock),
        ];
        for table in &tracked {
            table.track();
        }
        let snapshot = snapshot_of(&db.tpcc)?;
        let current = tracked
            .iter()
            .map(|table| Ok(Arc::new(Main::scanned(table.as_ref(), &snapshot)?)))
            .collect::<Result<Vec<_>, String>>()?;
        let ch = &db.tables;
        let fixed = vec![
            Arc::new(ViewTable::main(build("supplier", &ch.suppliers)?)),
            Arc::new(ViewTable::main(build("nation", &ch.nations)?)),
            Arc::new(ViewTable::main(build("region", &ch.regions)?)),
        ];
        Ok(ColumnMirror {
            state: Mutex::new(State { current }),
            built: tracked.iter().map(|_| Mutex::new(None)).collect(),
            tracked,
            merging: Mutex::new(()),
            fixed,
            merges: AtomicU64::new(0),
            merge_ns: AtomicU64::new(0),
            delta_ns: AtomicU64::new(0),
        })
    }

    /// The tables as a new snapshot sees them, every tracked table's delta
    /// brought to it now.
    ///
    /// Under the state lock, so views extend each table's cached delta in
    /// snapshot order: every change is converted to columns once, by the
    /// first view after it, whatever the number of clients (a view of an
    /// older snapshot than the cache's would rebuild its delta from the
    /// main).
    pub fn view<'m>(&'m self, db: &'m ChDatabase) -> Result<ColumnView<'m>, String> {
        let state = self.state.lock();
        let mains = state.current.clone();
        let snapshot = snapshot_of(&db.tpcc)?;
        let mut rows = 0;
        let tables = mains
            .iter()
            .enumerate()
            .map(|(i, main)| {
                let (table, n) = self.table_at(i, main, &snapshot)?;
                rows += n;
                Ok(table)
            })
            .collect::<Result<Vec<_>, String>>()?;
        drop(state);
        Ok(ColumnView::new(self, &db.tpcc, snapshot, tables, rows))
    }

    /// The names of the tracked tables, in the mirror's order.
    pub(crate) fn tracked_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tracked.iter().map(|t| t.name())
    }

    pub(crate) fn fixed(&self) -> &[Arc<ViewTable>] {
        &self.fixed
    }

    /// Tracked table `i` as `snapshot` sees it: `main` and the delta of the
    /// rows written since; also the number of rows the delta came from.
    pub(crate) fn table_at(
        &self,
        i: usize,
        main: &Arc<Main>,
        snapshot: &Snapshot,
    ) -> Result<(Arc<ViewTable>, usize), String> {
        self.with_built(i, main, snapshot, |b, rows| (Arc::clone(&b.table), rows))
    }

    /// Calls `f` with tracked table `i` on `main` as `snapshot` sees it and
    /// the journal rows read to get there: the cached delta extended in
    /// place when it is of this main and not newer than the snapshot, else
    /// one built from the main (cached unless an older snapshot's); the
    /// table read whole when a delta cannot hold its changes.
    fn with_built<T>(
        &self,
        i: usize,
        main: &Arc<Main>,
        snapshot: &Snapshot,
        f: impl FnOnce(&Built, usize) -> T,
    ) -> Result<T, String> {
        let started = Instant::now();
        let source = self.tracked[i].as_ref();
        let mut cache = self.built[i].lock();
        let at = snapshot.read_ts();
        let (mut built, keep) = match cache.take() {
            Some(b) if Arc::ptr_eq(&b.main, main) && b.ts <= at => (b, true),
            // A snapshot older than the cached delta's, or another main:
            // not reached while every extension holds `state` (snapshots
            // come in order, installs drop the cache), but a delta built
            // from the main is right anyway; the cache is left as is.
            Some(b) if b.ts > at || !Arc::ptr_eq(&b.main, main) => {
                let fresh = Built::of(main);
                *cache = Some(b);
                (fresh, false)
            }
            _ => (Built::of(main), true),
        };
        let result = match built.extend(source, snapshot) {
            Ok(rows) => Ok(f(&built, rows)),
            Err(Extend::Failed(e)) => Err(e),
            Err(Extend::NewString) => {
                let whole = Arc::new(Main::scanned(source, snapshot)?);
                return Ok(f(&Built::of(&whole), 0));
            }
        };
        if keep && result.is_ok() {
            *cache = Some(built);
        }
        drop(cache);
        self.delta_ns
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        result
    }

    /// Rows written since their tables' mains, over all tables (journal
    /// entries, a row written twice counted twice).
    pub fn pending_changes(&self) -> usize {
        let current = self.state.lock().current.clone();
        self.tracked
            .iter()
            .zip(&current)
            .map(|(t, m)| t.recorded_after(m.ts))
            .sum()
    }

    /// Merges done so far (tables given a new main).
    pub fn merges(&self) -> u64 {
        self.merges.load(Ordering::Relaxed)
    }

    /// Merges and the time spent merging and building deltas so far.
    pub fn stats(&self) -> MirrorStats {
        // Relaxed: statistics.
        let secs = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64 / 1e9;
        let main_bytes: usize = self
            .state
            .lock()
            .current
            .iter()
            .map(|m| m.heap_bytes())
            .sum();
        let delta_bytes: usize = self
            .built
            .iter()
            .filter_map(|b| b.lock().as_ref().map(Built::heap_bytes))
            .sum();
        MirrorStats {
            merges: self.merges(),
            merge_seconds: secs(&self.merge_ns),
            delta_seconds: secs(&self.delta_ns),
            main_bytes: main_bytes as u64,
            delta_bytes: delta_bytes as u64,
        }
    }

    /// Folds the delta of every table `policy` finds due into a new main,
    /// unless another merge runs; `None` when nothing was merged.
    pub fn merge_due(
        &self,
        db: &ChDatabase,
        policy: MergePolicy,
    ) -> Result<Option<MergeReport>, String> {
        let Some(_merging) = self.merging.try_lock() else {
            return Ok(None);
        };
        let current = self.state.lock().current.clone();
        let due: Vec<usize> = (0..self.tracked.len())
            .filter(|&i| {
                let main = &current[i];
                policy.due(
                    self.tracked[i].recorded_after(main.ts),
                    main.table.data.num_rows(),
                )
            })
            .collect();
        if due.is_empty() {
            return Ok(None);
        }
        let started = Instant::now();
        // The deltas to fold, extended in snapshot order as views do (see
        // `view`); the folding itself runs outside the lock.
        let (ts, inputs) = {
            let _state = self.state.lock();
            let snapshot = snapshot_of(&db.tpcc)?;
            let inputs = due
                .iter()
                .map(|&i| self.with_built(i, &current[i], &snapshot, |b, _| (i, b.merge_input())))
                .collect::<Result<Vec<_>, String>>()?;
            (snapshot.read_ts(), inputs)
        };
        let mut changes = 0;
        let mut merged = Vec::with_capacity(due.len());
        for (i, input) in inputs {
            changes += input.changes();
            merged.push((i, Arc::new(input.merged()?)));
        }
        {
            let mut state = self.state.lock();
            for (i, main) in merged {
                // Views of the new main start from it; the old one's cached
                // delta is of no use now (and views of it have built their
                // deltas: nothing reads the old main's journal range again).
                *self.built[i].lock() = None;
                state.current[i] = main;
                self.tracked[i].forget(ts);
            }
        }
        self.merges.fetch_add(due.len() as u64, Ordering::Relaxed);
        self.merge_ns
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(Some(MergeReport {
            tables: due.len(),
            changes,
            seconds: started.elapsed().as_secs_f64(),
        }))
    }
}

/// What the merge loop does with the memory merges free.
///
/// A merge builds a table's new main beside the old one; the old one is
/// freed when no view reads it. glibc keeps such blocks resident when they
/// came from its heap (after its dynamic mmap threshold has risen past
/// them), so without a release the process grows by about twice the
/// mirror's own bytes (README, "Memory of the dual format").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapRelease {
    /// `malloc_trim` after each merge (`maestro_storage::heap`). Measured
    /// against `Never` (README): peak resident memory 0.79× [0.68–0.89]
    /// over 60 s and 0.65× after 600 s, for 0.97× the CH queries/hour.
    AfterMerge,
    /// Leave it to the allocator (the A/B's other side).
    Never,
}

/// How often [`ColumnMirror::merge_until`] looks for a due table: guessed
/// (a delta grows by a few thousand rows in this time at 2 warehouses).
pub const MERGE_POLL: Duration = Duration::from_millis(20);

impl ColumnMirror {
    /// The background merge loop: until `stop` is set or `deadline` passes,
    /// merges the due tables ([`MergePolicy::DEFAULT`]) as a
    /// default-priority job of `scheduler`, polling every [`MERGE_POLL`]
    /// when none is due; with [`HeapRelease::AfterMerge`], returns the
    /// heap's free pages to the kernel after each merge. A failed merge
    /// sets `stop` (so the run's clients stop too) and is returned.
    pub fn merge_until(
        &self,
        db: &ChDatabase,
        scheduler: &Scheduler,
        stop: &AtomicBool,
        deadline: Option<Instant>,
        release: HeapRelease,
    ) -> Result<(), String> {
        // Relaxed: a stop flag; nothing is published through it.
        while !stop.load(Ordering::Relaxed) && deadline.is_none_or(|d| Instant::now() < d) {
            match scheduler.install(|| self.merge_due(db, MergePolicy::DEFAULT)) {
                // The mains this merge replaced are freed once no view
                // reads them — most by the next merge: return their pages.
                Ok(Some(_)) => {
                    if release == HeapRelease::AfterMerge {
                        maestro_storage::heap::release_free_heap();
                    }
                }
                Ok(None) => std::thread::sleep(MERGE_POLL),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(format!("column mirror merge: {e}"));
                }
            }
        }
        Ok(())
    }
}

fn snapshot_of(db: &MvccDatabase) -> Result<Snapshot, String> {
    db.txn.snapshot().map_err(|e| e.to_string())
}

/// WAREHOUSE and DISTRICT at `snapshot`, with `w_ytd` / `d_ytd` from their
/// counters.
pub(crate) fn counted_tables(
    db: &MvccDatabase,
    snapshot: &Snapshot,
) -> Result<(LoadedTable, LoadedTable), String> {
    let warehouses = db.warehouses_at(snapshot).map_err(|e| e.to_string())?;
    let districts = db.districts_at(snapshot).map_err(|e| e.to_string())?;
    Ok((
        build("warehouse", &warehouses)?,
        build("district", &districts)?,
    ))
}

/// A tracked row table, without its row type.
pub(crate) trait Tracked: Send + Sync {
    fn name(&self) -> &'static str;
    fn track(&self);
    fn changed(&self, after: Timestamp, upto: Timestamp) -> Vec<RowId>;
    fn forget(&self, upto: Timestamp);
    fn recorded_after(&self, ts: Timestamp) -> usize;
    /// The rows among `ids` (`None`: all) that `snapshot` sees, as a column
    /// table, and their ids.
    fn rows(
        &self,
        snapshot: &Snapshot,
        ids: Option<&[RowId]>,
    ) -> Result<(LoadedTable, Vec<RowId>), String>;
}

struct Source<R> {
    name: &'static str,
    table: Arc<Table<R>>,
}

fn source<R: ColumnRow + Clone + Send + Sync>(
    name: &'static str,
    table: &Arc<Table<R>>,
) -> Box<dyn Tracked> {
    Box::new(Source {
        name,
        table: Arc::clone(table),
    })
}

impl<R: ColumnRow + Clone + Send + Sync> Tracked for Source<R> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn track(&self) {
        self.table.track_changes();
    }

    fn changed(&self, after: Timestamp, upto: Timestamp) -> Vec<RowId> {
        self.table
            .changed_rows(after, upto)
            .expect("tracked since the mirror was built")
    }

    fn forget(&self, upto: Timestamp) {
        self.table.forget_changes_upto(upto);
    }

    fn recorded_after(&self, ts: Timestamp) -> usize {
        self.table.changes_recorded_after(ts)
    }

    fn rows(
        &self,
        snapshot: &Snapshot,
        ids: Option<&[RowId]>,
    ) -> Result<(LoadedTable, Vec<RowId>), String> {
        let mut rows = Vec::new();
        let mut found = Vec::new();
        match ids {
            None => self.table.scan(snapshot, |id, r| {
                found.push(id);
                rows.push(r.clone());
            }),
            Some(ids) => {
                for &id in ids {
                    if let Some(r) = self.table.read(snapshot, id) {
                        found.push(id);
                        rows.push(r);
                    }
                }
            }
        }
        Ok((build(self.name, &rows)?, found))
    }
}
