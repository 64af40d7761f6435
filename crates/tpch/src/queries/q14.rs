//! TPC-H Q14, promotion effect.
//!
//! ```sql
//! select 100.00 * sum(case when p_type like 'PROMO%'
//!                          then l_extendedprice * (1 - l_discount) else 0 end)
//!        / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
//! from lineitem, part
//! where l_partkey = p_partkey
//!   and l_shipdate >= date ':DATE'
//!   and l_shipdate < date ':DATE' + interval '1' month;
//! ```
//!
//! Plan: the month's lineitems (about 1/80 of the table) are the build side;
//! every part probes them once. One global aggregate sums both the promo and
//! the total revenue exactly; the ratio is formed once, at the end.

use maestro_execution::{
    Agg, CmpOp, ExecContext, ExecError, Expr, Input, JoinTable, Pred, aggregate,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::col;
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (li, part) = (&db.lineitem, &db.part);
    let date = p.date("DATE");
    let ship = col(li, "l_shipdate")?;
    let month = Pred::and(vec![
        Pred::cmp(ship, CmpOp::Ge, date)?,
        Pred::cmp(ship, CmpOp::Lt, date.add_months(1))?,
    ]);
    let lines = JoinTable::build(
        ctx,
        "q14_build_lineitem",
        Input::filtered(li.num_rows(), &month),
        &[col(li, "l_partkey")?.into()],
    )?;
    // probe: part rows, build: lineitem rows.
    let m = lines.inner(
        ctx,
        "q14_probe_part",
        Input::all(part.num_rows()),
        &[col(part, "p_partkey")?.into()],
    )?;

    let l = |name| col(li, name).map(|c| c.at(&m.build));
    let revenue = Expr::col(l("l_extendedprice")?) * (Expr::int(1) - Expr::col(l("l_discount")?));
    let promo = Pred::like(col(part, "p_type")?.at(&m.probe), "PROMO%")?;
    let r = aggregate(
        ctx,
        "q14_agg",
        Input::all(m.len()),
        &[],
        &[
            Agg::sum(Expr::case(promo, revenue.clone(), Expr::int(0))),
            Agg::sum(revenue),
            Agg::count(),
        ],
    )?;

    let mut out = QueryResult::new(&[("promo_revenue", T::Double)]);
    // SUM over no rows is NULL, and so is the ratio.
    let (promo_sum, total, rows) = (r.agg(0).values[0], r.agg(1).values[0], r.agg(2).values[0]);
    out.push(vec![if rows == 0 || total == 0 {
        Value::Null
    } else {
        // Both sums have the same scale: the ratio needs no rescaling.
        Value::ratio(100 * promo_sum, total)
    }]);
    Ok(out)
}
