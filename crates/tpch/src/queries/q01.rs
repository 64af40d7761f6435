//! TPC-H Q1, pricing summary report.
//!
//! ```sql
//! select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty,
//!        sum(l_extendedprice) as sum_base_price,
//!        sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
//!        sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
//!        avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price,
//!        avg(l_discount) as avg_disc, count(*) as count_order
//! from lineitem
//! where l_shipdate <= date '1998-12-01' - interval ':DELTA' day
//! group by l_returnflag, l_linestatus
//! order by l_returnflag, l_linestatus;
//! ```

use maestro_execution::{
    Agg, CmpOp, Col, ExecContext, ExecError, Expr, Input, Pred, SortKey, aggregate, sort,
};
use maestro_storage::column::Date;

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::{avg_cell, col, count_cell, sum_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let li = &db.lineitem;
    let delta = i32::try_from(p.int("DELTA")).expect("DELTA is checked to be small");
    let cutoff = Date::parse("1998-12-01").expect("a date").add_days(-delta);
    let filter = Pred::cmp(col(li, "l_shipdate")?, CmpOp::Le, cutoff)?;
    let (qty, price) = (col(li, "l_quantity")?, col(li, "l_extendedprice")?);
    let (disc, tax) = (col(li, "l_discount")?, col(li, "l_tax")?);
    let disc_price = Expr::col(price) * (Expr::int(1) - Expr::col(disc));
    let charge = disc_price.clone() * (Expr::int(1) + Expr::col(tax));
    let (rf, ls) = (li.dict("l_returnflag")?, li.dict("l_linestatus")?);
    let g = aggregate(
        ctx,
        "q1_agg",
        Input::filtered(li.num_rows(), &filter),
        &[Col::dict(rf).into(), Col::dict(ls).into()],
        &[
            Agg::sum(qty),
            Agg::sum(price),
            Agg::sum(disc_price),
            Agg::sum(charge),
            Agg::avg(qty),
            Agg::avg(price),
            Agg::avg(disc),
            Agg::count(),
        ],
    )?;
    let order = sort(
        ctx,
        "q1_sort",
        Input::all(g.len()),
        &[SortKey::asc(g.key_col(0)), SortKey::asc(g.key_col(1))],
        None,
    )?;
    let mut out = QueryResult::new(&[
        ("l_returnflag", T::Str),
        ("l_linestatus", T::Str),
        ("sum_qty", T::Decimal(2)),
        ("sum_base_price", T::Decimal(2)),
        ("sum_disc_price", T::Decimal(4)),
        ("sum_charge", T::Decimal(6)),
        ("avg_qty", T::Double),
        ("avg_price", T::Double),
        ("avg_disc", T::Double),
        ("count_order", T::Int),
    ]);
    for i in order {
        let i = i as usize;
        out.push(vec![
            Value::Str(rf.decode(g.key(0)[i] as u32).to_string()),
            Value::Str(ls.decode(g.key(1)[i] as u32).to_string()),
            sum_cell(g.agg(0), i),
            sum_cell(g.agg(1), i),
            sum_cell(g.agg(2), i),
            sum_cell(g.agg(3), i),
            avg_cell(g.agg(4), i),
            avg_cell(g.agg(5), i),
            avg_cell(g.agg(6), i),
            count_cell(g.agg(7), i),
        ]);
    }
    Ok(out)
}
