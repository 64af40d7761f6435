//! A sorted index of one main column: the column's positions ordered by
//! (value, position), so the rows with a value in a range are one
//! contiguous run of it, found by binary search (issue 16: "indexes cover
//! main and delta" — the SQL store's index scan reads this for the main
//! and scans the small delta).
//!
//! A main is immutable, so its index never goes stale: it is built once
//! per (table version, column) and cached in the [`super::Table`]
//! ([`super::Table::sorted_index`]), as column statistics are.
//!
//! Order per type: integers, decimals, dates and timestamps by number;
//! dictionary strings by code (the dictionary is sorted, so codes order
//! like the strings: [`super::DictColumn`]); heap strings by bytes.
//! Lookups return ascending positions (what a filter's row ids must be).

use std::cmp::Ordering;
use std::ops::{Bound, Range};

use super::column::Column;

/// A value to look up: a number at a scale (an integer column's values
/// have scale 0; a decimal column's its scale; dates are days and
/// timestamps microseconds, scale 0), or a string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexKey {
    Num { value: i128, scale: u8 },
    Str(String),
}

/// The largest scale a key or column may have for the exact cross-scale
/// comparison (`10^SCALE_MAX` times an `i64` fits an `i128`).
const SCALE_MAX: u8 = 18;

impl IndexKey {
    /// Whether the key compares with `col`'s values: a number with a
    /// numeric or date column, a string with a string column.
    pub fn fits(&self, col: &Column) -> bool {
        match self {
            IndexKey::Num { scale, .. } => {
                *scale <= SCALE_MAX
                    && matches!(
                        col,
                        Column::Int32(_) | Column::Int64(_) | Column::Decimal(_) | Column::Date(_)
                    )
            }
            IndexKey::Str(_) => matches!(col, Column::Str(_) | Column::StrHeap(_)),
        }
    }
}

/// The positions of one column sorted by (value, position).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortedIndex {
    order: Vec<u32>,
}

impl SortedIndex {
    /// Sorts `col`'s positions: O(n log n), once per main version.
    pub fn build(col: &Column) -> SortedIndex {
        let mut order: Vec<u32> = (0..col.len() as u32).collect();
        sort_by_value(col, &mut order);
        SortedIndex { order }
    }

    /// Rows indexed (the column's length when built).
    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Allocated bytes.
    pub fn heap_bytes(&self) -> usize {
        self.order.capacity() * size_of::<u32>()
    }

    /// The run of the sorted order whose values lie within the bounds;
    /// `None` if a key does not fit the column ([`IndexKey::fits`]) or
    /// `col` is not the column this index was built on (its length).
    fn run(
        &self,
        col: &Column,
        lo: Bound<&IndexKey>,
        hi: Bound<&IndexKey>,
    ) -> Option<Range<usize>> {
        if col.len() != self.order.len() || !bounds_fit(col, lo, hi) {
            return None;
        }
        Some(run_in(&self.order, col, lo, hi))
    }

    /// How many rows have a value within the bounds (O(log n): for
    /// deciding whether an index scan pays). `None` as for
    /// [`SortedIndex::range`].
    pub fn count(&self, col: &Column, lo: Bound<&IndexKey>, hi: Bound<&IndexKey>) -> Option<usize> {
        self.run(col, lo, hi).map(|r| r.len())
    }

    /// The positions whose value lies within the bounds, ascending (`=`:
    /// both bounds included and equal; `<`: an excluded upper bound; …).
    /// `None` if a key does not fit the column or `col` is not the column
    /// the index was built on.
    pub fn range(
        &self,
        col: &Column,
        lo: Bound<&IndexKey>,
        hi: Bound<&IndexKey>,
    ) -> Option<Vec<u32>> {
        let run = self.run(col, lo, hi)?;
        let mut out = self.order[run].to_vec();
        out.sort_unstable();
        Some(out)
    }

    /// The positions whose value equals one of `keys` (`IN (list)`),
    /// ascending, each once however often its value is listed.
    pub fn any_of(&self, col: &Column, keys: &[IndexKey]) -> Option<Vec<u32>> {
        let mut runs = Vec::with_capacity(keys.len());
        for k in keys {
            runs.push(self.run(col, Bound::Included(k), Bound::Included(k))?);
        }
        // Equal keys give equal runs; distinct values give disjoint ones.
        runs.sort_by_key(|r| (r.start, r.end));
        runs.dedup();
        let mut out: Vec<u32> = runs
            .into_iter()
            .flat_map(|r| self.order[r].iter().copied())
            .collect();
        out.sort_unstable();
        Some(out)
    }

    /// Rows with a value equal to one of `keys` (see [`SortedIndex::any_of`]).
    pub fn count_any_of(&self, col: &Column, keys: &[IndexKey]) -> Option<usize> {
        let mut runs = Vec::with_capacity(keys.len());
        for k in keys {
            runs.push(self.run(col, Bound::Included(k), Bound::Included(k))?);
        }
        runs.sort_by_key(|r| (r.start, r.end));
        runs.dedup();
        Some(runs.iter().map(|r| r.len()).sum())
    }
}

/// Sorts `positions` (of `col`, ascending) by value, stably: ties keep
/// their position order, so the result is ordered by (value, position).
pub(super) fn sort_by_value(col: &Column, positions: &mut [u32]) {
    match col {
        Column::Int32(v) | Column::Date(v) => positions.sort_by_key(|&p| v[p as usize]),
        Column::Int64(v) => positions.sort_by_key(|&p| v[p as usize]),
        Column::Decimal(d) => positions.sort_by_key(|&p| d.values()[p as usize]),
        Column::Str(d) => positions.sort_by_key(|&p| d.codes()[p as usize]),
        Column::StrHeap(h) => positions.sort_by(|&a, &b| h.get(a as usize).cmp(h.get(b as usize))),
    }
}

/// Positions `a` and `b` of `col` in (value, position) order.
pub(super) fn cmp_positions(col: &Column, a: u32, b: u32) -> Ordering {
    let (i, j) = (a as usize, b as usize);
    let by_value = match col {
        Column::Int32(v) | Column::Date(v) => v[i].cmp(&v[j]),
        Column::Int64(v) => v[i].cmp(&v[j]),
        Column::Decimal(d) => d.values()[i].cmp(&d.values()[j]),
        Column::Str(d) => d.codes()[i].cmp(&d.codes()[j]),
        Column::StrHeap(h) => h.get(i).cmp(h.get(j)),
    };
    by_value.then(a.cmp(&b))
}

/// The part of `order` (positions of `col` in (value, position) order)
/// whose values lie within the bounds; the keys fit the column.
pub(super) fn run_in(
    order: &[u32],
    col: &Column,
    lo: Bound<&IndexKey>,
    hi: Bound<&IndexKey>,
) -> Range<usize> {
    let cmp = |p: u32, k: &IndexKey| compare(col, p as usize, k);
    let start = match lo {
        Bound::Included(k) => order.partition_point(|&p| cmp(p, k) == Ordering::Less),
        Bound::Excluded(k) => order.partition_point(|&p| cmp(p, k) != Ordering::Greater),
        Bound::Unbounded => 0,
    };
    let end = match hi {
        Bound::Included(k) => order.partition_point(|&p| cmp(p, k) != Ordering::Greater),
        Bound::Excluded(k) => order.partition_point(|&p| cmp(p, k) == Ordering::Less),
        Bound::Unbounded => order.len(),
    };
    start..end.max(start)
}

/// Whether both bounds' keys fit `col` ([`IndexKey::fits`]).
pub(super) fn bounds_fit(col: &Column, lo: Bound<&IndexKey>, hi: Bound<&IndexKey>) -> bool {
    let fits = |b: Bound<&IndexKey>| match b {
        Bound::Included(k) | Bound::Excluded(k) => k.fits(col),
        Bound::Unbounded => true,
    };
    fits(lo) && fits(hi)
}

/// `col[p]` against `key` (a key that fits the column: [`IndexKey::fits`]).
fn compare(col: &Column, p: usize, key: &IndexKey) -> Ordering {
    match (col, key) {
        (Column::Int32(v) | Column::Date(v), IndexKey::Num { value, scale }) => {
            cmp_scaled(i128::from(v[p]), 0, *value, *scale)
        }
        (Column::Int64(v), IndexKey::Num { value, scale }) => {
            cmp_scaled(i128::from(v[p]), 0, *value, *scale)
        }
        (Column::Decimal(d), IndexKey::Num { value, scale }) => {
            cmp_scaled(i128::from(d.values()[p]), d.scale(), *value, *scale)
        }
        (Column::Str(d), IndexKey::Str(s)) => d.get(p).cmp(s.as_str()),
        (Column::StrHeap(h), IndexKey::Str(s)) => h.get(p).cmp(s.as_str()),
        // Excluded by `fits` before any comparison.
        _ => Ordering::Equal,
    }
}

/// `a / 10^sa` against `b / 10^sb`, exactly (both scales at most
/// [`SCALE_MAX`], so the widened values fit an `i128`).
fn cmp_scaled(a: i128, sa: u8, b: i128, sb: u8) -> Ordering {
    let s = sa.max(sb);
    let widen = |x: i128, from: u8| x.saturating_mul(10i128.pow(u32::from(s - from)));
    widen(a, sa).cmp(&widen(b, sb))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::{DecimalColumn, DictColumn, StrHeap};
    use Bound::{Excluded, Included, Unbounded};

    fn n(v: i128) -> IndexKey {
        IndexKey::Num { value: v, scale: 0 }
    }

    fn s(v: &str) -> IndexKey {
        IndexKey::Str(v.to_string())
    }

    /// The positions a scan finds: the reference for every lookup.
    fn naive(col: &Column, keep: impl Fn(usize) -> bool) -> Vec<u32> {
        (0..col.len())
            .filter(|&p| keep(p))
            .map(|p| p as u32)
            .collect()
    }

    #[test]
    fn equality_and_ranges_with_duplicates() {
        let v = vec![5, 3, 5, 1, 9, 5, 3];
        let col = Column::Int64(v.clone());
        let ix = SortedIndex::build(&col);
        assert_eq!(ix.len(), 7);
        assert_eq!(
            ix.range(&col, Included(&n(5)), Included(&n(5))),
            Some(vec![0, 2, 5])
        );
        assert_eq!(ix.count(&col, Included(&n(5)), Included(&n(5))), Some(3));
        for k in -1..=10 {
            let kk = n(k.into());
            let at = |f: fn(i64, i64) -> bool| naive(&col, |p| f(v[p], k));
            assert_eq!(
                ix.range(&col, Unbounded, Excluded(&kk)),
                Some(at(|a, b| a < b))
            );
            assert_eq!(
                ix.range(&col, Unbounded, Included(&kk)),
                Some(at(|a, b| a <= b))
            );
            assert_eq!(
                ix.range(&col, Excluded(&kk), Unbounded),
                Some(at(|a, b| a > b))
            );
            assert_eq!(
                ix.range(&col, Included(&kk), Unbounded),
                Some(at(|a, b| a >= b))
            );
        }
        // BETWEEN 3 AND 5, and an empty range (lo > hi).
        assert_eq!(
            ix.range(&col, Included(&n(3)), Included(&n(5))),
            Some(vec![0, 1, 2, 5, 6])
        );
        assert_eq!(
            ix.range(&col, Included(&n(6)), Included(&n(4))),
            Some(vec![])
        );
    }

    #[test]
    fn absent_keys_and_bounds_at_the_ends() {
        let col = Column::Int32(vec![10, 20, 30]);
        let ix = SortedIndex::build(&col);
        let eq = |k: i128| ix.range(&col, Included(&n(k)), Included(&n(k))).unwrap();
        assert_eq!(eq(15), Vec::<u32>::new(), "between values");
        assert_eq!(eq(0), Vec::<u32>::new(), "below the smallest");
        assert_eq!(eq(99), Vec::<u32>::new(), "above the largest");
        assert_eq!(eq(10), vec![0]);
        assert_eq!(eq(30), vec![2]);
        assert_eq!(ix.range(&col, Unbounded, Excluded(&n(10))), Some(vec![]));
        assert_eq!(ix.range(&col, Excluded(&n(30)), Unbounded), Some(vec![]));
        assert_eq!(
            ix.range(&col, Included(&n(10)), Included(&n(30))),
            Some(vec![0, 1, 2])
        );
        assert_eq!(ix.range(&col, Unbounded, Unbounded), Some(vec![0, 1, 2]));
    }

    #[test]
    fn empty_column() {
        let col = Column::Int64(vec![]);
        let ix = SortedIndex::build(&col);
        assert!(ix.is_empty());
        assert_eq!(
            ix.range(&col, Included(&n(1)), Included(&n(1))),
            Some(vec![])
        );
        assert_eq!(ix.any_of(&col, &[n(1), n(2)]), Some(vec![]));
    }

    #[test]
    fn in_lists_union_and_deduplicate() {
        let col = Column::Int64(vec![4, 1, 4, 2, 3]);
        let ix = SortedIndex::build(&col);
        assert_eq!(
            ix.any_of(&col, &[n(4), n(2), n(4), n(7)]),
            Some(vec![0, 2, 3])
        );
        assert_eq!(ix.count_any_of(&col, &[n(4), n(2), n(4), n(7)]), Some(3));
        assert_eq!(ix.any_of(&col, &[]), Some(vec![]));
    }

    #[test]
    fn decimals_compare_across_scales_and_dates_as_days() {
        // 1.00, 2.50, 2.50, -0.05 at scale 2.
        let col = Column::Decimal(DecimalColumn::new(2, vec![100, 250, 250, -5]).unwrap());
        let ix = SortedIndex::build(&col);
        let k = |value, scale| IndexKey::Num { value, scale };
        assert_eq!(
            ix.range(&col, Included(&k(25, 1)), Included(&k(25, 1))),
            Some(vec![1, 2])
        );
        // 2.505 is between 2.50 and the next cent: no row equals it.
        assert_eq!(
            ix.range(&col, Included(&k(2505, 3)), Included(&k(2505, 3))),
            Some(vec![])
        );
        assert_eq!(ix.range(&col, Unbounded, Excluded(&k(1, 0))), Some(vec![3]));
        let dates = Column::Date(vec![8035, 0, 8035]);
        let ix = SortedIndex::build(&dates);
        assert_eq!(
            ix.range(&dates, Included(&n(8035)), Unbounded),
            Some(vec![0, 2])
        );
    }

    #[test]
    fn strings_of_both_representations() {
        let words = ["pear", "apple", "fig", "apple", "kiwi"];
        for col in [
            Column::Str(DictColumn::from_strs(words)),
            Column::StrHeap(StrHeap::from_strs(words)),
        ] {
            let ix = SortedIndex::build(&col);
            assert_eq!(
                ix.range(&col, Included(&s("apple")), Included(&s("apple"))),
                Some(vec![1, 3])
            );
            assert_eq!(
                ix.range(&col, Included(&s("b")), Excluded(&s("kiwi"))),
                Some(vec![2])
            );
            assert_eq!(
                ix.range(&col, Excluded(&s("kiwi")), Unbounded),
                Some(vec![0])
            );
            assert_eq!(ix.any_of(&col, &[s("fig"), s("plum")]), Some(vec![2]));
        }
    }

    #[test]
    fn keys_of_another_type_or_another_column_are_refused() {
        let col = Column::Int64(vec![1, 2]);
        let ix = SortedIndex::build(&col);
        assert_eq!(ix.range(&col, Included(&s("1")), Unbounded), None);
        let strs = Column::Str(DictColumn::from_strs(["a"]));
        assert_eq!(
            ix.range(&strs, Unbounded, Unbounded),
            None,
            "another length"
        );
        let wide = IndexKey::Num {
            value: 1,
            scale: 40,
        };
        assert_eq!(ix.count(&col, Included(&wide), Unbounded), None);
    }

    #[test]
    fn random_columns_match_a_scan() {
        // A small LCG: deterministic, no dependency.
        let mut x: u64 = 42;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as i64 % 50
        };
        let v: Vec<i64> = (0..2000).map(|_| next()).collect();
        let col = Column::Int64(v.clone());
        let ix = SortedIndex::build(&col);
        for lo in [-1, 0, 7, 25, 49, 50] {
            for hi in [-1, 0, 8, 25, 49, 60] {
                let got = ix.range(&col, Included(&n(lo.into())), Excluded(&n(hi.into())));
                assert_eq!(got, Some(naive(&col, |p| v[p] >= lo && v[p] < hi)));
            }
        }
    }
}
