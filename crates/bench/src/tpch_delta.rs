//! `maestro tpch throughput --storage delta`: the throughput test's query
//! streams as the spec's SQL text (`maestro_tpch::queries::sql_text`, each
//! query's drawn or planned parameters) on the SQL store's main + delta
//! (`maestro_sql::Store`), and its refresh stream as `Store::tpch_rf1/rf2`
//! transactions into the deltas.
//!
//! Merging: after each refresh function commits, the refresh stream's own
//! thread runs `merge_deltas(MergeScope::Due)` on the scheduler, as
//! `maestro serve` queues a due merge after a commit (`Engine::commit`):
//! a table whose delta grew past the store's merge threshold gets a new
//! main, the others keep their deltas. Queries keep running meanwhile (a
//! merge swaps a pointer; readers hold their snapshot).
//!
//! `--storage delta --queries plans` runs the hand-written plans on the same
//! store (`Store::tpch_database`). They read plain column tables, so each
//! refresh transaction builds its versions' plain tables before it commits
//! (`RefreshReaders::Plans`: no query waits for them, as with copy-on-write
//! versions), and the merge after it (`MergeScope::All`) swaps those very
//! tables in as the new mains.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use maestro_execution::{Executor, QueryProfile};
use maestro_scheduler::Scheduler;
use maestro_sql::store::MergeScope;
use maestro_sql::store::{RefreshReaders, StoreRefresh};
use maestro_sql::{Output, SqlError, Store};
use maestro_tpch::queries::{QueryParams, sql_text};
use maestro_tpch::{NewRows, RefreshFunction};

use crate::tpch::{Applied, RefreshStream, drive_refresh_stream};

/// One refresh function's input, generated before the run (as dbgen's
/// update files exist before a test, clause 5.3.4): set number and RF1's
/// new rows or RF2's order keys.
pub enum DeltaSet {
    Rf1(u32, NewRows),
    Rf2(u32, Vec<i64>),
}

impl DeltaSet {
    /// Refresh function `f`'s input of set `n` at scale factor `sf`.
    pub fn generate(f: RefreshFunction, sf: f64, n: u32) -> Result<DeltaSet, String> {
        Ok(match f {
            RefreshFunction::Rf1 => DeltaSet::Rf1(
                n,
                maestro_tpch::rf1_rows(sf, n).map_err(|e| format!("RF1 set {n}: {e}"))?,
            ),
            RefreshFunction::Rf2 => DeltaSet::Rf2(
                n,
                maestro_tpch::rf2_keys(sf, n).map_err(|e| format!("RF2 set {n}: {e}"))?,
            ),
        })
    }

    /// The function and set number.
    pub fn function(&self) -> (RefreshFunction, u32) {
        match self {
            DeltaSet::Rf1(n, _) => (RefreshFunction::Rf1, *n),
            DeltaSet::Rf2(n, _) => (RefreshFunction::Rf2, *n),
        }
    }

    /// The set as one transaction into `store`'s deltas, for `readers`.
    pub fn apply(&self, store: &Store, readers: RefreshReaders) -> Result<StoreRefresh, SqlError> {
        match self {
            DeltaSet::Rf1(_, rows) => store.tpch_rf1(rows, readers),
            DeltaSet::Rf2(_, keys) => store.tpch_rf2(keys, readers),
        }
    }
}

/// A store holding the loaded tables as mains with empty deltas.
pub(crate) fn load_store(db: &maestro_tpch::Database) -> Result<Store, String> {
    let store = Store::new();
    store.put_tpch(db).map_err(|e| e.to_string())?;
    Ok(store)
}

/// The sets of `pairs` refresh pairs, numbers taken from `next_set`.
pub(crate) fn prepare_sets(
    sf: f64,
    next_set: &AtomicU32,
    pairs: usize,
) -> Result<Vec<DeltaSet>, String> {
    let mut sets = Vec::with_capacity(2 * pairs);
    for _ in 0..pairs {
        // Relaxed: one run at a time uses the counter.
        let n = next_set.fetch_add(1, Ordering::Relaxed);
        sets.push(DeltaSet::generate(RefreshFunction::Rf1, sf, n)?);
        sets.push(DeltaSet::generate(RefreshFunction::Rf2, sf, n)?);
    }
    Ok(sets)
}

/// The refresh stream: each set one transaction into the deltas for
/// `readers`, then a merge (see the module doc).
pub(crate) fn refresh_stream(
    scheduler: &Scheduler,
    store: &Store,
    sets: &[DeltaSet],
    readers: RefreshReaders,
    start: Instant,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<RefreshStream, String> {
    drive_refresh_stream(sets, DeltaSet::function, start, progress, |set| {
        // On the scheduler: the plans' plain tables are built as fork-join
        // tasks before the commit.
        let r = scheduler
            .install(|| set.apply(store, readers))
            .map_err(|e| e.to_string())?;
        // The plans read no delta: every delta is merged at once (its
        // plain table is built already), not only when due.
        let merge = match readers {
            RefreshReaders::Plans => MergeScope::All,
            RefreshReaders::Sql => MergeScope::Due,
        };
        // On the scheduler: a merge builds its columns as fork-join tasks.
        // A failed merge leaves the tables as they were (their deltas stay
        // readable), as `maestro serve`'s background merge ignores it too.
        let merged = match scheduler.install(|| store.merge_deltas(merge)) {
            Ok(m) => format!("merged {:?}", m.merged),
            Err(e) => format!("failed ({e}), deltas kept"),
        };
        Ok::<_, String>(Applied {
            total: r.total,
            lineitem_changed: r.lineitem_changed,
            place: " into the deltas",
            note: format!("; merge ({merge:?}): {merged}"),
        })
    })
}

/// Query `qp` as SQL text in a read-only transaction of `store` (the
/// snapshot current when it starts); its operators' profile.
pub(crate) fn query(
    exec: &Executor,
    store: &Store,
    qp: &QueryParams,
) -> Result<QueryProfile, String> {
    let q = qp.query();
    let sql = sql_text(qp).map_err(|e| format!("Q{q}: {e}"))?;
    let mut t = store.begin().map_err(|e| e.to_string())?;
    let view = store.view(&mut t);
    let out = maestro_sql::execute_profiled(exec, &view, &sql);
    t.abort();
    match out.map_err(|e| format!("Q{q} ({qp}): {e}"))? {
        (Output::Rows(_), Some(profile)) => Ok(profile),
        _ => Err(format!("Q{q}: the statement gave no rows")),
    }
}
