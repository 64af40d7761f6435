//! TPC-H Q1 and Q6 as hand-written plans over the operators, and the same
//! queries as straightforward single-threaded loops over the raw columns (the
//! independent reference). Shared by the integration test and the example.

#![allow(dead_code)]

use std::collections::BTreeMap;

use maestro_execution::{
    Agg, CmpOp, Col, ExecContext, ExecError, Expr, Input, Pred, SortKey, aggregate, round_div, sort,
};
use maestro_storage::column::{Date, Decimal, Table};

/// One row of Q1. Sums and averages are exact fixed-point values at `scale`
/// fractional digits as noted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Q1Row {
    pub returnflag: String,
    pub linestatus: String,
    /// Scale 2.
    pub sum_qty: i128,
    /// Scale 2.
    pub sum_base_price: i128,
    /// Scale 4.
    pub sum_disc_price: i128,
    /// Scale 6.
    pub sum_charge: i128,
    /// Scale 2, rounded.
    pub avg_qty: i128,
    /// Scale 2, rounded.
    pub avg_price: i128,
    /// Scale 2, rounded.
    pub avg_disc: i128,
    pub count_order: i64,
}

fn q1_cutoff() -> Date {
    Date::parse("1998-12-01").expect("a date").add_days(-90)
}

/// Q1: pricing summary report.
pub fn q1(ctx: &ExecContext, li: &Table) -> Result<Vec<Q1Row>, ExecError> {
    let col = |name| Col::of(li, name);
    let filter = Pred::cmp(col("l_shipdate")?, CmpOp::Le, q1_cutoff())?;
    let (qty, price) = (col("l_quantity")?, col("l_extendedprice")?);
    let (disc, tax) = (col("l_discount")?, col("l_tax")?);
    let disc_price = Expr::col(price) * (Expr::int(1) - Expr::col(disc));
    let charge = disc_price.clone() * (Expr::int(1) + Expr::col(tax));
    let (rf, ls) = (li.dict("l_returnflag")?, li.dict("l_linestatus")?);
    let g = aggregate(
        ctx,
        "q1_agg",
        Input::filtered(li.num_rows(), &filter),
        &[Col::dict(rf).into(), Col::dict(ls).into()],
        &[
            Agg::sum(qty),
            Agg::sum(price),
            Agg::sum(disc_price),
            Agg::sum(charge),
            Agg::avg(qty),
            Agg::avg(price),
            Agg::avg(disc),
            Agg::count(),
        ],
    )?;
    let order = sort(
        ctx,
        "q1_sort",
        Input::all(g.len()),
        &[SortKey::asc(g.key_col(0)), SortKey::asc(g.key_col(1))],
        None,
    )?;
    Ok(order
        .into_iter()
        .map(|i| {
            let i = i as usize;
            let v = |a: usize| g.agg(a).values[i];
            Q1Row {
                returnflag: rf.decode(g.key(0)[i] as u32).to_string(),
                linestatus: ls.decode(g.key(1)[i] as u32).to_string(),
                sum_qty: v(0),
                sum_base_price: v(1),
                sum_disc_price: v(2),
                sum_charge: v(3),
                avg_qty: g.agg(4).avg(i, 2),
                avg_price: g.agg(5).avg(i, 2),
                avg_disc: g.agg(6).avg(i, 2),
                count_order: v(7) as i64,
            }
        })
        .collect())
}

fn q6_bounds() -> (Date, Date) {
    let lo = Date::parse("1994-01-01").expect("a date");
    (lo, lo.add_years(1))
}

/// Q6: forecasting revenue change. The revenue at scale 4.
pub fn q6(ctx: &ExecContext, li: &Table) -> Result<i128, ExecError> {
    let col = |name| Col::of(li, name);
    let (lo, hi) = q6_bounds();
    let ship = col("l_shipdate")?;
    let disc = col("l_discount")?;
    let dec = |v| Decimal { value: v, scale: 2 };
    let filter = Pred::and(vec![
        Pred::cmp(ship, CmpOp::Ge, lo)?,
        Pred::cmp(ship, CmpOp::Lt, hi)?,
        Pred::between(disc, dec(5), dec(7))?,
        Pred::cmp(col("l_quantity")?, CmpOp::Lt, 24i64)?,
    ]);
    let revenue = Expr::col(col("l_extendedprice")?) * Expr::col(disc);
    let r = aggregate(
        ctx,
        "q6_agg",
        Input::filtered(li.num_rows(), &filter),
        &[],
        &[Agg::sum(revenue)],
    )?;
    Ok(r.agg(0).values[0])
}

/// Q1 by a plain loop over the raw columns.
pub fn q1_reference(li: &Table) -> Vec<Q1Row> {
    let ship = li.date("l_shipdate").unwrap();
    let qty = li.decimal("l_quantity").unwrap().values();
    let price = li.decimal("l_extendedprice").unwrap().values();
    let disc = li.decimal("l_discount").unwrap().values();
    let tax = li.decimal("l_tax").unwrap().values();
    let rf = li.dict("l_returnflag").unwrap();
    let ls = li.dict("l_linestatus").unwrap();
    let cutoff = q1_cutoff().0;
    // (flag, status) -> qty, price, disc_price, charge, disc, count
    let mut groups: BTreeMap<(String, String), [i128; 6]> = BTreeMap::new();
    for i in 0..li.num_rows() {
        if ship[i] > cutoff {
            continue;
        }
        let g = groups
            .entry((rf.get(i).to_string(), ls.get(i).to_string()))
            .or_insert([0; 6]);
        let dp = i128::from(price[i]) * (100 - i128::from(disc[i]));
        g[0] += i128::from(qty[i]);
        g[1] += i128::from(price[i]);
        g[2] += dp;
        g[3] += dp * (100 + i128::from(tax[i]));
        g[4] += i128::from(disc[i]);
        g[5] += 1;
    }
    groups
        .into_iter()
        .map(|((f, s), g)| Q1Row {
            returnflag: f,
            linestatus: s,
            sum_qty: g[0],
            sum_base_price: g[1],
            sum_disc_price: g[2],
            sum_charge: g[3],
            avg_qty: round_div(g[0], g[5]),
            avg_price: round_div(g[1], g[5]),
            avg_disc: round_div(g[4], g[5]),
            count_order: g[5] as i64,
        })
        .collect()
}

/// Q6 by a plain loop over the raw columns (scale 4).
pub fn q6_reference(li: &Table) -> i128 {
    let ship = li.date("l_shipdate").unwrap();
    let qty = li.decimal("l_quantity").unwrap().values();
    let price = li.decimal("l_extendedprice").unwrap().values();
    let disc = li.decimal("l_discount").unwrap().values();
    let (lo, hi) = q6_bounds();
    let mut sum = 0i128;
    for i in 0..li.num_rows() {
        if ship[i] >= lo.0 && ship[i] < hi.0 && (5..=7).contains(&disc[i]) && qty[i] < 2400 {
            sum += i128::from(price[i]) * i128::from(disc[i]);
        }
    }
    sum
}

/// A fixed-point value rounded to 2 digits and formatted like the official answers.
pub fn fmt2(value: i128, scale: u32) -> String {
    let v = round_div(value, 10i128.pow(scale - 2));
    let sign = if v < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", v.abs() / 100, v.abs() % 100)
}

/// Q1 rows in the official answer's format (`A|F|37734107.00|...`).
pub fn q1_lines(rows: &[Q1Row]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            [
                r.returnflag.clone(),
                r.linestatus.clone(),
                fmt2(r.sum_qty, 2),
                fmt2(r.sum_base_price, 2),
                fmt2(r.sum_disc_price, 4),
                fmt2(r.sum_charge, 6),
                fmt2(r.avg_qty, 2),
                fmt2(r.avg_price, 2),
                fmt2(r.avg_disc, 2),
                r.count_order.to_string(),
            ]
            .join("|")
        })
        .collect()
}
