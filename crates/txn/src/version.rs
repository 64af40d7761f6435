//! Transaction states, versions and the newest-first version chain of a row.
//!
//! A version carries its writer's shared [`TxnState`], not a copy of the
//! commit timestamp: committing a transaction is one store into that state,
//! which makes every version it wrote committed at the same instant, whatever
//! the number of rows (see `clock` for why no reader sees that store half-way).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use smallvec::SmallVec;

use crate::clock::Timestamp;
use crate::snapshot::Horizon;

const ACTIVE: u64 = 0;
const ABORTED: u64 = u64::MAX;

/// Where a transaction is in its life: active (0), committed at a timestamp,
/// or aborted (`u64::MAX`).
pub(crate) struct TxnState {
    commit_ts: AtomicU64,
}

impl std::fmt::Debug for TxnState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TxnState({:?})", self.status())
    }
}

/// The state a reader observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Active,
    Committed(Timestamp),
    Aborted,
}

impl TxnState {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(TxnState {
            commit_ts: AtomicU64::new(ACTIVE),
        })
    }

    pub(crate) fn status(&self) -> Status {
        // Acquire: pairs with the Release stores in `mark_committed` and
        // `mark_aborted`.
        match self.commit_ts.load(Ordering::Acquire) {
            ACTIVE => Status::Active,
            ABORTED => Status::Aborted,
            ts => Status::Committed(ts),
        }
    }

    /// The install step: all of the transaction's versions become committed.
    pub(crate) fn mark_committed(&self, ts: Timestamp) {
        debug_assert!(ts != ACTIVE && ts != ABORTED);
        // Release: pairs with the Acquire load in `status`.
        self.commit_ts.store(ts, Ordering::Release);
    }

    pub(crate) fn mark_aborted(&self) {
        // Release: pairs with the Acquire load in `status`.
        self.commit_ts.store(ABORTED, Ordering::Release);
    }
}

struct Version<R> {
    writer: Arc<TxnState>,
    /// `None` is a tombstone (the row deleted by `writer`).
    value: Option<R>,
}

/// What [`Chain::newest`] found at the front of a chain.
pub(crate) enum NewestVersion<'a, R> {
    /// The newest version is the asking transaction's own.
    Own,
    /// Another transaction's uncommitted (or aborting) version.
    Held(Arc<TxnState>),
    /// The newest committed version and its commit timestamp.
    Committed { value: &'a R, ts: Timestamp },
    /// No row: never inserted here, or deleted by the newest version.
    Missing,
}

/// Why a write to a row was refused; the table turns it into a `TxnError`.
#[derive(Debug)]
pub(crate) enum WriteRefusal {
    /// Another transaction's uncommitted (or just aborted) version is newest;
    /// that transaction's state, to wait for.
    Locked(Arc<TxnState>),
    /// A version committed after the writer's snapshot is newest.
    TooOld,
    /// The row does not exist in the writer's snapshot.
    Missing,
}

/// What a write did: a new version, or an overwrite of the writer's own one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    NewVersion,
    OwnVersionReplaced,
}

/// A row's versions, newest first. Only the front may be uncommitted: a
/// writer needs the front committed (or its own) before it pushes.
pub(crate) struct Chain<R> {
    /// Newest first. One version inline: most rows hold exactly one (order
    /// lines, history, new orders are never updated; GC prunes updated rows
    /// back to one), so a row costs no allocation besides its slot.
    versions: SmallVec<[Version<R>; 1]>,
    /// True while the row sits in the GC queue (so it is queued once).
    pub(crate) queued_for_gc: bool,
}

impl<R> Default for Chain<R> {
    fn default() -> Self {
        Chain {
            versions: SmallVec::new(),
            queued_for_gc: false,
        }
    }
}

/// Outcome of pruning one chain.
pub(crate) struct Pruned {
    pub(crate) versions_freed: usize,
    /// The chain may still hold versions a later collection can free.
    pub(crate) needs_more_gc: bool,
}

impl<R: Clone> Chain<R> {
    /// The value `reader` sees at `read_ts`: its own version if it wrote one,
    /// else the newest version committed at or before `read_ts`.
    pub(crate) fn read(&self, read_ts: Timestamp, reader: Option<&Arc<TxnState>>) -> Option<&R> {
        for version in &self.versions {
            if reader.is_some_and(|own| Arc::ptr_eq(own, &version.writer)) {
                return version.value.as_ref();
            }
            if let Status::Committed(ts) = version.writer.status()
                && ts <= read_ts
            {
                return version.value.as_ref();
            }
        }
        None
    }

    /// The row's newest version as `writer` would write over it: its own,
    /// another transaction's uncommitted one, or the newest committed one
    /// whatever any snapshot sees ([`crate::Transaction::newest`]).
    pub(crate) fn newest(&self, writer: &Arc<TxnState>) -> NewestVersion<'_, R> {
        let Some(front) = self.versions.first() else {
            return NewestVersion::Missing;
        };
        if Arc::ptr_eq(&front.writer, writer) {
            return NewestVersion::Own;
        }
        match (front.writer.status(), front.value.as_ref()) {
            (Status::Active | Status::Aborted, _) => NewestVersion::Held(Arc::clone(&front.writer)),
            (Status::Committed(_), None) => NewestVersion::Missing,
            (Status::Committed(ts), Some(value)) => NewestVersion::Committed { value, ts },
        }
    }

    /// `writer`'s own version: `Some(Some(value))` for a write,
    /// `Some(None)` for a delete, `None` if it wrote none.
    pub(crate) fn own(&self, writer: &Arc<TxnState>) -> Option<Option<&R>> {
        self.versions
            .first()
            .filter(|front| Arc::ptr_eq(&front.writer, writer))
            .map(|front| front.value.as_ref())
    }

    /// Recovery: the chain becomes the single version `value` written by
    /// the recovery state (or empty for `None`, a deleted row); returns the
    /// versions it held before.
    pub(crate) fn recover(&mut self, value: Option<(&Arc<TxnState>, R)>) -> usize {
        let before = self.versions.len();
        self.versions.clear();
        if let Some((writer, value)) = value {
            self.versions.push(Version {
                writer: Arc::clone(writer),
                value: Some(value),
            });
        }
        before
    }

    /// Inserts the first version of a fresh row.
    pub(crate) fn insert(&mut self, writer: &Arc<TxnState>, value: R) {
        debug_assert!(self.versions.is_empty());
        self.versions.insert(
            0,
            Version {
                writer: Arc::clone(writer),
                value: Some(value),
            },
        );
    }

    /// Updates (`Some`) or deletes (`None`) the row as `writer`, whose snapshot
    /// reads at `read_ts`. First updater wins: no waiting.
    pub(crate) fn write(
        &mut self,
        writer: &Arc<TxnState>,
        read_ts: Timestamp,
        value: Option<R>,
    ) -> Result<Written, WriteRefusal> {
        let Some(front) = self.versions.first_mut() else {
            return Err(WriteRefusal::Missing);
        };
        if Arc::ptr_eq(&front.writer, writer) {
            if front.value.is_none() {
                return Err(WriteRefusal::Missing);
            }
            front.value = value;
            return Ok(Written::OwnVersionReplaced);
        }
        match front.writer.status() {
            Status::Active | Status::Aborted => {
                return Err(WriteRefusal::Locked(Arc::clone(&front.writer)));
            }
            Status::Committed(ts) if ts > read_ts => return Err(WriteRefusal::TooOld),
            Status::Committed(_) => {}
        }
        if front.value.is_none() {
            return Err(WriteRefusal::Missing);
        }
        // Exact: GC keeps chains short (one or two versions), so room for
        // one more is what a chain needs, not doubling.
        self.versions.reserve_exact(1);
        self.versions.insert(
            0,
            Version {
                writer: Arc::clone(writer),
                value,
            },
        );
        Ok(Written::NewVersion)
    }

    /// Removes `writer`'s version (abort); true if there was one.
    pub(crate) fn roll_back(&mut self, writer: &Arc<TxnState>) -> bool {
        let own = self
            .versions
            .first()
            .is_some_and(|front| Arc::ptr_eq(&front.writer, writer));
        if own {
            self.versions.remove(0);
        }
        own
    }

    /// Commit timestamp of the newest committed version not written by
    /// `reader`; 0 if there is none.
    pub(crate) fn newest_commit_ts(&self, reader: &Arc<TxnState>) -> Timestamp {
        self.versions
            .iter()
            .filter(|version| !Arc::ptr_eq(&version.writer, reader))
            .find_map(|version| match version.writer.status() {
                Status::Committed(ts) => Some(ts),
                _ => None,
            })
            .unwrap_or(0)
    }

    /// Frees every committed version no live or future snapshot can read.
    ///
    /// A committed version `v` (commit ts `c`) superseded by a committed
    /// version at `c_next` is read exactly by snapshots with read ts in
    /// `[c, c_next)`. Future snapshots read at `>= horizon.visible`, so `v`
    /// is free when `c_next <= horizon.visible` and no live snapshot reads in
    /// `[c, c_next)`. A committed tombstone left as the oldest version reads
    /// the same as an empty chain and goes too.
    pub(crate) fn prune(&mut self, horizon: &Horizon) -> Pruned {
        let before = self.versions.len();
        let mut successor: Option<Timestamp> = None;
        let mut keep = Vec::with_capacity(before);
        for version in &self.versions {
            let keep_it = match version.writer.status() {
                Status::Committed(ts) => {
                    let free = successor.is_some_and(|next| {
                        next <= horizon.visible && !horizon.any_reader_in(ts, next)
                    });
                    successor = Some(ts);
                    !free
                }
                // An active front version; aborted ones are being rolled back.
                Status::Active | Status::Aborted => true,
            };
            keep.push(keep_it);
        }
        let mut index = 0;
        self.versions.retain(|_| {
            index += 1;
            keep[index - 1]
        });
        if let Some(oldest) = self.versions.last()
            && oldest.value.is_none()
            && matches!(oldest.writer.status(), Status::Committed(ts) if ts <= horizon.visible)
        {
            self.versions.pop();
        }
        if self.versions.len() <= 1 {
            // Back inline: the heap buffer of an updated row goes with GC.
            self.versions.shrink_to_fit();
        }
        Pruned {
            versions_freed: before - self.versions.len(),
            needs_more_gc: self.may_hold_garbage(),
        }
    }

    /// True when a later collection may free something here: an older
    /// version, or a tombstone.
    pub(crate) fn may_hold_garbage(&self) -> bool {
        self.versions.len() > 1 || self.versions.first().is_some_and(|v| v.value.is_none())
    }
}

impl<R: Clone + Send + Sync> crate::slots::SlotState for Chain<R> {
    fn roll_back(&mut self, writer: &Arc<TxnState>) -> bool {
        Chain::roll_back(self, writer)
    }

    fn newest_commit_ts(&self, reader: &Arc<TxnState>) -> Timestamp {
        Chain::newest_commit_ts(self, reader)
    }

    fn may_hold_garbage(&self) -> bool {
        Chain::may_hold_garbage(self)
    }

    fn queued_for_gc(&mut self) -> &mut bool {
        &mut self.queued_for_gc
    }

    fn prune(&mut self, horizon: &Horizon) -> Pruned {
        Chain::prune(self, horizon)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed(ts: Timestamp) -> Arc<TxnState> {
        let state = TxnState::new();
        state.mark_committed(ts);
        state
    }

    /// A chain with one committed version per timestamp in `commits`
    /// (oldest first), value = its timestamp.
    fn chain(commits: &[Timestamp]) -> Chain<u64> {
        let mut chain = Chain::default();
        for &ts in commits {
            chain.versions.insert(
                0,
                Version {
                    writer: committed(ts),
                    value: Some(ts),
                },
            );
        }
        chain
    }

    fn horizon(visible: Timestamp, active: &[Timestamp]) -> Horizon {
        Horizon {
            visible,
            active_sorted: active.to_vec(),
        }
    }

    #[test]
    fn readers_see_the_newest_version_at_or_below_their_timestamp() {
        let chain = chain(&[2, 5, 9]);
        assert_eq!(chain.read(1, None), None);
        assert_eq!(chain.read(2, None), Some(&2));
        assert_eq!(chain.read(8, None), Some(&5));
        assert_eq!(chain.read(100, None), Some(&9));
    }

    #[test]
    fn prune_keeps_exactly_the_versions_live_readers_need() {
        let mut chain = chain(&[2, 5, 9, 12]);
        // Reader at 6 needs the version of 5; nobody needs 2 or 9.
        let pruned = chain.prune(&horizon(12, &[6]));
        assert_eq!(pruned.versions_freed, 2);
        assert!(pruned.needs_more_gc);
        assert_eq!(chain.read(6, None), Some(&5));
        assert_eq!(chain.read(12, None), Some(&12));
        let pruned = chain.prune(&horizon(12, &[]));
        assert_eq!(pruned.versions_freed, 1);
        assert!(!pruned.needs_more_gc);
    }

    #[test]
    fn prune_keeps_versions_superseded_after_the_horizon() {
        let mut chain = chain(&[2, 5]);
        // The version of 2 is superseded at 5, but GC read visible = 4: a
        // snapshot that began between could read at 4.
        assert_eq!(chain.prune(&horizon(4, &[])).versions_freed, 0);
    }

    #[test]
    fn uncommitted_front_is_never_pruned() {
        let mut chain = chain(&[2, 5]);
        let writer = TxnState::new();
        chain.write(&writer, 5, Some(7)).unwrap();
        chain.prune(&horizon(5, &[]));
        assert_eq!(chain.versions.len(), 2);
        assert_eq!(chain.read(5, Some(&writer)), Some(&7));
        assert_eq!(chain.read(5, None), Some(&5));
    }

    #[test]
    fn any_reader_in_is_half_open() {
        let h = horizon(10, &[3, 7]);
        assert!(h.any_reader_in(3, 4));
        assert!(!h.any_reader_in(4, 7));
        assert!(h.any_reader_in(4, 8));
        assert!(!h.any_reader_in(8, 10));
        assert_eq!(h.low_watermark(), 3);
        assert_eq!(horizon(10, &[]).low_watermark(), 10);
    }
}
