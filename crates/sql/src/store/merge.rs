//! Main + delta for the SQL tables (issue 16 part 1): a write goes into the
//! table's delta in O(delta) — the main is shared by the new version, not
//! copied — and a merge folds the delta into a new main.
//!
//! ## When a table merges
//! - **In the background** ([`Store::merge_deltas`]): a write that leaves a
//!   delta of at least [`merge_rows_min`] rows raises the store's merge
//!   request; the server runs the merge as a scheduler job at the lowest
//!   priority after the commit (`maestro_server::Engine`). `CALL
//!   maestro.merge()` runs it at once.
//! - **By the write itself** when the delta would pass
//!   [`DELTA_ROWS_MAX`] rows (large bulk writes, or a background merge that
//!   cannot keep up), or when a write brings a string a dictionary column's
//!   main lacks (the dictionary must grow, and codes stay sorted): the
//!   write builds the merged table, as every write did before deltas.
//!
//! ## The background merge's protocol
//! 1. Read the table's entry `E = (main M, delta D)` from a fresh snapshot.
//! 2. Build `M' = D.merge(M)` — O(table), no lock held, no write: readers
//!    and writers go on with `E` and its successors meanwhile — and the
//!    column statistics of `M'` for the columns whose statistics `M` had
//!    (the optimizer's) and the sorted indexes of the columns the table
//!    declares indexes on (`index.rs`), so no query pays for them after
//!    the swap.
//! 3. In a new, short transaction read the entry again, `E2 = (M2, D2)`.
//!    If `M2` is not `M` (another merge or a merging write won), give up.
//!    Else `D2` extends `D` (deltas of one main only grow: appended rows are
//!    marked deleted, never removed), so the writes committed during step 2
//!    carry over: `D2.rebase(D, M')`. Update the entry to `(M', rebased)`
//!    and commit: the pointer swap.
//!
//! A writer whose statement runs while step 3's transaction holds the
//! entry conflicts (first updater wins; the table is the unit of
//! versioning): inside a transaction block it gets 40001, autocommitted
//! the server waits for step 3 and runs it again (`maestro_server`); step 3
//! is O(delta), so that window is short.
//! If a write commits between steps 1 and 3 the merge still lands (the
//! rebase); if a write holds the entry uncommitted at step 3, the merge
//! gives up and is requested again by the next write.
//! The logical content and the change sequence (`Entry::seq`) do not
//! change: a merged entry is logged like any catalog row (without data),
//! and recovery rebuilds tables from their bases and changes as before.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use maestro_storage::column::{Column, ColumnError, Delta, DeltaError, MergePlan, Table};
use maestro_txn::RowId;

use super::rebase::MergeOrigin;
use super::{Entry, Store, txn_error};
use crate::error::{Result, SqlError};

/// Delta rows (appended rows + deletion marks) past which a write merges
/// by itself instead of growing the delta: bounds what every scan reads
/// through the slower per-value path. Guessed: at 1 M rows the delta's
/// copy per write (O(delta)) costs about what merging a TPC-H SF 1
/// ORDERS table does.
pub const DELTA_ROWS_MAX: usize = 1 << 20;

/// Delta rows from which a background merge is requested, at least; a
/// larger main waits for a larger delta ([`merge_rows_min`]). Guessed.
pub const MERGE_ROWS_MIN: usize = 1024;

/// Delta rows from which a table with `main`'s rows is worth merging in
/// the background: 1/64 of the main, at least [`MERGE_ROWS_MIN`]
/// (the merge copies the whole table; the delta slows scans by its share).
pub fn merge_rows_min(main: &Table) -> usize {
    (main.num_rows() / 64).max(MERGE_ROWS_MIN)
}

/// Which tables [`Store::merge_deltas`] merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeScope {
    /// Those whose delta reached [`merge_rows_min`] (the background merge).
    Due,
    /// Every table with a delta (`CALL maestro.merge()`).
    All,
}

/// What [`Store::merge_deltas`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MergeReport {
    /// Tables whose delta was folded into a new main.
    pub merged: Vec<String>,
    /// Delta rows folded, over all tables.
    pub delta_rows: usize,
    /// Tables left as they were, and why (a concurrent write held them, or
    /// another merge won).
    pub skipped: Vec<(String, String)>,
}

/// `entry`'s next version after deleting the rows at combined ids
/// `deleted` and appending `appended`, and the deleted rows' positions in
/// the table (for the durable log, whose changes address rows by position).
pub(super) fn next_version(
    entry: &Entry,
    deleted: &[u32],
    appended: &Table,
) -> Result<(Entry, Vec<u32>)> {
    let empty;
    let delta = match &entry.delta {
        Some(d) => d,
        None => {
            empty = Arc::new(Delta::empty(&entry.data));
            &empty
        }
    };
    let positions = delta.live_positions(deleted);
    let next = match delta.change(&entry.data, deleted, appended) {
        Ok(d) if d.size() <= DELTA_ROWS_MAX => Entry {
            delta_indexes: entry.extended_delta_indexes(&d),
            delta_flagged: Some(entry.delta_flagged_after(appended)),
            delta: Some(Arc::new(d)),
            ..entry.with_data_of(Arc::clone(&entry.data))
        },
        Ok(d) => {
            let data = d.merge(&entry.data).map_err(SqlError::store)?;
            entry.with_data(data)
        }
        Err(DeltaError::NewString { .. }) => {
            let data = delta
                .merge_change(&entry.data, deleted, appended)
                .map_err(SqlError::store)?;
            entry.with_data(data)
        }
        Err(e @ DeltaError::Invalid(_)) => return Err(SqlError::store(e)),
    };
    // A merged main: its declared indexes built by this write, not by
    // the next query.
    if !Arc::ptr_eq(&next.data, &entry.data) {
        next.build_indexes(&next.data);
    }
    Ok((next, positions))
}

/// `delta.merge(main)` with the columns built as scheduler fork-join tasks
/// when called on a worker (the background merge is a scheduler job), one
/// after another elsewhere.
fn merge_in_parallel(main: &Table, delta: &Delta) -> std::result::Result<Table, ColumnError> {
    let plan = delta.merge_plan();
    let columns = columns_of(main, delta, &plan, 0..main.num_columns());
    main.with_columns(columns?)
}

fn columns_of(
    main: &Table,
    delta: &Delta,
    plan: &MergePlan,
    range: std::ops::Range<usize>,
) -> std::result::Result<Vec<Column>, ColumnError> {
    if range.len() <= 1 {
        return range.map(|i| delta.merge_column(main, plan, i)).collect();
    }
    let mid = range.start + range.len() / 2;
    let (left, right) = maestro_scheduler::join(
        || columns_of(main, delta, plan, range.start..mid),
        || columns_of(main, delta, plan, mid..range.end),
    );
    let mut left = left?;
    left.extend(right?);
    Ok(left)
}

impl Entry {
    /// The table as one plain column table: the main when there is no
    /// delta, else main and delta merged — built once per version (its
    /// columns as fork-join tasks when called on a scheduler worker),
    /// shared by every reader of the version and by the merge that swaps
    /// this version's delta in. For readers that cannot read a delta (the
    /// hand-written TPC-H plans). A concurrent caller waits for the one
    /// building it, as a blocked worker (the slot is a scheduler-aware
    /// lock); a failed build fails every caller alike (same inputs).
    pub fn plain(&self) -> Result<Arc<Table>> {
        let Some(delta) = self.live_delta() else {
            return Ok(Arc::clone(&self.data));
        };
        let mut slot = self.plain.lock();
        let built = slot.get_or_insert_with(|| {
            merge_in_parallel(&self.data, delta)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        });
        built.clone().map_err(SqlError::store)
    }

    /// The next version (sequence + 1) over the main `data`, no delta.
    pub(super) fn with_data_of(&self, data: Arc<Table>) -> Entry {
        let merged_from = if Arc::ptr_eq(&data, &self.data) {
            self.merged_from.clone()
        } else {
            None
        };
        Entry {
            name: self.name.clone(),
            columns: self.columns.clone(),
            unique_columns: self.unique_columns.clone(),
            keys: self.keys.clone(),
            indexes: self.indexes.clone(),
            unique_indexes: self.unique_indexes.clone(),
            defaults: Arc::clone(&self.defaults),
            drawn: self.drawn.clone(),
            seq: self.seq + 1,
            data,
            null_masks: OnceLock::new(),
            def: OnceLock::new(),
            shape_token: OnceLock::new(),
            own_view: None,
            merged_from,
            plain: super::PlainSlot::default(),
            delta_indexes: Vec::new(),
            delta_flagged: None,
            delta: None,
        }
    }
}

impl Store {
    /// Whether a write asked for a background merge since the last call
    /// (and clears the request). SeqCst, as every access to the request:
    /// the server's merge start is a Dekker pair over it
    /// (`maestro_server::Engine::commit`).
    pub fn take_merge_request(&self) -> bool {
        self.merge_wanted.swap(false, Ordering::SeqCst)
    }

    /// Asks for a background merge (again): a caller that took a request
    /// it could not serve puts it back.
    pub fn request_merge(&self) {
        self.merge_wanted.store(true, Ordering::SeqCst);
    }

    /// Folds the delta of every table in `scope` into a new main (the
    /// protocol in the module doc). Readers and writers are never blocked;
    /// a table a writer holds is skipped (and the request raised again).
    pub fn merge_deltas(&self, scope: MergeScope) -> Result<MergeReport> {
        let mut report = MergeReport::default();
        let mut candidates: Vec<(RowId, Arc<Entry>)> = Vec::new();
        {
            let mut txn = self.begin()?;
            txn.scan(&self.tables, |row, e| {
                let due = match scope {
                    MergeScope::Due => merge_rows_min(&e.data),
                    MergeScope::All => 1,
                };
                if e.live_delta().is_some_and(|d| d.size() >= due) {
                    candidates.push((row, Arc::clone(e)));
                }
            });
            txn.abort();
        }
        for (row, entry) in candidates {
            let delta = entry.delta.as_ref().expect("a candidate has a delta");
            // A reader of plain tables may have built it already.
            let merged = entry.plain()?;
            // The statistics the optimizer used on the old main, computed
            // here rather than by the first query on the new one.
            for i in 0..merged.num_columns() {
                if entry.data.has_column_stats(i) {
                    merged.column_stats(i);
                }
            }
            // Likewise the declared indexes (an index declared after this
            // task read the entry is built by its first query instead).
            entry.build_indexes(&merged);
            match self.swap_in(row, &entry, delta, &merged) {
                Ok(()) => {
                    report.merged.push(entry.name.clone());
                    report.delta_rows += delta.size();
                }
                Err(why) => report.skipped.push((entry.name.clone(), why)),
            }
        }
        if !report.skipped.is_empty() {
            self.request_merge();
        }
        if !report.merged.is_empty() {
            // The mains earlier merges replaced are freed once no snapshot
            // reads them (version GC), by now most of them: give their
            // pages back to the kernel (glibc keeps freed blocks inside its
            // arenas resident; the column mirror does the same after each
            // merge, `maestro_storage::heap`).
            maestro_storage::heap::release_free_heap();
        }
        Ok(report)
    }

    /// Step 3: the entry again, the later writes rebased onto `merged`,
    /// the swap committed; `Err` says why the merge was given up.
    fn swap_in(
        &self,
        row: RowId,
        entry: &Entry,
        delta: &Delta,
        merged: &Arc<Table>,
    ) -> std::result::Result<(), String> {
        let mut txn = self.begin().map_err(|e| e.message)?;
        let Some(now) = txn.read(&self.tables, row) else {
            txn.abort();
            return Err("the table was dropped".into());
        };
        if !Arc::ptr_eq(&now.data, &entry.data) {
            txn.abort();
            return Err("the table was merged meanwhile".into());
        }
        let Some(later) = now.delta.as_ref() else {
            txn.abort();
            return Err("the table has no delta any more".into());
        };
        let rebased = match later.rebase(delta, merged) {
            Ok(d) => d,
            Err(e) => {
                txn.abort();
                return Err(e.to_string());
            }
        };
        // Same content, so the same change sequence.
        let next = Entry {
            seq: now.seq,
            delta: (!rebased.is_empty()).then(|| Arc::new(rebased)),
            merged_from: entry
                .delta
                .as_ref()
                .map(|folded| Arc::new(MergeOrigin::new(&entry.data, folded))),
            ..now.with_data_of(Arc::clone(merged))
        };
        if let Err(e) = txn.update(&self.tables, row, Arc::new(next)) {
            txn.abort();
            return Err(txn_error(e).message);
        }
        self.commit(txn).map_err(|e| e.message)
    }
}
