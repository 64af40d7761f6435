//! An ordered index for the MVCC path: packed key → row id in a `BTreeMap`
//! behind a reader-writer latch.
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

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use maestro_txn::RowId;
use parking_lot::RwLock;

#[derive(Default)]
pub struct OrderedIndex {
    map: RwLock<BTreeMap<u64, RowId>>,
}

impl OrderedIndex {
    pub fn insert(&self, key: u64, row: RowId) {
        self.map.write().insert(key, row);
    }

    /// Removes `key` (a no-op if absent).
    pub fn remove(&self, key: u64) {
        self.map.write().remove(&key);
    }

    /// Walks `range` ascending under the read latch until `f` returns
    /// `Some`. `f` may read rows (their latches are never held while the
    /// index latch is taken), but must not touch this index.
    pub fn find_map<T>(
        &self,
        range: RangeInclusive<u64>,
        mut f: impl FnMut(u64, RowId) -> Option<T>,
    ) -> Option<T> {
        self.map.read().range(range).find_map(|(k, r)| f(*k, *r))
    }

    pub fn get(&self, key: u64) -> Option<RowId> {
        self.map.read().get(&key).copied()
    }

    /// The entries in `range`, ascending (a copy: the latch is not held while
    /// the caller reads rows).
    pub fn range(&self, range: RangeInclusive<u64>) -> Vec<(u64, RowId)> {
        self.map
            .read()
            .range(range)
            .map(|(k, r)| (*k, *r))
            .collect()
    }

    /// The entries in `range`, descending, at most `limit` of them.
    pub fn range_rev(&self, range: RangeInclusive<u64>, limit: usize) -> Vec<(u64, RowId)> {
        let map = self.map.read();
        map.range(range)
            .rev()
            .take(limit)
            .map(|(k, r)| (*k, *r))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.map.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
