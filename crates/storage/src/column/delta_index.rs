//! An index of a delta's appended rows in one column (issue 16: "indexes
//! cover main and delta"): the main's rows have their [`super::SortedIndex`];
//! the delta's, which every write extends, have this one.
//!
//! A delta only grows while its main stays (appended rows are marked
//! deleted, never removed), so the appended column of a table's next version
//! is the previous one's plus the write's rows, and a position names the
//! same value in every later version of that main. The index therefore
//! covers a *prefix* of positions, `0..covered`, and a write extends the
//! previous version's index by its own rows instead of sorting the delta
//! again: its rows become a new sorted *run*, and runs of similar size are
//! merged (a log-structured index: a run is merged into one at least
//! twice its size, so there are at most log₂(covered) + 1 runs and each
//! position is merged O(log covered) times over the delta's life). Runs
//! are immutable and shared by reference between the versions that hold
//! them, so a version's index costs its own rows plus the merges they set
//! off.
//!
//! A lookup searches every run (binary search, as in the main's index) and
//! returns the matching positions below `covered`, ascending. It never
//! looks at positions at or past `covered`: a caller reads those itself.
//! Each run orders its positions by (value, position) as the main's index
//! does, comparing values through the appended column it is given — which
//! must be the delta the index was built for, or a later version of it.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use super::column::Column;
use super::index::{IndexKey, bounds_fit, cmp_positions, run_in, sort_by_value};

/// The sorted runs over a prefix of one appended column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeltaIndex {
    /// Largest first; each holds positions in (value, position) order.
    runs: Vec<Arc<Vec<u32>>>,
    covered: usize,
}

impl DeltaIndex {
    /// Positions `0..covered` are indexed.
    pub fn covered(&self) -> usize {
        self.covered
    }

    /// Sorted runs held (at most log₂(covered) + 1).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// This index extended to every position of `col` (the appended column
    /// of this delta or of a later version of it): the positions past
    /// `covered` become a run, merged with the runs no more than twice its
    /// size. `col` shorter than `covered` is another delta: the index is
    /// built again from scratch for it.
    pub fn extended(&self, col: &Column) -> DeltaIndex {
        let n = col.len();
        if n < self.covered {
            return DeltaIndex::default().extended(col);
        }
        if n == self.covered {
            return self.clone();
        }
        let mut fresh: Vec<u32> = (self.covered as u32..n as u32).collect();
        sort_by_value(col, &mut fresh);
        let mut runs = self.runs.clone();
        let mut last = fresh;
        while runs.last().is_some_and(|prev| prev.len() <= 2 * last.len()) {
            let prev = runs.pop().expect("just seen");
            last = merge(col, &prev, &last);
        }
        runs.push(Arc::new(last));
        DeltaIndex { runs, covered: n }
    }

    /// The covered positions whose value lies within the bounds, ascending;
    /// `None` if a key does not fit the column or `col` is shorter than
    /// the covered prefix.
    pub fn range(
        &self,
        col: &Column,
        lo: Bound<&IndexKey>,
        hi: Bound<&IndexKey>,
    ) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        self.add_hits(col, lo, hi, &mut out)?;
        out.sort_unstable();
        Some(out)
    }

    /// The covered positions whose value equals one of `keys`, ascending,
    /// each once.
    pub fn any_of(&self, col: &Column, keys: &[IndexKey]) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        for k in keys {
            self.add_hits(col, Bound::Included(k), Bound::Included(k), &mut out)?;
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// Appends every run's positions within the bounds to `out`, in no
    /// particular order (the callers sort once); `None` as for
    /// [`DeltaIndex::range`].
    fn add_hits(
        &self,
        col: &Column,
        lo: Bound<&IndexKey>,
        hi: Bound<&IndexKey>,
        out: &mut Vec<u32>,
    ) -> Option<()> {
        if col.len() < self.covered || !bounds_fit(col, lo, hi) {
            return None;
        }
        for run in &self.runs {
            out.extend_from_slice(&run[run_in(run, col, lo, hi)]);
        }
        Some(())
    }
}

/// Two runs of `col`'s positions merged into one, in (value, position) order.
fn merge(col: &Column, a: &[u32], b: &[u32]) -> Vec<u32> {
    merge_by(a, b, |x, y| cmp_positions(col, x, y) == Ordering::Greater)
}

/// Two lists, each ordered, merged into one ordered list: `a`'s element
/// first unless it comes after `b`'s (`after(a, b)`), so ties keep `a`'s
/// first (a stable merge).
pub(super) fn merge_by(a: &[u32], b: &[u32], after: impl Fn(u32, u32) -> bool) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if after(a[i], b[j]) {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::StrHeap;
    use Bound::{Excluded, Included, Unbounded};

    fn n(v: i128) -> IndexKey {
        IndexKey::Num { value: v, scale: 0 }
    }

    /// xorshift: a deterministic sequence for the seeded test.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn growing_by_writes_matches_a_scan_of_the_column() {
        for seed in [1u64, 7, 42, 1234] {
            let mut state = seed;
            let mut values: Vec<i64> = Vec::new();
            let mut ix = DeltaIndex::default();
            for write in 0..200 {
                let rows = (next(&mut state) % 9) as usize;
                for _ in 0..rows {
                    values.push((next(&mut state) % 50) as i64);
                }
                let col = Column::Int64(values.clone());
                ix = ix.extended(&col);
                assert_eq!(ix.covered(), values.len());
                let bound = (values.len().max(1) as f64).log2() as usize + 1;
                assert!(
                    ix.runs() <= bound,
                    "seed {seed} write {write}: {} runs",
                    ix.runs()
                );
                let k = (next(&mut state) % 52) as i64 - 1;
                let scan = |keep: &dyn Fn(i64) -> bool| -> Vec<u32> {
                    (0..values.len() as u32)
                        .filter(|&p| keep(values[p as usize]))
                        .collect()
                };
                assert_eq!(
                    ix.range(&col, Included(&n(k.into())), Included(&n(k.into()))),
                    Some(scan(&|v| v == k)),
                    "seed {seed} write {write} = {k}"
                );
                assert_eq!(
                    ix.range(&col, Excluded(&n(k.into())), Included(&n((k + 10).into()))),
                    Some(scan(&|v| v > k && v <= k + 10)),
                    "seed {seed} write {write} range"
                );
                assert_eq!(
                    ix.any_of(&col, &[n(k.into()), n(3), n(k.into())]),
                    Some(scan(&|v| v == k || v == 3)),
                    "seed {seed} write {write} in"
                );
            }
        }
    }

    #[test]
    fn positions_past_the_covered_prefix_are_not_returned() {
        let col = Column::Int64(vec![5, 5]);
        let ix = DeltaIndex::default().extended(&col);
        let longer = Column::Int64(vec![5, 5, 5]);
        assert_eq!(
            ix.range(&longer, Included(&n(5)), Included(&n(5))),
            Some(vec![0, 1])
        );
        assert_eq!(ix.range(&longer, Unbounded, Unbounded), Some(vec![0, 1]));
    }

    #[test]
    fn another_delta_or_key_type_is_refused_or_rebuilt() {
        let col = Column::Int64(vec![1, 2, 3]);
        let ix = DeltaIndex::default().extended(&col);
        let shorter = Column::Int64(vec![9]);
        assert_eq!(ix.range(&shorter, Unbounded, Unbounded), None);
        assert_eq!(
            ix.extended(&shorter).range(&shorter, Unbounded, Unbounded),
            Some(vec![0])
        );
        let key = IndexKey::Str("x".into());
        assert_eq!(ix.range(&col, Included(&key), Included(&key)), None);
    }

    #[test]
    fn heap_strings_order_by_bytes() {
        let words = ["pear", "apple", "fig", "apple", "kiwi"];
        let mut ix = DeltaIndex::default();
        for k in 1..=words.len() {
            let col = Column::StrHeap(StrHeap::from_strs(words[..k].iter().copied()));
            ix = ix.extended(&col);
        }
        let col = Column::StrHeap(StrHeap::from_strs(words));
        let apple = IndexKey::Str("apple".into());
        let g = IndexKey::Str("g".into());
        assert_eq!(
            ix.range(&col, Included(&apple), Included(&apple)),
            Some(vec![1, 3])
        );
        assert_eq!(ix.range(&col, Excluded(&g), Unbounded), Some(vec![0, 4]));
    }
}
