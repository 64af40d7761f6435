//! An append-only arena of row slots addressed by a dense row id, each slot a
//! version chain (or a counter's deltas) behind a short physical latch.
//!
//! The layout is `maestro-tpcc`'s row table's: row id → chunk (`CHUNK` slots,
//! allocated when first needed) → segment (segment `k` holds `2^k` chunk
//! pointers), every level a `OnceLock`, so finding a slot never locks and
//! appenders meet only on one `fetch_add`. Slots never move and are never
//! reused, so a row id names one row for the table's lifetime.
//!
//! The latch (`parking_lot::RwLock`) is held for one chain operation (a read
//! walks the chain and clones a value); it is not a transaction lock: readers
//! of snapshots never wait for a transaction, only for another thread's chain
//! operation of a few hundred nanoseconds.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;

/// The address of a row within its table.
pub type RowId = u64;

const CHUNK_BITS: u32 = 10;
const CHUNK: usize = 1 << CHUNK_BITS;
/// Segments 0..32 hold 2^32 − 1 chunks: about 4.4 · 10^12 rows per table.
const SEGMENTS: usize = 32;
/// Row ids from this one on are refused.
pub const ROWS_MAX: u64 = ((1u64 << SEGMENTS) - 1) << CHUNK_BITS;

/// A row's slot: its contents `T` (a version chain, a counter's deltas)
/// behind the latch.
pub(crate) type Slot<T> = RwLock<T>;
type Chunk<T> = Box<[Slot<T>]>;
type Segment<T> = Box<[OnceLock<Chunk<T>>]>;

pub(crate) struct Arena<T> {
    /// Row ids handed out so far.
    next: AtomicU64,
    segments: [OnceLock<Segment<T>>; SEGMENTS],
}

/// Segment and index within it of chunk number `chunk` (< 2^32 − 1).
fn locate(chunk: u64) -> (usize, usize) {
    let segment = 63 - (chunk + 1).leading_zeros();
    (segment as usize, (chunk + 1 - (1 << segment)) as usize)
}

impl<T: Default> Arena<T> {
    pub(crate) fn new() -> Self {
        Arena {
            next: AtomicU64::new(0),
            segments: std::array::from_fn(|_| OnceLock::new()),
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
        let (segment, index) = locate(id >> CHUNK_BITS);
        let chunk = self.segments[segment]
            .get_or_init(|| (0..1usize << segment).map(|_| OnceLock::new()).collect())[index]
            .get_or_init(|| (0..CHUNK).map(|_| RwLock::new(T::default())).collect());
        Some((id, &chunk[(id as usize) & (CHUNK - 1)]))
    }

    /// The slot of a row id handed out before; `None` for ids never handed out
    /// (or whose chunk another thread is still allocating).
    pub(crate) fn slot(&self, id: RowId) -> Option<&Slot<T>> {
        let chunk = id >> CHUNK_BITS;
        if chunk >= (1 << SEGMENTS) - 1 {
            return None;
        }
        let (segment, index) = locate(chunk);
        self.segments[segment].get()?[index]
            .get()?
            .get((id as usize) & (CHUNK - 1))
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

    #[test]
    fn chunks_map_to_segments_without_gaps() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(1), (1, 0));
        assert_eq!(locate(2), (1, 1));
        assert_eq!(locate(3), (2, 0));
        assert_eq!(locate(6), (2, 3));
        assert_eq!(locate(7), (3, 0));
    }

    #[test]
    fn ids_are_dense_and_slots_found_again() {
        let arena: Arena<u32> = Arena::new();
        for expected in 0..3 * CHUNK as u64 {
            let (id, _) = arena.allocate().unwrap();
            assert_eq!(id, expected);
        }
        assert!(arena.slot(3 * CHUNK as u64 - 1).is_some());
        assert!(arena.slot(5 * CHUNK as u64).is_none());
        assert_eq!(arena.allocated(), 3 * CHUNK as u64);
    }
}
