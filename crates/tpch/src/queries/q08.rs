//! TPC-H Q8, national market share.
//!
//! ```sql
//! select o_year,
//!        sum(case when nation = ':NATION' then volume else 0 end) / sum(volume)
//!            as mkt_share
//! from (
//!     select extract(year from o_orderdate) as o_year,
//!            l_extendedprice * (1 - l_discount) as volume,
//!            n2.n_name as nation
//!     from part, supplier, lineitem, orders, customer, nation n1, nation n2, region
//!     where p_partkey = l_partkey
//!       and s_suppkey = l_suppkey
//!       and l_orderkey = o_orderkey
//!       and o_custkey = c_custkey
//!       and c_nationkey = n1.n_nationkey
//!       and n1.n_regionkey = r_regionkey
//!       and r_name = ':REGION'
//!       and s_nationkey = n2.n_nationkey
//!       and o_orderdate between date '1995-01-01' and date '1996-12-31'
//!       and p_type = ':TYPE'
//! ) as all_nations
//! group by o_year
//! order by o_year;
//! ```
//!
//! Plan: nation and region keys come from the 25-nation table. The type's
//! parts (1 in 150) reduce all lineitems by a semi join; the two years'
//! orders of the region's customers (a semi join) are the build side for
//! those lineitems; the matches look up their supplier's nation. Both sums
//! are exact (scale 4); the share is their ratio as a double.

use maestro_execution::{
    Agg, CmpOp, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate,
    gather_positions, sort,
};
use maestro_storage::column::Date;

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::col;
use super::util::{nation_key, region_nations};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (part, supp, li, ord, cust) = (
        &db.part,
        &db.supplier,
        &db.lineitem,
        &db.orders,
        &db.customer,
    );
    let (region_keys, nation_key) = (
        region_nations(db, p.str("REGION"))?,
        nation_key(db, p.str("NATION"))?,
    );

    let of_type = Pred::cmp(col(part, "p_type")?, CmpOp::Eq, p.str("TYPE"))?;
    let parts = JoinTable::build(
        ctx,
        "q8_build_part",
        Input::filtered(part.num_rows(), &of_type),
        &[col(part, "p_partkey")?.into()],
    )?;
    let l_rows = parts.semi(
        ctx,
        "q8_probe_part",
        Input::all(li.num_rows()),
        &[col(li, "l_partkey")?.into()],
    )?;

    let in_region = Pred::is_in(col(cust, "c_nationkey")?, region_keys)?;
    let customers = JoinTable::build(
        ctx,
        "q8_build_customer",
        Input::filtered(cust.num_rows(), &in_region),
        &[col(cust, "c_custkey")?.into()],
    )?;
    let d = |s| Date::parse(s).expect("a date");
    let years = Pred::between(col(ord, "o_orderdate")?, d("1995-01-01"), d("1996-12-31"))?;
    let o_rows = customers.semi(
        ctx,
        "q8_probe_customer",
        Input::filtered(ord.num_rows(), &years),
        &[col(ord, "o_custkey")?.into()],
    )?;
    let orders = JoinTable::build(
        ctx,
        "q8_build_orders",
        Input::all(o_rows.len()),
        &[col(ord, "o_orderkey")?.at(&o_rows).into()],
    )?;
    // probe: positions in `l_rows`, build: positions in `o_rows`.
    let lo = orders.inner(
        ctx,
        "q8_probe_orders",
        Input::all(l_rows.len()),
        &[col(li, "l_orderkey")?.at(&l_rows).into()],
    )?;
    let l_rows = gather_positions(ctx, "q8_lineitem_rows", &l_rows, &lo.probe);
    let o_rows = gather_positions(ctx, "q8_order_rows", &o_rows, &lo.build);

    let suppliers = JoinTable::build(
        ctx,
        "q8_build_supplier",
        Input::all(supp.num_rows()),
        &[col(supp, "s_suppkey")?.into()],
    )?;
    // probe: positions in `lo`, build: supplier rows.
    let ls = suppliers.inner(
        ctx,
        "q8_probe_supplier",
        Input::all(l_rows.len()),
        &[col(li, "l_suppkey")?.at(&l_rows).into()],
    )?;
    let l_rows = gather_positions(ctx, "q8_volume_rows", &l_rows, &ls.probe);
    let o_rows = gather_positions(ctx, "q8_year_rows", &o_rows, &ls.probe);

    let l = |name| col(li, name).map(|c| c.at(&l_rows));
    let volume = Expr::col(l("l_extendedprice")?) * (Expr::int(1) - Expr::col(l("l_discount")?));
    let domestic = Pred::cmp(
        col(supp, "s_nationkey")?.at(&ls.build),
        CmpOp::Eq,
        nation_key,
    )?;
    let g = aggregate(
        ctx,
        "q8_agg",
        Input::all(ls.len()),
        &[Expr::year(col(ord, "o_orderdate")?.at(&o_rows))],
        &[
            Agg::sum(Expr::case(domestic, volume.clone(), Expr::int(0))),
            Agg::sum(volume),
        ],
    )?;
    let order = sort(
        ctx,
        "q8_sort",
        Input::all(g.len()),
        &[SortKey::asc(g.key_col(0))],
        None,
    )?;

    let mut out = QueryResult::new(&[("o_year", T::Int), ("mkt_share", T::Double)]);
    for i in order {
        let i = i as usize;
        // Both sums have the volume's scale, so their ratio is the share.
        out.push(vec![
            Value::Int(g.key(0)[i]),
            Value::ratio(g.agg(0).values[i], g.agg(1).values[i]),
        ]);
    }
    Ok(out)
}
