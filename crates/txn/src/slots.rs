//! What row tables ([`crate::Table`]) and counter tables
//! ([`crate::CounterTable`]) share: an arena of row slots, a count of the
//! versions (or deltas) the slots hold, the newest writer's commit
//! timestamp, and the slot operations of abort, validation and GC — written
//! once here over [`SlotState`], and exposed to write sets and the GC queue
//! as [`Rows`] for every table that has [`Slots`].

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::arena::{Arena, RowId};
use crate::clock::Timestamp;
use crate::durable::RedoBuf;
use crate::journal::Journal;
use crate::snapshot::Horizon;
use crate::version::{Pruned, TxnState};

/// What one slot holds (a version chain, a counter's deltas), as abort,
/// validation and GC see it.
pub(crate) trait SlotState: Default + Send + Sync {
    /// Removes `writer`'s entry (abort); true if there was one.
    fn roll_back(&mut self, writer: &Arc<TxnState>) -> bool;
    /// Commit timestamp of the newest committed entry not by `reader`.
    fn newest_commit_ts(&self, reader: &Arc<TxnState>) -> Timestamp;
    /// True when a later collection may free something here.
    fn may_hold_garbage(&self) -> bool;
    /// The slot's "in the GC queue" flag.
    fn queued_for_gc(&mut self) -> &mut bool;
    /// Frees what `horizon` allows.
    fn prune(&mut self, horizon: &Horizon) -> Pruned;
}

/// A table's slots and counters.
pub(crate) struct Slots<S> {
    pub(crate) name: &'static str,
    pub(crate) rows: Arena<S>,
    /// Versions (or deltas) held by all slots.
    held: AtomicUsize,
    /// Newest commit timestamp of a transaction that wrote this table; read
    /// and written only under the clock's commit lock (scan validation).
    last_write_commit_ts: AtomicU64,
    /// Rows written by committed transactions, when tracked
    /// ([`crate::Table::track_changes`]).
    pub(crate) journal: OnceLock<Journal>,
}

impl<S: SlotState> Slots<S> {
    pub(crate) fn new(name: &'static str) -> Self {
        Slots {
            name,
            rows: Arena::new(),
            held: AtomicUsize::new(0),
            last_write_commit_ts: AtomicU64::new(0),
            journal: OnceLock::new(),
        }
    }

    /// Versions (or deltas) held now (a statistic; exact once writers and GC
    /// rest).
    pub(crate) fn held(&self) -> usize {
        // Relaxed: a statistic.
        self.held.load(Ordering::Relaxed)
    }

    pub(crate) fn add_held(&self, n: usize) {
        self.held.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn sub_held(&self, n: usize) {
        self.held.fetch_sub(n, Ordering::Relaxed);
    }
}

/// A table with [`Slots`]: what it adds is how its writes are logged.
pub(crate) trait HasSlots: Send + Sync {
    type Slot: SlotState;
    fn slots(&self) -> &Slots<Self::Slot>;
    /// Appends the redo op of `writer`'s entry of `row` (nothing for a table
    /// that is not durable). Called before commit.
    fn redo(&self, row: RowId, writer: &Arc<TxnState>, out: &mut RedoBuf);
}

/// A table seen without its row type: what write sets, read sets and the GC
/// queue hold.
pub(crate) trait Rows: Send + Sync {
    fn name(&self) -> &'static str;
    /// Records that a transaction writing `row` of this table commits at
    /// `ts`. Called under the commit lock, once per written row.
    fn note_write_commit(&self, ts: Timestamp, row: RowId);
    /// Newest commit timestamp of a writer of this table. Called under the
    /// commit lock.
    fn last_write_commit_ts(&self) -> Timestamp;
    /// Removes `writer`'s uncommitted entry of `row` (abort).
    fn roll_back(&self, row: RowId, writer: &Arc<TxnState>);
    /// Commit timestamp of the newest entry of `row` not written by `reader`.
    fn newest_commit_ts(&self, row: RowId, reader: &Arc<TxnState>) -> Timestamp;
    /// Marks `row` queued for GC; true if it was not queued and holds
    /// entries GC may later free.
    fn queue_for_gc(&self, row: RowId) -> bool;
    /// Frees what `horizon` allows; the row leaves the queue unless more
    /// remains to free.
    fn prune(&self, row: RowId, horizon: &Horizon) -> Pruned;
    /// See [`HasSlots::redo`].
    fn redo(&self, row: RowId, writer: &Arc<TxnState>, out: &mut RedoBuf);
}

impl<T: HasSlots> Rows for T {
    fn name(&self) -> &'static str {
        self.slots().name
    }

    fn note_write_commit(&self, ts: Timestamp, row: RowId) {
        let slots = self.slots();
        // Relaxed: written and read only under the commit lock, which orders
        // the accesses.
        slots.last_write_commit_ts.fetch_max(ts, Ordering::Relaxed);
        if let Some(journal) = slots.journal.get() {
            journal.record(ts, row);
        }
    }

    fn last_write_commit_ts(&self) -> Timestamp {
        // Relaxed: see `note_write_commit`.
        self.slots().last_write_commit_ts.load(Ordering::Relaxed)
    }

    fn roll_back(&self, row: RowId, writer: &Arc<TxnState>) {
        let slots = self.slots();
        let Some(slot) = slots.rows.slot(row) else {
            return;
        };
        if slot.write().roll_back(writer) {
            slots.sub_held(1);
        }
    }

    fn newest_commit_ts(&self, row: RowId, reader: &Arc<TxnState>) -> Timestamp {
        self.slots()
            .rows
            .slot(row)
            .map_or(0, |slot| slot.read().newest_commit_ts(reader))
    }

    fn queue_for_gc(&self, row: RowId) -> bool {
        let Some(slot) = self.slots().rows.slot(row) else {
            return false;
        };
        let mut state = slot.write();
        if *state.queued_for_gc() || !state.may_hold_garbage() {
            return false;
        }
        *state.queued_for_gc() = true;
        true
    }

    fn prune(&self, row: RowId, horizon: &Horizon) -> Pruned {
        let slots = self.slots();
        let Some(slot) = slots.rows.slot(row) else {
            return Pruned {
                versions_freed: 0,
                needs_more_gc: false,
            };
        };
        let mut state = slot.write();
        let pruned = state.prune(horizon);
        *state.queued_for_gc() = pruned.needs_more_gc;
        drop(state);
        slots.sub_held(pruned.versions_freed);
        pruned
    }

    fn redo(&self, row: RowId, writer: &Arc<TxnState>, out: &mut RedoBuf) {
        HasSlots::redo(self, row, writer, out)
    }
}
