//! TPC-H Q20, potential part promotion.
//!
//! ```sql
//! select s_name, s_address
//! from supplier, nation
//! where s_suppkey in (
//!         select ps_suppkey from partsupp
//!         where ps_partkey in (select p_partkey from part
//!                              where p_name like ':COLOR%')
//!           and ps_availqty > (select 0.5 * sum(l_quantity) from lineitem
//!                              where l_partkey = ps_partkey
//!                                and l_suppkey = ps_suppkey
//!                                and l_shipdate >= date ':DATE'
//!                                and l_shipdate < date ':DATE' + interval '1' year))
//!   and s_nationkey = n_nationkey
//!   and n_name = ':NATION'
//! order by s_name;
//! ```
//!
//! Plan: the candidate partsupp rows are those of the nation's suppliers (one
//! in 25) and of the colour's parts (about one in a hundred), each a semi
//! join. The correlated sum is de-correlated: the year's lineitems join the
//! candidates on (partkey, suppkey) and are summed per candidate. A candidate
//! without lineitems has a NULL sum, so it never qualifies (it has no group);
//! the others qualify when `ps_availqty > 0.5 * sum`, exactly
//! `200 * ps_availqty > sum` in hundredths. The qualifying suppliers are a
//! semi join of the nation's suppliers, sorted by name.

use maestro_execution::{
    Agg, CmpOp, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate,
    gather_positions, select, sort,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult};
use super::util::nation_key;
use super::util::{col, str_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (supp, ps, part, li) = (&db.supplier, &db.partsupp, &db.part, &db.lineitem);
    let in_nation = Pred::cmp(
        col(supp, "s_nationkey")?,
        CmpOp::Eq,
        nation_key(db, p.str("NATION"))?,
    )?;
    let suppliers = JoinTable::build(
        ctx,
        "q20_build_supplier",
        Input::filtered(supp.num_rows(), &in_nation),
        &[col(supp, "s_suppkey")?.into()],
    )?;
    let ps_nation = suppliers.semi(
        ctx,
        "q20_probe_supplier",
        Input::all(ps.num_rows()),
        &[col(ps, "ps_suppkey")?.into()],
    )?;
    let colour = Pred::like(col(part, "p_name")?, &format!("{}%", p.str("COLOR")))?;
    let parts = JoinTable::build(
        ctx,
        "q20_build_part",
        Input::filtered(part.num_rows(), &colour),
        &[col(part, "p_partkey")?.into()],
    )?;
    let cand = parts.semi(
        ctx,
        "q20_probe_part",
        Input::all(ps_nation.len()),
        &[col(ps, "ps_partkey")?.at(&ps_nation).into()],
    )?;
    let ps_rows = gather_positions(ctx, "q20_partsupp_rows", &ps_nation, &cand);

    let candidates = JoinTable::build(
        ctx,
        "q20_build_candidates",
        Input::all(ps_rows.len()),
        &[
            col(ps, "ps_partkey")?.at(&ps_rows).into(),
            col(ps, "ps_suppkey")?.at(&ps_rows).into(),
        ],
    )?;
    let date = p.date("DATE");
    let ship = col(li, "l_shipdate")?;
    let year = Pred::and(vec![
        Pred::cmp(ship, CmpOp::Ge, date)?,
        Pred::cmp(ship, CmpOp::Lt, date.add_years(1))?,
    ]);
    // probe: lineitem rows, build: positions in `ps_rows`.
    let m = candidates.inner(
        ctx,
        "q20_probe_candidates",
        Input::filtered(li.num_rows(), &year),
        &[col(li, "l_partkey")?.into(), col(li, "l_suppkey")?.into()],
    )?;
    let shipped = aggregate(
        ctx,
        "q20_agg_shipped",
        Input::all(m.len()),
        &[Expr::func(0, |i| i64::from(m.build[i as usize]))],
        &[Agg::sum(col(li, "l_quantity")?.at(&m.probe))],
    )?;
    let (avail, ps_supp) = (ps.i32("ps_availqty")?, ps.i64("ps_suppkey")?);
    let ps_row = |g: u32| ps_rows[shipped.key(0)[g as usize] as usize] as usize;
    let sums = &shipped.agg(0).values;
    let excess = Pred::func(|g| 200 * i128::from(avail[ps_row(g)]) > sums[g as usize]);
    let qualifying = select(ctx, "q20_select_excess", shipped.len(), &excess)?;

    let offering = JoinTable::build(
        ctx,
        "q20_build_qualifying",
        Input::all(qualifying.len()),
        &[Expr::func(0, |i| ps_supp[ps_row(qualifying[i as usize])])],
    )?;
    let s_rows = offering.semi(
        ctx,
        "q20_probe_qualifying",
        Input::filtered(supp.num_rows(), &in_nation),
        &[col(supp, "s_suppkey")?.into()],
    )?;
    let (name, address) = (
        col(supp, "s_name")?.at(&s_rows),
        col(supp, "s_address")?.at(&s_rows),
    );
    let order = sort(
        ctx,
        "q20_sort",
        Input::all(s_rows.len()),
        &[SortKey::asc(name)],
        None,
    )?;
    let mut out = QueryResult::new(&[("s_name", T::Str), ("s_address", T::Str)]);
    for i in order {
        out.push(vec![str_cell(&name, i), str_cell(&address, i)]);
    }
    Ok(out)
}
