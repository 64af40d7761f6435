//! TPC-H Q4, order priority checking.
//!
//! ```sql
//! select o_orderpriority, count(*) as order_count
//! from orders
//! where o_orderdate >= date ':DATE'
//!   and o_orderdate < date ':DATE' + interval '3' month
//!   and exists (select * from lineitem
//!               where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
//! group by o_orderpriority
//! order by o_orderpriority;
//! ```
//!
//! Plan: EXISTS is a semi join of the quarter's orders with the late
//! lineitems. Building on all late lineitems (most of the table) would be the
//! costly side, so the quarter's orders (a twentieth of the table) are built
//! first and reduce the late lineitems with a semi join; those few lineitems
//! are then the build side of the orders' semi join. Count by priority.

use maestro_execution::{
    Agg, CmpOp, Col, ExecContext, ExecError, Input, JoinTable, Pred, SortKey, aggregate, sort,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::{col, count_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (ord, li) = (&db.orders, &db.lineitem);
    let date = p.date("DATE");
    let odate = col(ord, "o_orderdate")?;
    let quarter = Pred::and(vec![
        Pred::cmp(odate, CmpOp::Ge, date)?,
        Pred::cmp(odate, CmpOp::Lt, date.add_months(3))?,
    ]);
    let quarter_orders = JoinTable::build(
        ctx,
        "q4_build_orders",
        Input::filtered(ord.num_rows(), &quarter),
        &[col(ord, "o_orderkey")?.into()],
    )?;
    let late = Pred::cols(
        col(li, "l_commitdate")?,
        CmpOp::Lt,
        col(li, "l_receiptdate")?,
    )?;
    let late_rows = quarter_orders.semi(
        ctx,
        "q4_reduce_lineitem",
        Input::filtered(li.num_rows(), &late),
        &[col(li, "l_orderkey")?.into()],
    )?;
    let late_lines = JoinTable::build(
        ctx,
        "q4_build_lineitem",
        Input::all(late_rows.len()),
        &[col(li, "l_orderkey")?.at(&late_rows).into()],
    )?;
    let order_rows = late_lines.semi(
        ctx,
        "q4_probe_lineitem",
        Input::filtered(ord.num_rows(), &quarter),
        &[col(ord, "o_orderkey")?.into()],
    )?;

    let priority = ord.dict("o_orderpriority")?;
    let g = aggregate(
        ctx,
        "q4_agg",
        Input::all(order_rows.len()),
        &[Col::dict(priority).at(&order_rows).into()],
        &[Agg::count()],
    )?;
    let order = sort(
        ctx,
        "q4_sort",
        Input::all(g.len()),
        &[SortKey::asc(g.key_col(0))],
        None,
    )?;
    let mut out = QueryResult::new(&[("o_orderpriority", T::Str), ("order_count", T::Int)]);
    for i in order {
        let i = i as usize;
        let code = u32::try_from(g.key(0)[i]).expect("a dictionary code");
        out.push(vec![
            Value::Str(priority.decode(code).to_string()),
            count_cell(g.agg(0), i),
        ]);
    }
    Ok(out)
}
