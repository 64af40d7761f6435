//! Snapshots and the registry of the ones in use.
//!
//! The registry is a fixed array of cache-padded slots, each either `FREE` or
//! the read timestamp of one live snapshot. Beginning a snapshot claims a free
//! slot with one compare-exchange (a thread starts at the slot it used last,
//! so threads rarely meet on a cache line); ending it stores `FREE`. No mutex
//! is taken on either path. The garbage collector reads the slots to learn the
//! read timestamps still in use ([`Registry::horizon`]).
//!
//! Publication protocol (all SeqCst, one total order S):
//! begin: `t = visible`; CAS slot FREE→t; loop { `t' = visible`; if t' == t
//! break; store t' into slot; t = t' }.
//! GC: `V = visible`; then load every slot.
//! If GC's load of the slot precedes the begin's final store in S, then GC's
//! load of `V` precedes the begin's final load of `visible` (which returned
//! t), so `t >= V`: the snapshot needs no version GC may free (GC only frees
//! versions superseded at or below `V`, see `version::Chain::prune`). Otherwise
//! GC sees `t` (or a later value of the same slot, which is `FREE` only after
//! the snapshot ended).

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

use crate::clock::{Clock, Timestamp};
use crate::error::TxnError;

const FREE: u64 = u64::MAX;

pub(crate) struct Registry {
    slots: Box<[CachePadded<AtomicU64>]>,
}

/// What GC may assume about readers: `visible` read before the slots, and the
/// sorted read timestamps of the snapshots that were live.
pub(crate) struct Horizon {
    pub(crate) visible: Timestamp,
    pub(crate) active_sorted: Vec<Timestamp>,
}

impl Horizon {
    /// True when some live snapshot's read timestamp lies in `[from, to)`.
    pub(crate) fn any_reader_in(&self, from: Timestamp, to: Timestamp) -> bool {
        let first = self.active_sorted.partition_point(|&ts| ts < from);
        self.active_sorted.get(first).is_some_and(|&ts| ts < to)
    }

    /// The oldest read timestamp still in use, or `visible` if none is.
    pub(crate) fn low_watermark(&self) -> Timestamp {
        self.active_sorted.first().copied().unwrap_or(self.visible)
    }
}

static NEXT_THREAD_HINT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The slot this thread claimed last; threads spread over the array.
    static SLOT_HINT: Cell<usize> = Cell::new(NEXT_THREAD_HINT.fetch_add(1, Ordering::Relaxed));
}

impl Registry {
    pub(crate) fn new(slots_max: usize) -> Self {
        Registry {
            slots: (0..slots_max.max(1))
                .map(|_| CachePadded::new(AtomicU64::new(FREE)))
                .collect(),
        }
    }

    pub(crate) fn slots_max(&self) -> usize {
        self.slots.len()
    }

    /// Claims a slot and publishes a read timestamp in it (protocol above).
    fn acquire(&self, clock: &Clock) -> Result<(usize, Timestamp), TxnError> {
        let slots_max = self.slots.len();
        let start = SLOT_HINT.with(Cell::get) % slots_max;
        let mut ts = clock.visible();
        for step in 0..slots_max {
            let index = (start + step) % slots_max;
            let slot = &self.slots[index];
            // SeqCst: part of the total order of the publication protocol;
            // pairs with the SeqCst slot loads in `horizon`.
            if slot
                .compare_exchange(FREE, ts, Ordering::SeqCst, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            loop {
                let now = clock.visible();
                if now == ts {
                    break;
                }
                ts = now;
                // SeqCst: as the compare-exchange above.
                slot.store(ts, Ordering::SeqCst);
            }
            SLOT_HINT.with(|hint| hint.set(index));
            return Ok((index, ts));
        }
        Err(TxnError::SnapshotSlotsExhausted { slots_max })
    }

    fn release(&self, index: usize) {
        // Release: pairs with the SeqCst load in `horizon`; every read this
        // snapshot made happens before GC sees the slot free.
        self.slots[index].store(FREE, Ordering::Release);
    }

    /// `visible`, then the read timestamps of all live snapshots.
    pub(crate) fn horizon(&self, clock: &Clock) -> Horizon {
        let visible = clock.visible();
        let mut active_sorted: Vec<Timestamp> = self
            .slots
            .iter()
            // SeqCst: pairs with the SeqCst compare-exchange/store in `acquire`.
            .map(|slot| slot.load(Ordering::SeqCst))
            .filter(|&ts| ts != FREE)
            .collect();
        active_sorted.sort_unstable();
        Horizon {
            visible,
            active_sorted,
        }
    }
}

/// The clock and the registry, shared by the database and its snapshots.
pub(crate) struct TimeKeeper {
    pub(crate) clock: Clock,
    pub(crate) registry: Registry,
}

/// A consistent read view: every transaction committed at or before
/// [`Snapshot::read_ts`] and nothing else. Takes no locks; holds a registry
/// slot until dropped, which keeps the versions it can read from GC.
pub struct Snapshot {
    keeper: Arc<TimeKeeper>,
    slot: usize,
    read_ts: Timestamp,
}

impl Snapshot {
    pub(crate) fn begin(keeper: &Arc<TimeKeeper>) -> Result<Self, TxnError> {
        let (slot, read_ts) = keeper.registry.acquire(&keeper.clock)?;
        Ok(Snapshot {
            keeper: Arc::clone(keeper),
            slot,
            read_ts,
        })
    }

    /// The newest commit timestamp this snapshot sees.
    pub fn read_ts(&self) -> Timestamp {
        self.read_ts
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.keeper.registry.release(self.slot);
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("read_ts", &self.read_ts)
            .finish()
    }
}
