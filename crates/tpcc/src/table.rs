//! Row storage: an append-only arena of rows addressed by a dense `u64` row id.
//!
//! Each row sits behind its own short physical latch (`parking_lot::RwLock`),
//! taken for the duration of one read or one in-place update; logical
//! isolation (2PL) is the transaction layer's business. Rows never move once
//! written, so a row id, and a `&RwLock<R>` borrowed from the table, stay valid
//! for the table's lifetime.
//!
//! Layout: [`maestro_txn::chunks::Chunks`] (the MVCC arena's too), so readers
//! never lock and concurrent appenders only meet on one `fetch_add`. Memory
//! grows with inserted rows: at most two partly filled chunks per table (one
//! allocated ahead), plus pointer arrays of 24 bytes per chunk.
//!
//! Deletion (Delivery's new-order rows, undo of an insert) only marks the row;
//! its slot is never reused, keeping every row id unambiguous.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use maestro_txn::chunks::Chunks;
use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::error::TpccError;

/// The address of a row within its table.
pub type RowId = u64;

/// Row ids from this one on are refused with [`TpccError::TableFull`].
pub const MAX_ROWS: u64 = maestro_txn::chunks::ROWS_MAX;

struct Slot<R> {
    row: OnceLock<RwLock<R>>,
    deleted: AtomicBool,
}

impl<R> Default for Slot<R> {
    fn default() -> Self {
        Slot {
            row: OnceLock::new(),
            deleted: AtomicBool::new(false),
        }
    }
}

/// One table's rows. `Sync` when `R: Send + Sync`, so threads share it by `&`.
pub struct Table<R> {
    name: &'static str,
    /// Row ids handed out so far (including rows still being written).
    next: AtomicU64,
    deleted: AtomicU64,
    slots: Chunks<Slot<R>>,
}

impl<R> Table<R> {
    pub fn new(name: &'static str) -> Self {
        Table {
            name,
            next: AtomicU64::new(0),
            deleted: AtomicU64::new(0),
            slots: Chunks::new(),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Appends `row` and returns its id. Safe to call from many threads; ids are
    /// dense and increase in the order the appends reserved them.
    pub fn append(&self, row: R) -> Result<RowId, TpccError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if id >= MAX_ROWS {
            return Err(TpccError::TableFull { table: self.name });
        }
        let fresh = self
            .slots
            .slot_for_append(id)
            .row
            .set(RwLock::new(row))
            .is_ok();
        debug_assert!(fresh, "row id {id} handed out twice");
        Ok(id)
    }

    fn slot(&self, id: RowId) -> Option<&Slot<R>> {
        self.slots.slot(id)
    }

    /// The latch of a live row; `None` for ids never written (or still being
    /// written) and for deleted rows.
    pub fn get(&self, id: RowId) -> Option<&RwLock<R>> {
        let slot = self.slot(id)?;
        if slot.deleted.load(Ordering::Acquire) {
            return None;
        }
        slot.row.get()
    }

    /// Shared latch on a live row.
    pub fn read(&self, id: RowId) -> Option<RwLockReadGuard<'_, R>> {
        self.get(id).map(RwLock::read)
    }

    /// Exclusive latch on a live row, for an in-place update.
    pub fn write(&self, id: RowId) -> Option<RwLockWriteGuard<'_, R>> {
        self.get(id).map(RwLock::write)
    }

    /// Marks a row deleted; true if it was live. The row's memory stays.
    pub fn delete(&self, id: RowId) -> bool {
        self.set_deleted(id, true)
    }

    /// Revives a deleted row (undo of a delete); true if it was deleted.
    pub fn undelete(&self, id: RowId) -> bool {
        self.set_deleted(id, false)
    }

    fn set_deleted(&self, id: RowId, deleted: bool) -> bool {
        let Some(slot) = self.slot(id).filter(|s| s.row.get().is_some()) else {
            return false;
        };
        let changed = slot.deleted.swap(deleted, Ordering::AcqRel) != deleted;
        if changed && deleted {
            self.deleted.fetch_add(1, Ordering::Relaxed);
        } else if changed {
            self.deleted.fetch_sub(1, Ordering::Relaxed);
        }
        changed
    }

    /// Row ids handed out so far: live, deleted and in-flight rows.
    pub fn allocated(&self) -> u64 {
        self.next.load(Ordering::Relaxed).min(MAX_ROWS)
    }

    /// Live rows; exact when no append or delete runs concurrently.
    pub fn live(&self) -> u64 {
        self.allocated()
            .saturating_sub(self.deleted.load(Ordering::Relaxed))
    }

    /// Calls `f` on every live row in row-id order, holding each row's shared
    /// latch only during its call. Not a snapshot: rows appended or deleted
    /// during the scan may or may not be seen.
    pub fn scan(&self, mut f: impl FnMut(RowId, &R)) {
        self.slots.for_each_below(self.allocated(), |id, slot| {
            if slot.deleted.load(Ordering::Acquire) {
                return;
            }
            if let Some(row) = slot.row.get() {
                f(id, &row.read());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_updated_deleted_and_revived() {
        let t = Table::new("t");
        let ids: Vec<RowId> = (0..3000u32).map(|i| t.append(i).unwrap()).collect();
        assert_eq!(ids, (0..3000).collect::<Vec<_>>());
        *t.write(1500).unwrap() += 7;
        assert_eq!(*t.read(1500).unwrap(), 1507);
        assert!(t.read(3000).is_none() && t.read(u64::MAX).is_none());
        assert!(t.delete(10) && !t.delete(10) && !t.delete(5000));
        assert!(t.read(10).is_none());
        assert_eq!((t.allocated(), t.live()), (3000, 2999));
        let mut seen = 0;
        t.scan(|id, &v| {
            assert_ne!(id, 10);
            assert_eq!(u64::from(v), if id == 1500 { 1507 } else { id });
            seen += 1;
        });
        assert_eq!(seen, 2999);
        assert!(t.undelete(10) && !t.undelete(10));
        assert_eq!((t.live(), *t.read(10).unwrap()), (3000, 10));
    }
}
