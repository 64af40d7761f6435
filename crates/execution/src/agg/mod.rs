//! Hash aggregation: each task folds its ranges into a private [`GroupTable`]
//! (no sharing, no locks); the partial tables are then merged — into the
//! largest one when there are few groups, otherwise by hash partition, one merge
//! task per partition, each reading every partial's groups of its partition.

mod acc;
mod result;
mod spec;
mod table;

use std::ops::Range;

pub use result::{AggColumn, AggResult, round_div};
pub use spec::{Agg, AggFunc};

use crate::driver::OpRun;
use crate::error::ExecError;
use crate::executor::ExecContext;
use crate::expr::Expr;
use crate::input::Input;
use crate::keys::{KeyBuf, check_keys, with_key_width};
use crate::profile::{OpId, OpKind};
use table::GroupTable;

/// `SELECT keys, aggs FROM input GROUP BY keys`. No keys: one group (also for
/// an empty input, with sums and counts 0). Groups come in no particular order.
pub fn aggregate(
    ctx: &ExecContext,
    op: OpId,
    input: Input,
    keys: &[Expr],
    aggs: &[Agg],
) -> Result<AggResult, ExecError> {
    input.check()?;
    let key_scales = check_keys(keys)?;
    let agg_scales = aggs
        .iter()
        .map(Agg::scale)
        .collect::<Result<Vec<u8>, _>>()?;
    let run = OpRun::new(ctx, op, OpKind::Aggregate, input.len());
    let funcs: Vec<AggFunc> = aggs.iter().map(Agg::func).collect();
    let mut columns: Vec<AggColumn> = funcs
        .iter()
        .zip(&agg_scales)
        .map(|(&f, &s)| AggColumn::empty(f, s))
        .collect();
    let key_cols = with_key_width!(keys.len(), N => {
        let parts = aggregate_n::<N>(&run, input, keys, aggs, &funcs);
        let mut key_cols: Vec<Vec<i64>> = vec![Vec::new(); N];
        for part in parts {
            for (k, col) in key_cols.iter_mut().enumerate() {
                col.extend(part.keys.iter().map(|key| key[k]));
            }
            for (acc, col) in part.accs.into_iter().zip(&mut columns) {
                acc.finish_into(col);
            }
        }
        key_cols
    });
    let result = AggResult {
        keys: key_cols,
        key_scales,
        columns,
    };
    // Keys and one accumulator (≤ 16 bytes) per aggregate for every group.
    run.charge(
        result
            .len()
            .saturating_mul(8 * keys.len() + 16 * aggs.len()),
    );
    run.set_rows_out(result.len());
    Ok(result)
}

/// The partial tables of the tasks, merged into disjoint group sets.
fn aggregate_n<const N: usize>(
    run: &OpRun,
    input: Input,
    keys: &[Expr],
    aggs: &[Agg],
    funcs: &[AggFunc],
) -> Vec<GroupTable<N>> {
    let min_rows = run.ctx().min_rows_per_task();
    let partials = run.fold(
        input.len(),
        min_rows,
        || Partial::<N>::new(funcs),
        |p, range| p.consume(input, range, keys, aggs),
    );
    let mut tables: Vec<GroupTable<N>> = partials.into_iter().map(|p| p.table).collect();
    let total: usize = tables.iter().map(GroupTable::len).sum();
    if tables.is_empty() || (N == 0 && total == 0) {
        // No rows: no groups, except the one row of a scalar aggregate.
        let mut t = GroupTable::<N>::new(funcs);
        if N == 0 {
            t.assign(&[], &mut Vec::new());
        }
        return vec![t];
    }
    if tables.len() == 1 {
        return tables;
    }
    // Merging fewer groups than two tasks' worth of rows is not worth tasks;
    // a merge task gets at least a task's worth of groups.
    if total < 2 * min_rows {
        tables.sort_by_key(|t| std::cmp::Reverse(t.len()));
        let mut rest = tables.split_off(1);
        let base = &mut tables[0];
        for t in rest.drain(..) {
            base.merge_from(&t, |_| true);
        }
        return tables;
    }
    let parts = run.partitions(total, min_rows);
    let tables = &tables;
    run.map(parts, 1, |range: Range<usize>| {
        range
            .map(|p| {
                let mut t = GroupTable::<N>::new(funcs);
                for src in tables {
                    t.merge_from(src, |h| partition_of(h, parts) == p);
                }
                t
            })
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect()
}

/// The merge partition of a hash: bits 20..52 (hashbrown uses the low bits for
/// buckets and the top 7 for tags), reduced to `0..parts` by multiply-shift.
fn partition_of(h: u64, parts: usize) -> usize {
    ((((h >> 20) & 0xFFFF_FFFF) * parts as u64) >> 32) as usize
}

/// One task's state: its group table and scratch buffers.
struct Partial<const N: usize> {
    table: GroupTable<N>,
    keys: KeyBuf<N>,
    gids: Vec<u32>,
    vals: Vec<i64>,
}

impl<const N: usize> Partial<N> {
    fn new(funcs: &[AggFunc]) -> Self {
        Partial {
            table: GroupTable::new(funcs),
            keys: KeyBuf::new(),
            gids: Vec::new(),
            vals: Vec::new(),
        }
    }

    fn consume(&mut self, input: Input, range: Range<usize>, keys: &[Expr], aggs: &[Agg]) {
        let Partial {
            table,
            keys: key_buf,
            gids,
            vals,
        } = self;
        input.for_each_vector(range, |pos| {
            let packed = key_buf.eval(keys, pos);
            table.assign(packed, gids);
            for (acc, agg) in table.accs.iter_mut().zip(aggs) {
                match &agg.expr {
                    Some(e) => e.eval(pos, vals),
                    None => vals.clear(),
                }
                if N == 0 {
                    acc.update_one(0, pos.len(), vals);
                } else {
                    acc.update(gids, vals);
                }
            }
        });
    }
}
