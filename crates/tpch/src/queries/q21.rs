//! TPC-H Q21, suppliers who kept orders waiting.
//!
//! ```sql
//! select s_name, count(*) as numwait
//! from supplier, lineitem l1, orders, nation
//! where s_suppkey = l1.l_suppkey
//!   and o_orderkey = l1.l_orderkey
//!   and o_orderstatus = 'F'
//!   and l1.l_receiptdate > l1.l_commitdate
//!   and exists (select * from lineitem l2
//!               where l2.l_orderkey = l1.l_orderkey
//!                 and l2.l_suppkey <> l1.l_suppkey)
//!   and not exists (select * from lineitem l3
//!                   where l3.l_orderkey = l1.l_orderkey
//!                     and l3.l_suppkey <> l1.l_suppkey
//!                     and l3.l_receiptdate > l3.l_commitdate)
//!   and s_nationkey = n_nationkey
//!   and n_name = ':NATION'
//! group by s_name
//! order by numwait desc, s_name
//! limit 100;
//! ```
//!
//! Plan: the late lineitems of the nation's suppliers (l1 candidates, one in
//! 40 lineitems) are found first; their orders, reduced to status 'F' by a
//! semi join of the orders with the candidates' order keys, are a small build
//! side that keeps only the l1 candidates of 'F' orders and picks, in one more
//! lineitem scan, every lineitem of those orders (l2/l3). Those are hashed by
//! order once; EXISTS is a semi join and NOT EXISTS an anti join on it, with
//! `l_suppkey <>` (and, for l3, lateness) as residual conditions. Count by
//! supplier row, top 100 by count and name.

use maestro_execution::{
    Agg, CmpOp, ExecContext, ExecError, Expr, Input, JoinKind, JoinOutput, JoinTable, Pred,
    SortKey, aggregate, gather_positions, top_k,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult};
use super::util::nation_key;
use super::util::{col, count_cell, str_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (supp, li, ord) = (&db.supplier, &db.lineitem, &db.orders);
    let in_nation = Pred::cmp(
        col(supp, "s_nationkey")?,
        CmpOp::Eq,
        nation_key(db, p.str("NATION"))?,
    )?;
    let suppliers = JoinTable::build(
        ctx,
        "q21_build_supplier",
        Input::filtered(supp.num_rows(), &in_nation),
        &[col(supp, "s_suppkey")?.into()],
    )?;
    let late = Pred::cols(
        col(li, "l_receiptdate")?,
        CmpOp::Gt,
        col(li, "l_commitdate")?,
    )?;
    // probe: lineitem rows, build: supplier rows.
    let ls = suppliers.inner(
        ctx,
        "q21_probe_supplier",
        Input::filtered(li.num_rows(), &late),
        &[col(li, "l_suppkey")?.into()],
    )?;
    let orderkey = col(li, "l_orderkey")?;

    let cand_orders = JoinTable::build(
        ctx,
        "q21_build_candidate_orders",
        Input::all(ls.len()),
        &[orderkey.at(&ls.probe).into()],
    )?;
    let failed = Pred::cmp(col(ord, "o_orderstatus")?, CmpOp::Eq, "F")?;
    let f_rows = cand_orders.semi(
        ctx,
        "q21_probe_candidate_orders",
        Input::filtered(ord.num_rows(), &failed),
        &[col(ord, "o_orderkey")?.into()],
    )?;
    let f_orders = JoinTable::build(
        ctx,
        "q21_build_orders",
        Input::all(f_rows.len()),
        &[col(ord, "o_orderkey")?.at(&f_rows).into()],
    )?;
    let l1 = f_orders.semi(
        ctx,
        "q21_probe_l1",
        Input::all(ls.len()),
        &[orderkey.at(&ls.probe).into()],
    )?;
    let l1_rows = gather_positions(ctx, "q21_l1_rows", &ls.probe, &l1);
    let l2_rows = f_orders.semi(
        ctx,
        "q21_probe_l2",
        Input::all(li.num_rows()),
        &[orderkey.into()],
    )?;
    let others = JoinTable::build(
        ctx,
        "q21_build_l2",
        Input::all(l2_rows.len()),
        &[orderkey.at(&l2_rows).into()],
    )?;

    let (suppkey, receipt, commit) = (
        li.i64("l_suppkey")?,
        li.date("l_receiptdate")?,
        li.date("l_commitdate")?,
    );
    let other_supplier = |l: usize, b: u32| suppkey[l] != suppkey[l2_rows[b as usize] as usize];
    let exists = |p: u32, b: u32| other_supplier(l1_rows[p as usize] as usize, b);
    let JoinOutput::Positions(shared) = others.probe(
        ctx,
        "q21_exists",
        JoinKind::Semi,
        Input::all(l1_rows.len()),
        &[orderkey.at(&l1_rows).into()],
        Some(&exists),
    )?
    else {
        unreachable!("a semi join yields positions")
    };
    let shared_rows = gather_positions(ctx, "q21_shared_rows", &l1_rows, &shared);
    let other_late = |p: u32, b: u32| {
        let r = l2_rows[b as usize] as usize;
        receipt[r] > commit[r] && other_supplier(shared_rows[p as usize] as usize, b)
    };
    let JoinOutput::Positions(waiting) = others.probe(
        ctx,
        "q21_not_exists",
        JoinKind::Anti,
        Input::all(shared_rows.len()),
        &[orderkey.at(&shared_rows).into()],
        Some(&other_late),
    )?
    else {
        unreachable!("an anti join yields positions")
    };

    // Supplier row of each surviving l1: through `shared`, `l1` into `ls`.
    let in_l1 = gather_positions(ctx, "q21_l1_positions", &l1, &shared);
    let l1_pos = gather_positions(ctx, "q21_waiting_positions", &in_l1, &waiting);
    let s_rows = gather_positions(ctx, "q21_supplier_rows", &ls.build, &l1_pos);
    let g = aggregate(
        ctx,
        "q21_agg",
        Input::all(s_rows.len()),
        &[Expr::func(0, |i| i64::from(s_rows[i as usize]))],
        &[Agg::count()],
    )?;
    let g_rows: Vec<u32> = g
        .key(0)
        .iter()
        .map(|&r| u32::try_from(r).expect("a supplier row"))
        .collect();
    let name = col(supp, "s_name")?.at(&g_rows);
    let top = top_k(
        ctx,
        "q21_top",
        Input::all(g.len()),
        &[SortKey::desc(g.agg(0).col()), SortKey::asc(name)],
        100,
    )?;
    let mut out = QueryResult::new(&[("s_name", T::Str), ("numwait", T::Int)]);
    for i in top {
        out.push(vec![str_cell(&name, i), count_cell(g.agg(0), i as usize)]);
    }
    Ok(out)
}
