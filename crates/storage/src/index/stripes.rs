//! Striped counters: an index's entry count and statistics without one shared
//! cache line that every insert would write (which would undo what OLC saves).

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

const STRIPES: usize = 16;

#[derive(Default)]
struct Cell {
    len: AtomicI64,
    restarts: AtomicI64,
    fallbacks: AtomicI64,
}

/// Per-thread-ish counters; sums are exact once no one is updating them.
pub(crate) struct Stripes {
    cells: Box<[CachePadded<Cell>]>,
}

fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        // Relaxed: only uniqueness-ish of the index matters.
        static MINE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    MINE.with(|s| *s)
}

impl Stripes {
    pub(crate) fn new() -> Self {
        Stripes {
            cells: (0..STRIPES)
                .map(|_| CachePadded::new(Cell::default()))
                .collect(),
        }
    }
    // Relaxed everywhere: these are statistics; no other memory is published
    // through them.
    pub(crate) fn add_len(&self, d: i64) {
        self.cells[stripe()].len.fetch_add(d, Ordering::Relaxed);
    }
    pub(crate) fn add_restart(&self) {
        self.cells[stripe()]
            .restarts
            .fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn add_fallback(&self) {
        self.cells[stripe()]
            .fallbacks
            .fetch_add(1, Ordering::Relaxed);
    }
    fn sum(&self, f: impl Fn(&Cell) -> &AtomicI64) -> i64 {
        self.cells
            .iter()
            .map(|c| f(c).load(Ordering::Relaxed))
            .sum()
    }
    pub(crate) fn len(&self) -> usize {
        self.sum(|c| &c.len).max(0) as usize
    }
    pub(crate) fn restarts(&self) -> u64 {
        self.sum(|c| &c.restarts) as u64
    }
    pub(crate) fn fallbacks(&self) -> u64 {
        self.sum(|c| &c.fallbacks) as u64
    }
}
