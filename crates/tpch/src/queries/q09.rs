//! TPC-H Q9, product type profit measure.
//!
//! ```sql
//! select nation, o_year, sum(amount) as sum_profit
//! from (
//!     select n_name as nation, extract(year from o_orderdate) as o_year,
//!            l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
//!     from part, supplier, lineitem, partsupp, orders, nation
//!     where s_suppkey = l_suppkey
//!       and ps_suppkey = l_suppkey
//!       and ps_partkey = l_partkey
//!       and p_partkey = l_partkey
//!       and o_orderkey = l_orderkey
//!       and s_nationkey = n_nationkey
//!       and p_name like '%:COLOR%'
//! ) as profit
//! group by nation, o_year
//! order by nation, o_year desc;
//! ```
//!
//! Plan: the colored parts (1 in 17, a substring search on the heap) reduce
//! partsupp by a semi join; those partsupp rows, keyed (partkey, suppkey), are
//! the build side for all lineitems, which covers `p_partkey = l_partkey`
//! too. The matches look up their supplier, then are the build side for all
//! orders (smaller than the orders table). Group by the nation's name code
//! (which orders like the name) and the year.

use maestro_execution::{
    Agg, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate,
    gather_positions, sort,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::nation_name_codes;
use super::util::{col, sum_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (part, supp, li, ps, ord) = (
        &db.part,
        &db.supplier,
        &db.lineitem,
        &db.partsupp,
        &db.orders,
    );

    let colored = Pred::like(col(part, "p_name")?, &format!("%{}%", p.str("COLOR")))?;
    let parts = JoinTable::build(
        ctx,
        "q9_build_part",
        Input::filtered(part.num_rows(), &colored),
        &[col(part, "p_partkey")?.into()],
    )?;
    let ps_rows = parts.semi(
        ctx,
        "q9_probe_part",
        Input::all(ps.num_rows()),
        &[col(ps, "ps_partkey")?.into()],
    )?;
    let partsupps = JoinTable::build(
        ctx,
        "q9_build_partsupp",
        Input::all(ps_rows.len()),
        &[
            col(ps, "ps_partkey")?.at(&ps_rows).into(),
            col(ps, "ps_suppkey")?.at(&ps_rows).into(),
        ],
    )?;
    // probe: lineitem rows, build: positions in `ps_rows`.
    let lp = partsupps.inner(
        ctx,
        "q9_probe_partsupp",
        Input::all(li.num_rows()),
        &[col(li, "l_partkey")?.into(), col(li, "l_suppkey")?.into()],
    )?;

    let suppliers = JoinTable::build(
        ctx,
        "q9_build_supplier",
        Input::all(supp.num_rows()),
        &[col(supp, "s_suppkey")?.into()],
    )?;
    // probe: positions in `lp`, build: supplier rows.
    let ls = suppliers.inner(
        ctx,
        "q9_probe_supplier",
        Input::all(lp.len()),
        &[col(li, "l_suppkey")?.at(&lp.probe).into()],
    )?;
    let l_rows = gather_positions(ctx, "q9_lineitem_rows", &lp.probe, &ls.probe);
    let ps_pos = gather_positions(ctx, "q9_partsupp_pos", &lp.build, &ls.probe);

    let lines = JoinTable::build(
        ctx,
        "q9_build_lineitem",
        Input::all(l_rows.len()),
        &[col(li, "l_orderkey")?.at(&l_rows).into()],
    )?;
    // probe: order rows, build: positions in `ls`.
    let ol = lines.inner(
        ctx,
        "q9_probe_lineitem",
        Input::all(ord.num_rows()),
        &[col(ord, "o_orderkey")?.into()],
    )?;
    let l_rows = gather_positions(ctx, "q9_profit_rows", &l_rows, &ol.build);
    let ps_pos = gather_positions(ctx, "q9_cost_pos", &ps_pos, &ol.build);
    let ps_rows = gather_positions(ctx, "q9_cost_rows", &ps_rows, &ps_pos);
    let s_rows = gather_positions(ctx, "q9_nation_rows", &ls.build, &ol.build);

    let nation = &db.nation;
    let n_names = nation.dict("n_name")?;
    let name_code = nation_name_codes(db)?;
    let s_nation = supp.i64("s_nationkey")?;

    let l = |name| col(li, name).map(|c| c.at(&l_rows));
    let amount = Expr::col(l("l_extendedprice")?) * (Expr::int(1) - Expr::col(l("l_discount")?))
        - Expr::col(col(ps, "ps_supplycost")?.at(&ps_rows)) * Expr::col(l("l_quantity")?);
    let g = aggregate(
        ctx,
        "q9_agg",
        Input::all(ol.len()),
        &[
            Expr::func(0, |i| {
                name_code[s_nation[s_rows[i as usize] as usize] as usize]
            }),
            Expr::year(col(ord, "o_orderdate")?.at(&ol.probe)),
        ],
        &[Agg::sum(amount)],
    )?;
    let order = sort(
        ctx,
        "q9_sort",
        Input::all(g.len()),
        &[SortKey::asc(g.key_col(0)), SortKey::desc(g.key_col(1))],
        None,
    )?;

    let mut out = QueryResult::new(&[
        ("nation", T::Str),
        ("o_year", T::Int),
        ("sum_profit", T::Decimal(4)),
    ]);
    for i in order {
        let i = i as usize;
        let code = u32::try_from(g.key(0)[i]).expect("a dictionary code");
        out.push(vec![
            Value::Str(n_names.decode(code).to_string()),
            Value::Int(g.key(1)[i]),
            sum_cell(g.agg(0), i),
        ]);
    }
    Ok(out)
}
