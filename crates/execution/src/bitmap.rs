//! `Bitmap`: one bit per position (selections, join marks).

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Bitmap {
    words: Vec<u64>,
    len: usize,
}

impl Bitmap {
    /// `len` clear bits.
    pub fn new(len: usize) -> Bitmap {
        Bitmap {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// The bits of `positions` set.
    pub fn from_positions(len: usize, positions: &[u32]) -> Bitmap {
        let mut b = Bitmap::new(len);
        for &p in positions {
            b.set(p as usize);
        }
        b
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Panics if `i >= len()`.
    pub fn get(&self, i: usize) -> bool {
        assert!(i < self.len, "bit {i} of {}", self.len);
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Panics if `i >= len()`.
    pub fn set(&mut self, i: usize) {
        assert!(i < self.len, "bit {i} of {}", self.len);
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// Set bits.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The set positions, ascending.
    pub fn positions(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.count());
        for (i, &w) in self.words.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                out.push((i * 64) as u32 + w.trailing_zeros());
                w &= w - 1;
            }
        }
        out
    }

    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

/// A bitmap that tasks fill concurrently (bits of one word may come from two
/// tasks at a range boundary, hence the atomic OR).
pub(crate) struct SharedBitmap {
    words: Vec<AtomicU64>,
    len: usize,
}

impl SharedBitmap {
    pub(crate) fn new(len: usize) -> SharedBitmap {
        SharedBitmap {
            words: (0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            len,
        }
    }

    /// Sets the bits of ascending `positions`, one atomic OR per touched word.
    pub(crate) fn set_sorted(&self, positions: &[u32]) {
        let mut cur = usize::MAX;
        let mut bits = 0u64;
        for &p in positions {
            let w = p as usize / 64;
            if w != cur {
                if bits != 0 {
                    self.words[cur].fetch_or(bits, Ordering::Relaxed);
                }
                cur = w;
                bits = 0;
            }
            bits |= 1 << (p % 64);
        }
        if bits != 0 {
            self.words[cur].fetch_or(bits, Ordering::Relaxed);
        }
    }

    /// The finished bitmap (the tasks that set bits have been joined).
    pub(crate) fn into_bitmap(self) -> Bitmap {
        Bitmap {
            words: self.words.into_iter().map(AtomicU64::into_inner).collect(),
            len: self.len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_positions() {
        let pos = [0u32, 5, 63, 64, 129];
        let b = Bitmap::from_positions(130, &pos);
        assert_eq!(b.count(), 5);
        assert!(b.get(63) && b.get(64) && !b.get(62));
        assert_eq!(b.positions(), pos);
        let s = SharedBitmap::new(130);
        s.set_sorted(&pos[..2]);
        s.set_sorted(&pos[2..]);
        assert_eq!(s.into_bitmap(), b);
    }
}
