//! TPC-H Q18, large volume customer.
//!
//! ```sql
//! select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice,
//!        sum(l_quantity)
//! from customer, orders, lineitem
//! where o_orderkey in (select l_orderkey from lineitem
//!                      group by l_orderkey having sum(l_quantity) > :QUANTITY)
//!   and c_custkey = o_custkey
//!   and o_orderkey = l_orderkey
//! group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
//! order by o_totalprice desc, o_orderdate
//! limit 100;
//! ```
//!
//! Plan: one aggregation of all lineitems by order gives both the `IN`
//! subquery (HAVING as a selection over the groups) and the outer query's
//! `sum(l_quantity)`: the outer group by joins each qualifying order with all
//! of its lineitems, so its sum is the same group's sum. The few large orders
//! are the build side for the orders scan; those orders are the build side
//! for the customer scan; top 100 of the matches.

use maestro_execution::{
    Agg, CmpOp, ExecContext, ExecError, Input, JoinTable, Pred, SortKey, aggregate,
    gather_positions, select, top_k,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult};
use super::util::{col, date_cell, dec_cell, int_cell, str_cell, sum_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (cust, ord, li) = (&db.customer, &db.orders, &db.lineitem);

    let g = aggregate(
        ctx,
        "q18_agg_lineitem",
        Input::all(li.num_rows()),
        &[col(li, "l_orderkey")?.into()],
        &[Agg::sum(col(li, "l_quantity")?)],
    )?;
    let large = Pred::cmp(g.agg(0).col(), CmpOp::Gt, p.int("QUANTITY"))?;
    let big = select(ctx, "q18_select_large", g.len(), &large)?;

    let big_orders = JoinTable::build(
        ctx,
        "q18_build_large",
        Input::all(big.len()),
        &[g.key_col(0).at(&big).into()],
    )?;
    // probe: order rows, build: positions in `big`.
    let oj = big_orders.inner(
        ctx,
        "q18_probe_orders",
        Input::all(ord.num_rows()),
        &[col(ord, "o_orderkey")?.into()],
    )?;
    let orders = JoinTable::build(
        ctx,
        "q18_build_orders",
        Input::all(oj.len()),
        &[col(ord, "o_custkey")?.at(&oj.probe).into()],
    )?;
    // probe: customer rows, build: positions in `oj`.
    let cj = orders.inner(
        ctx,
        "q18_probe_customer",
        Input::all(cust.num_rows()),
        &[col(cust, "c_custkey")?.into()],
    )?;
    let o_rows = gather_positions(ctx, "q18_order_rows", &oj.probe, &cj.build);

    let (price, date) = (
        col(ord, "o_totalprice")?.at(&o_rows),
        col(ord, "o_orderdate")?.at(&o_rows),
    );
    let top = top_k(
        ctx,
        "q18_top",
        Input::all(cj.len()),
        &[SortKey::desc(price), SortKey::asc(date)],
        100,
    )?;

    let (c_name, c_key) = (
        col(cust, "c_name")?.at(&cj.probe),
        col(cust, "c_custkey")?.at(&cj.probe),
    );
    let o_key = col(ord, "o_orderkey")?.at(&o_rows);
    let mut out = QueryResult::new(&[
        ("c_name", T::Str),
        ("c_custkey", T::Int),
        ("o_orderkey", T::Int),
        ("o_orderdate", T::Date),
        ("o_totalprice", T::Decimal(2)),
        ("sum(l_quantity)", T::Decimal(2)),
    ]);
    for i in top {
        let group = big[oj.build[cj.build[i as usize] as usize] as usize] as usize;
        out.push(vec![
            str_cell(&c_name, i),
            int_cell(&c_key, i),
            int_cell(&o_key, i),
            date_cell(&date, i),
            dec_cell(&price, i),
            sum_cell(g.agg(0), group),
        ]);
    }
    Ok(out)
}
