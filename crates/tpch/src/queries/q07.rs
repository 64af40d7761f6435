//! TPC-H Q7, volume shipping.
//!
//! ```sql
//! select supp_nation, cust_nation, l_year, sum(volume) as revenue
//! from (
//!     select n1.n_name as supp_nation, n2.n_name as cust_nation,
//!            extract(year from l_shipdate) as l_year,
//!            l_extendedprice * (1 - l_discount) as volume
//!     from supplier, lineitem, orders, customer, nation n1, nation n2
//!     where s_suppkey = l_suppkey
//!       and o_orderkey = l_orderkey
//!       and c_custkey = o_custkey
//!       and s_nationkey = n1.n_nationkey
//!       and c_nationkey = n2.n_nationkey
//!       and ((n1.n_name = ':NATION1' and n2.n_name = ':NATION2')
//!         or (n1.n_name = ':NATION2' and n2.n_name = ':NATION1'))
//!       and l_shipdate between date '1995-01-01' and date '1996-12-31'
//! ) as shipping
//! group by supp_nation, cust_nation, l_year
//! order by supp_nation, cust_nation, l_year;
//! ```
//!
//! Plan: the two nations' keys come from the 25-nation table. Suppliers and
//! customers of either nation are build sides: the two years' lineitems join
//! the suppliers (2 in 25), all orders join the customers (2 in 25) and
//! become the build side for those lineitems, with the nation pairing as the
//! join's residual condition. Group by the nations' name codes (which order
//! like the names) and the year; sort the few groups.

use maestro_execution::{
    Agg, ExecContext, ExecError, Expr, Input, JoinKind, JoinOutput, JoinTable, Pred, SortKey,
    aggregate, gather_positions, sort,
};
use maestro_storage::column::Date;

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::{col, sum_cell};
use super::util::{nation_key, nation_name_codes};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (supp, li, ord, cust, nation) = (
        &db.supplier,
        &db.lineitem,
        &db.orders,
        &db.customer,
        &db.nation,
    );
    let (k1, k2) = (
        nation_key(db, p.str("NATION1"))?,
        nation_key(db, p.str("NATION2"))?,
    );
    let name_code = nation_name_codes(db)?;
    let n_names = nation.dict("n_name")?;

    let s_pair = Pred::is_in(col(supp, "s_nationkey")?, [k1, k2])?;
    let suppliers = JoinTable::build(
        ctx,
        "q7_build_supplier",
        Input::filtered(supp.num_rows(), &s_pair),
        &[col(supp, "s_suppkey")?.into()],
    )?;
    let d = |s| Date::parse(s).expect("a date");
    let years = Pred::between(col(li, "l_shipdate")?, d("1995-01-01"), d("1996-12-31"))?;
    // probe: lineitem rows, build: supplier rows.
    let ls = suppliers.inner(
        ctx,
        "q7_probe_supplier",
        Input::filtered(li.num_rows(), &years),
        &[col(li, "l_suppkey")?.into()],
    )?;

    let c_pair = Pred::is_in(col(cust, "c_nationkey")?, [k1, k2])?;
    let customers = JoinTable::build(
        ctx,
        "q7_build_customer",
        Input::filtered(cust.num_rows(), &c_pair),
        &[col(cust, "c_custkey")?.into()],
    )?;
    // probe: order rows, build: customer rows.
    let oc = customers.inner(
        ctx,
        "q7_probe_customer",
        Input::all(ord.num_rows()),
        &[col(ord, "o_custkey")?.into()],
    )?;
    let orders = JoinTable::build(
        ctx,
        "q7_build_orders",
        Input::all(oc.len()),
        &[col(ord, "o_orderkey")?.at(&oc.probe).into()],
    )?;
    let (s_nation, c_nation) = (supp.i64("s_nationkey")?, cust.i64("c_nationkey")?);
    let pairing = |l: u32, o: u32| {
        let sn = s_nation[ls.build[l as usize] as usize];
        let cn = c_nation[oc.build[o as usize] as usize];
        (sn == k1 && cn == k2) || (sn == k2 && cn == k1)
    };
    // probe: positions in `ls`, build: positions in `oc`.
    let JoinOutput::Pairs(lo) = orders.probe(
        ctx,
        "q7_probe_orders",
        JoinKind::Inner,
        Input::all(ls.len()),
        &[col(li, "l_orderkey")?.at(&ls.probe).into()],
        Some(&pairing),
    )?
    else {
        unreachable!("an inner join yields pairs")
    };
    let l_rows = gather_positions(ctx, "q7_lineitem_rows", &ls.probe, &lo.probe);
    let s_rows = gather_positions(ctx, "q7_supplier_rows", &ls.build, &lo.probe);
    let c_rows = gather_positions(ctx, "q7_customer_rows", &oc.build, &lo.build);

    let l = |name| col(li, name).map(|c| c.at(&l_rows));
    let volume = Expr::col(l("l_extendedprice")?) * (Expr::int(1) - Expr::col(l("l_discount")?));
    let g = aggregate(
        ctx,
        "q7_agg",
        Input::all(lo.len()),
        &[
            Expr::func(0, |i| {
                name_code[s_nation[s_rows[i as usize] as usize] as usize]
            }),
            Expr::func(0, |i| {
                name_code[c_nation[c_rows[i as usize] as usize] as usize]
            }),
            Expr::year(l("l_shipdate")?),
        ],
        &[Agg::sum(volume)],
    )?;
    let order = sort(
        ctx,
        "q7_sort",
        Input::all(g.len()),
        &[
            SortKey::asc(g.key_col(0)),
            SortKey::asc(g.key_col(1)),
            SortKey::asc(g.key_col(2)),
        ],
        None,
    )?;

    let mut out = QueryResult::new(&[
        ("supp_nation", T::Str),
        ("cust_nation", T::Str),
        ("l_year", T::Int),
        ("revenue", T::Decimal(4)),
    ]);
    let name = |code: i64| {
        Value::Str(
            n_names
                .decode(u32::try_from(code).expect("a dictionary code"))
                .to_string(),
        )
    };
    for i in order {
        let i = i as usize;
        out.push(vec![
            name(g.key(0)[i]),
            name(g.key(1)[i]),
            Value::Int(g.key(2)[i]),
            sum_cell(g.agg(0), i),
        ]);
    }
    Ok(out)
}
