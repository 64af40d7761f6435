//! The simplest baseline: `std`'s `BTreeMap` behind one `parking_lot::RwLock`.

use std::collections::BTreeMap;
use std::ops::{Bound, RangeInclusive};

use parking_lot::RwLock;

use super::{IndexKey, IndexValue, OrderedIndex};

/// Entries copied per read-lock acquisition in `range`, so that `f` runs with no
/// lock held and a long scan does not starve writers.
const SCAN_CHUNK: usize = 256;

#[derive(Debug, Default)]
pub struct LockedBTreeMap<K, V> {
    map: RwLock<BTreeMap<K, V>>,
}

impl<K: IndexKey, V: IndexValue> LockedBTreeMap<K, V> {
    pub fn new() -> Self {
        LockedBTreeMap {
            map: RwLock::new(BTreeMap::new()),
        }
    }
}

impl<K: IndexKey, V: IndexValue> OrderedIndex for LockedBTreeMap<K, V> {
    type Key = K;
    type Value = V;
    fn lookup(&self, key: K) -> Option<V> {
        self.map.read().get(&key).copied()
    }
    fn insert(&self, key: K, value: V) -> Option<V> {
        self.map.write().insert(key, value)
    }
    fn remove(&self, key: K) -> Option<V> {
        self.map.write().remove(&key)
    }
    fn range(&self, range: RangeInclusive<K>, f: &mut dyn FnMut(K, V) -> bool) {
        let (lo, hi) = (*range.start(), *range.end());
        if lo > hi {
            return;
        }
        let mut from = Bound::Included(lo);
        let mut buf = Vec::with_capacity(SCAN_CHUNK);
        loop {
            buf.clear();
            buf.extend(
                self.map
                    .read()
                    .range((from, Bound::Included(hi)))
                    .take(SCAN_CHUNK)
                    .map(|(k, v)| (*k, *v)),
            );
            for &(k, v) in &buf {
                if !f(k, v) {
                    return;
                }
            }
            match buf.last() {
                Some(&(k, _)) if buf.len() == SCAN_CHUNK => from = Bound::Excluded(k),
                _ => return,
            }
        }
    }
    fn len(&self) -> usize {
        self.map.read().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_across_chunks_ending_exactly_at_the_bound() {
        let m = LockedBTreeMap::<u64, u64>::new();
        for k in 0..(2 * SCAN_CHUNK as u64) {
            m.insert(k, k + 1);
        }
        for hi in [SCAN_CHUNK as u64 - 1, 2 * SCAN_CHUNK as u64 - 1, u64::MAX] {
            let mut n = 0u64;
            m.range(0..=hi, &mut |k, v| {
                assert_eq!((k, v), (n, n + 1));
                n += 1;
                true
            });
            assert_eq!(n, hi.saturating_add(1).min(2 * SCAN_CHUNK as u64));
        }
    }
}
