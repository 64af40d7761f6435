//! TPC-H Q17, small-quantity-order revenue.
//!
//! ```sql
//! select sum(l_extendedprice) / 7.0 as avg_yearly
//! from lineitem, part
//! where p_partkey = l_partkey
//!   and p_brand = ':BRAND'
//!   and p_container = ':CONTAINER'
//!   and l_quantity < (select 0.2 * avg(l_quantity) from lineitem
//!                     where l_partkey = p_partkey);
//! ```
//!
//! Plan: the correlated subquery is de-correlated into a per-part aggregate
//! joined back. Only the brand's parts in the container (one in a thousand)
//! matter, so they are the build side of one lineitem scan; the matching
//! lineitems are all the subquery needs, aggregated by part (sum and count of
//! the quantity). Each matching lineitem joins its part's group and passes
//! when `l_quantity < 0.2 * sum / count`, compared exactly as
//! `5 * l_quantity * count < sum`.

use maestro_execution::{
    Agg, CmpOp, ExecContext, ExecError, Input, JoinTable, Pred, aggregate, gather_positions,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::col;
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (li, part) = (&db.lineitem, &db.part);
    let part_filter = Pred::and(vec![
        Pred::cmp(col(part, "p_brand")?, CmpOp::Eq, p.str("BRAND"))?,
        Pred::cmp(col(part, "p_container")?, CmpOp::Eq, p.str("CONTAINER"))?,
    ]);
    let parts = JoinTable::build(
        ctx,
        "q17_build_part",
        Input::filtered(part.num_rows(), &part_filter),
        &[col(part, "p_partkey")?.into()],
    )?;
    let li_rows = parts.semi(
        ctx,
        "q17_probe_part",
        Input::all(li.num_rows()),
        &[col(li, "l_partkey")?.into()],
    )?;

    let l = |name| col(li, name).map(|c| c.at(&li_rows));
    let per_part = aggregate(
        ctx,
        "q17_agg_part",
        Input::all(li_rows.len()),
        &[l("l_partkey")?.into()],
        &[Agg::sum(l("l_quantity")?), Agg::count()],
    )?;
    let groups = JoinTable::build(
        ctx,
        "q17_build_groups",
        Input::all(per_part.len()),
        &[per_part.key_col(0).into()],
    )?;
    // probe: positions in `li_rows`, build: groups of `per_part`.
    let m = groups.inner(
        ctx,
        "q17_probe_groups",
        Input::all(li_rows.len()),
        &[l("l_partkey")?.into()],
    )?;
    let rows = gather_positions(ctx, "q17_lineitem_rows", &li_rows, &m.probe);

    let quantity = li.decimal("l_quantity")?.values();
    let (sums, counts) = (&per_part.agg(0).values, &per_part.agg(1).values);
    let small = Pred::func(|i| {
        let (r, g) = (rows[i as usize] as usize, m.build[i as usize] as usize);
        5 * i128::from(quantity[r]) * counts[g] < sums[g]
    });
    let r = aggregate(
        ctx,
        "q17_agg",
        Input::filtered(rows.len(), &small),
        &[],
        &[
            Agg::sum(col(li, "l_extendedprice")?.at(&rows)),
            Agg::count(),
        ],
    )?;
    let mut out = QueryResult::new(&[("avg_yearly", T::Double)]);
    // SUM over no rows is NULL; the sum has 2 decimals, so / 7.0 is / 700.
    out.push(vec![if r.agg(1).values[0] == 0 {
        Value::Null
    } else {
        Value::ratio(r.agg(0).values[0], 700)
    }]);
    Ok(out)
}
