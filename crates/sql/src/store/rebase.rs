//! Row-level write conflicts for the SQL tables: a write whose table another
//! transaction changed since this one's snapshot is applied on top of that
//! change when the two touch different rows, as PostgreSQL's REPEATABLE
//! READ does; only a row both changed is a conflict (40001).
//!
//! The unit of versioning stays the table (one catalog row per table, its
//! value an [`Entry`]): what changes is what happens when a write meets a
//! newer version than its snapshot's.
//!
//! ## The protocol
//! A write statement of transaction `T` computes its change — deleted
//! combined ids and appended rows — from the table as `T` sees it, `S`.
//! 1. It tries the plain write: `S`'s next version, first updater wins.
//! 2. Refused because another transaction `U` holds an uncommitted version:
//!    wait for `U` to finish (at most [`WRITE_WAIT_MAX`]; `T` may hold other
//!    tables meanwhile, so a wait-for cycle can form — the bound breaks it,
//!    with 40001), then go on with 3. Refused because a version newer than
//!    `T`'s snapshot committed: 3.
//! 3. Read the newest committed version `L` (past the snapshot,
//!    `Transaction::newest`). `L` must extend `S` — the same main, its delta
//!    `S`'s delta with more writes on top (deltas of one main only grow) and
//!    the same columns — so every combined id of `S` names the same row in
//!    `L`; else (a merge or DDL committed meanwhile) 40001. A row `T`
//!    deletes (or updates) that `L` deleted is a conflict: 40001. The keys
//!    are checked against `L` (a concurrent insert of the same key: 23505).
//! 4. Install `L`'s next version with the change, over exactly `L`
//!    (`Transaction::update_over`: refused if yet another version committed
//!    after `L`, and then back to 2). It carries an [`OwnView`]: `S`'s next
//!    version, which is what `T` reads of the table from now on — `T`'s
//!    snapshot stays its snapshot, `U`'s rows stay invisible to it.
//!
//! A statement whose transaction has done nothing else — autocommitted, or
//! the first of a block (`maestro serve` opens a block's transaction at its
//! first statement) — is better run again on a fresh snapshot than rebased:
//! it then sees the other write, and a later statement of its transaction
//! cannot meet that write's rows as a conflict. The caller asks for that
//! with [`Conflicts::Restart`]: 1 fails at once with 40001 and the caller
//! waits for the holder and starts over.
//!
//! After 4 `T` holds the table's catalog row, so its later writes of the
//! table meet no conflict: each computes its change on the view and applies
//! it to both the view and the installed version, mapping the view's
//! combined ids to the installed version's — the same below the snapshot's
//! id space, `T`'s own appended rows shifted by the rows others appended
//! meanwhile (the offset). When either version was merged by the write
//! (a new dictionary string, a delta past `DELTA_ROWS_MAX`) the ids no
//! longer correspond, and a later write of that table in `T` gets 40001.
//!
//! Others never read the view: it names its writer by `Transaction::id`,
//! which no other transaction has, and every version derived from this one
//! drops it. DDL on a table `T` wrote this way is refused in `T` (40001):
//! it would build on the view and lose the installed rows.
//!
//! Why the result is snapshot isolation's: `T`'s reads are its snapshot's
//! (plus its own writes); its write set and `U`'s are disjoint in rows (step
//! 3), so first-committer-wins holds per row; the keys are checked against
//! every committed row. Write skew across rows is possible, as under
//! PostgreSQL's REPEATABLE READ.

use std::sync::Arc;
use std::time::{Duration, Instant};

use maestro_storage::column::Table;
use maestro_txn::{Newest, RowId, Transaction, TxnError};

use super::{Entry, Store, durable, merge, txn_error, unique};
use crate::error::{ErrorKind, Result, SqlError};

/// How long a write waits for another transaction's uncommitted write of
/// its table before it gives up with 40001. Guessed, after PostgreSQL's
/// `deadlock_timeout` (1 s): it also ends a wait-for cycle.
pub const WRITE_WAIT_MAX: Duration = Duration::from_secs(1);

/// What a write does when its table has a newer version than its
/// snapshot's, committed or being written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflicts {
    /// Wait for the writer, then apply the change on top of the newest
    /// version when the rows differ (the module doc): for statements after
    /// others in their transaction.
    Rebase,
    /// Fail at once with 40001 (the holder, if any, left for
    /// `Transaction::take_blocker`): for a statement the caller can run
    /// again on a fresh snapshot because its transaction has done nothing
    /// else — an autocommitted one, or the first of a block — which then
    /// sees the other write instead of building on an older snapshot.
    Restart,
}

/// What the transaction that wrote a version over a newer one than its
/// snapshot's reads of the table (module doc).
#[derive(Debug)]
pub(crate) struct OwnView {
    /// The writer's `Transaction::id`.
    pub(super) writer: u64,
    /// The writer's snapshot's version with its own writes.
    pub(super) view: Arc<Entry>,
    /// The snapshot's combined id space: ids below it name the same rows
    /// in the view and in the installed version.
    base_space: u32,
    /// The writer's own appended rows sit this much further in the
    /// installed version than in the view; `None` once a write merged
    /// either of them.
    offset: Option<u32>,
}

fn conflict(message: impl Into<String>) -> SqlError {
    SqlError::new(ErrorKind::SerializationFailure, message)
}

fn concurrent_update() -> SqlError {
    conflict("could not serialize access due to concurrent update")
}

/// Combined ids a version's rows span (main and appended).
fn id_space(entry: &Entry) -> u32 {
    let space = entry
        .delta
        .as_ref()
        .map_or(entry.data.num_rows(), |d| d.id_space());
    u32::try_from(space).expect("combined ids are u32")
}

/// Whether `deleted` (ascending) holds a row `entry` no longer has.
fn deletes_a_deleted_row(entry: &Entry, deleted: &[u32]) -> bool {
    entry.live_delta().is_some_and(|d| {
        deleted
            .iter()
            .any(|id| d.deleted().binary_search(id).is_ok())
    })
}

/// Whether every combined id of `earlier` names the same row in `later`.
fn extends(later: &Entry, earlier: &Entry) -> bool {
    Arc::ptr_eq(&later.data, &earlier.data)
        && later.columns == earlier.columns
        && match (earlier.live_delta(), later.live_delta()) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(e), Some(l)) => l.extends(e),
        }
}

impl Store {
    /// Table `name`'s next version — the rows at combined ids `deleted`
    /// (strictly ascending, as the hidden row-id column gives them)
    /// removed, then `appended`'s rows appended — as seen by `txn`, applied
    /// on top of any version committed since its snapshot that touched
    /// other rows (module doc). A durable store records the change (by the
    /// rows' positions in the version it applies to), in the same
    /// transaction.
    pub(super) fn replace(
        &self,
        txn: &mut Transaction,
        view: &super::View,
        name: &str,
        deleted: Vec<u32>,
        appended: Table,
    ) -> Result<()> {
        let (row, seen) = view.entry(name)?;
        let appended = Arc::new(appended);
        if let Some(installed) = view.installed(name) {
            return self.replace_own(txn, row, seen, installed, &deleted, appended);
        }
        let (next, positions) = merge::next_version(seen, &deleted, &appended)?;
        let next = Arc::new(next);
        // The keys are checked against the version the write lands on: a
        // key the snapshot holds may have been freed by a later commit.
        let blocker = match txn.update(&self.tables, row, Arc::clone(&next)) {
            Ok(()) => {
                unique::check_unique(seen, &deleted, &appended)?;
                return self.written(txn, row, &next, positions, appended);
            }
            Err(e @ (TxnError::WriteConflict { .. } | TxnError::SnapshotTooOld { .. }))
                if view.conflicts() == Conflicts::Restart =>
            {
                return Err(txn_error(e));
            }
            Err(TxnError::WriteConflict { .. }) => txn.take_blocker(),
            Err(TxnError::SnapshotTooOld { .. }) => None,
            Err(e) => return Err(txn_error(e)),
        };
        let deadline = Instant::now() + WRITE_WAIT_MAX;
        if let Some(b) = blocker {
            wait_for(b, deadline)?;
        }
        self.rebase(txn, row, seen, next, &deleted, appended, deadline)
    }

    /// Steps 3 and 4 of the protocol, until the write lands or fails.
    #[allow(clippy::too_many_arguments)]
    fn rebase(
        &self,
        txn: &mut Transaction,
        row: RowId,
        seen: &Entry,
        view_next: Arc<Entry>,
        deleted: &[u32],
        appended: Arc<Table>,
        deadline: Instant,
    ) -> Result<()> {
        loop {
            let (latest, over) = match txn.newest(&self.tables, row) {
                Newest::Committed { value, ts } => (value, ts),
                Newest::Held(b) => {
                    wait_for(b, deadline)?;
                    continue;
                }
                Newest::Missing => {
                    return Err(conflict(format!(
                        "could not serialize access: table \"{}\" was dropped concurrently",
                        seen.name
                    )));
                }
                Newest::Own => panic!(
                    "table \"{}\": a refused write found its own version at the front",
                    seen.name
                ),
            };
            if !extends(&latest, seen) {
                return Err(conflict(format!(
                    "could not serialize access: table \"{}\" was merged or altered concurrently",
                    seen.name
                )));
            }
            if deletes_a_deleted_row(&latest, deleted) {
                return Err(concurrent_update());
            }
            unique::check_unique(&latest, deleted, &appended)?;
            let (mut next, positions) = merge::next_version(&latest, deleted, &appended)?;
            let ids_correspond =
                Arc::ptr_eq(&next.data, &latest.data) && Arc::ptr_eq(&view_next.data, &seen.data);
            next.own_view = Some(OwnView {
                writer: txn.id(),
                view: Arc::clone(&view_next),
                base_space: id_space(seen),
                offset: ids_correspond.then(|| id_space(&latest) - id_space(seen)),
            });
            let next = Arc::new(next);
            match txn.update_over(&self.tables, row, Arc::clone(&next), over) {
                Ok(()) => return self.written(txn, row, &next, positions, appended),
                // Another version committed or is being written after
                // `latest`: build on that one.
                Err(TxnError::WriteConflict { .. } | TxnError::SnapshotTooOld { .. }) => {
                    if let Some(b) = txn.take_blocker() {
                        wait_for(b, deadline)?;
                    }
                }
                Err(e) => return Err(txn_error(e)),
            }
        }
    }

    /// A later write of a table `txn` wrote over a newer version: the change
    /// goes to its view and, ids mapped, to the installed version, which
    /// `txn` holds.
    fn replace_own(
        &self,
        txn: &mut Transaction,
        row: RowId,
        seen: &Entry,
        installed: &Entry,
        deleted: &[u32],
        appended: Arc<Table>,
    ) -> Result<()> {
        let own = installed
            .own_view
            .as_ref()
            .expect("an installed version carries its writer's view");
        let Some(offset) = own.offset else {
            return Err(conflict(format!(
                "could not serialize access: table \"{}\" was merged by an earlier write of this \
                 transaction over a concurrent one; retry the transaction",
                seen.name
            )));
        };
        let mapped: Vec<u32> = deleted
            .iter()
            .map(|&id| if id < own.base_space { id } else { id + offset })
            .collect();
        if deletes_a_deleted_row(installed, &mapped) {
            return Err(concurrent_update());
        }
        unique::check_unique(installed, &mapped, &appended)?;
        let (view_next, _) = merge::next_version(seen, deleted, &appended)?;
        let (mut next, positions) = merge::next_version(installed, &mapped, &appended)?;
        let ids_correspond =
            Arc::ptr_eq(&next.data, &installed.data) && Arc::ptr_eq(&view_next.data, &seen.data);
        next.own_view = Some(OwnView {
            writer: own.writer,
            view: Arc::new(view_next),
            base_space: own.base_space,
            offset: ids_correspond.then_some(offset),
        });
        let next = Arc::new(next);
        txn.update(&self.tables, row, Arc::clone(&next))
            .map_err(txn_error)?;
        self.written(txn, row, &next, positions, appended)
    }

    /// After a write installed `next`: the durable record of its change and
    /// the background merge's request.
    fn written(
        &self,
        txn: &mut Transaction,
        row: RowId,
        next: &Entry,
        positions: Vec<u32>,
        appended: Arc<Table>,
    ) -> Result<()> {
        if next
            .live_delta()
            .is_some_and(|d| d.size() >= merge::merge_rows_min(&next.data))
        {
            self.request_merge();
        }
        let change = durable::Change {
            table: row,
            seq: next.seq,
            deleted: positions,
            appended,
        };
        self.log_change(txn, change)
    }
}

/// Waits for `blocker` until `deadline`; 40001 if it is still running then.
fn wait_for(blocker: maestro_txn::Blocker, deadline: Instant) -> Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if blocker.wait(left, || false) {
        Ok(())
    } else {
        Err(conflict(format!(
            "could not serialize access: another transaction's write of the table did not \
             finish within {} ms",
            WRITE_WAIT_MAX.as_millis()
        )))
    }
}
