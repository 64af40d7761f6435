//! TPC-H Q12, shipping modes and order priority.
//!
//! ```sql
//! select l_shipmode,
//!        sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH'
//!                 then 1 else 0 end) as high_line_count,
//!        sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH'
//!                 then 1 else 0 end) as low_line_count
//! from orders, lineitem
//! where o_orderkey = l_orderkey
//!   and l_shipmode in (':SHIPMODE1', ':SHIPMODE2')
//!   and l_commitdate < l_receiptdate
//!   and l_shipdate < l_commitdate
//!   and l_receiptdate >= date ':DATE'
//!   and l_receiptdate < date ':DATE' + interval '1' year
//! group by l_shipmode
//! order by l_shipmode;
//! ```
//!
//! Plan: the lineitem filter keeps well under 1% of the table, so those
//! lineitems are the build side and every order probes them once (a small,
//! cache-resident table). The matches aggregate by ship mode; the two counts
//! are complementary CASEs on the order's priority.

use maestro_execution::{
    Agg, CmpOp, Col, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate, sort,
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
    let (commit, receipt) = (col(li, "l_commitdate")?, col(li, "l_receiptdate")?);
    let shipmode = li.dict("l_shipmode")?;
    let filter = Pred::and(vec![
        Pred::is_in(
            Col::dict(shipmode),
            [p.str("SHIPMODE1"), p.str("SHIPMODE2")],
        )?,
        Pred::cmp(receipt, CmpOp::Ge, date)?,
        Pred::cmp(receipt, CmpOp::Lt, date.add_years(1))?,
        Pred::cols(commit, CmpOp::Lt, receipt)?,
        Pred::cols(col(li, "l_shipdate")?, CmpOp::Lt, commit)?,
    ]);
    let lines = JoinTable::build(
        ctx,
        "q12_build_lineitem",
        Input::filtered(li.num_rows(), &filter),
        &[col(li, "l_orderkey")?.into()],
    )?;
    // probe: order rows, build: lineitem rows.
    let m = lines.inner(
        ctx,
        "q12_probe_orders",
        Input::all(ord.num_rows()),
        &[col(ord, "o_orderkey")?.into()],
    )?;

    let priority = col(ord, "o_orderpriority")?.at(&m.probe);
    let high = || Pred::is_in(priority, ["1-URGENT", "2-HIGH"]);
    let g = aggregate(
        ctx,
        "q12_agg",
        Input::all(m.len()),
        &[Col::dict(shipmode).at(&m.build).into()],
        &[
            Agg::sum(Expr::case(high()?, Expr::int(1), Expr::int(0))),
            Agg::sum(Expr::case(high()?, Expr::int(0), Expr::int(1))),
        ],
    )?;
    let order = sort(
        ctx,
        "q12_sort",
        Input::all(g.len()),
        &[SortKey::asc(g.key_col(0))],
        None,
    )?;

    let mut out = QueryResult::new(&[
        ("l_shipmode", T::Str),
        ("high_line_count", T::Int),
        ("low_line_count", T::Int),
    ]);
    for i in order {
        let i = i as usize;
        let code = u32::try_from(g.key(0)[i]).expect("a dictionary code");
        out.push(vec![
            Value::Str(shipmode.decode(code).to_string()),
            count_cell(g.agg(0), i),
            count_cell(g.agg(1), i),
        ]);
    }
    Ok(out)
}
