//! `StrHeap`: a column of free-text strings stored back to back in one
//! `Vec<u8>`, with `len + 1` offsets. For high-cardinality text (comments,
//! names, addresses) that a dictionary would not compress.

use std::fmt;

/// Strings `0..len()`; string `i` is `bytes[offsets[i]..offsets[i + 1]]`.
///
/// Invariant (relied on by [`StrHeap::get`]): every value was appended from a
/// `&str` or through `fmt::Write`, so each `offsets[i]..offsets[i + 1]` range is
/// valid UTF-8; the fields are private so nothing else can break this.
#[derive(Clone, PartialEq, Eq)]
pub struct StrHeap {
    bytes: Vec<u8>,
    offsets: Vec<u64>,
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
        self.offsets.len() - 1
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
        let (start, end) = (self.offsets[row], self.offsets[row + 1]);
        &self.bytes[start as usize..end as usize]
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// All strings' bytes, back to back.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// `len() + 1` offsets into [`bytes`](Self::bytes), starting at 0.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Appends all of `other`'s strings.
    pub fn append(&mut self, other: &StrHeap) {
        self.append_range(other, 0..other.len());
    }

    /// Appends `other`'s strings `rows` (one copy of their bytes).
    pub fn append_range(&mut self, other: &StrHeap, rows: std::ops::Range<usize>) {
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

    /// Concatenates heaps into one of exact capacity, freeing each part once copied.
    pub fn concat(parts: Vec<StrHeap>) -> StrHeap {
        let rows = parts.iter().map(StrHeap::len).sum();
        let bytes = parts.iter().map(|p| p.bytes.len()).sum();
        let mut out = StrHeap::with_capacity(rows, bytes);
        for part in parts {
            out.append(&part);
        }
        out
    }

    /// Allocated bytes (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.offsets.capacity() * size_of::<u64>()
    }
}

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
        assert_eq!(c.offsets().len(), 7);
        assert_eq!(c.bytes().len(), c.offsets()[6] as usize);
        assert!(c.heap_bytes() >= c.bytes().len() + 7 * 8);
    }
}
