//! What to aggregate: `Agg` = an aggregate function and its input expression.

use serde::Serialize;

use crate::error::ExecError;
use crate::expr::Expr;

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum AggFunc {
    /// Exact sum (into `i128`) at the input's scale.
    Sum,
    /// `COUNT(*)`.
    Count,
    /// Sum and count; divide with [`crate::AggColumn::avg`] at the scale you need.
    Avg,
    Min,
    Max,
    /// `COUNT(DISTINCT expr)`.
    CountDistinct,
    /// Sum of doubles, each given as its bits (`f64::to_bits` as `i64`);
    /// each group's value is the sum's bits. Rounded at every addition, so
    /// the last bits depend on the order the rows arrive in (as SQL
    /// engines' double sums do).
    SumDouble,
}

/// One aggregate of a group-by.
#[derive(Clone, Debug)]
pub struct Agg<'a> {
    pub(crate) func: AggFunc,
    pub(crate) expr: Option<Expr<'a>>,
}

impl<'a> Agg<'a> {
    pub fn sum(e: impl Into<Expr<'a>>) -> Agg<'a> {
        Agg::of(AggFunc::Sum, e)
    }

    /// [`AggFunc::SumDouble`] of `e`, which yields doubles' bits.
    pub fn sum_double(e: impl Into<Expr<'a>>) -> Agg<'a> {
        Agg::of(AggFunc::SumDouble, e)
    }

    pub fn count() -> Agg<'a> {
        Agg {
            func: AggFunc::Count,
            expr: None,
        }
    }

    pub fn avg(e: impl Into<Expr<'a>>) -> Agg<'a> {
        Agg::of(AggFunc::Avg, e)
    }

    pub fn min(e: impl Into<Expr<'a>>) -> Agg<'a> {
        Agg::of(AggFunc::Min, e)
    }

    pub fn max(e: impl Into<Expr<'a>>) -> Agg<'a> {
        Agg::of(AggFunc::Max, e)
    }

    pub fn count_distinct(e: impl Into<Expr<'a>>) -> Agg<'a> {
        Agg::of(AggFunc::CountDistinct, e)
    }

    fn of(func: AggFunc, e: impl Into<Expr<'a>>) -> Agg<'a> {
        Agg {
            func,
            expr: Some(e.into()),
        }
    }

    pub fn func(&self) -> AggFunc {
        self.func
    }

    /// The scale of the output (0 for counts); checks the input expression.
    pub(crate) fn scale(&self) -> Result<u8, ExecError> {
        match (&self.expr, self.func) {
            (Some(e), AggFunc::CountDistinct) => e.scale().map(|_| 0),
            (Some(e), _) => e.scale(),
            (None, _) => Ok(0),
        }
    }
}
