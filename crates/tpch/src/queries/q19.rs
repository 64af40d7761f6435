//! TPC-H Q19, discounted revenue.
//!
//! ```sql
//! select sum(l_extendedprice * (1 - l_discount)) as revenue
//! from lineitem, part
//! where (p_partkey = l_partkey and p_brand = ':BRAND1'
//!        and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
//!        and l_quantity >= :QUANTITY1 and l_quantity <= :QUANTITY1 + 10
//!        and p_size between 1 and 5
//!        and l_shipmode in ('AIR', 'AIR REG')
//!        and l_shipinstruct = 'DELIVER IN PERSON')
//!    or (p_partkey = l_partkey and p_brand = ':BRAND2'
//!        and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
//!        and l_quantity >= :QUANTITY2 and l_quantity <= :QUANTITY2 + 10
//!        and p_size between 1 and 10
//!        and l_shipmode in ('AIR', 'AIR REG')
//!        and l_shipinstruct = 'DELIVER IN PERSON')
//!    or (p_partkey = l_partkey and p_brand = ':BRAND3'
//!        and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
//!        and l_quantity >= :QUANTITY3 and l_quantity <= :QUANTITY3 + 10
//!        and p_size between 1 and 15
//!        and l_shipmode in ('AIR', 'AIR REG')
//!        and l_shipinstruct = 'DELIVER IN PERSON');
//! ```
//!
//! Plan: the disjunction is factored. Its part-only and lineitem-only halves
//! filter each side before the join (the parts of any branch are the build
//! side; the lineitems with the common shipping terms and a quantity of any
//! branch probe it); the full disjunction, pairing each branch's part and
//! lineitem terms, then filters the few joined pairs inside the aggregation.

use maestro_execution::{
    Agg, CmpOp, Col, ExecContext, ExecError, Expr, Input, JoinTable, Pred, aggregate,
};

use maestro_storage::column::Table;

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::{col, sum_cell};
use crate::Database;

/// Per branch: containers and the largest size.
const BRANCHES: [([&str; 4], i64); 3] = [
    (["SM CASE", "SM BOX", "SM PACK", "SM PKG"], 5),
    (["MED BAG", "MED BOX", "MED PKG", "MED PACK"], 10),
    (["LG CASE", "LG BOX", "LG PACK", "LG PKG"], 15),
];

/// Branch `k`'s part terms and lineitem terms over the columns given.
fn branch<'a>(
    p: &QueryParams,
    k: usize,
    part: [Col<'a>; 3],
    quantity: Col<'a>,
) -> Result<(Pred<'a>, Pred<'a>), ExecError> {
    let [brand, container, size] = part;
    let (containers, max_size) = BRANCHES[k];
    let n = k + 1;
    let qty = p.int(&format!("QUANTITY{n}"));
    let part_terms = Pred::and(vec![
        Pred::cmp(brand, CmpOp::Eq, p.str(&format!("BRAND{n}")))?,
        Pred::is_in(container, containers)?,
        Pred::between(size, 1i64, max_size)?,
    ]);
    Ok((part_terms, Pred::between(quantity, qty, qty + 10)?))
}

/// The part columns of the branches, read through `rows` if given.
fn part_cols<'a>(part: &'a Table, rows: Option<&'a [u32]>) -> Result<[Col<'a>; 3], ExecError> {
    let c = |name| col(part, name).map(|c| rows.map_or(c, |r| c.at(r)));
    Ok([c("p_brand")?, c("p_container")?, c("p_size")?])
}

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (li, part) = (&db.lineitem, &db.part);
    let (mut part_any, mut qty_any) = (Vec::new(), Vec::new());
    for k in 0..BRANCHES.len() {
        let (pt, q) = branch(p, k, part_cols(part, None)?, col(li, "l_quantity")?)?;
        part_any.push(pt);
        qty_any.push(q);
    }
    let part_filter = Pred::or(part_any);
    let parts = JoinTable::build(
        ctx,
        "q19_build_part",
        Input::filtered(part.num_rows(), &part_filter),
        &[col(part, "p_partkey")?.into()],
    )?;
    let li_filter = Pred::and(vec![
        Pred::is_in(col(li, "l_shipmode")?, ["AIR", "AIR REG"])?,
        Pred::cmp(col(li, "l_shipinstruct")?, CmpOp::Eq, "DELIVER IN PERSON")?,
        Pred::or(qty_any),
    ]);
    // probe: lineitem rows, build: part rows.
    let m = parts.inner(
        ctx,
        "q19_probe_part",
        Input::filtered(li.num_rows(), &li_filter),
        &[col(li, "l_partkey")?.into()],
    )?;

    let quantity = col(li, "l_quantity")?.at(&m.probe);
    let mut branches = Vec::new();
    for k in 0..BRANCHES.len() {
        let (pt, q) = branch(p, k, part_cols(part, Some(&m.build))?, quantity)?;
        branches.push(Pred::and(vec![pt, q]));
    }
    let matched = Pred::or(branches);
    let l = |name| col(li, name).map(|c| c.at(&m.probe));
    let revenue = Expr::col(l("l_extendedprice")?) * (Expr::int(1) - Expr::col(l("l_discount")?));
    let r = aggregate(
        ctx,
        "q19_agg",
        Input::filtered(m.len(), &matched),
        &[],
        &[Agg::sum(revenue), Agg::count()],
    )?;
    let mut out = QueryResult::new(&[("revenue", T::Decimal(4))]);
    // SUM over no rows is NULL.
    out.push(vec![if r.agg(1).values[0] == 0 {
        Value::Null
    } else {
        sum_cell(r.agg(0), 0)
    }]);
    Ok(out)
}
