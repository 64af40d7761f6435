//! A table of versioned rows, generic over the row type.
//!
//! Snapshot reads go through [`Table::read`] / [`Table::scan`]; writes only
//! through a [`crate::Transaction`], which calls the crate-private methods
//! here. [`Rows`] is the row-type-erased face the transaction and the garbage
//! collector use to reach a table in their write and read sets.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::arena::{Arena, RowId};
use crate::clock::Timestamp;
use crate::durable::{DurableRows, RedoBuf};
use crate::error::TxnError;
use crate::snapshot::{Horizon, Snapshot};
use crate::version::{Chain, Pruned, TxnState, WriteRefusal, Written};

/// One table's rows and their versions. Share it as `Arc<Table<R>>`.
pub struct Table<R> {
    name: &'static str,
    rows: Arena<Chain<R>>,
    /// Versions held by all chains (committed, uncommitted, tombstones).
    versions: AtomicUsize,
    /// Newest commit timestamp of a transaction that wrote this table; read
    /// and written only under the clock's commit lock (scan validation).
    last_write_commit_ts: AtomicU64,
    /// Set once the table is durable ([`crate::Database::make_durable`]).
    codec: OnceLock<Codec<R>>,
}

/// How a durable table's rows become bytes and back (postcard, a compact
/// serde format), and its id in log records.
pub(crate) struct Codec<R> {
    id: u32,
    encode: fn(&R, &mut Vec<u8>),
    decode: fn(&[u8]) -> Result<R, String>,
}

fn encode_postcard<R: serde::Serialize>(value: &R, out: &mut Vec<u8>) {
    let buffer = std::mem::take(out);
    // Postcard fails only for serde constructs it cannot express (unknown
    // sequence lengths), which a row type either uses always or never.
    *out = postcard::to_extend(value, buffer)
        .unwrap_or_else(|e| panic!("row type cannot be encoded by postcard: {e}"));
}

fn decode_postcard<R: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<R, String> {
    postcard::from_bytes(bytes).map_err(|e| e.to_string())
}

impl<R: Clone + Send + Sync + 'static> Table<R> {
    pub fn new(name: &'static str) -> Arc<Self> {
        Arc::new(Table {
            name,
            rows: Arena::new(),
            versions: AtomicUsize::new(0),
            last_write_commit_ts: AtomicU64::new(0),
            codec: OnceLock::new(),
        })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Gives the table its log id and codec; false if it had one already.
    pub(crate) fn set_codec(&self, id: u32) -> bool
    where
        R: serde::Serialize + serde::de::DeserializeOwned,
    {
        self.codec
            .set(Codec {
                id,
                encode: encode_postcard::<R>,
                decode: decode_postcard::<R>,
            })
            .is_ok()
    }

    /// The row as `snapshot` sees it; `None` if it does not exist there.
    pub fn read(&self, snapshot: &Snapshot, row: RowId) -> Option<R> {
        self.read_as(snapshot.read_ts(), None, row)
    }

    /// Calls `f` on every row `snapshot` sees, in row-id order. Rows inserted
    /// after the snapshot are skipped by visibility, not by timing.
    pub fn scan(&self, snapshot: &Snapshot, mut f: impl FnMut(RowId, &R)) {
        for row in 0..self.rows.allocated() {
            let Some(slot) = self.rows.slot(row) else {
                continue;
            };
            if let Some(value) = slot.read().read(snapshot.read_ts(), None) {
                f(row, value);
            }
        }
    }

    /// Versions stored in the table now (live rows, older versions still
    /// readable by some snapshot, uncommitted versions, tombstones).
    pub fn versions(&self) -> usize {
        // Relaxed: a statistic; exact once writers and GC are quiet.
        self.versions.load(Ordering::Relaxed)
    }

    /// Row ids handed out so far.
    pub fn rows_allocated(&self) -> u64 {
        self.rows.allocated()
    }

    /// Calls `f` on every row `reader` sees at `read_ts` (its own writes
    /// included), in row-id order.
    pub(crate) fn scan_as(
        &self,
        read_ts: Timestamp,
        reader: &Arc<TxnState>,
        mut f: impl FnMut(RowId, &R),
    ) {
        for row in 0..self.rows.allocated() {
            let Some(slot) = self.rows.slot(row) else {
                continue;
            };
            if let Some(value) = slot.read().read(read_ts, Some(reader)) {
                f(row, value);
            }
        }
    }

    pub(crate) fn read_as(
        &self,
        read_ts: Timestamp,
        reader: Option<&Arc<TxnState>>,
        row: RowId,
    ) -> Option<R> {
        self.rows.slot(row)?.read().read(read_ts, reader).cloned()
    }

    pub(crate) fn read_with_as<T>(
        &self,
        read_ts: Timestamp,
        reader: Option<&Arc<TxnState>>,
        row: RowId,
        f: impl FnOnce(&R) -> T,
    ) -> Option<T> {
        self.rows.slot(row)?.read().read(read_ts, reader).map(f)
    }

    pub(crate) fn insert_as(&self, writer: &Arc<TxnState>, value: R) -> Result<RowId, TxnError> {
        let (row, slot) = self
            .rows
            .allocate()
            .ok_or(TxnError::TableFull { table: self.name })?;
        slot.write().insert(writer, value);
        self.versions.fetch_add(1, Ordering::Relaxed);
        Ok(row)
    }

    /// Updates (`Some`) or deletes (`None`) `row` as `writer`. A write
    /// conflict also returns the holder of the newer uncommitted version.
    pub(crate) fn write_as(
        &self,
        writer: &Arc<TxnState>,
        read_ts: Timestamp,
        row: RowId,
        value: Option<R>,
    ) -> Result<Written, (TxnError, Option<Arc<TxnState>>)> {
        let table = self.name;
        let slot = self
            .rows
            .slot(row)
            .ok_or((TxnError::RowNotFound { table, row }, None))?;
        let written =
            slot.write()
                .write(writer, read_ts, value)
                .map_err(|refusal| match refusal {
                    WriteRefusal::Locked(holder) => {
                        (TxnError::WriteConflict { table, row }, Some(holder))
                    }
                    WriteRefusal::TooOld => (TxnError::SnapshotTooOld { table, row }, None),
                    WriteRefusal::Missing => (TxnError::RowNotFound { table, row }, None),
                })?;
        if written == Written::NewVersion {
            self.versions.fetch_add(1, Ordering::Relaxed);
        }
        Ok(written)
    }
}

/// A table seen without its row type: what write sets, read sets and the GC
/// queue hold.
pub(crate) trait Rows: Send + Sync {
    fn name(&self) -> &'static str;
    /// Records that a transaction writing this table commits at `ts`. Called
    /// under the commit lock.
    fn note_write_commit(&self, ts: Timestamp);
    /// Newest commit timestamp of a writer of this table. Called under the
    /// commit lock.
    fn last_write_commit_ts(&self) -> Timestamp;
    /// Removes `writer`'s uncommitted version of `row` (abort).
    fn roll_back(&self, row: RowId, writer: &Arc<TxnState>);
    /// Commit timestamp of the newest version of `row` not written by `reader`.
    fn newest_commit_ts(&self, row: RowId, reader: &Arc<TxnState>) -> Timestamp;
    /// Marks `row` queued for GC; true if it was not queued and holds
    /// versions GC may later free.
    fn queue_for_gc(&self, row: RowId) -> bool;
    /// Frees what `horizon` allows; the row leaves the queue unless more
    /// remains to free.
    fn prune(&self, row: RowId, horizon: &Horizon) -> Pruned;
    /// Appends the redo op of `writer`'s version of `row` (nothing for a
    /// table that is not durable). Called before commit.
    fn redo(&self, row: RowId, writer: &Arc<TxnState>, out: &mut RedoBuf);
}

impl<R: Clone + Send + Sync + 'static> Rows for Table<R> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn note_write_commit(&self, ts: Timestamp) {
        // Relaxed: written and read only under the commit lock, which orders
        // the accesses.
        self.last_write_commit_ts.fetch_max(ts, Ordering::Relaxed);
    }

    fn last_write_commit_ts(&self) -> Timestamp {
        // Relaxed: see `note_write_commit`.
        self.last_write_commit_ts.load(Ordering::Relaxed)
    }

    fn roll_back(&self, row: RowId, writer: &Arc<TxnState>) {
        let Some(slot) = self.rows.slot(row) else {
            return;
        };
        if slot.write().roll_back(writer) {
            self.versions.fetch_sub(1, Ordering::Relaxed);
        }
    }

    fn newest_commit_ts(&self, row: RowId, reader: &Arc<TxnState>) -> Timestamp {
        self.rows
            .slot(row)
            .map_or(0, |slot| slot.read().newest_commit_ts(reader))
    }

    fn queue_for_gc(&self, row: RowId) -> bool {
        let Some(slot) = self.rows.slot(row) else {
            return false;
        };
        let mut chain = slot.write();
        if chain.queued_for_gc || !chain.may_hold_garbage() {
            return false;
        }
        chain.queued_for_gc = true;
        true
    }

    fn prune(&self, row: RowId, horizon: &Horizon) -> Pruned {
        let Some(slot) = self.rows.slot(row) else {
            return Pruned {
                versions_freed: 0,
                needs_more_gc: false,
            };
        };
        let mut chain = slot.write();
        let pruned = chain.prune(horizon);
        chain.queued_for_gc = pruned.needs_more_gc;
        drop(chain);
        self.versions
            .fetch_sub(pruned.versions_freed, Ordering::Relaxed);
        pruned
    }

    fn redo(&self, row: RowId, writer: &Arc<TxnState>, out: &mut RedoBuf) {
        let Some(codec) = self.codec.get() else {
            return;
        };
        let slot = self.rows.slot(row);
        let chain = slot.map(|slot| slot.read());
        match chain.as_ref().and_then(|chain| chain.own(writer)) {
            Some(Some(value)) => out.put(codec.id, row, |bytes| (codec.encode)(value, bytes)),
            Some(None) => out.delete(codec.id, row),
            None => panic!(
                "{} row {row} is in a write set without a version of its writer",
                self.name
            ),
        }
    }
}

impl<R: Clone + Send + Sync + 'static> DurableRows for Table<R> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn checkpoint_rows(
        &self,
        read_ts: Timestamp,
        emit: &mut dyn FnMut(RowId, &[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let codec = self.codec.get().expect("checkpoint of a registered table");
        let mut bytes = Vec::new();
        for row in 0..self.rows.allocated() {
            let Some(slot) = self.rows.slot(row) else {
                continue;
            };
            bytes.clear();
            if let Some(value) = slot.read().read(read_ts, None) {
                (codec.encode)(value, &mut bytes);
            } else {
                continue;
            }
            emit(row, &bytes)?;
        }
        Ok(())
    }

    fn recover_put(
        &self,
        row: RowId,
        bytes: &[u8],
        recovery: &Arc<TxnState>,
    ) -> Result<(), String> {
        let codec = self.codec.get().expect("recovery of a registered table");
        let value = (codec.decode)(bytes).map_err(|e| format!("{} row {row}: {e}", self.name))?;
        self.recover_value(row, Some(value), recovery)
    }

    fn recover_delete(&self, row: RowId) -> Result<(), String> {
        self.recover_value(row, None, &TxnState::new())
    }

    fn recover_counter(&self, row: RowId, _: bool, _: i64) -> Result<(), String> {
        Err(format!(
            "counter op on {} row {row}, a row table",
            self.name
        ))
    }
}

impl<R: Clone + Send + Sync + 'static> Table<R> {
    fn recover_value(
        &self,
        row: RowId,
        value: Option<R>,
        recovery: &Arc<TxnState>,
    ) -> Result<(), String> {
        let slot = self
            .rows
            .slot_or_allocate(row)
            .ok_or_else(|| format!("{} row {row} beyond the arena", self.name))?;
        let added = usize::from(value.is_some());
        let before = slot.write().recover(recovery, value);
        self.versions.fetch_add(added, Ordering::Relaxed);
        self.versions.fetch_sub(before, Ordering::Relaxed);
        Ok(())
    }
}
