//! An append-only arena of row slots addressed by a dense row id, each slot a
//! version chain (or a counter's deltas) behind a short physical latch.
//!
//! The layout is [`crate::chunks::Chunks`] (shared with `maestro-tpcc`'s row
//! table): finding a slot never locks and appenders meet only on one
//! `fetch_add`. Slots never move and are never reused, so a row id names one
//! row for the table's lifetime.
//!
//! The latch (`parking_lot::RwLock`) is held for one chain operation (a read
//! walks the chain and clones a value); it is not a transaction lock: readers
//! of snapshots never wait for a transaction, only for another thread's chain
//! operation of a few hundred nanoseconds.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;

use crate::chunks::Chunks;
pub use crate::chunks::ROWS_MAX;

/// The address of a row within its table.
pub type RowId = u64;

/// A row's slot: its contents `T` (a version chain, a counter's deltas)
/// behind the latch.
pub(crate) type Slot<T> = RwLock<T>;

pub(crate) struct Arena<T> {
    /// Row ids handed out so far.
    next: AtomicU64,
    slots: Chunks<Slot<T>>,
}

impl<T: Default> Arena<T> {
    pub(crate) fn new() -> Self {
        Arena {
            next: AtomicU64::new(0),
            slots: Chunks::new(),
        }
    }

    /// Reserves a fresh row id and returns it with its (empty) slot; `None`
    /// when the arena is full.
    pub(crate) fn allocate(&self) -> Option<(RowId, &Slot<T>)> {
        // Relaxed: the id only needs to be unique; the slot's contents are
        // published by its latch.
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if id >= ROWS_MAX {
            return None;
        }
        Some((id, self.slots.slot_for_append(id)))
    }

    /// The slot of a row id handed out before; `None` for ids never handed out
    /// (or whose chunk another thread is still allocating).
    pub(crate) fn slot(&self, id: RowId) -> Option<&Slot<T>> {
        self.slots.slot(id)
    }

    /// Recovery (single-threaded): the slot of `id`, handing out every id up
    /// to it first (ids skipped by aborted inserts stay empty slots).
    pub(crate) fn slot_or_allocate(&self, id: RowId) -> Option<&Slot<T>> {
        while self.allocated() <= id {
            self.allocate()?;
        }
        self.slot(id)
    }

    /// Row ids handed out so far (some may still be being written).
    pub(crate) fn allocated(&self) -> u64 {
        self.next.load(Ordering::Relaxed).min(ROWS_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slots per chunk in `chunks.rs`.
    const CHUNK: u64 = 1024;

    #[test]
    fn ids_are_dense_and_slots_found_again() {
        let arena: Arena<u32> = Arena::new();
        for expected in 0..3 * CHUNK {
            let (id, _) = arena.allocate().unwrap();
            assert_eq!(id, expected);
        }
        assert!(arena.slot(3 * CHUNK - 1).is_some());
        assert!(arena.slot(5 * CHUNK).is_none());
        assert_eq!(arena.allocated(), 3 * CHUNK);
    }
}
