//! The evaluation kernels of predicates: branch-free compaction of candidate
//! positions by a test on typed values.

use super::CandOrder;
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
/// With ascending candidates — a scan's filter, or positions of ascending
/// row ids — the candidates split at `main_positions` (the first position
/// that may read the tail, [`Col::main_positions`]): those before it test the
/// main's slice as a column without a tail does, the rest find their part
/// per value; otherwise each value finds its part.
#[inline]
pub(crate) fn refine_by_parts<T: Copy>(
    vals: Parts<'_, T>,
    rows: Option<&[u32]>,
    main_positions: u32,
    cand: &mut Vec<u32>,
    order: CandOrder,
    test: impl Fn(T) -> bool,
) {
    let row = |p: u32| rows.map_or(p as usize, |r| r[p as usize] as usize);
    if main_positions > 0 && order.ascending(cand) {
        let split = cand.partition_point(|&p| p < main_positions);
        let kept_main = match rows {
            None => compact(&mut cand[..split], |p| test(vals.main[p as usize])),
            Some(r) => compact(&mut cand[..split], |p| {
                test(vals.main[r[p as usize] as usize])
            }),
        };
        let kept_tail = compact(&mut cand[split..], |p| test(vals.get(row(p))));
        cand.copy_within(split..split + kept_tail, kept_main);
        cand.truncate(kept_main + kept_tail);
        return;
    }
    let kept = compact(cand, |p| test(vals.get(row(p))));
    cand.truncate(kept);
}

/// Moves the positions passing `keep` to the front of `cand`, in order,
/// branch-free; returns how many.
#[inline]
fn compact(cand: &mut [u32], keep: impl Fn(u32) -> bool) -> usize {
    let mut k = 0;
    for j in 0..cand.len() {
        let p = cand[j];
        cand[k] = p;
        k += usize::from(keep(p));
    }
    k
}

/// A range or set test on a narrow column with a tail; `false` when the
/// column has no typed parts (the caller takes the per-value path).
pub(super) fn refine_parts(
    col: &Col,
    cand: &mut Vec<u32>,
    order: CandOrder,
    test: impl Fn(i64) -> bool,
) -> bool {
    let (rows, split) = (col.rows(), col.main_positions());
    match col.narrow_parts() {
        Some(NarrowParts::I32(v)) => {
            refine_by_parts(v, rows, split, cand, order, |x| test(x.into()))
        }
        Some(NarrowParts::I64(v)) => refine_by_parts(v, rows, split, cand, order, test),
        Some(NarrowParts::Codes(v)) => {
            refine_by_parts(v, rows, split, cand, order, |x| test(x.into()))
        }
        None => return false,
    }
    true
}

/// `lo..=hi` clamped to `i64` (what narrow values can be), or `None` when
/// no `i64` is in it.
pub(super) fn narrow_bounds(lo: i128, hi: i128) -> Option<(i64, i64)> {
    if lo > hi || lo > i128::from(i64::MAX) || hi < i128::from(i64::MIN) {
        return None;
    }
    Some((
        lo.max(i128::from(i64::MIN)) as i64,
        hi.min(i128::from(i64::MAX)) as i64,
    ))
}

pub(super) fn refine_range(col: &Col, lo: i128, hi: i128, cand: &mut Vec<u32>) {
    if let Data::Wide { values, .. } = col.data() {
        return refine_by(values, col.rows(), cand, |x| (x >= lo) & (x <= hi));
    }
    let Some((lo, hi)) = narrow_bounds(lo, hi) else {
        cand.clear();
        return;
    };
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

/// Removes from `cand` the elements of `ids` (ascending). Ascending
/// candidates find the ids in their span by binary search and, as deleted
/// rows are few, move only the runs between them (none when the span holds
/// no id); others search `ids` per candidate.
pub(super) fn remove_sorted(cand: &mut Vec<u32>, ids: &[u32], order: CandOrder) {
    if !order.ascending(cand) {
        cand.retain(|p| ids.binary_search(p).is_err());
        return;
    }
    let (first, last) = (cand[0], cand[cand.len() - 1]);
    let start = ids.partition_point(|&id| id < first);
    let end = ids.partition_point(|&id| id <= last);
    let mut kept = 0; // cand[..kept] is final
    let mut read = 0; // cand[read..] not yet looked at
    for &id in &ids[start..end] {
        let Ok(at) = cand[read..].binary_search(&id).map(|i| read + i) else {
            continue;
        };
        cand.copy_within(read..at, kept);
        kept += at - read;
        read = at + 1;
    }
    if read > 0 {
        cand.copy_within(read.., kept);
        let len = kept + cand.len() - read;
        cand.truncate(len);
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
