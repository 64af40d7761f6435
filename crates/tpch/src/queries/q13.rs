//! TPC-H Q13, customer distribution.
//!
//! ```sql
//! select c_count, count(*) as custdist
//! from (select c_custkey, count(o_orderkey)
//!       from customer left outer join orders on
//!            c_custkey = o_custkey
//!            and o_comment not like '%:WORD1%:WORD2%'
//!       group by c_custkey) as c_orders (c_custkey, c_count)
//! group by c_count
//! order by custdist desc, c_count desc;
//! ```
//!
//! Plan: the join's only use is counting, so the qualifying orders are counted
//! per `o_custkey` first (one group per customer with orders, instead of one
//! join match per order). Those counts are the build side of the left outer
//! join every customer probes; a customer without a match has `c_count` 0
//! (`count(o_orderkey)` skips the outer join's NULL). A second aggregation
//! counts customers per `c_count`.

use maestro_execution::{
    Agg, Col, ExecContext, ExecError, Expr, Input, JoinTable, NO_ROW, Pred, SortKey, aggregate,
    sort,
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
    let (cust, ord) = (&db.customer, &db.orders);
    let pattern = format!("%{}%{}%", p.str("WORD1"), p.str("WORD2"));
    let qualifying = Pred::not_like(col(ord, "o_comment")?, &pattern)?;
    let per_customer = aggregate(
        ctx,
        "q13_count_orders",
        Input::filtered(ord.num_rows(), &qualifying),
        &[col(ord, "o_custkey")?.into()],
        &[Agg::count()],
    )?;
    let counted = JoinTable::build(
        ctx,
        "q13_build_counts",
        Input::all(per_customer.len()),
        &[Col::i64(per_customer.key(0)).into()],
    )?;
    // probe: customer rows, build: groups of `per_customer` (or NO_ROW).
    let m = counted.left_outer(
        ctx,
        "q13_probe_customer",
        Input::all(cust.num_rows()),
        &[col(cust, "c_custkey")?.into()],
    )?;

    let counts = &per_customer.agg(0).values;
    let c_count = Expr::func(0, |i| match m.build[i as usize] {
        NO_ROW => 0,
        g => i64::try_from(counts[g as usize]).expect("a count fits in i64"),
    });
    let dist = aggregate(
        ctx,
        "q13_distribution",
        Input::all(m.len()),
        &[c_count],
        &[Agg::count()],
    )?;
    let order = sort(
        ctx,
        "q13_sort",
        Input::all(dist.len()),
        &[
            SortKey::desc(dist.agg(0).col()),
            SortKey::desc(dist.key_col(0)),
        ],
        None,
    )?;

    let mut out = QueryResult::new(&[("c_count", T::Int), ("custdist", T::Int)]);
    for i in order {
        let i = i as usize;
        out.push(vec![Value::Int(dist.key(0)[i]), count_cell(dist.agg(0), i)]);
    }
    Ok(out)
}
