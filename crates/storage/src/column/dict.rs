//! Dictionary-encoded strings with one global *sorted* dictionary per column:
//! code `a < b` exactly when string `a < b` (byte order), so range predicates,
//! prefix matches and ORDER BY work on the `u32` codes.
//!
//! Built in two steps so that loading can run in parallel: each part appends to
//! its own [`DictBuilder`] (local, unsorted codes), then [`DictBuilder::merge`]
//! builds the global sorted dictionary and rewrites every part's codes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::{Bound, Range};
use std::sync::Arc;

use super::heap::StrHeap;

/// A dictionary-encoded string column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictColumn {
    /// Distinct values, strictly ascending; shared by the columns that
    /// [`DictColumn::with_codes`] makes (a delta's rows and its main's).
    dict: Arc<StrHeap>,
    codes: Vec<u32>,
}

impl DictColumn {
    /// Encodes `values` (any order, duplicates expected).
    pub fn from_strs<'a>(values: impl IntoIterator<Item = &'a str>) -> DictColumn {
        let mut b = DictBuilder::new();
        for v in values {
            b.push(v);
        }
        b.finish()
    }

    /// A column of `codes` into `dict`, which must be strictly ascending and
    /// hold every code (the rebuild's invariant; checked in debug builds).
    pub(crate) fn from_parts(dict: StrHeap, codes: Vec<u32>) -> DictColumn {
        debug_assert!(dict.iter().zip(dict.iter().skip(1)).all(|(a, b)| a < b));
        debug_assert!(codes.iter().all(|&c| (c as usize) < dict.len()));
        DictColumn {
            dict: Arc::new(dict),
            codes,
        }
    }

    /// A column of `codes` into this column's dictionary (shared, not
    /// copied), so its codes compare with this column's. `None` if a code
    /// is not in the dictionary.
    pub fn with_codes(&self, codes: Vec<u32>) -> Option<DictColumn> {
        codes
            .iter()
            .all(|&c| (c as usize) < self.dict.len())
            .then(|| DictColumn {
                dict: Arc::clone(&self.dict),
                codes,
            })
    }

    /// Whether the two columns' codes mean the same strings (one dictionary).
    pub fn shares_dictionary(&self, other: &DictColumn) -> bool {
        Arc::ptr_eq(&self.dict, &other.dict) || self.dict == other.dict
    }

    /// One code per row.
    pub fn codes(&self) -> &[u32] {
        &self.codes
    }

    /// The sorted distinct values; code `c` is `dictionary().get(c as usize)`.
    pub fn dictionary(&self) -> &StrHeap {
        &self.dict
    }

    /// Number of distinct values.
    pub fn cardinality(&self) -> usize {
        self.dict.len()
    }

    /// The string of a code. Panics if the code is not in the dictionary.
    pub fn decode(&self, code: u32) -> &str {
        self.dict.get(code as usize)
    }

    /// The string at `row`. Panics if `row >= len()`.
    pub fn get(&self, row: usize) -> &str {
        self.decode(self.codes[row])
    }

    pub fn len(&self) -> usize {
        self.codes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The code of `s`, if it occurs in the column.
    pub fn code_of(&self, s: &str) -> Option<u32> {
        let c = self.lower_bound(s);
        ((c as usize) < self.dict.len() && self.decode(c) == s).then_some(c)
    }

    /// The first code whose string is `>= s` (`cardinality()` if none).
    pub fn lower_bound(&self, s: &str) -> u32 {
        self.partition_point(|v| v < s)
    }

    /// The first code whose string is `> s` (`cardinality()` if none).
    pub fn upper_bound(&self, s: &str) -> u32 {
        self.partition_point(|v| v <= s)
    }

    /// The codes of the strings within the bounds: a predicate
    /// `lo <= col < hi` on strings becomes `range.contains(&code)`.
    pub fn code_range(&self, lo: Bound<&str>, hi: Bound<&str>) -> Range<u32> {
        let start = match lo {
            Bound::Included(s) => self.lower_bound(s),
            Bound::Excluded(s) => self.upper_bound(s),
            Bound::Unbounded => 0,
        };
        let end = match hi {
            Bound::Included(s) => self.upper_bound(s),
            Bound::Excluded(s) => self.lower_bound(s),
            Bound::Unbounded => self.dict.len() as u32,
        };
        start..end.max(start)
    }

    /// The codes of the strings starting with `prefix` (`LIKE 'prefix%'`); they
    /// are contiguous because the dictionary is sorted.
    pub fn prefix_range(&self, prefix: &str) -> Range<u32> {
        let start = self.lower_bound(prefix);
        let len = self.partition_point(|v| v < prefix || v.starts_with(prefix)) - start;
        start..start + len
    }

    /// Evaluates `pred` once per distinct value: `result[code]` (for predicates
    /// like `LIKE '%BRASS'` that are not ranges).
    pub fn matching_codes(&self, pred: impl Fn(&str) -> bool) -> Vec<bool> {
        self.dict.iter().map(pred).collect()
    }

    pub fn heap_bytes(&self) -> usize {
        self.dict.heap_bytes() + self.codes.capacity() * size_of::<u32>()
    }

    /// The first code for which `pred` is false; `pred` must hold for a prefix
    /// of the sorted dictionary.
    fn partition_point(&self, pred: impl Fn(&str) -> bool) -> u32 {
        let (mut lo, mut hi) = (0usize, self.dict.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.dict.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo as u32
    }
}

/// Collects one part of a dictionary column with local codes in first-seen order.
#[derive(Debug, Clone, Default)]
pub struct DictBuilder {
    index: HashMap<Box<str>, u32, BuildHasherDefault<FxHasher>>,
    /// Local dictionary: local code -> string.
    values: Vec<Box<str>>,
    codes: Vec<u32>,
}

impl DictBuilder {
    pub fn new() -> DictBuilder {
        DictBuilder::default()
    }

    pub fn with_capacity(rows: usize) -> DictBuilder {
        DictBuilder {
            codes: Vec::with_capacity(rows),
            ..DictBuilder::default()
        }
    }

    pub fn push(&mut self, s: &str) {
        let code = match self.index.get(s) {
            Some(&c) => c,
            None => {
                let c = u32::try_from(self.values.len()).expect("more than 2^32 distinct strings");
                self.values.push(s.into());
                self.index.insert(s.into(), c);
                c
            }
        };
        self.codes.push(code);
    }

    pub fn len(&self) -> usize {
        self.codes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    pub fn heap_bytes(&self) -> usize {
        let strings: usize = self.values.iter().map(|v| 2 * v.len()).sum();
        self.codes.capacity() * size_of::<u32>()
            + self.values.capacity() * size_of::<Box<str>>()
            + self.index.capacity() * (size_of::<Box<str>>() + size_of::<u32>())
            + strings
    }

    pub fn finish(self) -> DictColumn {
        DictBuilder::merge(vec![self])
    }

    /// Builds the global sorted dictionary of all parts and their codes in part
    /// order (exact capacity; each part is freed once rewritten).
    pub fn merge(parts: Vec<DictBuilder>) -> DictColumn {
        let mut distinct: Vec<&str> = parts
            .iter()
            .flat_map(|p| p.values.iter().map(|v| &**v))
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        let dict = Arc::new(StrHeap::from_strs(distinct.iter().copied()));
        let global = |s: &str| distinct.binary_search(&s).expect("value was collected") as u32;
        let remaps: Vec<Vec<u32>> = parts
            .iter()
            .map(|p| p.values.iter().map(|v| global(v)).collect())
            .collect();
        drop(distinct);

        let mut codes = Vec::with_capacity(parts.iter().map(DictBuilder::len).sum());
        for (part, remap) in parts.into_iter().zip(remaps) {
            codes.extend(part.codes.iter().map(|&c| remap[c as usize]));
        }
        DictColumn { dict, codes }
    }
}

/// The multiply-rotate hash of rustc (`FxHasher`): fast for the short strings
/// that dictionaries hold; the inputs are not adversarial.
#[derive(Debug, Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_ordered_like_strings() {
        let col = DictColumn::from_strs(["MAIL", "AIR", "TRUCK", "AIR", "REG AIR", "MAIL"]);
        assert_eq!(col.cardinality(), 4);
        assert_eq!(col.codes(), [1, 0, 3, 0, 2, 1]);
        for i in 0..col.len() {
            for j in 0..col.len() {
                assert_eq!(
                    col.codes()[i].cmp(&col.codes()[j]),
                    col.get(i).cmp(col.get(j))
                );
            }
        }
        assert_eq!(col.code_of("REG AIR"), Some(2));
        assert_eq!(col.code_of("SHIP"), None);
        assert_eq!(col.code_of(""), None);
        assert_eq!(col.code_of("ZZZ"), None);
    }

    #[test]
    fn merge_of_parts_equals_one_builder() {
        let rows = ["b", "a", "c", "b", "", "a", "d", "c", "b"];
        let mut parts = vec![DictBuilder::new(), DictBuilder::new(), DictBuilder::new()];
        for (i, r) in rows.iter().enumerate() {
            parts[i * 3 / rows.len()].push(r);
        }
        let merged = DictBuilder::merge(parts);
        assert_eq!(merged, DictColumn::from_strs(rows));
        let back: Vec<&str> = (0..merged.len()).map(|i| merged.get(i)).collect();
        assert_eq!(back, rows);
        assert_eq!(DictBuilder::merge(Vec::new()).len(), 0);
    }

    #[test]
    fn ranges_and_prefixes() {
        let col = DictColumn::from_strs([
            "ECONOMY ANODIZED STEEL",
            "PROMO BRUSHED TIN",
            "PROMO ANODIZED BRASS",
            "SMALL PLATED BRASS",
            "PROMO",
            "PROMP",
        ]);
        let promo = col.prefix_range("PROMO");
        let names: Vec<&str> = promo.clone().map(|c| col.decode(c)).collect();
        assert_eq!(
            names,
            ["PROMO", "PROMO ANODIZED BRASS", "PROMO BRUSHED TIN"]
        );
        assert_eq!(col.prefix_range("ZZ"), 6..6);
        assert_eq!(col.prefix_range(""), 0..6);
        let r = col.code_range(Bound::Included("PROMO"), Bound::Excluded("PROMP"));
        assert_eq!(r, promo);
        let r = col.code_range(Bound::Excluded("PROMO"), Bound::Included("PROMP"));
        assert_eq!(r.len(), 3);
        assert_eq!(
            col.code_range(Bound::Included("Z"), Bound::Included("A")),
            6..6
        );
        let brass = col.matching_codes(|s| s.ends_with("BRASS"));
        assert_eq!(brass.iter().filter(|&&b| b).count(), 2);
    }
}
