//! Hash join. The build side is collected in parallel (one task per range
//! evaluates its keys), then inserted in parallel into a chained hash table:
//! each entry has a fixed slot in `next`, so an insert is one atomic swap of
//! its bucket's head — no locks, no retries. The probe side is range-
//! partitioned; every task walks the chains of its positions' buckets.
//!
//! Kinds: inner, left outer (unmatched probe positions pair with [`NO_ROW`]),
//! semi, anti, and mark (a bitmap of the probe positions that found a match,
//! for `EXISTS` inside a disjunction). An optional residual condition on
//! (probe position, build position) supports non-equi parts of the join
//! condition (TPC-H Q21's `l2.l_suppkey <> l1.l_suppkey`).
//!
//! Outputs are positions (late materialization); compose them with the sides'
//! row-id vectors via [`crate::gather_positions`]. Probe order is kept; the
//! order of several build matches of one probe position is unspecified.

mod build;
mod probe;

pub use build::JoinTable;

use crate::bitmap::Bitmap;

/// The build position of an unmatched probe position in a left outer join.
pub const NO_ROW: u32 = u32::MAX;

/// A residual join condition on (probe position, build position).
pub type Residual<'r> = dyn Fn(u32, u32) -> bool + Sync + 'r;

/// What a probe produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JoinKind {
    /// Every matching (probe, build) pair.
    Inner,
    /// Inner, plus `(probe, NO_ROW)` for probe positions without a match.
    LeftOuter,
    /// Probe positions with at least one match.
    Semi,
    /// Probe positions without a match.
    Anti,
    /// A bitmap over the probe input: set where a match exists.
    Mark,
}

/// Matching positions of both sides, aligned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JoinPairs {
    pub probe: Vec<u32>,
    pub build: Vec<u32>,
}

impl JoinPairs {
    pub fn len(&self) -> usize {
        self.probe.len()
    }

    pub fn is_empty(&self) -> bool {
        self.probe.is_empty()
    }
}

/// The result of [`JoinTable::probe`], by kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JoinOutput {
    /// Inner and left outer joins.
    Pairs(JoinPairs),
    /// Semi and anti joins.
    Positions(Vec<u32>),
    /// Mark joins.
    Marks(Bitmap),
}
