//! B+-tree indexes: optimistic lock coupling and the baselines (see issue 4).
//!
//! - [`OlcBTree`]: a B+-tree synchronized with optimistic lock coupling (Leis,
//!   Haubenschild, Neumann, IEEE Data Eng. Bull. 2019). The protocol is written
//!   down in `OLC.md` beside this file.
//! - [`RwLockCouplingBTree`]: the same tree shape with one reader-writer lock per
//!   node and traditional (pessimistic) lock coupling — the paper's baseline.
//! - [`LockedBTreeMap`]: `std`'s `BTreeMap` behind one `parking_lot::RwLock`.
//!
//! All three implement [`OrderedIndex`], so tests and benchmarks treat them alike.
//!
//! Keys and values are restricted to types that pack into a `u64` ([`IndexKey`],
//! [`IndexValue`]): the OLC tree keeps every field an optimistic reader touches
//! in an atomic, and `AtomicU64` is the widest plain atomic. TPC-C keys pack into
//! a `u64` and values are row ids, so this costs nothing there.

mod coupling;
mod locked_map;
mod olc;
mod stripes;
mod version;

use std::fmt::Debug;
use std::ops::RangeInclusive;

pub use coupling::RwLockCouplingBTree;
pub use locked_map::LockedBTreeMap;
pub use olc::{DEFAULT_RESTART_LIMIT, OlcBTree, OlcStats, TreeShape};
pub use version::{Restart, Version, VersionLock};

/// Maximum entries per leaf and children per inner node of the two B+-trees
/// unless a test picks another one: 255 makes both node kinds exactly 4096 bytes
/// (16-byte header + 255 × 16 bytes), the node size of the paper's experiments.
pub const DEFAULT_FANOUT: usize = 255;

/// A value that packs losslessly into a `u64` word.
///
/// Contract: `from_word(to_word(x)) == x`, and `from_word` is total (any `u64`
/// maps to *some* value without panicking — an optimistic reader may decode a
/// word it later discards).
pub trait IndexValue: Copy + Send + Sync + Debug + 'static {
    fn to_word(self) -> u64;
    fn from_word(word: u64) -> Self;
}

/// A key that packs into a `u64` word *preserving order*: `a < b` ⇔
/// `a.to_word() < b.to_word()`. The trees compare words, never keys.
pub trait IndexKey: IndexValue + Ord {
    /// The smallest and largest keys (`from_word(0)` and `from_word(u64::MAX)`
    /// restricted to the type's range).
    const MIN: Self;
    const MAX: Self;
}

macro_rules! unsigned_word {
    ($($t:ty),*) => {$(
        impl IndexValue for $t {
            #[inline]
            fn to_word(self) -> u64 {
                self as u64
            }
            #[inline]
            fn from_word(word: u64) -> Self {
                // Truncation keeps it total; stored words always came from to_word.
                word as $t
            }
        }
        impl IndexKey for $t {
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
        }
    )*};
}
unsigned_word!(u64, u32, u16, usize);

impl IndexValue for i64 {
    /// Flips the sign bit so that the unsigned order of words is the signed order
    /// of keys.
    #[inline]
    fn to_word(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
    #[inline]
    fn from_word(word: u64) -> Self {
        (word ^ (1 << 63)) as i64
    }
}
impl IndexKey for i64 {
    const MIN: Self = i64::MIN;
    const MAX: Self = i64::MAX;
}

/// What the engine needs from an ordered index. Every operation is linearizable
/// on its own; a range scan is not a snapshot (see [`OrderedIndex::range`]).
pub trait OrderedIndex: Send + Sync {
    type Key: IndexKey;
    type Value: IndexValue;

    /// The value stored under `key`.
    fn lookup(&self, key: Self::Key) -> Option<Self::Value>;

    /// Inserts or overwrites; returns the previous value.
    fn insert(&self, key: Self::Key, value: Self::Value) -> Option<Self::Value>;

    /// Removes `key`; returns the value it had.
    fn remove(&self, key: Self::Key) -> Option<Self::Value>;

    /// Calls `f` on the entries with keys in `range`, in ascending key order, until
    /// `f` returns false.
    ///
    /// Not a snapshot: the trees read one leaf at a time (each leaf atomically) and
    /// call `f` with no lock held. Every key present for the whole scan is reported
    /// exactly once; a key inserted or removed during the scan may or may not be;
    /// keys are strictly increasing and every reported pair was, at some moment
    /// during the scan, in the index.
    fn range(
        &self,
        range: RangeInclusive<Self::Key>,
        f: &mut dyn FnMut(Self::Key, Self::Value) -> bool,
    );

    /// Number of entries; exact when no operation runs concurrently, approximate
    /// otherwise.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Up to `limit` entries with keys ≥ `from`, ascending.
    fn scan_from(&self, from: Self::Key, limit: usize) -> Vec<(Self::Key, Self::Value)> {
        let mut out = Vec::with_capacity(limit.min(1024));
        if limit == 0 {
            return out;
        }
        self.range(from..=Self::Key::MAX, &mut |k, v| {
            out.push((k, v));
            out.len() < limit
        });
        out
    }

    /// The entry with the smallest key ≥ `from` (TPC-C's new-order queue).
    fn first_at_or_after(&self, from: Self::Key) -> Option<(Self::Key, Self::Value)> {
        let mut first = None;
        self.range(from..=Self::Key::MAX, &mut |k, v| {
            first = Some((k, v));
            false
        });
        first
    }
}

/// The inclusive word range of a key range, or None when it is empty.
fn word_range<K: IndexKey>(range: &RangeInclusive<K>) -> Option<(u64, u64)> {
    let (lo, hi) = (range.start().to_word(), range.end().to_word());
    (lo <= hi).then_some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_keep_order() {
        let ints = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in ints.windows(2) {
            assert!(w[0].to_word() < w[1].to_word(), "{w:?}");
        }
        for x in ints {
            assert_eq!(i64::from_word(x.to_word()), x);
        }
        for x in [0u32, 1, u32::MAX] {
            assert_eq!(u32::from_word(x.to_word()), x);
        }
        assert_eq!(u64::MAX.to_word(), u64::MAX);
        assert_eq!(i64::MIN.to_word(), 0);
        assert_eq!(i64::MAX.to_word(), u64::MAX);
    }

    fn exercise<I: OrderedIndex<Key = u64, Value = u64>>(idx: &I) {
        assert!(idx.is_empty());
        assert_eq!(idx.insert(5, 50), None);
        assert_eq!(idx.insert(1, 10), None);
        assert_eq!(idx.insert(9, 90), None);
        assert_eq!(idx.insert(5, 51), Some(50));
        assert_eq!(idx.lookup(5), Some(51));
        assert_eq!(idx.lookup(4), None);
        assert_eq!(idx.len(), 3);
        assert_eq!(idx.first_at_or_after(2), Some((5, 51)));
        assert_eq!(idx.first_at_or_after(10), None);
        assert_eq!(idx.scan_from(0, 2), vec![(1, 10), (5, 51)]);
        assert_eq!(idx.scan_from(0, 0), vec![]);
        let mut seen = vec![];
        idx.range(u64::MIN..=u64::MAX, &mut |k, v| {
            seen.push((k, v));
            true
        });
        assert_eq!(seen, vec![(1, 10), (5, 51), (9, 90)]);
        #[allow(clippy::reversed_empty_ranges)]
        idx.range(9..=1, &mut |_, _| panic!("empty range"));
        assert_eq!(idx.remove(5), Some(51));
        assert_eq!(idx.remove(5), None);
        assert_eq!(idx.len(), 2);
        assert_eq!(idx.lookup(u64::MAX), None);
        assert_eq!(idx.insert(u64::MAX, 1), None);
        assert_eq!(idx.first_at_or_after(10), Some((u64::MAX, 1)));
    }

    #[test]
    fn all_three_behave_alike_on_a_small_script() {
        exercise(&OlcBTree::<u64, u64>::new());
        exercise(&OlcBTree::<u64, u64, 4>::new());
        exercise(&OlcBTree::<u64, u64, 4>::with_restart_limit(0));
        exercise(&RwLockCouplingBTree::<u64, u64>::new());
        exercise(&RwLockCouplingBTree::<u64, u64, 4>::new());
        exercise(&LockedBTreeMap::<u64, u64>::new());
    }

    #[test]
    fn signed_keys_scan_in_signed_order() {
        let t = OlcBTree::<i64, u64, 4>::new();
        for k in [-3i64, 7, -100, 0, 5, i64::MIN, i64::MAX] {
            t.insert(k, k.unsigned_abs());
        }
        let keys: Vec<i64> = t
            .scan_from(i64::MIN, 100)
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(keys, vec![i64::MIN, -100, -3, 0, 5, 7, i64::MAX]);
        assert_eq!(t.first_at_or_after(-50), Some((-3, 3)));
    }
}
