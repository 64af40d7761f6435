//! Row-level write conflicts for the SQL tables: two transactions writing
//! one table both commit when they touch different rows, as under
//! PostgreSQL's REPEATABLE READ; only a row both changed is a conflict
//! (40001), and neither waits for the other while its block runs.
//!
//! The unit of versioning stays the table (one catalog row per table, its
//! value an [`Entry`]); what makes conflicts per row is *when* and *on what*
//! a transaction installs its writes.
//!
//! ## Installed at commit
//! A write statement of transaction `T` computes its change — deleted
//! combined ids and appended rows — from the table as `T` reads it, and
//! keeps it (`pending.rs`): the version its snapshot read, `S`, the changes
//! in order, and `S` with the changes — what `T` reads of the table from
//! then on. The keys are checked against that view (early errors). Nothing
//! is written to the catalog, so no other writer waits for `T`.
//!
//! At `T`'s commit ([`Store::commit`]), for each table in catalog-row order:
//! 1. Read the newest committed version `L` (past the snapshot:
//!    `Transaction::newest`). If another transaction holds an uncommitted
//!    version — it is installing at its own commit, a short step — wait for
//!    it (at most [`WRITE_WAIT_MAX`]; committers install in one order, but
//!    the bound also covers tables a transaction holds for other reasons,
//!    below), then read again.
//! 2. `S`'s combined ids must name `L`'s rows ([`IdMap`]): `L` has `S`'s
//!    main and its delta extends `S`'s (deltas of one main only grow), or
//!    `L`'s main is a background merge of `S`'s main (`Entry::merged_from`:
//!    the delta it folded, so an id maps to its live position there, and
//!    rows appended after that delta follow the merged main). DDL changing
//!    the columns, a merge made by a write, or two merges in between: 40001.
//! 3. Replay the changes on `L`, ids mapped (`T`'s own appended rows follow
//!    `L`'s). A row `T` deletes (or updates) that `L` deleted is a
//!    conflict: 40001. The keys are checked against `L`'s rows (a
//!    concurrent insert of the same key: 23505).
//! 4. Install the result over exactly `L` (`Transaction::update_over`,
//!    refused if yet another version committed after `L`: back to 1), log
//!    the changes (durable store), then commit the transaction.
//!
//! **Nothing committed since.** When `L` is `S` itself, steps 2–3 would
//! rebuild exactly the view `T` reads (the same changes replayed on the
//! same version, every id naming the same row), and every statement
//! already checked its keys against those rows: the view is installed as
//! it is, with the positions the statements computed as the log's records
//! (one O(delta) rebuild less per table per commit).
//!
//! ## Holding a table
//! Some writes cannot wait for the commit and are installed at once: a
//! change that merges the table (a string its dictionary lacks, a delta past
//! `DELTA_ROWS_MAX`: the ids no longer correspond to `L`'s), and the pending
//! changes of a table before DDL on it in the same transaction. Those run
//! steps 1–4 at the statement and leave `T` holding the table's catalog row
//! until it ends — as do tables `T` created or altered. Later writes of a
//! held table go to it directly. When `L` was not `S`, the installed version
//! carries an [`OwnView`] — `S` with `T`'s changes, which `T` keeps reading
//! — and later writes apply to both, ids mapped by the offset (40001 once a
//! merge broke the mapping). Others never read the view: it names its
//! writer by `Transaction::id`, which no other transaction has, and every
//! version derived from this one drops it. DDL on a table held this way is
//! refused in `T` (40001): it would build on the view and lose the rows.
//!
//! Why the result is snapshot isolation's: `T`'s reads are its snapshot's
//! plus its own writes; its write set and every later-committed one are
//! disjoint in rows (step 3), so first-committer-wins holds per row; the
//! keys are checked against every committed row. Write skew across rows is
//! possible, as under PostgreSQL's REPEATABLE READ.

use std::sync::Arc;
use std::time::{Duration, Instant};

use maestro_storage::column::{Delta, Table};
use maestro_txn::{Newest, RowId, Transaction, TxnError};

use super::pending::{ChangeNotes, PendingChange, PendingTable};
use super::{Entry, Store, durable, merge, txn_error, unique};
use crate::error::{ErrorKind, Rerun, Result, SqlError};

/// How long a write waits for another transaction's uncommitted write of
/// its table before it gives up with 40001. Guessed, after PostgreSQL's
/// `deadlock_timeout` (1 s): it also ends a wait-for cycle.
pub const WRITE_WAIT_MAX: Duration = Duration::from_secs(1);

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

/// A statement's 40001 found before it kept anything: READ COMMITTED may
/// run it again ([`Rerun::OnFreshSnapshot`]).
fn rerunnable(mut e: SqlError) -> SqlError {
    if e.kind == ErrorKind::SerializationFailure {
        e.rerun = Rerun::OnFreshSnapshot;
    }
    e
}

fn concurrent_update() -> SqlError {
    conflict("could not serialize access due to concurrent update")
}

fn altered_concurrently(table: &str) -> SqlError {
    conflict(format!(
        "could not serialize access: table \"{table}\" was altered or merged twice concurrently"
    ))
}

/// Combined ids a version's rows span (main and appended).
pub(super) fn id_space(entry: &Entry) -> u32 {
    let space = entry
        .delta
        .as_ref()
        .map_or(entry.data.num_rows(), |d| d.id_space());
    u32::try_from(space).expect("combined ids are u32")
}

/// The rows of `base` that `seen` — `base` with a transaction's pending
/// writes on top (same main) — deletes: what those writes deleted. Empty
/// when the two do not share a main (a write that merged the table).
fn deleted_since(seen: &Entry, base: &Entry) -> Vec<u32> {
    if !Arc::ptr_eq(&seen.data, &base.data) {
        return Vec::new();
    }
    let (Some(now), space) = (seen.live_delta(), id_space(base)) else {
        return Vec::new();
    };
    let before = base.live_delta().map_or(&[][..], |d| d.deleted());
    now.deleted()
        .iter()
        .copied()
        .take_while(|&id| id < space)
        .filter(|id| before.binary_search(id).is_err())
        .collect()
}

/// Whether `deleted` (ascending) holds a row `entry` no longer has.
fn deletes_a_deleted_row(entry: &Entry, deleted: &[u32]) -> bool {
    entry.live_delta().is_some_and(|d| {
        deleted
            .iter()
            .any(|id| d.deleted().binary_search(id).is_ok())
    })
}

/// Where the background merge that built a version's main came from: the
/// main it replaced — by address, compared only with a main a live
/// snapshot holds, so the address cannot have been reused — and the delta
/// it folded.
#[derive(Debug)]
pub(crate) struct MergeOrigin {
    main_at: usize,
    main_rows: usize,
    folded: Arc<Delta>,
}

impl MergeOrigin {
    pub(super) fn new(main: &Arc<Table>, folded: &Arc<Delta>) -> MergeOrigin {
        MergeOrigin {
            main_at: Arc::as_ptr(main) as usize,
            main_rows: main.num_rows(),
            folded: Arc::clone(folded),
        }
    }

    /// Whether the merge replaced `main`.
    fn replaced(&self, main: &Arc<Table>) -> bool {
        Arc::as_ptr(main) as usize == self.main_at && main.num_rows() == self.main_rows
    }
}

/// How the combined ids of the version `base` a transaction read, and of its
/// own appended rows after them, name rows of a later version `latest`.
struct IdMap<'a> {
    base_space: u32,
    latest_space: u32,
    /// The background merge between the two: the delta it folded and the
    /// rows of the main it built.
    merge: Option<(&'a Delta, u32)>,
}

impl<'a> IdMap<'a> {
    /// `None` when `latest`'s ids do not follow from `base`'s: DDL, a merge
    /// by a write, or more than one merge in between.
    fn between(latest: &'a Entry, base: &Entry) -> Option<IdMap<'a>> {
        if latest.columns != base.columns {
            return None;
        }
        let merge = if Arc::ptr_eq(&latest.data, &base.data) {
            // Deltas of one main only grow.
            match (base.live_delta(), latest.live_delta()) {
                (None, _) => None,
                (Some(b), Some(l)) if l.extends(b) => None,
                _ => return None,
            }
        } else {
            let origin = latest.merged_from.as_ref()?;
            if !origin.replaced(&base.data) {
                return None;
            }
            let folded = &*origin.folded;
            // The merge folded a delta older or newer than the snapshot's:
            // either way one extends the other.
            if base
                .live_delta()
                .is_some_and(|seen| !folded.extends(seen) && !seen.extends(folded))
            {
                return None;
            }
            let rows = u32::try_from(latest.data.num_rows()).expect("combined ids are u32");
            Some((folded, rows))
        };
        Some(IdMap {
            base_space: id_space(base),
            latest_space: id_space(latest),
            merge,
        })
    }

    /// Ids of a version that extends the view's base (no merge between)
    /// by `offset` ids before the view's own appended rows.
    fn shifted(base_space: u32, offset: u32) -> IdMap<'static> {
        IdMap {
            base_space,
            latest_space: base_space + offset,
            merge: None,
        }
    }

    /// Row `id` of the transaction's view in `latest`; `None` when a
    /// commit the merge folded deleted it.
    fn map(&self, id: u32) -> Option<u32> {
        if id >= self.base_space {
            return Some(self.latest_space + (id - self.base_space));
        }
        let Some((folded, merged_rows)) = self.merge else {
            return Some(id);
        };
        let folded_space = u32::try_from(folded.id_space()).expect("combined ids are u32");
        if id >= folded_space {
            // Appended after what the merge folded: rebased after its rows.
            return Some(merged_rows + (id - folded_space));
        }
        let dead = folded.deleted();
        if dead.binary_search(&id).is_ok() {
            return None;
        }
        let dead_before = u32::try_from(dead.partition_point(|&d| d < id)).expect("u32 ids");
        Some(id - dead_before)
    }

    /// [`IdMap::map`] of ascending ids (ascending again); `None` if a row
    /// is gone.
    fn map_all(&self, ids: &[u32]) -> Option<Vec<u32>> {
        ids.iter().map(|&id| self.map(id)).collect()
    }

    /// The transaction's own rows sit this much further in `latest` than in
    /// its view — when the ids of the rows before them did not move.
    fn plain_offset(&self) -> Option<u32> {
        match self.merge {
            None => self.latest_space.checked_sub(self.base_space),
            Some(_) => None,
        }
    }
}

impl Store {
    /// Table `name`'s next version as `txn` sees it — the rows at combined
    /// ids `deleted` (strictly ascending, as the hidden row-id column gives
    /// them) removed, then `appended`'s rows appended — kept until `txn`
    /// commits, or written at once to a table `txn` holds (module doc).
    pub(super) fn replace(
        &self,
        txn: &mut Transaction,
        view: &super::View,
        name: &str,
        deleted: Vec<u32>,
        appended: impl Into<Arc<Table>>,
    ) -> Result<()> {
        self.replace_drawing(
            txn,
            view,
            name,
            deleted,
            appended.into(),
            ChangeNotes::default(),
        )
    }

    /// [`Store::replace`] with what the statement says about its change:
    /// the values it drew from the table's sequences, which the versions it
    /// makes record (`defaults.rs`, "Sequences"), and whether a taken key
    /// is 40001 rather than 23505 ([`ChangeNotes`]).
    pub(super) fn replace_drawing(
        &self,
        txn: &mut Transaction,
        view: &super::View,
        name: &str,
        deleted: Vec<u32>,
        appended: Arc<Table>,
        notes: ChangeNotes,
    ) -> Result<()> {
        let (row, seen) = view.entry(name)?;
        if let Some(installed) = view.installed(name) {
            let change = PendingChange {
                deleted,
                appended,
                notes,
                // Computed against the installed version there.
                positions: Vec::new(),
            };
            return self.replace_own(txn, row, seen, installed, change);
        }
        let (mut next, positions) = merge::next_version(seen, &deleted, &appended)?;
        next.raise_drawn(&notes.drawn);
        let mut newest = txn.newest(&self.tables, row);
        // A statement that fails from here on gives back the locks it took
        // (`row_locks.rs`, `release_since`).
        let mark = self.row_locks.mark(txn);
        if !matches!(newest, Newest::Own) {
            let give_up = || view.gives_up();
            // The key values it inserts too: an insert of a key another
            // running transaction inserted waits for it, then meets the
            // committed row below (23505, or 40001 for ON CONFLICT, which
            // READ COMMITTED runs again to skip or update that row).
            let keys = unique::key_hashes(seen, &appended);
            let locked = self
                .lock_rows(txn, row, seen, &deleted, &give_up)
                .and_then(|()| self.row_locks.lock_keys(txn, row, &keys, &give_up));
            if let Err(e) = locked {
                self.row_locks.release_since(txn, mark);
                return Err(e);
            }
            newest = self.newest_after_locking(txn, row);
        }
        if matches!(newest, Newest::Own) {
            // A table this transaction created, altered or installed:
            // written in place.
            unique::check_unique(seen, &deleted, &appended).map_err(|e| notes.key_error(e))?;
            let next = Arc::new(next);
            txn.update(&self.tables, row, Arc::clone(&next))
                .map_err(txn_error)?;
            return self.written(txn, row, &next, positions, appended);
        }
        if let Err(e) = self.fail_early(txn, row, newest, seen, &deleted, &appended) {
            self.row_locks.release_since(txn, mark);
            return Err(rerunnable(notes.key_error(e)));
        }
        let change = PendingChange {
            deleted,
            appended,
            notes,
            positions,
        };
        if Arc::ptr_eq(&next.data, &seen.data) {
            self.pending.record(txn, row, seen, next, change);
            return Ok(());
        }
        // The change merged the table: its ids no longer correspond to the
        // committed versions', so it is installed now, after the earlier
        // pending changes, and the table held.
        let mut table = self
            .pending
            .take(txn, row)
            .unwrap_or_else(|| PendingTable::new(seen));
        table.view = Arc::new(next);
        table.changes.push(change);
        self.install(txn, row, table)
    }

    /// The table's newest version once `txn` locked the rows it changes:
    /// read again, since a holder that finished before (waited for, or
    /// found finished) may have committed a change of them after the first
    /// read. A commit installing its version now hides the newest committed
    /// one (`fail_early` would check nothing): that short step is waited
    /// for.
    ///
    /// Waits while other transactions install versions of the table (each
    /// install is short), up to [`WRITE_WAIT_MAX`] in all: one install
    /// can follow another (TPC-C's New-Orders and Payments install
    /// `district` back to back), and a version still held when this
    /// returns hides the committed one, which [`Store::fail_early`] then
    /// cannot check — it refuses with 40001 instead of reading the
    /// snapshot's version as the newest (that let two New-Orders take one
    /// order id).
    fn newest_after_locking(&self, txn: &mut Transaction, row: RowId) -> Newest<Arc<Entry>> {
        let deadline = Instant::now() + WRITE_WAIT_MAX;
        loop {
            let newest = txn.newest(&self.tables, row);
            let Newest::Held(installing) = &newest else {
                return newest;
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !super::row_locks::wait_inactive(installing, left, || false) {
                return newest;
            }
        }
    }

    /// The version the table at `row` was read from by `txn`'s snapshot —
    /// its pending changes' base, else `seen` (the table as `txn` reads it,
    /// with no pending change): the ids below its id space name committed
    /// rows, the ones after are `txn`'s own appended rows.
    fn snapshot_base(&self, txn: &Transaction, row: RowId, seen: &Arc<Entry>) -> Arc<Entry> {
        self.pending
            .base(txn, row)
            .unwrap_or_else(|| Arc::clone(seen))
    }

    /// The version whose ids `txn`'s row locks of the table at `row` count
    /// in ([`Store::snapshot_base`]); `None` for a table `txn` holds (no
    /// locks: nobody else writes it).
    pub(super) fn locking_base(
        &self,
        txn: &mut Transaction,
        row: RowId,
        seen: &Arc<Entry>,
    ) -> Option<Arc<Entry>> {
        if matches!(txn.newest(&self.tables, row), Newest::Own) {
            return None;
        }
        Some(self.snapshot_base(txn, row, seen))
    }

    /// After `txn` locked the rows `locked` (ascending ids of `seen`, the
    /// table at `row` as it reads it) without changing them (`SELECT … FOR
    /// UPDATE`): a row a later commit changed is 40001, rerunnable, as for
    /// a write.
    pub(super) fn check_locked_rows(
        &self,
        txn: &mut Transaction,
        row: RowId,
        seen: &Arc<Entry>,
        locked: &[u32],
    ) -> Result<()> {
        let newest = self.newest_after_locking(txn, row);
        if matches!(newest, Newest::Own) {
            return Ok(());
        }
        let nothing = seen.data.empty_like();
        self.fail_early(txn, row, newest, seen, locked, &nothing)
            .map_err(rerunnable)
    }

    /// Locks the rows of the snapshot's version that `deleted` (ids of
    /// `seen`, the transaction's view) names (`row_locks.rs`).
    fn lock_rows(
        &self,
        txn: &Transaction,
        row: RowId,
        seen: &Arc<Entry>,
        deleted: &[u32],
        give_up: &dyn Fn() -> bool,
    ) -> Result<()> {
        let base = self.snapshot_base(txn, row, seen);
        let space = id_space(&base);
        // The transaction's own appended rows follow the base's; nobody
        // else can name them.
        let old_rows = &deleted[..deleted.partition_point(|&id| id < space)];
        self.row_locks.lock(txn, row, &base.data, old_rows, give_up)
    }

    /// The keys, and the conflicts the commit would meet with what is
    /// committed now, reported at the statement (as PostgreSQL reports
    /// them): a row this change deletes that a later commit deleted
    /// (40001), a key it inserts that the table holds — as the transaction
    /// reads it, or as committed since (23505; a key freed by a later commit
    /// can be taken) —, a merge or DDL since the snapshot (40001). The
    /// commit checks again against what it lands on (module doc, 2–3),
    /// which also catches a key this change shares with an earlier pending
    /// one of its transaction when others committed meanwhile. `newest`:
    /// the table's newest version as the statement found it.
    fn fail_early(
        &self,
        txn: &Transaction,
        row: RowId,
        newest: Newest<Arc<Entry>>,
        seen: &Arc<Entry>,
        deleted: &[u32],
        appended: &Table,
    ) -> Result<()> {
        let base = self.snapshot_base(txn, row, seen);
        let latest = match newest {
            Newest::Committed { value, .. } if !Arc::ptr_eq(&value, &base) => value,
            // Another transaction installs the table still: what it will
            // commit over cannot be checked now.
            Newest::Held(_) => return Err(concurrent_update()),
            // Nothing committed since the snapshot: the keys as it reads
            // them (its own pending rows included).
            _ => return unique::check_unique(seen, deleted, appended),
        };
        let Some(ids) = IdMap::between(&latest, &base) else {
            return Err(altered_concurrently(&seen.name));
        };
        // The snapshot's rows (the transaction's own appended rows are not
        // in `latest`), with those the transaction's earlier writes of the
        // table deleted: `latest` still holds them, so a key this write
        // appends again (a second UPDATE of one row in a block) is found
        // there otherwise — a false 23505.
        let space = id_space(&base);
        let mut old_rows: Vec<u32> = deleted.iter().copied().filter(|&id| id < space).collect();
        old_rows.extend(deleted_since(seen, &base));
        old_rows.sort_unstable();
        old_rows.dedup();
        let Some(old_rows) = ids.map_all(&old_rows) else {
            return Err(concurrent_update());
        };
        if deletes_a_deleted_row(&latest, &old_rows) {
            return Err(concurrent_update());
        }
        unique::check_unique(&latest, &old_rows, appended)
    }

    /// Starts a READ COMMITTED statement of `txn`: its snapshot moves to
    /// now, and the changes it has not installed are replayed on the
    /// versions that snapshot sees (steps 2–3, nothing installed), so the
    /// statement reads every commit so far with `txn`'s own writes on top.
    /// Its row locks keep the rows it changed from other writers, so the
    /// replay meets no changed row, except across a background merge the
    /// locks do not span (40001, `row_locks.rs`). A table `txn` holds
    /// (installed) reads as it did. On an error the changes stay as they
    /// were (the caller aborts).
    pub fn refresh_snapshot(&self, txn: &mut Transaction) -> Result<()> {
        txn.refresh_snapshot().map_err(txn_error)?;
        for row in self.pending.tables_of(txn) {
            let Some(table) = self.pending.take(txn, row) else {
                continue;
            };
            let rebased = match txn.read(&self.tables, row) {
                Some(latest) if Arc::ptr_eq(&latest, &table.base) => Ok(None),
                Some(latest) => match IdMap::between(&latest, &table.base) {
                    Some(ids) => replay(&latest, &ids, &table).map(|(view, changes)| {
                        Some(PendingTable {
                            base: Arc::clone(&latest),
                            view,
                            changes,
                        })
                    }),
                    None => Err(altered_concurrently(&table.base.name)),
                },
                None => Err(conflict(format!(
                    "could not serialize access: table \"{}\" was dropped concurrently",
                    table.base.name
                ))),
            };
            match rebased {
                Ok(Some(rebased)) => self.pending.put(txn, row, rebased),
                Ok(None) => self.pending.put(txn, row, table),
                Err(e) => {
                    self.pending.put(txn, row, table);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Installs `txn`'s pending changes of the table at `row`, if any, so
    /// that DDL in the same transaction builds on them.
    pub(super) fn install_pending(&self, txn: &mut Transaction, row: RowId) -> Result<()> {
        match self.pending.take(txn, row) {
            Some(table) => self.install(txn, row, table),
            None => Ok(()),
        }
    }

    /// Installs every pending change of `txn` (its commit, before the
    /// transaction itself commits).
    pub(super) fn install_all_pending(&self, txn: &mut Transaction) -> Result<()> {
        for (row, table) in self.pending.take_all(txn) {
            self.install(txn, row, table)?;
        }
        Ok(())
    }

    /// Steps 1–4 of the protocol for one table, until its changes land or
    /// fail.
    fn install(&self, txn: &mut Transaction, row: RowId, table: PendingTable) -> Result<()> {
        if table.changes.is_empty() {
            return Ok(());
        }
        let deadline = Instant::now() + WRITE_WAIT_MAX;
        let name = &table.base.name;
        loop {
            let (latest, over) = match txn.newest(&self.tables, row) {
                Newest::Committed { value, ts } => (value, ts),
                Newest::Held(b) => {
                    wait_for(b, deadline)?;
                    continue;
                }
                Newest::Missing => {
                    return Err(conflict(format!(
                        "could not serialize access: table \"{name}\" was dropped concurrently"
                    )));
                }
                Newest::Own => {
                    panic!("table \"{name}\": changes pending for a table the transaction holds")
                }
            };
            if Arc::ptr_eq(&latest, &table.base) {
                match self.install_view(txn, row, &table, over, deadline)? {
                    Installed::Done => return Ok(()),
                    Installed::Overtaken => continue,
                }
            }
            let Some(ids) = IdMap::between(&latest, &table.base) else {
                return Err(altered_concurrently(name));
            };
            let (installed, replayed) = replay(&latest, &ids, &table)?;
            let mut installed = Arc::try_unwrap(installed)
                .unwrap_or_else(|shared| panic!("{}: an installed version shared", shared.name));
            if !Arc::ptr_eq(&latest, &table.base) {
                let ids_correspond = Arc::ptr_eq(&installed.data, &latest.data)
                    && Arc::ptr_eq(&table.view.data, &table.base.data);
                installed.own_view = Some(OwnView {
                    writer: txn.id(),
                    view: Arc::clone(&table.view),
                    base_space: ids.base_space,
                    offset: ids.plain_offset().filter(|_| ids_correspond),
                });
            }
            let installed = Arc::new(installed);
            match txn.update_over(&self.tables, row, Arc::clone(&installed), over) {
                Ok(()) => {
                    for (k, change) in replayed.into_iter().enumerate() {
                        self.log_change(
                            txn,
                            durable::Change {
                                table: row,
                                seq: latest.seq + 1 + k as u64,
                                deleted: change.positions,
                                appended: change.appended,
                            },
                        )?;
                    }
                    self.request_merge_if_due(&installed);
                    return Ok(());
                }
                // Another version committed or is being installed after
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

    /// Step 4 alone, when nothing committed since the snapshot (the newest
    /// version is `table.base`, committed at `over`): replaying the changes
    /// on it would build exactly `table.view` — the same changes on the same
    /// version, each id naming the same row — with the keys already checked
    /// against those very rows at each statement (`fail_early` found no
    /// newer commit), so the view is installed as it is, and the positions
    /// the statements computed are the durable records'. Saves a rebuild of
    /// the delta's appended rows (O(delta)) per table per commit.
    fn install_view(
        &self,
        txn: &mut Transaction,
        row: RowId,
        table: &PendingTable,
        over: u64,
        deadline: Instant,
    ) -> Result<Installed> {
        debug_assert_eq!(
            table.view.seq,
            table.base.seq + table.changes.len() as u64,
            "table {}: a pending view is its base and one version per change",
            table.base.name
        );
        match txn.update_over(&self.tables, row, Arc::clone(&table.view), over) {
            Ok(()) => {}
            // Another version committed or is being installed meanwhile:
            // the caller replays on it.
            Err(TxnError::WriteConflict { .. } | TxnError::SnapshotTooOld { .. }) => {
                if let Some(b) = txn.take_blocker() {
                    wait_for(b, deadline)?;
                }
                return Ok(Installed::Overtaken);
            }
            Err(e) => return Err(txn_error(e)),
        }
        for (k, change) in table.changes.iter().enumerate() {
            self.log_change(
                txn,
                durable::Change {
                    table: row,
                    seq: table.base.seq + 1 + k as u64,
                    deleted: change.positions.clone(),
                    appended: Arc::clone(&change.appended),
                },
            )?;
        }
        self.request_merge_if_due(&table.view);
        Ok(Installed::Done)
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
        change: PendingChange,
    ) -> Result<()> {
        let PendingChange {
            deleted,
            appended,
            notes,
            positions: _,
        } = change;
        let (deleted, drawn) = (deleted.as_slice(), notes.drawn.as_slice());
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
        let mapped = IdMap::shifted(own.base_space, offset)
            .map_all(deleted)
            .expect("no merge: every id maps");
        if deletes_a_deleted_row(installed, &mapped) {
            return Err(concurrent_update());
        }
        unique::check_unique(installed, &mapped, &appended).map_err(|e| notes.key_error(e))?;
        let (mut view_next, _) = merge::next_version(seen, deleted, &appended)?;
        view_next.raise_drawn(drawn);
        let (mut next, positions) = merge::next_version(installed, &mapped, &appended)?;
        next.raise_drawn(drawn);
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
        self.request_merge_if_due(next);
        let change = durable::Change {
            table: row,
            seq: next.seq,
            deleted: positions,
            appended,
        };
        self.log_change(txn, change)
    }

    /// Queues a background merge when `next` left a delta worth merging.
    fn request_merge_if_due(&self, next: &Entry) {
        if next
            .live_delta()
            .is_some_and(|d| d.size() >= merge::merge_rows_min(&next.data))
        {
            self.request_merge();
        }
    }
}

/// Steps 2–3 of the protocol: `table`'s changes replayed on `latest`, ids
/// mapped by `ids`; the version they build and the changes as replayed
/// (ids of `latest`'s versions, the positions they deleted there).
fn replay(
    latest: &Arc<Entry>,
    ids: &IdMap,
    table: &PendingTable,
) -> Result<(Arc<Entry>, Vec<PendingChange>)> {
    let name = &table.base.name;
    let mut installed = Arc::clone(latest);
    let mut replayed = Vec::with_capacity(table.changes.len());
    for change in &table.changes {
        if !Arc::ptr_eq(&installed.data, &latest.data) {
            return Err(conflict(format!(
                "could not serialize access: table \"{name}\" was merged by this \
                 transaction's write over a concurrent one; retry the transaction"
            )));
        }
        let Some(mapped) = ids.map_all(&change.deleted) else {
            return Err(concurrent_update());
        };
        if deletes_a_deleted_row(&installed, &mapped) {
            return Err(concurrent_update());
        }
        unique::check_unique(&installed, &mapped, &change.appended)
            .map_err(|e| change.notes.key_error(e))?;
        let (mut next, positions) = merge::next_version(&installed, &mapped, &change.appended)?;
        next.raise_drawn(&change.notes.drawn);
        debug_assert_eq!(next.seq, installed.seq + 1, "one version per change");
        replayed.push(PendingChange {
            deleted: mapped,
            appended: Arc::clone(&change.appended),
            notes: change.notes.clone(),
            positions,
        });
        installed = Arc::new(next);
    }
    Ok((installed, replayed))
}

/// How [`Store::install_view`] ended.
enum Installed {
    /// The view is the table's newest version, its changes logged.
    Done,
    /// Another version came first: replay on it.
    Overtaken,
}

/// Waits for `blocker` until `deadline`; 40001 if it is still running then.
fn wait_for(blocker: maestro_txn::Blocker, deadline: Instant) -> Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if super::row_locks::wait_inactive(&blocker, left, || false) {
        Ok(())
    } else {
        Err(conflict(format!(
            "could not serialize access: another transaction's write of the table did not \
             finish within {} ms",
            WRITE_WAIT_MAX.as_millis()
        )))
    }
}
