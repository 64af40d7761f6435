//! Selection: the positions of `0..len` that satisfy a predicate, as a row-id
//! vector (ascending) or a bitmap, range-partitioned over tasks.

use crate::bitmap::{Bitmap, SharedBitmap};
use crate::driver::OpRun;
use crate::error::ExecError;
use crate::executor::ExecContext;
use crate::input::Input;
use crate::pred::Pred;
use crate::profile::{OpId, OpKind};

/// The positions of `0..len` that satisfy `pred`, ascending.
pub fn select(ctx: &ExecContext, op: OpId, len: usize, pred: &Pred) -> Result<Vec<u32>, ExecError> {
    let input = Input::filtered(len, pred);
    input.check()?;
    let run = OpRun::new(ctx, op, OpKind::Select, len);
    let parts = run.map(len, ctx.min_rows_per_task(), |range| {
        let mut out = Vec::new();
        input.for_each_vector(range, |pos| out.extend_from_slice(pos));
        out
    });
    let out = concat(parts);
    run.charge_rows::<u32>(out.len());
    run.set_rows_out(out.len());
    Ok(out)
}

/// The positions of `0..len` that satisfy `pred`, as a bitmap of `len` bits.
pub fn select_bitmap(
    ctx: &ExecContext,
    op: OpId,
    len: usize,
    pred: &Pred,
) -> Result<Bitmap, ExecError> {
    let input = Input::filtered(len, pred);
    input.check()?;
    let run = OpRun::new(ctx, op, OpKind::Select, len);
    let bits = SharedBitmap::new(len);
    run.map(len, ctx.min_rows_per_task(), |range| {
        input.for_each_vector(range, |pos| bits.set_sorted(pos));
    });
    let bitmap = bits.into_bitmap();
    run.charge(len.div_ceil(8));
    run.set_rows_out(bitmap.count());
    Ok(bitmap)
}

/// Concatenates per-range outputs in order.
pub(crate) fn concat<T: Copy>(parts: Vec<Vec<T>>) -> Vec<T> {
    if parts.len() == 1 {
        return parts.into_iter().next().expect("one part");
    }
    let mut out = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    for p in parts {
        out.extend_from_slice(&p);
    }
    out
}
