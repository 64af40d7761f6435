//! TPC-H Q6, forecasting revenue change.
//!
//! ```sql
//! select sum(l_extendedprice * l_discount) as revenue
//! from lineitem
//! where l_shipdate >= date ':DATE'
//!   and l_shipdate < date ':DATE' + interval '1' year
//!   and l_discount between :DISCOUNT - 0.01 and :DISCOUNT + 0.01
//!   and l_quantity < :QUANTITY;
//! ```

use maestro_execution::{Agg, CmpOp, ExecContext, ExecError, Expr, Input, Pred, aggregate};
use maestro_storage::column::Decimal;

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::{col, sum_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let li = &db.lineitem;
    let lo = p.date("DATE");
    let discount = p.decimal("DISCOUNT");
    let hundredth = |v| Decimal {
        value: discount.value + v,
        scale: discount.scale,
    };
    let (ship, disc) = (col(li, "l_shipdate")?, col(li, "l_discount")?);
    let filter = Pred::and(vec![
        Pred::cmp(ship, CmpOp::Ge, lo)?,
        Pred::cmp(ship, CmpOp::Lt, lo.add_years(1))?,
        Pred::between(disc, hundredth(-1), hundredth(1))?,
        Pred::cmp(col(li, "l_quantity")?, CmpOp::Lt, p.int("QUANTITY"))?,
    ]);
    let revenue = Expr::col(col(li, "l_extendedprice")?) * Expr::col(disc);
    let r = aggregate(
        ctx,
        "q6_agg",
        Input::filtered(li.num_rows(), &filter),
        &[],
        &[Agg::sum(revenue), Agg::count()],
    )?;
    let mut out = QueryResult::new(&[("revenue", T::Decimal(4))]);
    // SUM over no rows is NULL.
    out.push(vec![if r.agg(1).values[0] == 0 {
        Value::Null
    } else {
        sum_cell(r.agg(0), 0)
    }]);
    Ok(out)
}
