//! The evaluation kernels of predicates: branch-free compaction of candidate
//! positions by a test on typed values.

use crate::col::{Col, Data, NarrowParts, Parts};

/// Keeps the candidates whose value passes `test`, branch-free.
#[inline]
pub(crate) fn refine_by<T: Copy>(
    vals: &[T],
    rows: Option<&[u32]>,
    cand: &mut Vec<u32>,
    test: impl Fn(T) -> bool,
) {
    let mut k = 0;
    match rows {
        None => {
            for j in 0..cand.len() {
                let p = cand[j];
                cand[k] = p;
                k += usize::from(test(vals[p as usize]));
            }
        }
        Some(r) => {
            for j in 0..cand.len() {
                let p = cand[j];
                cand[k] = p;
                k += usize::from(test(vals[r[p as usize] as usize]));
            }
        }
    }
    cand.truncate(k);
}

/// [`refine_by`] over a column with a tail (a delta's rows after the main's).
#[inline]
pub(crate) fn refine_by_parts<T: Copy>(
    vals: Parts<'_, T>,
    rows: Option<&[u32]>,
    cand: &mut Vec<u32>,
    test: impl Fn(T) -> bool,
) {
    let mut k = 0;
    for j in 0..cand.len() {
        let p = cand[j];
        cand[k] = p;
        let r = rows.map_or(p as usize, |r| r[p as usize] as usize);
        k += usize::from(test(vals.get(r)));
    }
    cand.truncate(k);
}

/// A range or set test on a narrow column with a tail; `false` when the
/// column has no typed parts (the caller takes the per-value path).
pub(super) fn refine_parts(col: &Col, cand: &mut Vec<u32>, test: impl Fn(i64) -> bool) -> bool {
    let rows = col.rows();
    match col.narrow_parts() {
        Some(NarrowParts::I32(v)) => refine_by_parts(v, rows, cand, |x| test(x.into())),
        Some(NarrowParts::I64(v)) => refine_by_parts(v, rows, cand, test),
        Some(NarrowParts::Codes(v)) => refine_by_parts(v, rows, cand, |x| test(x.into())),
        None => return false,
    }
    true
}

pub(super) fn refine_range(col: &Col, lo: i128, hi: i128, cand: &mut Vec<u32>) {
    if let Data::Wide { values, .. } = col.data() {
        return refine_by(values, col.rows(), cand, |x| (x >= lo) & (x <= hi));
    }
    if lo > hi || lo > i128::from(i64::MAX) || hi < i128::from(i64::MIN) {
        cand.clear();
        return;
    }
    let lo = lo.max(i128::from(i64::MIN)) as i64;
    let hi = hi.min(i128::from(i64::MAX)) as i64;
    let rows = col.rows();
    match col.data() {
        Data::I32(v) | Data::Date(v) => refine_by(v, rows, cand, |x| {
            (i64::from(x) >= lo) & (i64::from(x) <= hi)
        }),
        Data::I64(v) | Data::Decimal { values: v, .. } => {
            refine_by(v, rows, cand, |x| (x >= lo) & (x <= hi))
        }
        Data::Dict(d) => refine_by(d.codes(), rows, cand, |x| {
            (i64::from(x) >= lo) & (i64::from(x) <= hi)
        }),
        Data::Heap(_) | Data::Wide { .. } => unreachable!("ranges are built on numeric columns"),
    }
}

pub(super) fn refine_in(col: &Col, values: &[i128], cand: &mut Vec<u32>) {
    let has = |x: i128| {
        if values.len() <= 8 {
            values.contains(&x)
        } else {
            values.binary_search(&x).is_ok()
        }
    };
    let rows = col.rows();
    match col.data() {
        Data::I32(v) | Data::Date(v) => refine_by(v, rows, cand, |x| has(x.into())),
        Data::I64(v) | Data::Decimal { values: v, .. } => {
            refine_by(v, rows, cand, |x| has(x.into()))
        }
        Data::Dict(d) => refine_by(d.codes(), rows, cand, |x| has(x.into())),
        Data::Wide { values: v, .. } => refine_by(v, rows, cand, has),
        Data::Heap(_) => unreachable!("IN sets are built on numeric columns"),
    }
}

/// Removes from `cand` the elements of `sub`, a subsequence of it.
pub(super) fn remove_subsequence(cand: &mut Vec<u32>, sub: &[u32]) {
    let mut j = 0;
    cand.retain(|&p| {
        if j < sub.len() && sub[j] == p {
            j += 1;
            false
        } else {
            true
        }
    });
}
