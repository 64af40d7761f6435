//! TPC-H Q3, shipping priority.
//!
//! ```sql
//! select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue,
//!        o_orderdate, o_shippriority
//! from customer, orders, lineitem
//! where c_mktsegment = ':SEGMENT'
//!   and c_custkey = o_custkey
//!   and l_orderkey = o_orderkey
//!   and o_orderdate < date ':DATE'
//!   and l_shipdate > date ':DATE'
//! group by l_orderkey, o_orderdate, o_shippriority
//! order by revenue desc, o_orderdate
//! limit 10;
//! ```
//!
//! Plan: the segment's customers (a fifth) semi-join the orders placed before
//! DATE; those orders are the build side for the lineitems shipped after DATE
//! (the largest input, probed once); the matches aggregate by order, top 10.

use maestro_execution::{
    Agg, CmpOp, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate,
    gather_positions, top_k,
};
use maestro_storage::column::Date;

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::{col, sum_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (cust, ord, li) = (&db.customer, &db.orders, &db.lineitem);
    let date = p.date("DATE");

    let segment = Pred::cmp(col(cust, "c_mktsegment")?, CmpOp::Eq, p.str("SEGMENT"))?;
    let customers = JoinTable::build(
        ctx,
        "q3_build_customer",
        Input::filtered(cust.num_rows(), &segment),
        &[col(cust, "c_custkey")?.into()],
    )?;
    let early = Pred::cmp(col(ord, "o_orderdate")?, CmpOp::Lt, date)?;
    let order_rows = customers.semi(
        ctx,
        "q3_probe_customer",
        Input::filtered(ord.num_rows(), &early),
        &[col(ord, "o_custkey")?.into()],
    )?;

    let orders = JoinTable::build(
        ctx,
        "q3_build_orders",
        Input::all(order_rows.len()),
        &[col(ord, "o_orderkey")?.at(&order_rows).into()],
    )?;
    let late = Pred::cmp(col(li, "l_shipdate")?, CmpOp::Gt, date)?;
    let m = orders.inner(
        ctx,
        "q3_probe_orders",
        Input::filtered(li.num_rows(), &late),
        &[col(li, "l_orderkey")?.into()],
    )?;
    let o_rows = gather_positions(ctx, "q3_order_rows", &order_rows, &m.build);

    let l = |name| col(li, name).map(|c| c.at(&m.probe));
    let revenue = Expr::col(l("l_extendedprice")?) * (Expr::int(1) - Expr::col(l("l_discount")?));
    // o_orderdate and o_shippriority depend on l_orderkey: extra keys are free.
    let g = aggregate(
        ctx,
        "q3_agg",
        Input::all(m.len()),
        &[
            l("l_orderkey")?.into(),
            col(ord, "o_orderdate")?.at(&o_rows).into(),
            col(ord, "o_shippriority")?.at(&o_rows).into(),
        ],
        &[Agg::sum(revenue)],
    )?;
    let top = top_k(
        ctx,
        "q3_top",
        Input::all(g.len()),
        &[SortKey::desc(g.agg(0).col()), SortKey::asc(g.key_col(1))],
        10,
    )?;

    let mut out = QueryResult::new(&[
        ("l_orderkey", T::Int),
        ("revenue", T::Decimal(4)),
        ("o_orderdate", T::Date),
        ("o_shippriority", T::Int),
    ]);
    for i in top {
        let i = i as usize;
        let day = i32::try_from(g.key(1)[i]).expect("a date key fits in i32");
        out.push(vec![
            Value::Int(g.key(0)[i]),
            sum_cell(g.agg(0), i),
            Value::Date(Date(day)),
            Value::Int(g.key(2)[i]),
        ]);
    }
    Ok(out)
}
