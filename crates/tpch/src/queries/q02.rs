//! TPC-H Q2, minimum cost supplier.
//!
//! ```sql
//! select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
//! from part, supplier, partsupp, nation, region
//! where p_partkey = ps_partkey
//!   and s_suppkey = ps_suppkey
//!   and p_size = :SIZE
//!   and p_type like '%:TYPE'
//!   and s_nationkey = n_nationkey
//!   and n_regionkey = r_regionkey
//!   and r_name = ':REGION'
//!   and ps_supplycost = (
//!       select min(ps_supplycost)
//!       from partsupp, supplier, nation, region
//!       where p_partkey = ps_partkey
//!         and s_suppkey = ps_suppkey
//!         and s_nationkey = n_nationkey
//!         and n_regionkey = r_regionkey
//!         and r_name = ':REGION')
//! order by s_acctbal desc, n_name, s_name, p_partkey
//! limit 100;
//! ```
//!
//! Plan: the inner and outer blocks read the same partsupp ⋈ supplier-in-
//! region rows, so the subquery de-correlates into one pass: the selected
//! parts (about 1 in 250) join partsupp, then the region's suppliers; the
//! minimum cost per part aggregates those candidates, and a semi join on
//! (partkey, cost) keeps the candidates at their part's minimum. Top 100.

use maestro_execution::{
    Agg, CmpOp, Col, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate,
    gather_positions, top_k,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult};
use super::util::region_nations;
use super::util::{col, dec_cell, int_cell, str_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (part, supp, ps, nation) = (&db.part, &db.supplier, &db.partsupp, &db.nation);

    let wanted = Pred::and(vec![
        Pred::cmp(col(part, "p_size")?, CmpOp::Eq, p.int("SIZE"))?,
        Pred::like(col(part, "p_type")?, &format!("%{}", p.str("TYPE")))?,
    ]);
    let parts = JoinTable::build(
        ctx,
        "q2_build_part",
        Input::filtered(part.num_rows(), &wanted),
        &[col(part, "p_partkey")?.into()],
    )?;
    // probe: partsupp rows, build: part rows.
    let pp = parts.inner(
        ctx,
        "q2_probe_part",
        Input::all(ps.num_rows()),
        &[col(ps, "ps_partkey")?.into()],
    )?;

    let nations = region_nations(db, p.str("REGION"))?;
    let in_region = Pred::is_in(col(supp, "s_nationkey")?, nations.iter().copied())?;
    let suppliers = JoinTable::build(
        ctx,
        "q2_build_supplier",
        Input::filtered(supp.num_rows(), &in_region),
        &[col(supp, "s_suppkey")?.into()],
    )?;
    // probe: positions in `pp`, build: supplier rows.
    let cand = suppliers.inner(
        ctx,
        "q2_probe_supplier",
        Input::all(pp.len()),
        &[col(ps, "ps_suppkey")?.at(&pp.probe).into()],
    )?;
    let ps_rows = gather_positions(ctx, "q2_partsupp_rows", &pp.probe, &cand.probe);
    let (ps_part, ps_cost) = (
        col(ps, "ps_partkey")?.at(&ps_rows),
        col(ps, "ps_supplycost")?.at(&ps_rows),
    );

    let g = aggregate(
        ctx,
        "q2_min_cost",
        Input::all(ps_rows.len()),
        &[ps_part.into()],
        &[Agg::min(ps_cost)],
    )?;
    let min_cost = &g.agg(0).values;
    let minima = JoinTable::build(
        ctx,
        "q2_build_min",
        Input::all(g.len()),
        &[
            g.key_col(0).into(),
            Expr::func(ps_cost.scale(), |i| {
                i64::try_from(min_cost[i as usize]).expect("a minimum of i64 costs")
            }),
        ],
    )?;
    // Positions in `cand` whose cost is their part's minimum.
    let best = minima.semi(
        ctx,
        "q2_probe_min",
        Input::all(ps_rows.len()),
        &[ps_part.into(), ps_cost.into()],
    )?;
    let s_rows = gather_positions(ctx, "q2_supplier_rows", &cand.build, &best);
    let in_pp = gather_positions(ctx, "q2_pp_positions", &cand.probe, &best);
    let p_rows = gather_positions(ctx, "q2_part_rows", &pp.build, &in_pp);

    // n_name per winner through the 25-nation lookup.
    let (n_keys, s_nation) = (nation.i64("n_nationkey")?, supp.i64("s_nationkey")?);
    let n_rows: Vec<u32> = s_rows
        .iter()
        .map(|&s| {
            let key = s_nation[s as usize];
            let row = n_keys.iter().position(|&k| k == key);
            u32::try_from(row.expect("s_nationkey references a nation")).expect("25 nations")
        })
        .collect();

    let s = |name| col(supp, name).map(|c| c.at(&s_rows));
    let (acctbal, s_name) = (s("s_acctbal")?, s("s_name")?);
    let n_name = Col::dict(nation.dict("n_name")?).at(&n_rows);
    let (p_key, p_mfgr) = (
        col(part, "p_partkey")?.at(&p_rows),
        col(part, "p_mfgr")?.at(&p_rows),
    );
    let top = top_k(
        ctx,
        "q2_top",
        Input::all(s_rows.len()),
        &[
            SortKey::desc(acctbal),
            SortKey::asc(n_name),
            SortKey::asc(s_name),
            SortKey::asc(p_key),
        ],
        100,
    )?;

    let (address, phone, comment) = (s("s_address")?, s("s_phone")?, s("s_comment")?);
    let mut out = QueryResult::new(&[
        ("s_acctbal", T::Decimal(2)),
        ("s_name", T::Str),
        ("n_name", T::Str),
        ("p_partkey", T::Int),
        ("p_mfgr", T::Str),
        ("s_address", T::Str),
        ("s_phone", T::Str),
        ("s_comment", T::Str),
    ]);
    for i in top {
        out.push(vec![
            dec_cell(&acctbal, i),
            str_cell(&s_name, i),
            str_cell(&n_name, i),
            int_cell(&p_key, i),
            str_cell(&p_mfgr, i),
            str_cell(&address, i),
            str_cell(&phone, i),
            str_cell(&comment, i),
        ]);
    }
    Ok(out)
}
