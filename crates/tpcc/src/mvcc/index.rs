//! An ordered index for the MVCC path: packed key → row id in the project's
//! OLC B+-tree (`maestro_storage::index::OlcBTree`, the 2PL path's index):
//! lookups and scans take no lock, writers lock one node.
//!
//! Entries are not versioned. A transaction adds its rows' entries when it
//! inserts them (before commit), and readers check every row they reach
//! through the index against their snapshot (`Transaction::read` returns
//! `None` for a row that is not visible), so an entry of an uncommitted,
//! aborted or deleted row is skipped. Keys are unique among committed rows
//! (order ids are drawn from the district row, which first-updater-wins
//! serializes), so the latest insert of a key overwriting an older, dead
//! entry is correct.
//!
//! Entries of deleted rows are removed once no snapshot can read the row
//! (`MvccDatabase::retire`): New-Order's index would otherwise keep every
//! delivered order, and Delivery's search for the oldest undelivered one
//! would walk all of them.

use std::ops::RangeInclusive;

use maestro_storage::index::OlcBTree;
use maestro_txn::RowId;

#[derive(Default)]
pub struct OrderedIndex {
    tree: OlcBTree<u64, RowId>,
}

impl OrderedIndex {
    pub fn insert(&self, key: u64, row: RowId) {
        self.tree.insert(key, row);
    }

    /// Removes `key` (a no-op if absent).
    pub fn remove(&self, key: u64) {
        self.tree.remove(key);
    }

    /// Walks `range` ascending until `f` returns `Some`. Nothing is locked
    /// while `f` runs (the tree hands out one leaf's entries at a time), so
    /// `f` may read rows.
    pub fn find_map<T>(
        &self,
        range: RangeInclusive<u64>,
        mut f: impl FnMut(u64, RowId) -> Option<T>,
    ) -> Option<T> {
        let mut found = None;
        self.tree.range(range, |k, r| {
            found = f(k, r);
            found.is_none()
        });
        found
    }

    pub fn get(&self, key: u64) -> Option<RowId> {
        self.tree.lookup(key)
    }

    /// The entries in `range`, ascending.
    pub fn range(&self, range: RangeInclusive<u64>) -> Vec<(u64, RowId)> {
        let mut entries = Vec::new();
        self.tree.range(range, |k, r| {
            entries.push((k, r));
            true
        });
        entries
    }

    /// The entries in `range`, descending, at most `limit` of them (the
    /// tree scans ascending: for the short per-customer ranges it serves).
    pub fn range_rev(&self, range: RangeInclusive<u64>, limit: usize) -> Vec<(u64, RowId)> {
        let mut entries = self.range(range);
        entries.reverse();
        entries.truncate(limit);
        entries
    }

    /// Entry count (exact when no writer runs).
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
