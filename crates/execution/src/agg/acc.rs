//! Accumulators: one column of states per aggregate, indexed by group id.

use hashbrown::HashSet;

use super::result::AggColumn;
use super::spec::AggFunc;

pub(crate) enum Acc {
    Sum(Vec<i128>),
    Count(Vec<i64>),
    Avg { sums: Vec<i128>, counts: Vec<i64> },
    Min(Vec<i64>),
    Max(Vec<i64>),
    Distinct(Vec<HashSet<i64>>),
    SumDouble(Vec<f64>),
}

impl Acc {
    pub(crate) fn new(func: AggFunc) -> Acc {
        match func {
            AggFunc::Sum => Acc::Sum(Vec::new()),
            AggFunc::Count => Acc::Count(Vec::new()),
            AggFunc::Avg => Acc::Avg {
                sums: Vec::new(),
                counts: Vec::new(),
            },
            AggFunc::Min => Acc::Min(Vec::new()),
            AggFunc::Max => Acc::Max(Vec::new()),
            AggFunc::CountDistinct => Acc::Distinct(Vec::new()),
            AggFunc::SumDouble => Acc::SumDouble(Vec::new()),
        }
    }

    /// Adds the state of a new, empty group.
    pub(crate) fn push_group(&mut self) {
        match self {
            Acc::Sum(v) => v.push(0),
            Acc::Count(v) => v.push(0),
            Acc::Avg { sums, counts } => {
                sums.push(0);
                counts.push(0);
            }
            Acc::Min(v) => v.push(i64::MAX),
            Acc::Max(v) => v.push(i64::MIN),
            Acc::Distinct(v) => v.push(HashSet::new()),
            Acc::SumDouble(v) => v.push(0.0),
        }
    }

    /// Adds row `i` (value `vals[i]`, unused by counts) to group `gids[i]`.
    pub(crate) fn update(&mut self, gids: &[u32], vals: &[i64]) {
        match self {
            Acc::Sum(s) => {
                for (&g, &v) in gids.iter().zip(vals) {
                    s[g as usize] += i128::from(v);
                }
            }
            Acc::Count(c) => {
                for &g in gids {
                    c[g as usize] += 1;
                }
            }
            Acc::Avg { sums, counts } => {
                for (&g, &v) in gids.iter().zip(vals) {
                    sums[g as usize] += i128::from(v);
                    counts[g as usize] += 1;
                }
            }
            Acc::Min(m) => {
                for (&g, &v) in gids.iter().zip(vals) {
                    let s = &mut m[g as usize];
                    *s = (*s).min(v);
                }
            }
            Acc::Max(m) => {
                for (&g, &v) in gids.iter().zip(vals) {
                    let s = &mut m[g as usize];
                    *s = (*s).max(v);
                }
            }
            Acc::Distinct(sets) => {
                for (&g, &v) in gids.iter().zip(vals) {
                    sets[g as usize].insert(v);
                }
            }
            Acc::SumDouble(s) => {
                for (&g, &v) in gids.iter().zip(vals) {
                    s[g as usize] += f64::from_bits(v as u64);
                }
            }
        }
    }

    /// Adds every value of `vals` (or, for counts, `rows` rows) to group `g`:
    /// the scalar-aggregate path, summing in registers instead of through memory.
    pub(crate) fn update_one(&mut self, g: u32, rows: usize, vals: &[i64]) {
        let g = g as usize;
        let sum = || vals.iter().map(|&v| i128::from(v)).sum::<i128>();
        match self {
            Acc::Sum(s) => s[g] += sum(),
            Acc::Count(c) => c[g] += rows as i64,
            Acc::Avg { sums, counts } => {
                sums[g] += sum();
                counts[g] += rows as i64;
            }
            Acc::Min(m) => m[g] = vals.iter().copied().fold(m[g], i64::min),
            Acc::Max(m) => m[g] = vals.iter().copied().fold(m[g], i64::max),
            Acc::Distinct(sets) => sets[g].extend(vals.iter().copied()),
            Acc::SumDouble(s) => {
                s[g] += vals.iter().map(|&v| f64::from_bits(v as u64)).sum::<f64>();
            }
        }
    }

    /// Merges group `src_g` of `src` (an accumulator of the same function)
    /// into group `dst_g`.
    pub(crate) fn merge(&mut self, dst_g: u32, src: &Acc, src_g: u32) {
        let (d, s) = (dst_g as usize, src_g as usize);
        match (self, src) {
            (Acc::Sum(a), Acc::Sum(b)) => a[d] += b[s],
            (Acc::Count(a), Acc::Count(b)) => a[d] += b[s],
            (
                Acc::Avg { sums, counts },
                Acc::Avg {
                    sums: bs,
                    counts: bc,
                },
            ) => {
                sums[d] += bs[s];
                counts[d] += bc[s];
            }
            (Acc::Min(a), Acc::Min(b)) => a[d] = a[d].min(b[s]),
            (Acc::Max(a), Acc::Max(b)) => a[d] = a[d].max(b[s]),
            (Acc::Distinct(a), Acc::Distinct(b)) => a[d].extend(b[s].iter().copied()),
            (Acc::SumDouble(a), Acc::SumDouble(b)) => a[d] += b[s],
            _ => unreachable!("partials of one aggregation have the same functions"),
        }
    }

    /// Appends every group's final value to `out`.
    pub(crate) fn finish_into(self, out: &mut AggColumn) {
        match self {
            Acc::Sum(v) => out.values.extend(v),
            Acc::Count(v) => out.values.extend(v.into_iter().map(i128::from)),
            Acc::Avg { sums, counts } => {
                out.values.extend(sums);
                out.counts.extend(counts);
            }
            Acc::Min(v) | Acc::Max(v) => out.values.extend(v.into_iter().map(i128::from)),
            Acc::Distinct(sets) => out.values.extend(sets.iter().map(|s| s.len() as i128)),
            Acc::SumDouble(v) => out
                .values
                .extend(v.into_iter().map(|d| i128::from(d.to_bits() as i64))),
        }
    }
}
