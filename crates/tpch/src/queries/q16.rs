//! TPC-H Q16, parts/supplier relationship.
//!
//! ```sql
//! select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
//! from partsupp, part
//! where p_partkey = ps_partkey
//!   and p_brand <> ':BRAND'
//!   and p_type not like ':TYPE%'
//!   and p_size in (:SIZE1, :SIZE2, :SIZE3, :SIZE4, :SIZE5, :SIZE6, :SIZE7, :SIZE8)
//!   and ps_suppkey not in (select s_suppkey from supplier
//!                          where s_comment like '%Customer%Complaints%')
//! group by p_brand, p_type, p_size
//! order by supplier_cnt desc, p_brand, p_type, p_size;
//! ```
//!
//! Plan: the part filter (dictionary code ranges and masks, an 8-value IN)
//! keeps about an eighth of the parts: they are the build side every partsupp
//! row probes. NOT IN is an anti join of those matches with the complaining
//! suppliers (a handful; `s_suppkey` is never NULL, so NOT IN and NOT EXISTS
//! agree). The survivors count distinct suppliers by brand, type and size;
//! sorting on dictionary codes sorts by the strings.

use maestro_execution::{
    Agg, CmpOp, Col, ExecContext, ExecError, Input, JoinTable, Pred, SortKey, aggregate,
    gather_positions, sort,
};
use maestro_storage::column::DictColumn;

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::{col, count_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (part, ps, supp) = (&db.part, &db.partsupp, &db.supplier);
    let (brand, ptype) = (part.dict("p_brand")?, part.dict("p_type")?);
    let sizes: Vec<i64> = (1..=8).map(|i| p.int(&format!("SIZE{i}"))).collect();
    let part_filter = Pred::and(vec![
        Pred::is_in(col(part, "p_size")?, sizes)?,
        Pred::cmp(Col::dict(brand), CmpOp::Ne, p.str("BRAND"))?,
        Pred::not_like(Col::dict(ptype), &format!("{}%", p.str("TYPE")))?,
    ]);
    let parts = JoinTable::build(
        ctx,
        "q16_build_part",
        Input::filtered(part.num_rows(), &part_filter),
        &[col(part, "p_partkey")?.into()],
    )?;
    // probe: partsupp rows, build: part rows.
    let m = parts.inner(
        ctx,
        "q16_probe_part",
        Input::all(ps.num_rows()),
        &[col(ps, "ps_partkey")?.into()],
    )?;

    let complaints = Pred::like(col(supp, "s_comment")?, "%Customer%Complaints%")?;
    let complainers = JoinTable::build(
        ctx,
        "q16_build_complaints",
        Input::filtered(supp.num_rows(), &complaints),
        &[col(supp, "s_suppkey")?.into()],
    )?;
    let kept = complainers.anti(
        ctx,
        "q16_anti_complaints",
        Input::all(m.len()),
        &[col(ps, "ps_suppkey")?.at(&m.probe).into()],
    )?;
    let ps_rows = gather_positions(ctx, "q16_partsupp_rows", &m.probe, &kept);
    let part_rows = gather_positions(ctx, "q16_part_rows", &m.build, &kept);

    let g = aggregate(
        ctx,
        "q16_agg",
        Input::all(kept.len()),
        &[
            Col::dict(brand).at(&part_rows).into(),
            Col::dict(ptype).at(&part_rows).into(),
            col(part, "p_size")?.at(&part_rows).into(),
        ],
        &[Agg::count_distinct(col(ps, "ps_suppkey")?.at(&ps_rows))],
    )?;
    let order = sort(
        ctx,
        "q16_sort",
        Input::all(g.len()),
        &[
            SortKey::desc(g.agg(0).col()),
            SortKey::asc(g.key_col(0)),
            SortKey::asc(g.key_col(1)),
            SortKey::asc(g.key_col(2)),
        ],
        None,
    )?;

    let mut out = QueryResult::new(&[
        ("p_brand", T::Str),
        ("p_type", T::Str),
        ("p_size", T::Int),
        ("supplier_cnt", T::Int),
    ]);
    let decode = |d: &DictColumn, code: i64| {
        Value::Str(
            d.decode(u32::try_from(code).expect("a dictionary code"))
                .to_string(),
        )
    };
    for i in order {
        let i = i as usize;
        out.push(vec![
            decode(brand, g.key(0)[i]),
            decode(ptype, g.key(1)[i]),
            Value::Int(g.key(2)[i]),
            count_cell(g.agg(0), i),
        ]);
    }
    Ok(out)
}
