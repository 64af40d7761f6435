//! TPC-H Q11, important stock identification.
//!
//! ```sql
//! select ps_partkey, sum(ps_supplycost * ps_availqty) as value
//! from partsupp, supplier, nation
//! where ps_suppkey = s_suppkey
//!   and s_nationkey = n_nationkey
//!   and n_name = ':NATION'
//! group by ps_partkey
//! having sum(ps_supplycost * ps_availqty) > (
//!     select sum(ps_supplycost * ps_availqty) * :FRACTION
//!     from partsupp, supplier, nation
//!     where ps_suppkey = s_suppkey
//!       and s_nationkey = n_nationkey
//!       and n_name = ':NATION')
//! order by value desc;
//! ```
//!
//! Plan: the nation is a lookup over the 25 nations; its suppliers (1/25 of
//! the table) are the build side every partsupp row probes (semi join). The
//! matches sum by part. The subquery ranges over the same rows, so its total
//! is the sum of the groups' sums; HAVING compares `value * 10^s` with
//! `total * FRACTION` (FRACTION at scale `s`) in exact integers.

use maestro_execution::{
    Agg, CmpOp, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate, select,
    sort,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult, Value};
use super::util::nation_key;
use super::util::{col, sum_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (supp, ps) = (&db.supplier, &db.partsupp);
    let in_nation = Pred::cmp(
        col(supp, "s_nationkey")?,
        CmpOp::Eq,
        nation_key(db, p.str("NATION"))?,
    )?;
    let suppliers = JoinTable::build(
        ctx,
        "q11_build_supplier",
        Input::filtered(supp.num_rows(), &in_nation),
        &[col(supp, "s_suppkey")?.into()],
    )?;
    let rows = suppliers.semi(
        ctx,
        "q11_probe_supplier",
        Input::all(ps.num_rows()),
        &[col(ps, "ps_suppkey")?.into()],
    )?;

    let at = |name| col(ps, name).map(|c| c.at(&rows));
    let value = Expr::col(at("ps_supplycost")?) * Expr::col(at("ps_availqty")?);
    let g = aggregate(
        ctx,
        "q11_agg",
        Input::all(rows.len()),
        &[at("ps_partkey")?.into()],
        &[Agg::sum(value)],
    )?;
    let values = &g.agg(0).values;
    let fraction = p.decimal("FRACTION");
    let threshold = values.iter().sum::<i128>() * i128::from(fraction.value);
    let unit = 10i128.pow(u32::from(fraction.scale));
    let having = Pred::func(|i| values[i as usize] * unit > threshold);
    let kept = select(ctx, "q11_having", g.len(), &having)?;
    // Ties on value (none in the answers) are broken by key, deterministically.
    let order = sort(
        ctx,
        "q11_sort",
        Input::all(kept.len()),
        &[
            SortKey::desc(g.agg(0).col().at(&kept)),
            SortKey::asc(g.key_col(0).at(&kept)),
        ],
        None,
    )?;

    let mut out = QueryResult::new(&[("ps_partkey", T::Int), ("value", T::Decimal(2))]);
    for i in order {
        let gi = kept[i as usize] as usize;
        out.push(vec![Value::Int(g.key(0)[gi]), sum_cell(g.agg(0), gi)]);
    }
    Ok(out)
}
