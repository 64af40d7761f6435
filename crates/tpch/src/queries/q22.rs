//! TPC-H Q22, global sales opportunity.
//!
//! ```sql
//! select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal
//! from (select substring(c_phone from 1 for 2) as cntrycode, c_acctbal
//!       from customer
//!       where substring(c_phone from 1 for 2) in
//!                 (':I1', ':I2', ':I3', ':I4', ':I5', ':I6', ':I7')
//!         and c_acctbal > (select avg(c_acctbal) from customer
//!                          where c_acctbal > 0.00
//!                            and substring(c_phone from 1 for 2) in
//!                                (':I1', ':I2', ':I3', ':I4', ':I5', ':I6', ':I7'))
//!         and not exists (select * from orders where o_custkey = c_custkey)
//!      ) as custsale
//! group by cntrycode
//! order by cntrycode;
//! ```
//!
//! Plan: a country code is the phone's first two bytes packed into an integer
//! (which orders like the two-character strings), read in place from the
//! phone heap. The uncorrelated average is one global aggregate (sum and
//! count); `c_acctbal > avg` is compared exactly as `c_acctbal * count > sum`.
//! NOT EXISTS is an anti join; rather than hashing every order, the
//! candidates (a tenth of the customers) first reduce the orders with a semi
//! join, and only those orders are the anti join's build side. Group by code.

use maestro_execution::{
    Agg, CmpOp, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate,
    gather_positions, select, sort,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::{col, count_cell, sum_cell};
use crate::Database;

/// The first two bytes of `s` as one integer, or -1 if it is shorter.
fn packed_prefix(s: &[u8]) -> i64 {
    match s {
        [a, b, ..] => i64::from(*a) << 8 | i64::from(*b),
        _ => -1,
    }
}

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (cust, ord) = (&db.customer, &db.orders);
    let codes: Vec<i64> = ["I1", "I2", "I3", "I4", "I5", "I6", "I7"]
        .iter()
        .map(|name| packed_prefix(format!("{:02}", p.int(name)).as_bytes()))
        .collect();
    let phone = cust.heap("c_phone")?;
    let code_of = |r: u32| packed_prefix(phone.get_bytes(r as usize));
    let in_list = Pred::func(|r| codes.contains(&code_of(r)));

    let acctbal = col(cust, "c_acctbal")?;
    let positive = Pred::and(vec![Pred::cmp(acctbal, CmpOp::Gt, 0i64)?, in_list.clone()]);
    let avg = aggregate(
        ctx,
        "q22_agg_avg",
        Input::filtered(cust.num_rows(), &positive),
        &[],
        &[Agg::sum(acctbal), Agg::count()],
    )?;
    let (sum, count) = (avg.agg(0).values[0], avg.agg(1).values[0]);
    let balances = cust.decimal("c_acctbal")?.values();
    // An average over no rows is NULL: then no balance exceeds it.
    let above = Pred::func(|r| count > 0 && i128::from(balances[r as usize]) * count > sum);
    let candidate = Pred::and(vec![above, in_list]);
    let cand_rows = select(ctx, "q22_select_customer", cust.num_rows(), &candidate)?;

    let candidates = JoinTable::build(
        ctx,
        "q22_build_candidates",
        Input::all(cand_rows.len()),
        &[col(cust, "c_custkey")?.at(&cand_rows).into()],
    )?;
    let order_rows = candidates.semi(
        ctx,
        "q22_reduce_orders",
        Input::all(ord.num_rows()),
        &[col(ord, "o_custkey")?.into()],
    )?;
    let ordering = JoinTable::build(
        ctx,
        "q22_build_orders",
        Input::all(order_rows.len()),
        &[col(ord, "o_custkey")?.at(&order_rows).into()],
    )?;
    let idle = ordering.anti(
        ctx,
        "q22_probe_orders",
        Input::all(cand_rows.len()),
        &[col(cust, "c_custkey")?.at(&cand_rows).into()],
    )?;
    let rows = gather_positions(ctx, "q22_customer_rows", &cand_rows, &idle);

    let g = aggregate(
        ctx,
        "q22_agg",
        Input::all(rows.len()),
        &[Expr::func(0, |i| code_of(rows[i as usize]))],
        &[Agg::count(), Agg::sum(acctbal.at(&rows))],
    )?;
    let order = sort(
        ctx,
        "q22_sort",
        Input::all(g.len()),
        &[SortKey::asc(g.key_col(0))],
        None,
    )?;
    let mut out = QueryResult::new(&[
        ("cntrycode", T::Str),
        ("numcust", T::Int),
        ("totacctbal", T::Decimal(2)),
    ]);
    for i in order {
        let i = i as usize;
        let [_, _, _, _, _, _, hi, lo] = g.key(0)[i].to_be_bytes();
        out.push(vec![
            Value::Str(String::from_utf8_lossy(&[hi, lo]).into_owned()),
            count_cell(g.agg(0), i),
            sum_cell(g.agg(1), i),
        ]);
    }
    Ok(out)
}
