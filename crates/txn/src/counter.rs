//! Commutative counters: versioned `i64` cells whose updates are *additions*
//! that never conflict with each other (escrow-style increments).
//!
//! Why: a blind "add x" commutes with every other "add y", so two
//! transactions adding to the same cell need neither a lock nor a
//! first-updater-wins abort. TPC-C's `w_ytd` and `d_ytd` are such cells:
//! every Payment of a warehouse adds to one `w_ytd`, so as a plain versioned
//! row every two concurrent Payments of a warehouse conflict.
//!
//! A counter row is a folded `base` plus a list of deltas, each tagged with
//! its writer's [`TxnState`] (one delta per transaction and row: repeated adds
//! of a transaction accumulate in its delta). The value a snapshot reading at
//! `read_ts` sees is `base` + every delta committed at or before `read_ts`
//! (+ the reader's own uncommitted delta). Snapshot isolation holds: a
//! snapshot sees exactly the additions of the transactions committed before
//! it, whatever the order they ran in.
//!
//! Creation is the row's first delta (its creator's); the row exists for a
//! reader when that delta is visible to it, or once it has been folded.
//!
//! GC folds a committed delta into `base` once no live or future snapshot
//! reads below its commit timestamp (`commit_ts <= horizon.low_watermark()`):
//! every reader then sees it anyway, so adding it to `base` changes no read.
//! `base_ts` keeps the newest folded timestamp for serializable validation.

use std::sync::{Arc, OnceLock};

use crate::arena::RowId;
use crate::clock::Timestamp;
use crate::durable::{DurableRows, RedoBuf};
use crate::error::TxnError;
use crate::slots::{HasSlots, SlotState, Slots};
use crate::snapshot::{Horizon, Snapshot};
use crate::version::{Pruned, Status, TxnState, Written};

struct Delta {
    writer: Arc<TxnState>,
    amount: i64,
}

/// One counter's state.
#[derive(Default)]
pub(crate) struct CounterRow {
    /// Sum of the folded deltas (every snapshot sees them).
    base: i64,
    /// Newest commit timestamp folded into `base`; 0 if none.
    base_ts: Timestamp,
    /// True once the creating delta was folded.
    created: bool,
    /// Unfolded deltas, oldest first; the first is the creator's while
    /// `created` is false.
    deltas: Vec<Delta>,
    queued_for_gc: bool,
}

impl CounterRow {
    /// True when `reader` (at `read_ts`) sees `delta`.
    fn visible(delta: &Delta, read_ts: Timestamp, reader: Option<&Arc<TxnState>>) -> bool {
        reader.is_some_and(|own| Arc::ptr_eq(own, &delta.writer))
            || matches!(delta.writer.status(), Status::Committed(ts) if ts <= read_ts)
    }

    fn exists_for(&self, read_ts: Timestamp, reader: Option<&Arc<TxnState>>) -> bool {
        self.created
            || self
                .deltas
                .first()
                .is_some_and(|creator| Self::visible(creator, read_ts, reader))
    }

    fn read(&self, read_ts: Timestamp, reader: Option<&Arc<TxnState>>) -> Option<i64> {
        if !self.exists_for(read_ts, reader) {
            return None;
        }
        // Wrapping: each adder bounds only its own delta, so a sum beyond
        // i64 (2^63 cents here) would wrap rather than fail a reader.
        let mut value = self.base;
        for delta in &self.deltas {
            if Self::visible(delta, read_ts, reader) {
                value = value.wrapping_add(delta.amount);
            }
        }
        Some(value)
    }

    /// Adds `amount` as `writer`; `Overflow` if the writer's own delta would
    /// leave `i64`.
    fn add(&mut self, writer: &Arc<TxnState>, amount: i64) -> Result<Written, AddRefusal> {
        if let Some(own) = self
            .deltas
            .iter_mut()
            .rev()
            .find(|d| Arc::ptr_eq(&d.writer, writer))
        {
            own.amount = own.amount.checked_add(amount).ok_or(AddRefusal::Overflow)?;
            return Ok(Written::OwnVersionReplaced);
        }
        self.deltas.push(Delta {
            writer: Arc::clone(writer),
            amount,
        });
        Ok(Written::NewVersion)
    }

    fn roll_back(&mut self, writer: &Arc<TxnState>) -> bool {
        let before = self.deltas.len();
        self.deltas.retain(|d| !Arc::ptr_eq(&d.writer, writer));
        before != self.deltas.len()
    }

    fn newest_commit_ts(&self, reader: &Arc<TxnState>) -> Timestamp {
        self.deltas
            .iter()
            .filter(|d| !Arc::ptr_eq(&d.writer, reader))
            .filter_map(|d| match d.writer.status() {
                Status::Committed(ts) => Some(ts),
                _ => None,
            })
            .fold(self.base_ts, Timestamp::max)
    }

    /// `writer`'s delta and whether it created the counter.
    fn own(&self, writer: &Arc<TxnState>) -> Option<(i64, bool)> {
        let index = self
            .deltas
            .iter()
            .position(|d| Arc::ptr_eq(&d.writer, writer))?;
        Some((self.deltas[index].amount, !self.created && index == 0))
    }

    fn may_hold_garbage(&self) -> bool {
        !self.deltas.is_empty()
    }

    fn prune(&mut self, horizon: &Horizon) -> Pruned {
        let low_watermark = horizon.low_watermark();
        let before = self.deltas.len();
        let creator_pending = !self.created;
        let mut index = 0;
        let (mut base, mut base_ts, mut created) = (self.base, self.base_ts, self.created);
        self.deltas.retain(|delta| {
            let is_creator = creator_pending && index == 0;
            index += 1;
            match delta.writer.status() {
                Status::Committed(ts) if ts <= low_watermark => {
                    base = base.wrapping_add(delta.amount);
                    base_ts = base_ts.max(ts);
                    created |= is_creator;
                    false
                }
                _ => true,
            }
        });
        (self.base, self.base_ts, self.created) = (base, base_ts, created);
        Pruned {
            versions_freed: before - self.deltas.len(),
            needs_more_gc: self.may_hold_garbage(),
        }
    }
}

impl SlotState for CounterRow {
    fn roll_back(&mut self, writer: &Arc<TxnState>) -> bool {
        CounterRow::roll_back(self, writer)
    }

    fn newest_commit_ts(&self, reader: &Arc<TxnState>) -> Timestamp {
        CounterRow::newest_commit_ts(self, reader)
    }

    fn may_hold_garbage(&self) -> bool {
        CounterRow::may_hold_garbage(self)
    }

    fn queued_for_gc(&mut self) -> &mut bool {
        &mut self.queued_for_gc
    }

    fn prune(&mut self, horizon: &Horizon) -> Pruned {
        CounterRow::prune(self, horizon)
    }
}

/// Why an addition was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AddRefusal {
    /// The transaction's own delta would overflow `i64`.
    Overflow,
}

/// A table of commutative `i64` counters. Share it as `Arc<CounterTable>`.
pub struct CounterTable {
    slots: Slots<CounterRow>,
    /// The log id, once durable ([`crate::Database::make_counters_durable`]).
    durable_id: OnceLock<u32>,
}

impl CounterTable {
    pub fn new(name: &'static str) -> Arc<Self> {
        Arc::new(CounterTable {
            slots: Slots::new(name),
            durable_id: OnceLock::new(),
        })
    }

    /// Gives the table its log id; false if it had one already.
    pub(crate) fn set_durable_id(&self, id: u32) -> bool {
        self.durable_id.set(id).is_ok()
    }

    pub fn name(&self) -> &'static str {
        self.slots.name
    }

    /// The counter as `snapshot` sees it; `None` if it does not exist there.
    pub fn read(&self, snapshot: &Snapshot, row: RowId) -> Option<i64> {
        self.read_as(snapshot.read_ts(), None, row)
    }

    /// Deltas not folded yet (a statistic; exact once writers and GC rest).
    pub fn deltas(&self) -> usize {
        self.slots.held()
    }

    pub(crate) fn read_as(
        &self,
        read_ts: Timestamp,
        reader: Option<&Arc<TxnState>>,
        row: RowId,
    ) -> Option<i64> {
        self.slots.rows.slot(row)?.read().read(read_ts, reader)
    }

    pub(crate) fn create_as(&self, writer: &Arc<TxnState>, value: i64) -> Result<RowId, TxnError> {
        let (row, slot) = self.slots.rows.allocate().ok_or(TxnError::TableFull {
            table: self.slots.name,
        })?;
        let mut counter = slot.write();
        debug_assert!(counter.deltas.is_empty() && !counter.created);
        counter.deltas.push(Delta {
            writer: Arc::clone(writer),
            amount: value,
        });
        self.slots.add_held(1);
        Ok(row)
    }

    /// Adds `amount` to `row` as `writer` (reading at `read_ts`): never a
    /// conflict; `RowNotFound` if the row does not exist for the writer.
    pub(crate) fn add_as(
        &self,
        writer: &Arc<TxnState>,
        read_ts: Timestamp,
        row: RowId,
        amount: i64,
    ) -> Result<Written, TxnError> {
        let table = self.slots.name;
        let slot = self
            .slots
            .rows
            .slot(row)
            .ok_or(TxnError::RowNotFound { table, row })?;
        let mut counter = slot.write();
        if !counter.exists_for(read_ts, Some(writer)) {
            return Err(TxnError::RowNotFound { table, row });
        }
        let written = counter
            .add(writer, amount)
            .map_err(|AddRefusal::Overflow| TxnError::CounterOverflow { table, row })?;
        if written == Written::NewVersion {
            self.slots.add_held(1);
        }
        Ok(written)
    }
}

impl HasSlots for CounterTable {
    type Slot = CounterRow;

    fn slots(&self) -> &Slots<CounterRow> {
        &self.slots
    }

    fn redo(&self, row: RowId, writer: &Arc<TxnState>, out: &mut RedoBuf) {
        let Some(&id) = self.durable_id.get() else {
            return;
        };
        let own = self
            .slots
            .rows
            .slot(row)
            .and_then(|slot| slot.read().own(writer));
        let Some((amount, created)) = own else {
            panic!(
                "{} row {row} is in a write set without a delta of its writer",
                self.slots.name
            );
        };
        out.counter(id, row, created, amount);
    }
}

impl DurableRows for CounterTable {
    fn name(&self) -> &'static str {
        self.slots.name
    }

    fn checkpoint_rows(
        &self,
        read_ts: Timestamp,
        emit: &mut dyn FnMut(RowId, &[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        for row in 0..self.slots.rows.allocated() {
            let value = self
                .slots
                .rows
                .slot(row)
                .and_then(|s| s.read().read(read_ts, None));
            if let Some(value) = value {
                emit(row, &value.to_le_bytes())?;
            }
        }
        Ok(())
    }

    fn recover_put(&self, row: RowId, bytes: &[u8], _: &Arc<TxnState>) -> Result<(), String> {
        let value = <[u8; 8]>::try_from(bytes).map_err(|_| {
            format!(
                "{} row {row}: {} bytes, not 8",
                self.slots.name,
                bytes.len()
            )
        })?;
        self.recover_counter(row, true, i64::from_le_bytes(value))
    }

    fn recover_delete(&self, row: RowId) -> Result<(), String> {
        Err(format!(
            "delete of {} row {row}, a counter",
            self.slots.name
        ))
    }

    fn recover_counter(&self, row: RowId, created: bool, amount: i64) -> Result<(), String> {
        let slot = self
            .slots
            .rows
            .slot_or_allocate(row)
            .ok_or_else(|| format!("{} row {row} beyond the arena", self.slots.name))?;
        let mut counter = slot.write();
        if created {
            counter.base = amount;
            counter.created = true;
        } else if counter.created {
            counter.base = counter.base.wrapping_add(amount);
        } else {
            return Err(format!(
                "addition to {} row {row} before it exists",
                self.slots.name
            ));
        }
        Ok(())
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

    fn horizon(visible: Timestamp, active: &[Timestamp]) -> Horizon {
        Horizon {
            visible,
            active_sorted: active.to_vec(),
        }
    }

    /// A counter created at ts 1 with 100, then +5 at 3 and +7 at 6.
    fn counter() -> CounterRow {
        let mut row = CounterRow::default();
        for (ts, amount) in [(1, 100), (3, 5), (6, 7)] {
            row.deltas.push(Delta {
                writer: committed(ts),
                amount,
            });
        }
        row
    }

    #[test]
    fn readers_see_the_deltas_committed_at_or_before_their_timestamp() {
        let row = counter();
        assert_eq!(row.read(0, None), None, "not created yet at 0");
        assert_eq!(row.read(1, None), Some(100));
        assert_eq!(row.read(5, None), Some(105));
        assert_eq!(row.read(6, None), Some(112));
    }

    #[test]
    fn concurrent_adders_do_not_conflict_and_see_their_own_delta() {
        let mut row = counter();
        let (a, b) = (TxnState::new(), TxnState::new());
        assert_eq!(row.add(&a, 10), Ok(Written::NewVersion));
        assert_eq!(row.add(&b, 20), Ok(Written::NewVersion));
        assert_eq!(row.add(&a, 1), Ok(Written::OwnVersionReplaced));
        assert_eq!(row.read(6, Some(&a)), Some(123));
        assert_eq!(row.read(6, Some(&b)), Some(132));
        assert_eq!(row.read(6, None), Some(112));
        b.mark_committed(8);
        assert!(row.roll_back(&a));
        a.mark_aborted();
        assert_eq!(row.read(8, None), Some(132));
        assert_eq!(row.read(7, None), Some(112));
    }

    #[test]
    fn prune_folds_only_what_every_reader_sees() {
        let mut row = counter();
        // A live reader at 4 sees 1 and 3 but not 6.
        let pruned = row.prune(&horizon(6, &[4]));
        assert_eq!(pruned.versions_freed, 2);
        assert!(pruned.needs_more_gc);
        assert!(row.created);
        assert_eq!((row.base, row.base_ts), (105, 3));
        assert_eq!(row.read(4, None), Some(105));
        assert_eq!(row.read(6, None), Some(112));
        let pruned = row.prune(&horizon(6, &[]));
        assert_eq!(pruned.versions_freed, 1);
        assert!(!pruned.needs_more_gc);
        assert_eq!(row.read(6, None), Some(112));
        assert_eq!(row.newest_commit_ts(&TxnState::new()), 6);
    }

    #[test]
    fn uncommitted_creation_is_invisible_and_never_folded() {
        let mut row = CounterRow::default();
        let creator = TxnState::new();
        row.deltas.push(Delta {
            writer: Arc::clone(&creator),
            amount: 9,
        });
        assert_eq!(row.read(10, None), None);
        assert_eq!(row.read(10, Some(&creator)), Some(9));
        assert_eq!(row.prune(&horizon(10, &[])).versions_freed, 0);
        assert!(!row.created);
    }

    #[test]
    fn an_overflowing_own_delta_is_refused() {
        let mut row = counter();
        let a = TxnState::new();
        row.add(&a, i64::MAX).ok().unwrap();
        assert!(matches!(row.add(&a, 1), Err(AddRefusal::Overflow)));
    }
}
