//! `StrHeap`: a column of free-text strings stored back to back in one
//! `Vec<u8>`, with `len + 1` offsets. For high-cardinality text (comments,
//! names, addresses) that a dictionary would not compress.
//!
//! A heap may also start with *shared parts*: immutable flat heaps held by
//! reference, which other heaps hold too. A delta's appended rows are such a
//! heap ([`StrHeap::shared_append`]): each write makes the delta's next
//! version, which shares every part of the one it extends and adds its own
//! rows as a new part, instead of copying every string of the delta again.
//! Parts merge like a log-structured tree (the last two while they are
//! within 2× of each other), so a heap of `n` rows has at most about
//! `log₂ n + 1` parts and each row is copied `O(log n)` times over all the
//! versions, not once per write.

use std::fmt;
use std::sync::Arc;

/// Strings `0..len()`: first the shared parts' rows, in order, then the
/// owned rows — owned string `i` is `bytes[offsets[i]..offsets[i + 1]]`.
///
/// Invariants: every value was appended from a `&str` or through
/// `fmt::Write`, so each `offsets[i]..offsets[i + 1]` range is valid UTF-8
/// (relied on by [`StrHeap::get`]); every part is flat (no parts of its
/// own) and non-empty, `parts[k].first_row` is the rows before it, and
/// `parts_rows` the parts' rows together. The fields are private so nothing
/// else can break this.
#[derive(Clone)]
pub struct StrHeap {
    parts: Vec<SharedPart>,
    parts_rows: usize,
    bytes: Vec<u8>,
    offsets: Vec<u64>,
}

/// One shared part and where its rows begin.
#[derive(Clone)]
struct SharedPart {
    first_row: usize,
    heap: Arc<StrHeap>,
}

impl Default for StrHeap {
    fn default() -> Self {
        StrHeap::new()
    }
}

impl StrHeap {
    pub fn new() -> StrHeap {
        StrHeap::with_capacity(0, 0)
    }

    /// Room for `rows` strings of `bytes` bytes in total.
    pub fn with_capacity(rows: usize, bytes: usize) -> StrHeap {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        StrHeap {
            parts: Vec::new(),
            parts_rows: 0,
            bytes: Vec::with_capacity(bytes),
            offsets,
        }
    }

    /// Builds a heap from any strings, of exact capacity: pushes grow the
    /// vectors by doubling, and a heap built once (a dictionary) keeps its
    /// capacity for its life.
    pub fn from_strs<'a>(values: impl IntoIterator<Item = &'a str>) -> StrHeap {
        let mut heap = StrHeap::new();
        for v in values {
            heap.push(v);
        }
        heap.bytes.shrink_to_fit();
        heap.offsets.shrink_to_fit();
        heap
    }

    pub fn push(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
        self.offsets.push(self.bytes.len() as u64);
    }

    /// Appends the `Display` output of `value` without an intermediate `String`.
    pub fn push_display(&mut self, value: impl fmt::Display) {
        use fmt::Write;
        write!(Appender(&mut self.bytes), "{value}").expect("writing to a Vec cannot fail");
        self.offsets.push(self.bytes.len() as u64);
    }

    pub fn len(&self) -> usize {
        self.parts_rows + self.owned_len()
    }

    fn owned_len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether all rows are owned, in one byte vector (no shared parts).
    pub fn is_flat(&self) -> bool {
        self.parts.is_empty()
    }

    /// The bytes of all strings together.
    pub fn byte_len(&self) -> usize {
        self.parts.iter().map(|p| p.heap.bytes.len()).sum::<usize>() + self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// String `row`. Panics if `row >= len()`.
    pub fn get(&self, row: usize) -> &str {
        // SAFETY: by the type's invariant the range of one value is valid UTF-8
        // (it was appended from a `&str`, and concatenation keeps the ranges).
        unsafe { std::str::from_utf8_unchecked(self.get_bytes(row)) }
    }

    /// The bytes of string `row` (for byte-wise LIKE matching). Panics if out of range.
    pub fn get_bytes(&self, row: usize) -> &[u8] {
        if row < self.parts_rows {
            let (heap, local) = self.part_of(row);
            return heap.get_bytes(local);
        }
        let row = row - self.parts_rows;
        let (start, end) = (self.offsets[row], self.offsets[row + 1]);
        &self.bytes[start as usize..end as usize]
    }

    /// The flat part holding shared row `row` (< `parts_rows`) and the
    /// row's position in it.
    fn part_of(&self, row: usize) -> (&StrHeap, usize) {
        let k = self.parts.partition_point(|p| p.first_row <= row) - 1;
        let part = &self.parts[k];
        (&part.heap, row - part.first_row)
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The bytes strings `rows` take together.
    pub fn range_byte_len(&self, rows: std::ops::Range<usize>) -> usize {
        let mut total = 0;
        self.for_each_flat_run(rows, |heap, run| {
            total += (heap.offsets[run.end] - heap.offsets[run.start]) as usize;
        });
        total
    }

    /// Calls `f` with each flat piece of rows `rows` in order: a part or the
    /// owned rows, and the piece's rows in it (non-empty).
    fn for_each_flat_run(
        &self,
        rows: std::ops::Range<usize>,
        mut f: impl FnMut(&StrHeap, std::ops::Range<usize>),
    ) {
        assert!(
            rows.start <= rows.end && rows.end <= self.len(),
            "rows {rows:?} of a heap of {} strings",
            self.len()
        );
        let mut row = rows.start;
        while row < rows.end.min(self.parts_rows) {
            let (heap, local) = self.part_of(row);
            let take = (heap.owned_len() - local).min(rows.end - row);
            f(heap, local..local + take);
            row += take;
        }
        if row < rows.end {
            let base = self.parts_rows;
            f(self, row - base..rows.end - base);
        }
    }

    /// Appends all of `other`'s strings.
    pub fn append(&mut self, other: &StrHeap) {
        self.append_range(other, 0..other.len());
    }

    /// Appends `other`'s strings `rows` (one copy of their bytes) to the
    /// owned rows.
    pub fn append_range(&mut self, other: &StrHeap, rows: std::ops::Range<usize>) {
        other.for_each_flat_run(rows, |flat, run| self.append_owned_run(flat, run));
    }

    /// [`StrHeap::append_range`] of owned rows of `other`.
    fn append_owned_run(&mut self, other: &StrHeap, rows: std::ops::Range<usize>) {
        let (start, end) = (other.offsets[rows.start], other.offsets[rows.end]);
        // Shifts `other`'s offsets of these rows onto this heap's end.
        let base = self.bytes.len() as u64;
        self.bytes
            .extend_from_slice(&other.bytes[start as usize..end as usize]);
        self.offsets.extend(
            other.offsets[rows.start + 1..=rows.end]
                .iter()
                .map(|&o| o - start + base),
        );
    }

    /// This heap's strings followed by `more`'s, sharing this heap's
    /// rows instead of copying them (module docs): the result's parts are
    /// this heap's parts, its owned rows made a part (copied once; a heap
    /// made here has none), and `more`'s rows as a new part, after which
    /// the last two parts merge while the earlier is at most twice the
    /// later. `self` is unchanged: two heaps extended from one share its
    /// parts and nothing else.
    pub fn shared_append(&self, more: &StrHeap) -> StrHeap {
        let mut out = StrHeap {
            parts: self.parts.clone(),
            parts_rows: self.parts_rows,
            ..StrHeap::new()
        };
        for piece in [self.owned_as_flat(), StrHeap::joined(&[more])] {
            let rows = piece.len();
            if rows == 0 {
                continue;
            }
            out.parts.push(SharedPart {
                first_row: out.parts_rows,
                heap: Arc::new(piece),
            });
            out.parts_rows += rows;
            out.merge_last_parts();
        }
        out
    }

    /// The owned rows as a flat heap of exact size.
    fn owned_as_flat(&self) -> StrHeap {
        let mut flat = StrHeap::with_capacity(self.owned_len(), self.bytes.len());
        flat.append_owned_run(self, 0..self.owned_len());
        flat
    }

    /// Merges the last two parts while the earlier holds at most twice the
    /// later's rows (so part sizes at least double from the end backwards).
    fn merge_last_parts(&mut self) {
        while let [.., earlier, later] = self.parts.as_slice()
            && earlier.heap.len() <= 2 * later.heap.len()
        {
            let first_row = earlier.first_row;
            let merged = StrHeap::joined(&[&earlier.heap, &later.heap]);
            self.parts.truncate(self.parts.len() - 2);
            self.parts.push(SharedPart {
                first_row,
                heap: Arc::new(merged),
            });
        }
    }

    /// How many shared parts the heap has (tests and diagnostics).
    pub fn shared_parts(&self) -> usize {
        self.parts.len()
    }

    /// The strings of `heaps`, in order, as one flat heap of exact capacity
    /// (each byte copied once: sized before the first append).
    pub fn joined(heaps: &[&StrHeap]) -> StrHeap {
        let rows = heaps.iter().map(|h| h.len()).sum();
        let bytes = heaps.iter().map(|h| h.byte_len()).sum();
        let mut out = StrHeap::with_capacity(rows, bytes);
        for h in heaps {
            out.append(h);
        }
        out
    }

    /// Concatenates heaps into one of exact capacity, freeing each part once copied.
    pub fn concat(parts: Vec<StrHeap>) -> StrHeap {
        let rows = parts.iter().map(StrHeap::len).sum();
        let bytes = parts.iter().map(StrHeap::byte_len).sum();
        let mut out = StrHeap::with_capacity(rows, bytes);
        for part in parts {
            out.append(&part);
        }
        out
    }

    /// Allocated bytes (capacity, not length), shared parts included in
    /// full (heaps sharing a part each count it).
    pub fn heap_bytes(&self) -> usize {
        self.parts
            .iter()
            .map(|p| p.heap.heap_bytes())
            .sum::<usize>()
            + self.bytes.capacity()
            + self.offsets.capacity() * size_of::<u64>()
    }
}

/// Equal strings in equal order, however they are split into parts.
impl PartialEq for StrHeap {
    fn eq(&self, other: &StrHeap) -> bool {
        if self.is_flat() && other.is_flat() {
            return self.bytes == other.bytes && self.offsets == other.offsets;
        }
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for StrHeap {}

impl fmt::Debug for StrHeap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// `fmt::Write` into a byte vector (only `&str`s arrive, so it stays UTF-8).
struct Appender<'a>(&'a mut Vec<u8>);

impl fmt::Write for Appender<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heap_built_from_strings_holds_no_spare_capacity() {
        let words: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
        let h = StrHeap::from_strs(words.iter().map(String::as_str));
        let bytes: usize = words.iter().map(String::len).sum();
        assert_eq!(h.heap_bytes(), bytes + (words.len() + 1) * size_of::<u64>());
    }

    #[test]
    fn push_get_and_concat() {
        let mut a = StrHeap::from_strs(["", "héllo", "x"]);
        a.push_display(format_args!("Clerk#{:09}", 951));
        assert_eq!(a.len(), 4);
        assert_eq!(a.get(0), "");
        assert_eq!(a.get(1), "héllo");
        assert_eq!(a.get(3), "Clerk#000000951");
        let b = StrHeap::from_strs(["y", "zz"]);
        let c = StrHeap::concat(vec![a.clone(), StrHeap::new(), b]);
        let all: Vec<&str> = c.iter().collect();
        assert_eq!(all, ["", "héllo", "x", "Clerk#000000951", "y", "zz"]);
        assert_eq!(c.len(), 6);
        assert_eq!(c.byte_len(), all.iter().map(|s| s.len()).sum::<usize>());
        assert!(c.heap_bytes() >= c.byte_len() + 7 * 8);
    }

    fn strings(h: &StrHeap) -> Vec<String> {
        h.iter().map(str::to_string).collect()
    }

    #[test]
    fn shared_appends_hold_every_row_in_few_parts_and_share_the_earlier_ones() {
        let mut expected: Vec<String> = Vec::new();
        let mut h = StrHeap::new();
        let mut max_parts = 0;
        for write in 0..300 {
            let rows: Vec<String> = (0..1 + write % 3)
                .map(|i| format!("w{write}-r{i}-é"))
                .collect();
            let more = StrHeap::from_strs(rows.iter().map(String::as_str));
            let next = h.shared_append(&more);
            // The version extended is unchanged.
            assert_eq!(strings(&h), expected);
            expected.extend(rows);
            assert_eq!(strings(&next), expected);
            assert_eq!(next.len(), expected.len());
            assert_eq!(
                next.byte_len(),
                expected.iter().map(String::len).sum::<usize>()
            );
            // Every part but the last is one of the previous version's, by
            // reference: only the last part (new rows, merged or not) is new.
            let older = &next.parts[..next.parts.len() - 1];
            assert!(older.len() <= h.parts.len());
            assert!(
                older
                    .iter()
                    .zip(&h.parts)
                    .all(|(a, b)| Arc::ptr_eq(&a.heap, &b.heap))
            );
            max_parts = max_parts.max(next.shared_parts());
            h = next;
        }
        // 600 rows: parts at least double backwards, so about log₂ 600 + 1.
        assert!(max_parts <= 11, "{max_parts} parts");
        // Equal to the flat heap of the same strings, both ways.
        let flat = StrHeap::from_strs(expected.iter().map(String::as_str));
        assert!(flat.is_flat() && !h.is_flat());
        assert_eq!(h, flat);
        assert_eq!(flat, h);
        assert_ne!(h, StrHeap::from_strs(["other"]));
    }

    #[test]
    fn ranges_and_copies_cross_part_boundaries() {
        let a = StrHeap::from_strs(["a0", "a1", "a2", "a3"]);
        let h = StrHeap::new()
            .shared_append(&a)
            .shared_append(&StrHeap::from_strs(["b0"]))
            .shared_append(&StrHeap::from_strs(["c0", "c1"]));
        let all = strings(&h);
        for start in 0..=all.len() {
            for end in start..=all.len() {
                let mut out = StrHeap::from_strs(["x"]);
                out.append_range(&h, start..end);
                let want: Vec<&str> = std::iter::once("x")
                    .chain(all[start..end].iter().map(String::as_str))
                    .collect();
                assert_eq!(out.iter().collect::<Vec<_>>(), want, "{start}..{end}");
                assert!(out.is_flat());
                let bytes: usize = all[start..end].iter().map(String::len).sum();
                assert_eq!(h.range_byte_len(start..end), bytes);
            }
        }
        // Two versions extended from one share its rows and nothing else.
        let left = h.shared_append(&StrHeap::from_strs(["left"]));
        let right = h.shared_append(&StrHeap::from_strs(["right"]));
        assert_eq!(left.get(all.len()), "left");
        assert_eq!(right.get(all.len()), "right");
        assert_eq!(strings(&h), all);
    }
}
