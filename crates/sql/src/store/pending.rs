//! Writes a transaction has made but not installed: each kept beside the
//! version its snapshot read until the transaction commits (`rebase.rs`,
//! "Installed at commit"), so two transactions writing one table do not wait
//! for each other while their blocks run.
//!
//! Kept per transaction (by `Transaction::id`) in the store, not in the
//! catalog: nobody else can see them. A transaction that ends without
//! [`super::Store::commit`] (aborted, dropped with its session) leaves its
//! entry behind; [`PendingWrites::purge_finished`] removes it once the
//! transaction's handle says it finished.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use maestro_storage::column::Table;
use maestro_txn::{Blocker, RowId, Transaction};

use super::Entry;

/// What a write statement says about its change besides its rows.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChangeNotes {
    /// (column, largest value) per sequence the statement drew from
    /// (`defaults.rs`): raised in the version the commit installs.
    pub(crate) drawn: Vec<(usize, i64)>,
    /// INSERT … ON CONFLICT DO NOTHING: the statement skipped the rows
    /// whose keys its snapshot shows taken, so a key found taken later (by
    /// a transaction that committed after the snapshot) is 40001, as
    /// PostgreSQL's REPEATABLE READ answers, not 23505.
    pub(crate) skips_conflicts: bool,
}

impl ChangeNotes {
    /// `e`, a 23505 turned into 40001 when the statement skips conflicts.
    pub(crate) fn key_error(&self, e: crate::error::SqlError) -> crate::error::SqlError {
        use crate::error::{ErrorKind, SqlError};
        if self.skips_conflicts && e.kind == ErrorKind::UniqueViolation {
            return SqlError::new(
                ErrorKind::SerializationFailure,
                format!(
                    "could not serialize access due to concurrent insert ({})",
                    e.message
                ),
            );
        }
        e
    }
}

/// One write statement's change, as the statement saw the table.
pub(super) struct PendingChange {
    /// Combined ids deleted, in the transaction's view as it was then.
    pub(super) deleted: Vec<u32>,
    pub(super) appended: Arc<Table>,
    /// What else the statement said about its change.
    pub(super) notes: ChangeNotes,
    /// The deleted rows' positions in the version the statement changed
    /// (the durable record's): what the commit logs when nothing committed
    /// since the snapshot (`rebase.rs`, "Nothing committed since").
    pub(super) positions: Vec<u32>,
}

/// A table a transaction changed and has not installed.
pub(super) struct PendingTable {
    /// The version its snapshot read: what the changes build on.
    pub(super) base: Arc<Entry>,
    /// `base` with the changes: what the transaction reads.
    pub(super) view: Arc<Entry>,
    /// The changes in the order the statements made them.
    pub(super) changes: Vec<PendingChange>,
}

impl PendingTable {
    /// No change yet on top of `base`.
    pub(super) fn new(base: &Arc<Entry>) -> PendingTable {
        PendingTable {
            base: Arc::clone(base),
            view: Arc::clone(base),
            changes: Vec::new(),
        }
    }
}

struct PendingTxn {
    /// Finished once the transaction committed or aborted.
    handle: Blocker,
    /// By catalog row; installed in this order (a fixed order, so two
    /// committers never wait for each other in a cycle).
    tables: BTreeMap<RowId, PendingTable>,
}

/// Every transaction's pending writes.
#[derive(Default)]
pub(super) struct PendingWrites {
    txns: Mutex<HashMap<u64, PendingTxn>>,
}

impl PendingWrites {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, PendingTxn>> {
        self.txns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What `txn` reads of the tables it changed without installing them.
    pub(super) fn views(&self, txn: &Transaction) -> Vec<(RowId, Arc<Entry>)> {
        self.lock().get(&txn.id()).map_or_else(Vec::new, |p| {
            p.tables
                .iter()
                .map(|(row, t)| (*row, Arc::clone(&t.view)))
                .collect()
        })
    }

    /// Records `change` of the table at catalog row `row`, which `txn`
    /// read as `seen` (its snapshot's version, or its pending view), and
    /// what `txn` reads of it after the change.
    pub(super) fn record(
        &self,
        txn: &Transaction,
        row: RowId,
        seen: &Arc<Entry>,
        view: Entry,
        change: PendingChange,
    ) {
        let mut txns = self.lock();
        let pending = txns.entry(txn.id()).or_insert_with(|| PendingTxn {
            handle: txn.handle(),
            tables: BTreeMap::new(),
        });
        let table = pending
            .tables
            .entry(row)
            .or_insert_with(|| PendingTable::new(seen));
        table.view = Arc::new(view);
        table.changes.push(change);
    }

    /// The version `txn`'s pending changes of the table at `row` build on.
    pub(super) fn base(&self, txn: &Transaction, row: RowId) -> Option<Arc<Entry>> {
        let txns = self.lock();
        let table = txns.get(&txn.id())?.tables.get(&row)?;
        Some(Arc::clone(&table.base))
    }

    /// `txn`'s pending changes of the table at `row`, removed.
    pub(super) fn take(&self, txn: &Transaction, row: RowId) -> Option<PendingTable> {
        let mut txns = self.lock();
        let pending = txns.get_mut(&txn.id())?;
        let table = pending.tables.remove(&row);
        if pending.tables.is_empty() {
            txns.remove(&txn.id());
        }
        table
    }

    /// The catalog rows of the tables `txn` has pending changes of.
    pub(super) fn tables_of(&self, txn: &Transaction) -> Vec<RowId> {
        self.lock()
            .get(&txn.id())
            .map_or_else(Vec::new, |p| p.tables.keys().copied().collect())
    }

    /// Puts back `table`, the pending changes of the table at `row` taken
    /// with [`PendingWrites::take`] (rebased meanwhile).
    pub(super) fn put(&self, txn: &Transaction, row: RowId, table: PendingTable) {
        let mut txns = self.lock();
        let pending = txns.entry(txn.id()).or_insert_with(|| PendingTxn {
            handle: txn.handle(),
            tables: BTreeMap::new(),
        });
        pending.tables.insert(row, table);
    }

    /// All of `txn`'s pending changes, removed, by catalog row.
    pub(super) fn take_all(&self, txn: &Transaction) -> BTreeMap<RowId, PendingTable> {
        self.lock()
            .remove(&txn.id())
            .map_or_else(BTreeMap::new, |p| p.tables)
    }

    /// Forgets the pending writes of transactions that finished without
    /// installing them (aborted or dropped).
    pub(super) fn purge_finished(&self) {
        self.lock().retain(|_, p| !p.handle.is_finished());
    }

    /// Transactions with pending writes now (tests).
    pub(super) fn transactions(&self) -> usize {
        self.lock().len()
    }
}
