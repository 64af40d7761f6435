//! TPC-H Q10, returned item reporting.
//!
//! ```sql
//! select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue,
//!        c_acctbal, n_name, c_address, c_phone, c_comment
//! from customer, orders, lineitem, nation
//! where c_custkey = o_custkey
//!   and l_orderkey = o_orderkey
//!   and o_orderdate >= date ':DATE'
//!   and o_orderdate < date ':DATE' + interval '3' month
//!   and l_returnflag = 'R'
//!   and c_nationkey = n_nationkey
//! group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
//! order by revenue desc
//! limit 20;
//! ```
//!
//! Plan: the quarter's orders (about 1/28 of the table) are the build side for
//! the returned lineitems; the matches sum by `o_custkey` (every other group
//! column depends on `c_custkey`, so grouping by the key alone is the same
//! grouping). Only the top 20 customers need their text columns: they are a
//! 20-entry build side the customer table probes, and the nation names a
//! lookup over the 25 nations.

use maestro_execution::{
    Agg, CmpOp, Col, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate,
    top_k,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::{col, dec_cell, str_cell, sum_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (cust, ord, li) = (&db.customer, &db.orders, &db.lineitem);
    let date = p.date("DATE");
    let odate = col(ord, "o_orderdate")?;
    let quarter = Pred::and(vec![
        Pred::cmp(odate, CmpOp::Ge, date)?,
        Pred::cmp(odate, CmpOp::Lt, date.add_months(3))?,
    ]);
    let orders = JoinTable::build(
        ctx,
        "q10_build_orders",
        Input::filtered(ord.num_rows(), &quarter),
        &[col(ord, "o_orderkey")?.into()],
    )?;
    let returned = Pred::cmp(col(li, "l_returnflag")?, CmpOp::Eq, "R")?;
    // probe: lineitem rows, build: order rows.
    let m = orders.inner(
        ctx,
        "q10_probe_orders",
        Input::filtered(li.num_rows(), &returned),
        &[col(li, "l_orderkey")?.into()],
    )?;

    let l = |name| col(li, name).map(|c| c.at(&m.probe));
    let revenue = Expr::col(l("l_extendedprice")?) * (Expr::int(1) - Expr::col(l("l_discount")?));
    let g = aggregate(
        ctx,
        "q10_agg",
        Input::all(m.len()),
        &[col(ord, "o_custkey")?.at(&m.build).into()],
        &[Agg::sum(revenue)],
    )?;
    // Ties on revenue are broken by key so that the limit is deterministic.
    let top = top_k(
        ctx,
        "q10_top",
        Input::all(g.len()),
        &[SortKey::desc(g.agg(0).col()), SortKey::asc(g.key_col(0))],
        20,
    )?;

    let top_keys: Vec<i64> = top.iter().map(|&i| g.key(0)[i as usize]).collect();
    let winners = JoinTable::build(
        ctx,
        "q10_build_top",
        Input::all(top_keys.len()),
        &[Col::i64(&top_keys).into()],
    )?;
    // probe: customer rows, build: ranks in `top`.
    let cm = winners.inner(
        ctx,
        "q10_probe_customer",
        Input::all(cust.num_rows()),
        &[col(cust, "c_custkey")?.into()],
    )?;
    let mut cust_row = vec![None; top.len()];
    for (&c, &rank) in cm.probe.iter().zip(&cm.build) {
        cust_row[rank as usize] = Some(c);
    }
    let (n_keys, n_names) = (db.nation.i64("n_nationkey")?, db.nation.dict("n_name")?);
    let nation_of = |key: i64| {
        n_keys
            .iter()
            .position(|&k| k == key)
            .map(|r| n_names.get(r))
    };

    let mut out = QueryResult::new(&[
        ("c_custkey", T::Int),
        ("c_name", T::Str),
        ("revenue", T::Decimal(4)),
        ("c_acctbal", T::Decimal(2)),
        ("n_name", T::Str),
        ("c_address", T::Str),
        ("c_phone", T::Str),
        ("c_comment", T::Str),
    ]);
    let c = |name| col(cust, name);
    let nationkey = cust.i64("c_nationkey")?;
    for (rank, &g_pos) in top.iter().enumerate() {
        // Foreign keys make both lookups succeed; a dangling key would drop
        // the row in the inner joins.
        let Some(row) = cust_row[rank] else { continue };
        let Some(nation) = nation_of(nationkey[row as usize]) else {
            continue;
        };
        out.push(vec![
            Value::Int(top_keys[rank]),
            str_cell(&c("c_name")?, row),
            sum_cell(g.agg(0), g_pos as usize),
            dec_cell(&c("c_acctbal")?, row),
            Value::Str(nation.to_string()),
            str_cell(&c("c_address")?, row),
            str_cell(&c("c_phone")?, row),
            str_cell(&c("c_comment")?, row),
        ]);
    }
    Ok(out)
}
