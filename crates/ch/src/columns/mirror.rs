//! Column mains of the CH database's row tables, kept current by merges,
//! and the per-query deltas on top of them: the analytical side of "one
//! storage for both workloads" (issue 16).
//!
//! TPC-C's transactions write MVCC row tables (`maestro_txn::Table`, the
//! write-optimized part, with the OLC indexes over row ids). For the
//! analytical queries each row table also has a **column main**: the
//! column table of the rows one snapshot (`Mains::ts`) saw, built by a
//! merge. A query at snapshot `S` reads that main plus a **delta**: the
//! table's change journal (`Table::track_changes`) names the rows written
//! by transactions committed in `(Mains::ts, S]`; their main positions are
//! deleted and their versions visible at `S` appended — the SQL store's
//! [`Delta`] layout, so the SQL engine's scans, filters and joins read both
//! parts unchanged. This is the dual format of Oracle Database In-Memory
//! (Lahiri et al., ICDE 2015: row store the authority, column units
//! invalidated by journaled changes and repopulated) rather than HANA's
//! rows-move-into-the-main: the row table keeps every row, so a
//! transaction never reads columns and its indexes never change.
//!
//! A merge ([`ColumnMirror::merge_if_due`]) folds a table's delta into a
//! new main (O(table), columnar copies), installs the new mains and
//! forgets the journal entries they include; it runs on whichever client
//! finds it due, one at a time, beside the queries.
//!
//! Protocol (why a query's main and delta describe exactly snapshot `S`):
//! - a reader, *holding the `current` lock*, takes the mains `M`, then its
//!   snapshot `S`, then copies every table's journal range `(M.ts, S]`;
//! - a merge builds new mains from its own snapshot `M'` outside the lock,
//!   then, holding the lock, installs them and forgets entries `≤ M'.ts`.
//!
//! A reader that locked before the install copied its range before the
//! entries were forgotten; one that locked after reads `M'` and takes `S`
//! after `M'` was taken, so `S ≥ M'.ts` (snapshots never go back in time).
//! The journal holds every write a snapshot sees (`txn/src/journal.rs`), so
//! `(M.ts, S]` misses none. The reader's snapshot keeps the versions it
//! reads from GC until the query drops it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use maestro_sql::store::LoadedTable;
use maestro_storage::column::Delta;
use maestro_tpcc::mvcc::MvccDatabase;
use maestro_txn::{RowId, Snapshot, Table, Timestamp};
use parking_lot::Mutex;

use super::convert::{ColumnRow, build};
use super::view::{ColumnView, ViewTable};
use crate::db::ChDatabase;

/// Journal entries (rows written) past which a merge is due: guessed —
/// about a second of TPC-C at 2 warehouses on 2 cores, and small enough
/// that building a query's deltas (one row read per entry) stays well
/// below the query's scans.
pub const MERGE_CHANGES_MIN: usize = 20_000;

/// No main position (a row inserted after the main's snapshot).
const NOT_IN_MAIN: u32 = u32::MAX;

/// The column mains of the CH database and what keeps them current.
pub struct ColumnMirror {
    tracked: Vec<Box<dyn Tracked>>,
    /// The mains queries start from; see the module docs for the lock.
    current: Mutex<Arc<Mains>>,
    /// Held by the one merge that runs.
    merging: Mutex<()>,
    /// SUPPLIER, NATION and REGION (read-only: built once).
    fixed: Vec<Arc<ViewTable>>,
    merges: AtomicU64,
}

/// Every tracked table's main, all from one snapshot.
struct Mains {
    ts: Timestamp,
    /// In `ColumnMirror::tracked`'s order.
    tables: Vec<Arc<Main>>,
}

/// One table's main: its column table and where its rows came from.
struct Main {
    table: LoadedTable,
    /// The row id of each main position.
    row_ids: Vec<RowId>,
    /// The main position of each row id below its length (`NOT_IN_MAIN`:
    /// none).
    position: Vec<u32>,
}

/// What one merge did.
#[derive(Debug, Clone, Copy)]
pub struct MergeReport {
    /// Tables given a new main.
    pub tables: usize,
    /// Journal entries the new mains include.
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
        let tables = tracked
            .iter()
            .map(|table| {
                let (loaded, row_ids) = table.rows(&snapshot, None)?;
                Ok(Arc::new(Main::new(loaded, row_ids)))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let ch = &db.tables;
        let fixed = vec![
            Arc::new(ViewTable::main(build("supplier", &ch.suppliers)?)),
            Arc::new(ViewTable::main(build("nation", &ch.nations)?)),
            Arc::new(ViewTable::main(build("region", &ch.regions)?)),
        ];
        Ok(ColumnMirror {
            tracked,
            current: Mutex::new(Arc::new(Mains {
                ts: snapshot.read_ts(),
                tables,
            })),
            merging: Mutex::new(()),
            fixed,
            merges: AtomicU64::new(0),
        })
    }

    /// The tables as a new snapshot sees them: each tracked table's main
    /// and its delta, WAREHOUSE and DISTRICT read whole (a few rows, and
    /// their YTD columns are counters), the fixed CH tables.
    pub fn view(&self, db: &ChDatabase) -> Result<ColumnView, String> {
        let (mains, snapshot, changed) = {
            let current = self.current.lock();
            let snapshot = snapshot_of(&db.tpcc)?;
            let changed: Vec<Vec<RowId>> = self
                .tracked
                .iter()
                .map(|t| t.changed(current.ts, snapshot.read_ts()))
                .collect();
            (Arc::clone(&current), snapshot, changed)
        };
        let taken_at = Instant::now();
        let mut tables = HashMap::new();
        for ((t, main), changed) in self.tracked.iter().zip(&mains.tables).zip(&changed) {
            let table = Arc::new(main.with_changes(t.as_ref(), &snapshot, changed)?.0);
            if t.name() == "orders" {
                // BenchBase's texts name ORDERS `oorder` (DuckDB gets a view).
                tables.insert("oorder".to_string(), Arc::clone(&table));
            }
            tables.insert(t.name().to_string(), table);
        }
        let (warehouse, district) = counted_tables(&db.tpcc, &snapshot)?;
        tables.insert("warehouse".into(), Arc::new(ViewTable::main(warehouse)));
        tables.insert("district".into(), Arc::new(ViewTable::main(district)));
        for t in &self.fixed {
            tables.insert(t.name().to_string(), Arc::clone(t));
        }
        let delta_rows = changed.iter().map(Vec::len).sum();
        Ok(ColumnView::new(snapshot, taken_at, tables, delta_rows))
    }

    /// Journal entries not yet in a main (what the next merge folds).
    pub fn pending_changes(&self) -> usize {
        self.tracked.iter().map(|t| t.recorded()).sum()
    }

    /// Merges done so far.
    pub fn merges(&self) -> u64 {
        self.merges.load(Ordering::Relaxed)
    }

    /// Folds every table's delta into a new main when at least
    /// `changes_min` changes are pending and no other merge runs; `None`
    /// when it did not merge.
    pub fn merge_if_due(
        &self,
        db: &ChDatabase,
        changes_min: usize,
    ) -> Result<Option<MergeReport>, String> {
        let Some(_merging) = self.merging.try_lock() else {
            return Ok(None);
        };
        let pending = self.pending_changes();
        if pending < changes_min.max(1) {
            return Ok(None);
        }
        let started = Instant::now();
        let old = Arc::clone(&self.current.lock());
        let snapshot = snapshot_of(&db.tpcc)?;
        let ts = snapshot.read_ts();
        let mut merged = 0;
        let mut changes = 0;
        let mut tables = Vec::with_capacity(old.tables.len());
        for (t, main) in self.tracked.iter().zip(&old.tables) {
            let changed = t.changed(old.ts, ts);
            if changed.is_empty() {
                tables.push(Arc::clone(main));
                continue;
            }
            changes += changed.len();
            merged += 1;
            tables.push(Arc::new(main.merged(t.as_ref(), &snapshot, &changed)?));
        }
        drop(snapshot);
        {
            let mut current = self.current.lock();
            *current = Arc::new(Mains { ts, tables });
            for t in &self.tracked {
                t.forget(ts);
            }
        }
        self.merges.fetch_add(1, Ordering::Relaxed);
        Ok(Some(MergeReport {
            tables: merged,
            changes,
            seconds: started.elapsed().as_secs_f64(),
        }))
    }
}

fn snapshot_of(db: &MvccDatabase) -> Result<Snapshot, String> {
    db.txn.snapshot().map_err(|e| e.to_string())
}

/// WAREHOUSE and DISTRICT at `snapshot`, with `w_ytd` / `d_ytd` from their
/// counters.
fn counted_tables(
    db: &MvccDatabase,
    snapshot: &Snapshot,
) -> Result<(LoadedTable, LoadedTable), String> {
    let mut warehouses = Vec::new();
    db.warehouse
        .scan(snapshot, |_, w| warehouses.push(w.clone()));
    for w in &mut warehouses {
        w.w_ytd = db
            .warehouse_ytd
            .read(snapshot, MvccDatabase::warehouse_ytd_row(w.w_id))
            .ok_or_else(|| format!("no w_ytd counter for warehouse {}", w.w_id))?;
    }
    let mut districts = Vec::new();
    db.district.scan(snapshot, |_, d| districts.push(d.clone()));
    for d in &mut districts {
        d.d_ytd = db
            .district_ytd
            .read(snapshot, MvccDatabase::district_ytd_row(d.d_w_id, d.d_id))
            .ok_or_else(|| format!("no d_ytd counter for district {}/{}", d.d_w_id, d.d_id))?;
    }
    Ok((
        build("warehouse", &warehouses)?,
        build("district", &districts)?,
    ))
}

impl Main {
    fn new(table: LoadedTable, row_ids: Vec<RowId>) -> Main {
        let len = row_ids.iter().max().map_or(0, |&r| r as usize + 1);
        let mut position = vec![NOT_IN_MAIN; len];
        for (p, &r) in row_ids.iter().enumerate() {
            position[r as usize] = p as u32;
        }
        Main {
            table,
            row_ids,
            position,
        }
    }

    fn position_of(&self, row: RowId) -> Option<u32> {
        usize::try_from(row)
            .ok()
            .and_then(|r| self.position.get(r))
            .copied()
            .filter(|&p| p != NOT_IN_MAIN)
    }

    /// This main with the rows `changed` (ascending) as `snapshot` sees
    /// them: their main positions deleted, their visible versions appended.
    /// Also returns the appended rows' ids.
    fn with_changes(
        &self,
        source: &dyn Tracked,
        snapshot: &Snapshot,
        changed: &[RowId],
    ) -> Result<(ViewTable, Vec<RowId>), String> {
        if changed.is_empty() {
            return Ok((ViewTable::main(self.table.clone()), Vec::new()));
        }
        let mut deleted: Vec<u32> = changed
            .iter()
            .filter_map(|&r| self.position_of(r))
            .collect();
        deleted.sort_unstable();
        let (appended, ids) = source.rows(snapshot, Some(changed))?;
        let main = &self.table.data;
        let delta = Delta::empty(main)
            .change(main, &deleted, &appended.data)
            .map_err(|e| format!("{}: {e}", source.name()))?;
        let nulls = self
            .table
            .nulls
            .iter()
            .zip(&appended.nulls)
            .map(|(m, a)| concat_masks(m, main.num_rows(), a, ids.len()))
            .collect();
        Ok((ViewTable::with_delta(&self.table, delta, nulls), ids))
    }

    /// The main after folding in the rows `changed` as `snapshot` sees them.
    fn merged(
        &self,
        source: &dyn Tracked,
        snapshot: &Snapshot,
        changed: &[RowId],
    ) -> Result<Main, String> {
        let (view, appended_ids) = self.with_changes(source, snapshot, changed)?;
        let delta = view.delta().expect("changes give a delta");
        let data = delta
            .merge(&self.table.data)
            .map_err(|e| format!("{}: {e}", source.name()))?;
        let deleted = delta.deleted();
        let main_rows = self.table.data.num_rows();
        // Kept main positions: every one not deleted (appended rows are
        // never deleted in a query's delta: only visible versions are
        // appended).
        let kept: Vec<u32> = {
            let mut dead = deleted.iter().copied().peekable();
            (0..main_rows as u32)
                .filter(|p| {
                    if dead.peek() == Some(p) {
                        dead.next();
                        false
                    } else {
                        true
                    }
                })
                .collect()
        };
        let mut row_ids: Vec<RowId> = kept.iter().map(|&p| self.row_ids[p as usize]).collect();
        row_ids.extend_from_slice(&appended_ids);
        let nulls = self
            .table
            .nulls
            .iter()
            .zip(view.nulls())
            .map(|(main_mask, view_mask)| match (main_mask, view_mask) {
                (None, None) => None,
                _ => {
                    let combined = view_mask.as_ref().expect("a main mask stays in the view");
                    let mut mask: Vec<bool> = kept.iter().map(|&p| combined[p as usize]).collect();
                    mask.extend_from_slice(&combined[main_rows..]);
                    mask.contains(&true).then(|| Arc::new(mask))
                }
            })
            .collect();
        let table = LoadedTable {
            data: Arc::new(data),
            nulls,
            ..self.table.clone()
        };
        Ok(Main::new(table, row_ids))
    }
}

/// The NULL mask over main rows then appended rows, by combined id
/// (`None`: no NULL in either).
fn concat_masks(
    main: &Option<Arc<Vec<bool>>>,
    main_rows: usize,
    appended: &Option<Arc<Vec<bool>>>,
    appended_rows: usize,
) -> Option<Arc<Vec<bool>>> {
    if main.is_none() && appended.is_none() {
        return None;
    }
    let mut mask = Vec::with_capacity(main_rows + appended_rows);
    match main {
        Some(m) => mask.extend_from_slice(m),
        None => mask.resize(main_rows, false),
    }
    match appended {
        Some(a) => mask.extend_from_slice(a),
        None => mask.resize(main_rows + appended_rows, false),
    }
    Some(Arc::new(mask))
}

/// A tracked row table, without its row type.
trait Tracked: Send + Sync {
    fn name(&self) -> &'static str;
    fn track(&self);
    fn changed(&self, after: Timestamp, upto: Timestamp) -> Vec<RowId>;
    fn forget(&self, upto: Timestamp);
    fn recorded(&self) -> usize;
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

    fn recorded(&self) -> usize {
        self.table.changes_recorded()
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
