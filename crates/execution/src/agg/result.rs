//! The output of an aggregation: one row per group (in no particular order),
//! the key columns as `i64`, the aggregates as exact `i128` fixed-point.

use super::spec::AggFunc;
use crate::col::Col;

/// The groups of an aggregation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggResult {
    pub(crate) keys: Vec<Vec<i64>>,
    pub(crate) key_scales: Vec<u8>,
    pub(crate) columns: Vec<AggColumn>,
}

impl AggResult {
    /// Number of groups.
    pub fn len(&self) -> usize {
        match (self.keys.first(), self.columns.first()) {
            (Some(k), _) => k.len(),
            (None, Some(c)) => c.values.len(),
            (None, None) => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn num_keys(&self) -> usize {
        self.keys.len()
    }

    /// Key column `k` (dictionary codes, ids, days, years, raw decimals).
    pub fn key(&self, k: usize) -> &[i64] {
        &self.keys[k]
    }

    /// Key column `k` as a column (decimal when its scale is not 0).
    pub fn key_col(&self, k: usize) -> Col<'_> {
        match self.key_scales[k] {
            0 => Col::i64(&self.keys[k]),
            s => Col::decimal_raw(&self.keys[k], s),
        }
    }

    /// Aggregate `i`, in the order they were given.
    pub fn agg(&self, i: usize) -> &AggColumn {
        &self.columns[i]
    }

    pub fn aggs(&self) -> &[AggColumn] {
        &self.columns
    }
}

/// One aggregate's values per group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggColumn {
    pub func: AggFunc,
    /// Fractional digits of `values` (0 for counts).
    pub scale: u8,
    /// Sums, counts, minima, maxima or distinct counts; for `Avg` the sums.
    pub values: Vec<i128>,
    /// For `Avg` only: the row count of each group.
    pub counts: Vec<i64>,
}

impl AggColumn {
    pub(crate) fn empty(func: AggFunc, scale: u8) -> AggColumn {
        AggColumn {
            func,
            scale,
            values: Vec::new(),
            counts: Vec::new(),
        }
    }

    /// The values as a column (to sort or filter on; `HAVING`).
    pub fn col(&self) -> Col<'_> {
        Col::wide(&self.values, self.scale)
    }

    /// The average of group `g` at `scale` fractional digits, rounded half away
    /// from zero (`Avg` only; 0 for an empty group).
    pub fn avg(&self, g: usize, scale: u8) -> i128 {
        assert_eq!(self.func, AggFunc::Avg, "avg() of a {:?} column", self.func);
        let (mut num, mut den) = (self.values[g], i128::from(self.counts[g]));
        if scale >= self.scale {
            num *= 10i128.pow(u32::from(scale - self.scale));
        } else {
            den *= 10i128.pow(u32::from(self.scale - scale));
        }
        round_div(num, den)
    }
}

/// `num / den` rounded half away from zero (0 when `den == 0`): SQL's rounding
/// of exact decimal division.
pub fn round_div(num: i128, den: i128) -> i128 {
    if den == 0 {
        return 0;
    }
    let (q, r) = (num / den, num % den);
    if 2 * r.abs() >= den.abs() {
        q + if (num < 0) == (den < 0) { 1 } else { -1 }
    } else {
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding() {
        assert_eq!(round_div(7, 2), 4);
        assert_eq!(round_div(-7, 2), -4);
        assert_eq!(round_div(7, -2), -4);
        assert_eq!(round_div(5, 3), 2);
        assert_eq!(round_div(4, 3), 1);
        assert_eq!(round_div(-4, 3), -1);
        assert_eq!(round_div(1, 0), 0);
        let c = AggColumn {
            func: AggFunc::Avg,
            scale: 2,
            values: vec![1001],
            counts: vec![3],
        };
        assert_eq!(c.avg(0, 2), 334); // 10.01 / 3 = 3.3367 -> 3.34
        assert_eq!(c.avg(0, 4), 33367);
        assert_eq!(c.avg(0, 0), 3);
    }
}
