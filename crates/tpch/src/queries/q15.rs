//! TPC-H Q15, top supplier.
//!
//! ```sql
//! create view revenue0 (supplier_no, total_revenue) as
//!   select l_suppkey, sum(l_extendedprice * (1 - l_discount))
//!   from lineitem
//!   where l_shipdate >= date ':DATE'
//!     and l_shipdate < date ':DATE' + interval '3' month
//!   group by l_suppkey;
//!
//! select s_suppkey, s_name, s_address, s_phone, total_revenue
//! from supplier, revenue0
//! where s_suppkey = supplier_no
//!   and total_revenue = (select max(total_revenue) from revenue0)
//! order by s_suppkey;
//! ```
//!
//! Plan: the view is one aggregation of the quarter's lineitems by supplier,
//! computed once and used twice: its maximum (a pass over one value per
//! supplier) and the suppliers whose exact sum equals it. Those few suppliers
//! are a build side the supplier table probes; the matches sort by key.

use maestro_execution::{
    Agg, CmpOp, Col, ExecContext, ExecError, Expr, Input, JoinTable, Pred, SortKey, aggregate,
    gather_positions, select, sort,
};

use super::QueryParams;
use super::result::{ColumnType as T, QueryResult};
use super::util::{col, int_cell, str_cell, sum_cell};
use crate::Database;

pub(crate) fn run(
    ctx: &ExecContext,
    db: &Database,
    p: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let (li, supp) = (&db.lineitem, &db.supplier);
    let date = p.date("DATE");
    let ship = col(li, "l_shipdate")?;
    let quarter = Pred::and(vec![
        Pred::cmp(ship, CmpOp::Ge, date)?,
        Pred::cmp(ship, CmpOp::Lt, date.add_months(3))?,
    ]);
    let revenue =
        Expr::col(col(li, "l_extendedprice")?) * (Expr::int(1) - Expr::col(col(li, "l_discount")?));
    let view = aggregate(
        ctx,
        "q15_revenue",
        Input::filtered(li.num_rows(), &quarter),
        &[col(li, "l_suppkey")?.into()],
        &[Agg::sum(revenue)],
    )?;
    let totals = view.agg(0);
    let mut out = QueryResult::new(&[
        ("s_suppkey", T::Int),
        ("s_name", T::Str),
        ("s_address", T::Str),
        ("s_phone", T::Str),
        ("total_revenue", T::Decimal(totals.scale)),
    ]);
    // An empty view has no maximum (NULL): nothing equals it.
    let Some(&max) = totals.values.iter().max() else {
        return Ok(out);
    };
    let best = select(
        ctx,
        "q15_best",
        view.len(),
        &Pred::func(|g| totals.values[g as usize] == max),
    )?;

    let best_keys = Col::i64(view.key(0)).at(&best);
    let winners = JoinTable::build(
        ctx,
        "q15_build_best",
        Input::all(best.len()),
        &[best_keys.into()],
    )?;
    // probe: supplier rows, build: positions in `best`.
    let m = winners.inner(
        ctx,
        "q15_probe_supplier",
        Input::all(supp.num_rows()),
        &[col(supp, "s_suppkey")?.into()],
    )?;
    let key = col(supp, "s_suppkey")?.at(&m.probe);
    let order = sort(
        ctx,
        "q15_sort",
        Input::all(m.len()),
        &[SortKey::asc(key)],
        None,
    )?;
    let groups = gather_positions(ctx, "q15_groups", &best, &m.build);

    let s = |name| col(supp, name).map(|c| c.at(&m.probe));
    let (name, address, phone) = (s("s_name")?, s("s_address")?, s("s_phone")?);
    for i in order {
        out.push(vec![
            int_cell(&key, i),
            str_cell(&name, i),
            str_cell(&address, i),
            str_cell(&phone, i),
            sum_cell(totals, groups[i as usize] as usize),
        ]);
    }
    Ok(out)
}
