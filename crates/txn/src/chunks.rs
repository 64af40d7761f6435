//! The slot directory under every append-only row store of the project (the
//! MVCC arena here, `maestro-tpcc`'s 2PL row table): a dense `u64` row id →
//! chunk (`CHUNK` slots) → segment (segment `k` holds `2^k` chunk pointers),
//! every level a `OnceLock`, so finding a slot never locks. Slots never move,
//! so a `&S` borrowed from the directory stays valid for its lifetime.
//!
//! Allocation ahead: the appender of a chunk's middle row allocates the
//! *next* chunk, so a chunk is normally ready before anyone appends to it.
//! When the first appender of a chunk allocated it (as before), every appender
//! racing it slept on the `OnceLock` for the allocation: ~1 000 sleeps per 4 s
//! of TPC-C's order lines beside TPC-H on 2 cores, seen with `perf record -e
//! sched:sched_switch`. If appends outrun the allocation, the racing appender
//! still waits briefly; it is never an error.

use std::sync::OnceLock;

const CHUNK_BITS: u32 = 10;
/// Slots per chunk (allocated together).
const CHUNK: usize = 1 << CHUNK_BITS;
/// Segments 0..32 hold 2^32 − 1 chunks: about 4.4 · 10^12 rows per table.
const SEGMENTS: usize = 32;
/// Chunk numbers from this one on do not exist.
const CHUNKS_MAX: u64 = (1 << SEGMENTS) - 1;
/// Row ids from this one on are refused.
pub const ROWS_MAX: u64 = CHUNKS_MAX << CHUNK_BITS;

type Segment<S> = Box<[OnceLock<Box<[S]>>]>;

/// Slots of type `S` by dense row id, allocated a chunk at a time.
pub struct Chunks<S> {
    segments: [OnceLock<Segment<S>>; SEGMENTS],
}

/// Segment and index within it of chunk number `chunk` (< 2^32 − 1).
fn locate(chunk: u64) -> (usize, usize) {
    let segment = 63 - (chunk + 1).leading_zeros();
    (segment as usize, (chunk + 1 - (1 << segment)) as usize)
}

impl<S: Default> Default for Chunks<S> {
    fn default() -> Self {
        Chunks::new()
    }
}

impl<S: Default> Chunks<S> {
    pub fn new() -> Self {
        Chunks {
            segments: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// The slot of `id`, which the caller has just reserved (each id once,
    /// `id < ROWS_MAX`): allocates its chunk if that is not done yet and, for
    /// a chunk's middle row, the next chunk.
    ///
    /// # Panics
    /// If `id >= ROWS_MAX` (the caller checks its reservation against it).
    pub fn slot_for_append(&self, id: u64) -> &S {
        assert!(id < ROWS_MAX, "row id {id} is past ROWS_MAX");
        let chunk_no = id >> CHUNK_BITS;
        let chunk = self.ensure_chunk(chunk_no);
        let offset = (id as usize) & (CHUNK - 1);
        if offset == CHUNK / 2 && chunk_no + 1 < CHUNKS_MAX {
            // Exactly one appender holds this id: it readies the next chunk
            // while the others still fill this one.
            self.ensure_chunk(chunk_no + 1);
        }
        &chunk[offset]
    }

    fn ensure_chunk(&self, chunk_no: u64) -> &[S] {
        let (segment, index) = locate(chunk_no);
        self.segments[segment]
            .get_or_init(|| (0..1usize << segment).map(|_| OnceLock::new()).collect())[index]
            .get_or_init(|| (0..CHUNK).map(|_| S::default()).collect())
    }
}

impl<S> Chunks<S> {
    /// The slot of `id` if its chunk is allocated (a chunk allocated ahead
    /// holds default slots for ids not handed out yet).
    pub fn slot(&self, id: u64) -> Option<&S> {
        self.chunk(id >> CHUNK_BITS)?
            .get((id as usize) & (CHUNK - 1))
    }

    /// Calls `f(id, slot)` for every allocated slot with `id < end`, in id order.
    pub fn for_each_below(&self, end: u64, mut f: impl FnMut(u64, &S)) {
        for chunk_no in 0..end.div_ceil(CHUNK as u64) {
            let Some(chunk) = self.chunk(chunk_no) else {
                continue;
            };
            for (offset, slot) in chunk.iter().enumerate() {
                let id = (chunk_no << CHUNK_BITS) | offset as u64;
                if id >= end {
                    return;
                }
                f(id, slot);
            }
        }
    }

    fn chunk(&self, chunk_no: u64) -> Option<&[S]> {
        if chunk_no >= CHUNKS_MAX {
            return None;
        }
        let (segment, index) = locate(chunk_no);
        self.segments[segment].get()?[index].get().map(|c| &c[..])
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
        assert_eq!(locate(CHUNKS_MAX - 1), (31, (1 << 31) - 1));
    }

    #[test]
    fn the_next_chunk_is_ready_from_a_chunks_middle_row_on() {
        let chunks: Chunks<u32> = Chunks::new();
        for id in 0..CHUNK as u64 / 2 {
            let _ = chunks.slot_for_append(id);
        }
        assert!(chunks.chunk(1).is_none(), "allocated before the middle row");
        chunks.slot_for_append(CHUNK as u64 / 2);
        assert!(
            chunks.chunk(1).is_some(),
            "the middle row's appender readies chunk 1"
        );
        assert!(chunks.chunk(2).is_none());
        let mut seen = Vec::new();
        chunks.for_each_below(3, |id, _| seen.push(id));
        assert_eq!(seen, [0, 1, 2]);
    }

    #[test]
    fn slots_past_the_end_are_absent() {
        let chunks: Chunks<u32> = Chunks::new();
        assert!(chunks.slot(0).is_none());
        chunks.slot_for_append(0);
        assert!(chunks.slot(0).is_some() && chunks.slot(CHUNK as u64 - 1).is_some());
        assert!(chunks.slot(2 * CHUNK as u64).is_none());
        assert!(chunks.slot(u64::MAX).is_none());
    }
}
