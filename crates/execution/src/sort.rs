//! Sort and top-k on typed columns: each task sorts the selected positions of
//! its range (keeping only its best `k` for top-k), then sorted runs are merged
//! pairwise, one task per pair per round. Ties are broken by position, so the
//! order is total and the result does not depend on the partitioning.

use std::cmp::Ordering;

use crate::col::Col;
use crate::driver::OpRun;
use crate::error::ExecError;
use crate::executor::ExecContext;
use crate::input::Input;
use crate::profile::{OpId, OpKind};

/// Sort direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    Asc,
    Desc,
}

/// One sort key: a column (numbers, dates, dictionary strings by code — which
/// orders like the strings — heap strings bytewise, aggregate sums) and a
/// direction.
#[derive(Clone, Copy, Debug)]
pub struct SortKey<'a> {
    pub col: Col<'a>,
    pub order: Order,
}

impl<'a> SortKey<'a> {
    pub fn asc(col: Col<'a>) -> SortKey<'a> {
        SortKey {
            col,
            order: Order::Asc,
        }
    }

    pub fn desc(col: Col<'a>) -> SortKey<'a> {
        SortKey {
            col,
            order: Order::Desc,
        }
    }
}

/// The selected positions of `input` ordered by `keys` (then by position);
/// only the first `limit` if given.
pub fn sort(
    ctx: &ExecContext,
    op: OpId,
    input: Input,
    keys: &[SortKey],
    limit: Option<usize>,
) -> Result<Vec<u32>, ExecError> {
    input.check()?;
    for k in keys {
        if k.col.len() < input.len() {
            return Err(ExecError::Type {
                context: "sort key".into(),
                expected: "a column with a value for every input position",
                found: format!("{} values for {} positions", k.col.len(), input.len()),
            });
        }
    }
    let run = OpRun::new(ctx, op, OpKind::Sort, input.len());
    let cmp = |a: &u32, b: &u32| compare(keys, *a, *b);
    let mut runs = run.map(input.len(), ctx.min_rows_per_task(), |range| {
        let mut v = Vec::new();
        input.for_each_vector(range, |pos| v.extend_from_slice(pos));
        match limit {
            Some(0) => v.clear(),
            Some(k) if v.len() > k => {
                v.select_nth_unstable_by(k - 1, cmp);
                v.truncate(k);
            }
            _ => {}
        }
        v.sort_unstable_by(cmp);
        v
    });
    while runs.len() > 1 {
        let pairs = runs.len() / 2;
        let prev = &runs;
        let mut merged: Vec<Vec<u32>> = run
            .map(pairs, 1, |range| {
                range
                    .map(|i| merge(&prev[2 * i], &prev[2 * i + 1], limit, cmp))
                    .collect::<Vec<_>>()
            })
            .into_iter()
            .flatten()
            .collect();
        if runs.len() % 2 == 1 {
            merged.push(runs.pop().expect("an odd run"));
        }
        runs = merged;
    }
    let out = runs.pop().unwrap_or_default();
    // The runs and each merge level hold the positions once.
    run.charge_rows::<u32>(2 * input.len());
    run.set_rows_out(out.len());
    Ok(out)
}

/// The first `k` selected positions of `input` ordered by `keys`.
pub fn top_k(
    ctx: &ExecContext,
    op: OpId,
    input: Input,
    keys: &[SortKey],
    k: usize,
) -> Result<Vec<u32>, ExecError> {
    sort(ctx, op, input, keys, Some(k))
}

fn compare(keys: &[SortKey], a: u32, b: u32) -> Ordering {
    for k in keys {
        let o = k.col.cmp_at(a, b);
        let o = match k.order {
            Order::Asc => o,
            Order::Desc => o.reverse(),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.cmp(&b)
}

fn merge(
    a: &[u32],
    b: &[u32],
    limit: Option<usize>,
    cmp: impl Fn(&u32, &u32) -> Ordering,
) -> Vec<u32> {
    let n = (a.len() + b.len()).min(limit.unwrap_or(usize::MAX));
    let mut out = Vec::with_capacity(n);
    let (mut i, mut j) = (0, 0);
    while out.len() < n {
        if j >= b.len() || (i < a.len() && cmp(&a[i], &b[j]) != Ordering::Greater) {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out
}
