//! `Input`: the positions an operator consumes — `0..len`, optionally filtered
//! by a predicate evaluated on the fly (a pipelined selection: no row-id vector
//! is materialized between a scan and the operator above it).
//!
//! Operators walk their range in vectors of [`VECTOR_SIZE`] positions: the
//! selection, expressions and hashing of one vector stay in the L1/L2 cache.

use std::ops::Range;

use crate::error::{ExecError, check_rows};
use crate::pred::Pred;

/// Positions per vector.
pub const VECTOR_SIZE: usize = 2048;

/// The positions `0..len` an operator reads, optionally filtered.
#[derive(Clone, Copy, Debug)]
pub struct Input<'p, 'a> {
    len: usize,
    filter: Option<&'p Pred<'a>>,
}

impl<'p, 'a> Input<'p, 'a> {
    /// Every position of `0..len`.
    pub fn all(len: usize) -> Input<'p, 'a> {
        Input { len, filter: None }
    }

    /// The positions of `0..len` that satisfy `pred`.
    pub fn filtered(len: usize, pred: &'p Pred<'a>) -> Input<'p, 'a> {
        Input {
            len,
            filter: Some(pred),
        }
    }

    /// The number of positions before filtering.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn filter(&self) -> Option<&'p Pred<'a>> {
        self.filter
    }

    pub(crate) fn check(&self) -> Result<(), ExecError> {
        check_rows(self.len)
    }

    /// Calls `f` with the selected positions of each vector of `range`
    /// (ascending; vectors with no selected position are skipped).
    pub(crate) fn for_each_vector(&self, range: Range<usize>, mut f: impl FnMut(&[u32])) {
        let mut buf: Vec<u32> = Vec::with_capacity(VECTOR_SIZE.min(range.len()));
        let mut start = range.start;
        while start < range.end {
            let end = (start + VECTOR_SIZE).min(range.end);
            match self.filter {
                None => {
                    buf.clear();
                    buf.extend(start as u32..end as u32);
                }
                Some(p) => p.select_range(start as u32, end as u32, &mut buf),
            }
            if !buf.is_empty() {
                f(&buf);
            }
            start = end;
        }
    }
}
