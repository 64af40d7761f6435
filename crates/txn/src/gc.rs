//! Garbage collection of versions no snapshot can read.
//!
//! Committing a transaction queues each row it wrote that now holds more than
//! one version (or a tombstone); a row is queued at most once at a time.
//! [`Collector::collect`] takes up to `rows_max` rows off the queue, reads the
//! [`Horizon`] (the visible timestamp, then every live snapshot's read
//! timestamp) and prunes each row's chain (`version::Chain::prune`): a version
//! goes when no live snapshot reads inside its validity interval, so an old
//! snapshot pins only the one version per row it can see, not every version
//! written since (interval-based pruning as in Steam, Böttcher et al.,
//! VLDB 2019). Rows with versions still pinned go back on the queue.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::arena::RowId;
use crate::slots::Rows;
use crate::snapshot::TimeKeeper;

/// What one collection did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CollectStats {
    pub rows_visited: usize,
    pub versions_freed: usize,
    /// Rows still queued after this collection.
    pub rows_queued: usize,
}

pub(crate) struct Collector {
    queue: Mutex<VecDeque<(Arc<dyn Rows>, RowId)>>,
}

impl Collector {
    pub(crate) fn new() -> Self {
        Collector {
            queue: Mutex::new(VecDeque::new()),
        }
    }

    /// Queues the rows a committed transaction wrote (those that may now hold
    /// garbage and are not queued yet).
    pub(crate) fn enqueue(&self, written: &[(Arc<dyn Rows>, RowId)]) {
        let fresh: Vec<_> = written
            .iter()
            .filter(|(table, row)| table.queue_for_gc(*row))
            .cloned()
            .collect();
        if !fresh.is_empty() {
            self.queue.lock().extend(fresh);
        }
    }

    pub(crate) fn rows_queued(&self) -> usize {
        self.queue.lock().len()
    }

    /// Prunes up to `rows_max` queued rows. With `wait` false, returns at once
    /// if another thread holds the queue (the commit path uses that).
    pub(crate) fn collect(&self, keeper: &TimeKeeper, rows_max: usize, wait: bool) -> CollectStats {
        let batch: Vec<_> = {
            let mut queue = if wait {
                self.queue.lock()
            } else {
                match self.queue.try_lock() {
                    Some(queue) => queue,
                    None => return CollectStats::default(),
                }
            };
            let take = rows_max.min(queue.len());
            queue.drain(..take).collect()
        };
        if batch.is_empty() {
            return CollectStats {
                rows_queued: self.rows_queued(),
                ..CollectStats::default()
            };
        }
        let horizon = keeper.registry.horizon(&keeper.clock);
        let mut stats = CollectStats {
            rows_visited: batch.len(),
            ..CollectStats::default()
        };
        let mut still_queued = Vec::new();
        for (table, row) in batch {
            let pruned = table.prune(row, &horizon);
            stats.versions_freed += pruned.versions_freed;
            if pruned.needs_more_gc {
                still_queued.push((table, row));
            }
        }
        let mut queue = self.queue.lock();
        queue.extend(still_queued);
        stats.rows_queued = queue.len();
        stats
    }
}
