//! TPC-H Q5, local supplier volume.
//!
//! ```sql
//! select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
//! from customer, orders, lineitem, supplier, nation, region
//! where c_custkey = o_custkey
//!   and l_orderkey = o_orderkey
//!   and l_suppkey = s_suppkey
//!   and c_nationkey = s_nationkey
//!   and s_nationkey = n_nationkey
//!   and n_regionkey = r_regionkey
//!   and r_name = ':REGION'
//!   and o_orderdate >= date ':DATE'
//!   and o_orderdate < date ':DATE' + interval '1' year
//! group by n_name
//! order by revenue desc;
//! ```
//!
//! Plan: the region's nations are a lookup over the 25 nations. The year's
//! orders join the region's customers (keeping the customer's nation); those
//! orders are the build side for all lineitems; the matches join the region's
//! suppliers on (suppkey, nationkey), which is `c_nationkey = s_nationkey`.
//! Sum by nation, sort by revenue.

use maestro_execution::{
    Agg, CmpOp, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate,
    gather_positions, sort,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::region_nations;
use super::util::{col, sum_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (cust, ord, li, supp) = (&db.customer, &db.orders, &db.lineitem, &db.supplier);
    let nations = region_nations(db, p.str("REGION"))?;

    let in_region = Pred::is_in(col(cust, "c_nationkey")?, nations.iter().copied())?;
    let customers = JoinTable::build(
        ctx,
        "q5_build_customer",
        Input::filtered(cust.num_rows(), &in_region),
        &[col(cust, "c_custkey")?.into()],
    )?;
    let date = p.date("DATE");
    let odate = col(ord, "o_orderdate")?;
    let year = Pred::and(vec![
        Pred::cmp(odate, CmpOp::Ge, date)?,
        Pred::cmp(odate, CmpOp::Lt, date.add_years(1))?,
    ]);
    // probe: order rows, build: customer rows.
    let oc = customers.inner(
        ctx,
        "q5_probe_customer",
        Input::filtered(ord.num_rows(), &year),
        &[col(ord, "o_custkey")?.into()],
    )?;

    let orders = JoinTable::build(
        ctx,
        "q5_build_orders",
        Input::all(oc.len()),
        &[col(ord, "o_orderkey")?.at(&oc.probe).into()],
    )?;
    // probe: lineitem rows, build: positions in `oc`.
    let lo = orders.inner(
        ctx,
        "q5_probe_orders",
        Input::all(li.num_rows()),
        &[col(li, "l_orderkey")?.into()],
    )?;
    let c_rows = gather_positions(ctx, "q5_customer_rows", &oc.build, &lo.build);

    let supp_in_region = Pred::is_in(col(supp, "s_nationkey")?, nations.iter().copied())?;
    let suppliers = JoinTable::build(
        ctx,
        "q5_build_supplier",
        Input::filtered(supp.num_rows(), &supp_in_region),
        &[
            col(supp, "s_suppkey")?.into(),
            col(supp, "s_nationkey")?.into(),
        ],
    )?;
    // probe: positions in `lo`, build: supplier rows.
    let ls = suppliers.inner(
        ctx,
        "q5_probe_supplier",
        Input::all(lo.len()),
        &[
            col(li, "l_suppkey")?.at(&lo.probe).into(),
            col(cust, "c_nationkey")?.at(&c_rows).into(),
        ],
    )?;
    let l_rows = gather_positions(ctx, "q5_lineitem_rows", &lo.probe, &ls.probe);

    let l = |name| col(li, name).map(|c| c.at(&l_rows));
    let revenue = Expr::col(l("l_extendedprice")?) * (Expr::int(1) - Expr::col(l("l_discount")?));
    let g = aggregate(
        ctx,
        "q5_agg",
        Input::all(ls.len()),
        &[col(supp, "s_nationkey")?.at(&ls.build).into()],
        &[Agg::sum(revenue)],
    )?;
    let order = sort(
        ctx,
        "q5_sort",
        Input::all(g.len()),
        &[SortKey::desc(g.agg(0).col())],
        None,
    )?;

    let nation = &db.nation;
    let (keys, names) = (nation.i64("n_nationkey")?, nation.dict("n_name")?);
    let mut out = QueryResult::new(&[("n_name", T::Str), ("revenue", T::Decimal(4))]);
    for i in order {
        let i = i as usize;
        let row = keys
            .iter()
            .position(|&k| k == g.key(0)[i])
            .expect("s_nationkey references a nation");
        out.push(vec![
            Value::Str(names.get(row).to_string()),
            sum_cell(g.agg(0), i),
        ]);
    }
    Ok(out)
}
