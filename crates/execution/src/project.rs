//! Projection: materializes an expression (when a later operator needs it as a
//! column) and composes row-id vectors (late materialization across joins).

use crate::col::Col;
use crate::driver::OpRun;
use crate::error::ExecError;
use crate::executor::ExecContext;
use crate::expr::Expr;
use crate::input::Input;
use crate::join::NO_ROW;
use crate::profile::{OpId, OpKind};
use crate::select::concat;

/// A materialized expression: one value per selected input position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Projection {
    pub values: Vec<i64>,
    pub scale: u8,
}

impl Projection {
    /// The values as a column (decimal at `scale`, plain `i64` at scale 0).
    pub fn col(&self) -> Col<'_> {
        match self.scale {
            0 => Col::i64(&self.values),
            s => Col::decimal_raw(&self.values, s),
        }
    }
}

/// Evaluates `expr` at every selected position of `input`, in order.
pub fn project(
    ctx: &ExecContext,
    op: OpId,
    input: Input,
    expr: &Expr,
) -> Result<Projection, ExecError> {
    input.check()?;
    let scale = expr.scale()?;
    let run = OpRun::new(ctx, op, OpKind::Project, input.len());
    let values = if input.filter().is_none() {
        // One value per position: each range writes its part of the output.
        run.fill(input.len(), ctx.min_rows_per_task(), |range, out| {
            let mut buf = Vec::new();
            let mut at = 0;
            input.for_each_vector(range, |pos| {
                expr.eval(pos, &mut buf);
                out[at..at + buf.len()].copy_from_slice(&buf);
                at += buf.len();
            });
            assert_eq!(at, out.len(), "one value per position");
        })
    } else {
        // A filter keeps an unknown number per range: parts, then one copy.
        let parts = run.map(input.len(), ctx.min_rows_per_task(), |range| {
            let mut out = Vec::new();
            let mut buf = Vec::new();
            input.for_each_vector(range, |pos| {
                expr.eval(pos, &mut buf);
                out.extend_from_slice(&buf);
            });
            out
        });
        concat(parts)
    };
    run.charge_rows::<i64>(values.len());
    run.set_rows_out(values.len());
    Ok(Projection { values, scale })
}

/// Composes row-id vectors: `out[i] = outer[inner[i]]`, keeping [`NO_ROW`]
/// (unmatched rows of an outer join). E.g. the lineitem rows of a join's output
/// are `gather_positions(lineitem_selection, join_probe_positions)`.
pub fn gather_positions(ctx: &ExecContext, op: OpId, outer: &[u32], inner: &[u32]) -> Vec<u32> {
    let run = OpRun::new(ctx, op, OpKind::Project, inner.len());
    let out = run.fill(inner.len(), ctx.min_rows_per_task(), |range, out| {
        for (o, &i) in out.iter_mut().zip(&inner[range]) {
            *o = if i == NO_ROW {
                NO_ROW
            } else {
                outer[i as usize]
            };
        }
    });
    run.charge_rows::<u32>(out.len());
    run.set_rows_out(out.len());
    out
}
