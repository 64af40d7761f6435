//! A table of versioned rows, generic over the row type.
//!
//! Snapshot reads go through [`Table::read`] / [`Table::scan`]; writes only
//! through a [`crate::Transaction`], which calls the crate-private methods
//! here. Abort, validation and GC reach it through [`crate::slots::Rows`],
//! implemented once for every table with slots (`slots.rs`).

use std::sync::{Arc, OnceLock};

use crate::arena::RowId;
use crate::clock::Timestamp;
use crate::durable::{DurableRows, RedoBuf};
use crate::error::TxnError;
use crate::slots::{HasSlots, Slots};
use crate::snapshot::Snapshot;
use crate::txn::{Blocker, Newest};
use crate::version::{Chain, NewestVersion, TxnState, WriteRefusal, Written};

/// One table's rows and their versions. Share it as `Arc<Table<R>>`.
pub struct Table<R> {
    slots: Slots<Chain<R>>,
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
            slots: Slots::new(name),
            codec: OnceLock::new(),
        })
    }

    pub fn name(&self) -> &'static str {
        self.slots.name
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
        for row in 0..self.slots.rows.allocated() {
            let Some(slot) = self.slots.rows.slot(row) else {
                continue;
            };
            if let Some(value) = slot.read().read(snapshot.read_ts(), None) {
                f(row, value);
            }
        }
    }

    /// Starts recording which rows committed transactions write (the
    /// change journal, `journal.rs`), for [`Table::changed_rows`]. Writes
    /// committed before are not recorded: call it before writers start (see
    /// `journal.rs` for the exact condition). Idempotent.
    pub fn track_changes(&self) {
        self.slots.journal.get_or_init(Default::default);
    }

    /// The rows written by transactions committed after `after` and at or
    /// before `upto` (ascending, each once); `None` when changes are not
    /// tracked.
    pub fn changed_rows(&self, after: Timestamp, upto: Timestamp) -> Option<Vec<RowId>> {
        Some(self.slots.journal.get()?.rows_between(after, upto))
    }

    /// Forgets the recorded changes committed at or before `ts` (their
    /// reader no longer needs them).
    pub fn forget_changes_upto(&self, ts: Timestamp) {
        if let Some(journal) = self.slots.journal.get() {
            journal.forget_upto(ts);
        }
    }

    /// Change journal entries of transactions committed after `ts` (0 when
    /// not tracked).
    pub fn changes_recorded_after(&self, ts: Timestamp) -> usize {
        self.slots.journal.get().map_or(0, |j| j.count_after(ts))
    }

    /// Change journal entries held (0 when not tracked).
    pub fn changes_recorded(&self) -> usize {
        self.slots.journal.get().map_or(0, |j| j.len())
    }

    /// Versions stored in the table now (live rows, older versions still
    /// readable by some snapshot, uncommitted versions, tombstones).
    pub fn versions(&self) -> usize {
        self.slots.held()
    }

    /// Row ids handed out so far.
    pub fn rows_allocated(&self) -> u64 {
        self.slots.rows.allocated()
    }

    /// Calls `f` on every row `reader` sees at `read_ts` (its own writes
    /// included), in row-id order.
    pub(crate) fn scan_as(
        &self,
        read_ts: Timestamp,
        reader: &Arc<TxnState>,
        mut f: impl FnMut(RowId, &R),
    ) {
        for row in 0..self.slots.rows.allocated() {
            let Some(slot) = self.slots.rows.slot(row) else {
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
        self.slots
            .rows
            .slot(row)?
            .read()
            .read(read_ts, reader)
            .cloned()
    }

    pub(crate) fn read_with_as<T>(
        &self,
        read_ts: Timestamp,
        reader: Option<&Arc<TxnState>>,
        row: RowId,
        f: impl FnOnce(&R) -> T,
    ) -> Option<T> {
        self.slots
            .rows
            .slot(row)?
            .read()
            .read(read_ts, reader)
            .map(f)
    }

    pub(crate) fn insert_as(&self, writer: &Arc<TxnState>, value: R) -> Result<RowId, TxnError> {
        let (row, slot) = self.slots.rows.allocate().ok_or(TxnError::TableFull {
            table: self.slots.name,
        })?;
        slot.write().insert(writer, value);
        self.slots.add_held(1);
        Ok(row)
    }

    /// `row`'s newest version as `writer` would write over it (see
    /// [`crate::Transaction::newest`]).
    pub(crate) fn newest_as(&self, writer: &Arc<TxnState>, row: RowId) -> Newest<R> {
        let Some(slot) = self.slots.rows.slot(row) else {
            return Newest::Missing;
        };
        match slot.read().newest(writer) {
            NewestVersion::Own => Newest::Own,
            NewestVersion::Held(holder) => Newest::Held(Blocker(holder)),
            NewestVersion::Committed { value, ts } => Newest::Committed {
                value: value.clone(),
                ts,
            },
            NewestVersion::Missing => Newest::Missing,
        }
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
        let table = self.slots.name;
        let slot = self
            .slots
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
            self.slots.add_held(1);
        }
        Ok(written)
    }
}

impl<R: Clone + Send + Sync + 'static> HasSlots for Table<R> {
    type Slot = Chain<R>;

    fn slots(&self) -> &Slots<Chain<R>> {
        &self.slots
    }

    fn redo(&self, row: RowId, writer: &Arc<TxnState>, out: &mut RedoBuf) {
        let Some(codec) = self.codec.get() else {
            return;
        };
        let slot = self.slots.rows.slot(row);
        let chain = slot.map(|slot| slot.read());
        match chain.as_ref().and_then(|chain| chain.own(writer)) {
            Some(Some(value)) => out.put(codec.id, row, |bytes| (codec.encode)(value, bytes)),
            Some(None) => out.delete(codec.id, row),
            None => panic!(
                "{} row {row} is in a write set without a version of its writer",
                self.slots.name
            ),
        }
    }
}

impl<R: Clone + Send + Sync + 'static> DurableRows for Table<R> {
    fn name(&self) -> &'static str {
        self.slots.name
    }

    fn checkpoint_rows(
        &self,
        read_ts: Timestamp,
        emit: &mut dyn FnMut(RowId, &[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let codec = self.codec.get().expect("checkpoint of a registered table");
        let mut bytes = Vec::new();
        for row in 0..self.slots.rows.allocated() {
            let Some(slot) = self.slots.rows.slot(row) else {
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
        let value =
            (codec.decode)(bytes).map_err(|e| format!("{} row {row}: {e}", self.slots.name))?;
        self.recover_value(row, Some((recovery, value)))
    }

    fn recover_delete(&self, row: RowId) -> Result<(), String> {
        self.recover_value(row, None)
    }

    fn recover_counter(&self, row: RowId, _: bool, _: i64) -> Result<(), String> {
        Err(format!(
            "counter op on {} row {row}, a row table",
            self.slots.name
        ))
    }
}

impl<R: Clone + Send + Sync + 'static> Table<R> {
    /// Recovery: `row` holds `value` (written by the recovery state), or
    /// nothing.
    fn recover_value(&self, row: RowId, value: Option<(&Arc<TxnState>, R)>) -> Result<(), String> {
        let slot = self
            .slots
            .rows
            .slot_or_allocate(row)
            .ok_or_else(|| format!("{} row {row} beyond the arena", self.slots.name))?;
        let added = usize::from(value.is_some());
        let before = slot.write().recover(value);
        self.slots.add_held(added);
        self.slots.sub_held(before);
        Ok(())
    }
}
