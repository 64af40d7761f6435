//! Bound expressions onto the operators' vectorized forms: arithmetic,
//! CASE and EXTRACT(YEAR) on integers, decimals and dates to
//! `maestro_execution::Expr` (exact fixed point); conditions to `Pred`
//! (column-literal comparisons as ranges, dictionary strings as code ranges,
//! IN lists, LIKE, column-column comparisons). What they cannot express is
//! evaluated row by row (`eval.rs`), inside a `Pred::func` for conditions.

use std::collections::HashMap;

use maestro_execution::{self as exec, Col, ExecContext, Input, Lit, Pred, project};
use maestro_storage::column::Decimal;

use super::eval::{Fault, compare, eval_row, truth};
use super::vector::{Encoding, Relation, Scalar, Vector};
use crate::error::{Result, SqlError};
use crate::plan::{ArithOp, CmpOp, Expr};
use crate::types::{Literal, SqlType};
use crate::types::{ordered_bits, stored_doubles_equal_to};

fn exec_cmp(op: CmpOp) -> exec::CmpOp {
    match op {
        CmpOp::Eq => exec::CmpOp::Eq,
        CmpOp::Ne => exec::CmpOp::Ne,
        CmpOp::Lt => exec::CmpOp::Lt,
        CmpOp::Le => exec::CmpOp::Le,
        CmpOp::Gt => exec::CmpOp::Gt,
        CmpOp::Ge => exec::CmpOp::Ge,
    }
}

fn exec_lit(l: &Literal) -> Option<Lit<'_>> {
    match l {
        Literal::Num { value, scale: 0 } => Some(Lit::Int(*value)),
        Literal::Num { value, scale } => Some(Lit::Dec(Decimal {
            value: *value,
            scale: *scale,
        })),
        Literal::Date(d) => Some(Lit::Date(*d)),
        Literal::Timestamp(t) => Some(Lit::Int(*t)),
        Literal::Str(s) => Some(Lit::Str(s)),
        Literal::Interval { .. } | Literal::Double(_) | Literal::Bool(_) => None,
    }
}

/// A stored BOOLEAN or REAL/DOUBLE PRECISION column without NULLs: its
/// stored integers and their encoding.
fn encoded_column<'r>(e: &Expr, rel: &'r Relation) -> Option<(Col<'r>, Encoding)> {
    match e {
        Expr::Column(c) => rel.get(*c)?.encoded(),
        _ => None,
    }
}

/// Where a stored boolean (its stored 0/1 `col`) is true.
fn bool_true(col: Col<'_>) -> Option<Pred<'_>> {
    Pred::cmp(col, exec::CmpOp::Eq, Lit::Int(1)).ok()
}

/// `x op l` for an encoded column `x` (its stored integers `col`) and a
/// constant `l`, as a comparison of the stored integers with the
/// constant's encoding — what the row-by-row evaluator answers for the
/// decoded values ([`compare`]: PostgreSQL's order of doubles, NaN equal
/// to NaN and above every number), since both encodings keep the values'
/// order. A double column's zero is two stored values (-0 and +0, equal
/// in SQL), so a comparison with zero is one with that pair's interval;
/// a NaN constant and other literals are left to the evaluator (`None`).
fn encoded_cmp<'r>(op: CmpOp, col: Col<'r>, encoding: Encoding, l: &Literal) -> Option<Pred<'r>> {
    let int = |op: CmpOp, k: i64| Pred::cmp(col, exec_cmp(op), Lit::Int(k)).ok();
    let (lo, hi) = match (encoding, l) {
        (Encoding::Bool, Literal::Bool(b)) => return int(op, i64::from(*b)),
        (Encoding::Double, l) => stored_doubles_equal_to(l)?,
        _ => return None,
    };
    let equal = || Some(Pred::and(vec![int(CmpOp::Ge, lo)?, int(CmpOp::Le, hi)?]));
    match op {
        CmpOp::Lt => int(CmpOp::Lt, lo),
        CmpOp::Le => int(CmpOp::Le, hi),
        CmpOp::Gt => int(CmpOp::Gt, hi),
        CmpOp::Ge => int(CmpOp::Ge, lo),
        CmpOp::Eq if lo == hi => int(CmpOp::Eq, lo),
        CmpOp::Eq => equal(),
        CmpOp::Ne if lo == hi => int(CmpOp::Ne, lo),
        CmpOp::Ne => Some(Pred::not(equal()?)),
    }
}

/// A numeric, date or dictionary-string column (strings only where the
/// caller wants codes: comparisons with literals, IN, LIKE, keys).
fn column<'r>(e: &Expr, rel: &'r Relation) -> Option<Col<'r>> {
    match e {
        Expr::Column(c) => rel.get(*c)?.col(),
        _ => None,
    }
}

/// `e` as an operator expression over integers, decimals or dates, if it
/// has that form (no division, no strings, no 128-bit sums).
pub(crate) fn to_exec_expr<'r>(e: &Expr, rel: &'r Relation) -> Option<exec::Expr<'r>> {
    let x = match e {
        Expr::Column(c) => {
            let v = rel.get(*c)?;
            if v.is_dict() {
                return None;
            }
            let col = v.col()?;
            if !col.is_narrow_numeric() {
                return None;
            }
            exec::Expr::col(col)
        }
        Expr::Lit(Literal::Num { value, scale }) => exec::Expr::dec(Decimal {
            value: *value,
            scale: *scale,
        }),
        Expr::Lit(Literal::Date(d)) => exec::Expr::int(d.0.into()),
        // MOD by a non-zero integer constant (CH's `mod(s_w_id * s_i_id,
        // 10000)`): a kernel; both operands integers (scale 0, checked by
        // `scale` below).
        Expr::Arith(ArithOp::Mod, a, b) => match b.as_ref() {
            Expr::Lit(Literal::Num { value, scale: 0 }) => {
                to_exec_expr(a, rel)?.rem_const(*value)?
            }
            _ => return None,
        },
        Expr::Arith(op, a, b) => {
            let (a, b) = (to_exec_expr(a, rel)?, to_exec_expr(b, rel)?);
            match op {
                ArithOp::Add => a + b,
                ArithOp::Sub => a - b,
                ArithOp::Mul => a * b,
                // Row by row, where a zero divisor is an error.
                ArithOp::Div | ArithOp::Mod => return None,
            }
        }
        Expr::Case { whens, otherwise } => {
            let mut acc = to_exec_expr(otherwise.as_ref()?, rel)?;
            for (c, v) in whens.iter().rev() {
                let pred = native_pred(c, rel)?;
                acc = exec::Expr::case(pred, to_exec_expr(v, rel)?, acc);
            }
            acc
        }
        Expr::Year(inner) => exec::Expr::year(column(inner, rel)?),
        _ => return None,
    };
    x.scale().ok()?;
    Some(x)
}

/// `e` as an operator predicate, if the operators express it directly.
fn native_pred<'r>(e: &Expr, rel: &'r Relation) -> Option<Pred<'r>> {
    match e {
        Expr::And(es) => Some(Pred::and(
            cheap_first(es, rel)
                .into_iter()
                .map(|e| native_pred(e, rel))
                .collect::<Option<_>>()?,
        )),
        Expr::Or(es) => Some(Pred::or(
            es.iter()
                .map(|e| native_pred(e, rel))
                .collect::<Option<_>>()?,
        )),
        Expr::Not(e) => Some(Pred::not(native_pred(e, rel)?)),
        Expr::Column(c) => match rel.get(*c)?.encoded()? {
            (col, Encoding::Bool) => bool_true(col),
            (_, Encoding::Double) => None,
        },
        Expr::Cmp(CmpOp::Eq, x, l) | Expr::Cmp(CmpOp::Eq, l, x)
            if prefix_column(x).is_some() && matches!(l.as_ref(), Expr::Lit(_)) =>
        {
            let (x, n) = prefix_column(x)?;
            let Expr::Lit(l) = l.as_ref() else {
                return None;
            };
            prefix_pred(x, n, std::slice::from_ref(l), rel)
        }
        Expr::Cmp(op, a, b) => match (a.as_ref(), b.as_ref()) {
            (x, Expr::Lit(l)) | (Expr::Lit(l), x) => {
                // The first alternative matched whenever `b` is the literal.
                let op = if matches!(b.as_ref(), Expr::Lit(_)) {
                    *op
                } else {
                    op.flip()
                };
                if let Some((col, encoding)) = encoded_column(x, rel) {
                    return encoded_cmp(op, col, encoding, l);
                }
                Pred::cmp(column(x, rel)?, exec_cmp(op), exec_lit(l)?).ok()
            }
            (x, y) => {
                let (cx, cy) = (column(x, rel)?, column(y, rel)?);
                let dict = |e: &Expr| match e {
                    Expr::Column(c) => rel.get(*c).is_some_and(Vector::is_dict),
                    _ => false,
                };
                if dict(x) || dict(y) {
                    return None; // codes of two dictionaries do not compare
                }
                Pred::cols(cx, exec_cmp(*op), cy).ok()
            }
        },
        Expr::InList {
            expr,
            list,
            negated,
        } if prefix_column(expr).is_some() => {
            let (x, n) = prefix_column(expr)?;
            let p = prefix_pred(x, n, list, rel)?;
            Some(if *negated { Pred::not(p) } else { p })
        }
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let lits: Vec<Lit> = list.iter().map(exec_lit).collect::<Option<_>>()?;
            let p = Pred::is_in(column(expr, rel)?, lits).ok()?;
            Some(if *negated { Pred::not(p) } else { p })
        }
        Expr::Like {
            expr,
            pattern,
            negated,
        } if !pattern.contains('_') => {
            let p = Pred::like(column(expr, rel)?, pattern).ok()?;
            Some(if *negated { Pred::not(p) } else { p })
        }
        _ => None,
    }
}

/// How much a condition costs per candidate position, in classes (lower
/// is cheaper): one kernel over a number or dictionary code column; a kernel
/// over heap strings (text comparisons, LIKE); a tree of conditions (an OR
/// copies its candidates per branch); row by row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Cost {
    Kernel,
    Text,
    Tree,
    RowByRow,
}

fn cost(e: &Expr, rel: &Relation) -> Cost {
    // A column the kernels read: `Some(true)` for heap strings.
    let text = |x: &Expr| match x {
        Expr::Column(c) => rel
            .get(*c)
            .and_then(|v| v.col().or_else(|| v.encoded().map(|(raw, _)| raw)))
            .map(|c| matches!(c.data(), exec::Data::Heap(_))),
        _ => None,
    };
    let kernel = |x: &Expr| match text(x) {
        Some(false) => Some(Cost::Kernel),
        Some(true) => Some(Cost::Text),
        None => None,
    };
    let by_kind = match e {
        Expr::And(es) => {
            return es
                .iter()
                .map(|e| cost(e, rel))
                .max()
                .unwrap_or(Cost::Kernel);
        }
        Expr::Cmp(_, a, b) => match (&**a, &**b) {
            (x, Expr::Lit(_)) | (Expr::Lit(_), x) => kernel(x),
            _ => None,
        },
        Expr::InList { expr, .. } | Expr::Like { expr, .. } => kernel(expr),
        _ => None,
    };
    match by_kind {
        Some(c) if native_pred(e, rel).is_some() => c,
        _ if native_pred(e, rel).is_some() => Cost::Tree,
        _ => Cost::RowByRow,
    }
}

/// The conjuncts of an AND, cheapest first (stable: the written order
/// among equals): each one only sees the positions the ones before kept,
/// so a dictionary comparison that keeps a few rows in 28 runs before an
/// OR of ranges (TPC-H Q19's lineitem: `l_shipmode IN (…)` and
/// `l_shipinstruct = …` before the OR of `l_quantity` ranges).
///
/// Among equals in cost, a negated condition (`<>`, NOT LIKE, NOT IN)
/// after the others: it usually keeps most rows, a positive one few (TPC-H
/// Q16's `p_size IN (…)` keeps 16 % of the parts, its `p_brand <> …` and
/// `p_type NOT LIKE …` 96 % and 85 %).
fn cheap_first<'e>(es: &'e [Expr], rel: &Relation) -> Vec<&'e Expr> {
    let mut v: Vec<((Cost, Keeps), &Expr)> =
        es.iter().map(|e| ((cost(e, rel), keeps(e)), e)).collect();
    v.sort_by_key(|x| x.0);
    v.into_iter().map(|x| x.1).collect()
}

/// How many rows a condition is expected to keep, by its form alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Keeps {
    /// Anything but a negation.
    Some,
    /// A negated comparison, LIKE or IN: most rows.
    Most,
}

fn keeps(e: &Expr) -> Keeps {
    match e {
        Expr::Cmp(CmpOp::Ne, _, _)
        | Expr::Not(_)
        | Expr::Like { negated: true, .. }
        | Expr::InList { negated: true, .. } => Keeps::Most,
        _ => Keeps::Some,
    }
}

/// `SUBSTRING(x FROM 1 FOR n)` (n ≥ 1): the string `x` and `n`.
fn prefix_column(e: &Expr) -> Option<(&Expr, usize)> {
    match e {
        Expr::Substring {
            expr,
            start: 1,
            len: Some(n),
        } if *n >= 1 => Some((expr, usize::try_from(*n).ok()?)),
        _ => None,
    }
}

/// `SUBSTRING(x FROM 1 FOR n) IN (s1, …)` as `x LIKE 's1%' OR …`: with
/// every `si` exactly `n` characters long, a string's first `n` characters
/// are `si` exactly when it starts with `si` (a shorter string has a
/// shorter substring). The string column's own kernels (a code range of a
/// dictionary, a prefix test in place on a heap) then run instead of a
/// substring built per row — TPC-H Q22's country codes. Not for a literal
/// with a LIKE wildcard or escape character, nor a NULL or non-string one.
///
/// On heap strings with several literals: one pass that tests each string's
/// first bytes against the literals in place, instead of one LIKE per
/// literal each reading every candidate string (seven passes for Q22).
fn prefix_pred<'r>(x: &Expr, n: usize, list: &[Literal], rel: &'r Relation) -> Option<Pred<'r>> {
    let col = column(x, rel)?;
    if list.len() > 1 && matches!(col.data(), exec::Data::Heap(_)) {
        let prefixes = list
            .iter()
            .map(|l| match l {
                Literal::Str(s) if s.chars().count() == n => Some(s.clone()),
                _ => None,
            })
            .collect::<Option<Vec<String>>>()?;
        let k = prefixes[0].len();
        if k <= 8 && prefixes.iter().all(|x| x.len() == k) {
            // Equally long prefixes (bytes) as integers: one load and a few
            // integer compares per string, no call to compare bytes.
            let packed: Vec<u64> = prefixes.iter().map(|x| pack(x.as_bytes())).collect();
            return Some(Pred::func(move |p| {
                col.str_at(p)
                    .and_then(|s| s.as_bytes().get(..k))
                    .is_some_and(|b| packed.contains(&pack(b)))
            }));
        }
        return Some(Pred::func(move |p| {
            col.str_at(p)
                .is_some_and(|s| prefixes.iter().any(|x| s.starts_with(x.as_str())))
        }));
    }
    let likes = list
        .iter()
        .map(|l| match l {
            Literal::Str(s) if s.chars().count() == n && !s.contains(['%', '_', '\\']) => {
                Pred::like(col, &format!("{s}%")).ok()
            }
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Pred::or(likes))
}

/// `x op y` with one side an exact expression the operators evaluate and
/// the other a column of doubles (an AVG, repeated by a one-row cross
/// product: TPC-H Q22's `c_acctbal > (SELECT avg(…))`): the exact side
/// projected once, each pair compared as the row-by-row evaluator does
/// ([`compare`]) without walking the expression per row. A double column
/// holds no NULLs (those are masked vectors).
fn exact_vs_double<'r>(
    ctx: &ExecContext,
    op: CmpOp,
    a: &Expr,
    b: &Expr,
    rel: &'r Relation,
) -> Result<Option<Pred<'r>>> {
    let doubles = |e: &Expr| match e {
        Expr::Column(c) => match rel.get(*c) {
            Some(Vector::Double(d)) => Some(d),
            _ => None,
        },
        _ => None,
    };
    let (exact, d, op) = match (to_exec_expr(a, rel), doubles(b)) {
        (Some(x), Some(d)) => (x, d, op),
        _ => match (doubles(a), to_exec_expr(b, rel)) {
            (Some(d), Some(x)) => (x, d, op.flip()),
            _ => return Ok(None),
        },
    };
    let p = project(ctx, "sql_compare", Input::all(rel.len), &exact)?;
    let (values, scale) = (p.values, p.scale);
    Ok(Some(Pred::func(move |i| {
        let x = Scalar::Num {
            value: values[i as usize].into(),
            scale,
        };
        compare(&x, &Scalar::Double(d[i as usize])).is_some_and(|o| op.holds(o))
    })))
}

/// Up to 8 bytes as one integer (equal for equal byte strings of one length).
fn pack(b: &[u8]) -> u64 {
    b.iter().fold(0, |acc, &x| acc << 8 | u64::from(x))
}

/// `e` as a predicate over `rel`'s positions: natively where possible; a
/// comparison of two exact expressions through their difference, evaluated
/// on the candidates; anything else row by row, recording an evaluation
/// error in `fault` (the caller checks it after running the predicate).
pub(crate) fn to_pred<'r>(
    ctx: &ExecContext,
    e: &'r Expr,
    rel: &'r Relation,
    fault: &'r Fault,
) -> Result<Pred<'r>> {
    if let Some(p) = native_pred(e, rel) {
        return Ok(p);
    }
    match e {
        Expr::And(es) => Ok(Pred::and(
            cheap_first(es, rel)
                .into_iter()
                .map(|e| to_pred(ctx, e, rel, fault))
                .collect::<Result<_>>()?,
        )),
        Expr::Or(es) => Ok(Pred::or(
            es.iter()
                .map(|e| to_pred(ctx, e, rel, fault))
                .collect::<Result<_>>()?,
        )),
        Expr::Cmp(op, a, b) => {
            if let (Some(x), Some(y)) = (to_exec_expr(a, rel), to_exec_expr(b, rel)) {
                return Ok(Pred::expr_vs_zero(x - y, exec_cmp(*op))?);
            }
            if let Some(p) = exact_vs_double(ctx, *op, a, b, rel)? {
                return Ok(p);
            }
            if let Some(p) = masked_cmp(*op, a, b, rel) {
                return Ok(p);
            }
            Ok(Pred::func(move |p| truth(e, rel, p as usize, fault)))
        }
        // A stored boolean with NULLs: true where not NULL and 1.
        Expr::Column(c) => match rel.get(*c) {
            Some(Vector::Masked { values, nulls }) => match values.encoded() {
                Some((col, Encoding::Bool)) => Ok(Pred::and(vec![
                    Pred::func(move |p| !nulls[p as usize]),
                    bool_true(col).expect("a stored boolean is an Int32 column"),
                ])),
                _ => Ok(Pred::func(move |p| truth(e, rel, p as usize, fault))),
            },
            _ => Ok(Pred::func(move |p| truth(e, rel, p as usize, fault))),
        },
        _ => Ok(Pred::func(move |p| truth(e, rel, p as usize, fault))),
    }
}

/// `x op literal` (either order), or `x op y` of two columns, where a
/// column has NULLs (a masked vector over a column): the values'
/// comparison kernel where the masks say not NULL, false at a NULL — what a
/// filter keeps of SQL's unknown. Only from [`to_pred`], never under a NOT
/// (which would make NULL rows true); CH's `ol_delivery_d >= …` on
/// undelivered lines, `o_entry_d <= ol_delivery_d`.
fn masked_cmp<'r>(op: CmpOp, a: &Expr, b: &Expr, rel: &'r Relation) -> Option<Pred<'r>> {
    /// A column's values and, if it has NULLs, its mask.
    fn side<'r>(
        e: &Expr,
        rel: &'r Relation,
    ) -> Option<(Col<'r>, Option<&'r std::sync::Arc<Vec<bool>>>)> {
        let Expr::Column(c) = e else {
            return None;
        };
        rel.get(*c)?.col_with_nulls()
    }
    fn column_vector<'r>(e: &Expr, rel: &'r Relation) -> Option<&'r Vector<'r>> {
        match e {
            Expr::Column(c) => rel.get(*c),
            _ => None,
        }
    }
    let not_null = |nulls: &'r std::sync::Arc<Vec<bool>>| Pred::func(move |p| !nulls[p as usize]);
    let (cmp, masks) = match (a, b) {
        (x, Expr::Lit(l)) | (Expr::Lit(l), x) => {
            let op = if matches!(a, Expr::Lit(_)) {
                op.flip()
            } else {
                op
            };
            let Some(Vector::Masked { values, nulls }) = column_vector(x, rel) else {
                return None;
            };
            let cmp = match values.encoded() {
                Some((col, encoding)) => encoded_cmp(op, col, encoding, l)?,
                None if values.is_dict() => return None,
                None => Pred::cmp(values.col()?, exec_cmp(op), exec_lit(l)?).ok()?,
            };
            (cmp, vec![nulls])
        }
        (x, y) => {
            let ((cx, nx), (cy, ny)) = (side(x, rel)?, side(y, rel)?);
            let masks: Vec<_> = [nx, ny].into_iter().flatten().collect();
            if masks.is_empty() {
                return None;
            }
            (Pred::cols(cx, exec_cmp(op), cy).ok()?, masks)
        }
    };
    let mut all: Vec<Pred> = masks.into_iter().map(not_null).collect();
    all.push(cmp);
    Some(Pred::and(all))
}

/// `e`'s values at every position of `rel`, of type `ty`.
pub(crate) fn eval_vector<'d>(
    ctx: &ExecContext,
    e: &Expr,
    ty: SqlType,
    rel: &Relation<'d>,
) -> Result<Vector<'d>> {
    if let Expr::Column(c) = e
        && let Some(v) = rel.get(*c)
    {
        return Ok(v.clone());
    }
    if let Some(v) = coalesce_int(e, rel) {
        return Ok(v);
    }
    if matches!(ty, SqlType::Int | SqlType::Decimal(_) | SqlType::Date)
        && let Some(x) = to_exec_expr(e, rel)
    {
        let p = project(ctx, "sql_project", Input::all(rel.len), &x)?;
        return Ok(match ty {
            SqlType::Date => Vector::Dates(p.values.iter().map(|&d| d as i32).collect()),
            _ if p.scale == 0 => Vector::Int(p.values),
            _ => Vector::Dec {
                values: p.values,
                scale: p.scale,
            },
        });
    }
    if let Some(v) = super::per_code::eval_per_code(e, ty, rel) {
        return v;
    }
    let values: Vec<Scalar> = (0..rel.len)
        .map(|p| eval_row(e, rel, p))
        .collect::<Result<_, _>>()?;
    Ok(Vector::Values(values))
}

/// `COALESCE(c, n)` of an integer column `c` of the padded side of an
/// outer join and an integer literal, in one pass (a count grouped before a
/// left join, `outer_agg.rs`, reads its missing groups as 0 this way).
fn coalesce_int<'d>(e: &Expr, rel: &Relation<'d>) -> Option<Vector<'d>> {
    let Expr::Case { whens, otherwise } = e else {
        return None;
    };
    let [
        (
            Expr::IsNull {
                expr,
                negated: true,
            },
            then,
        ),
    ] = whens.as_slice()
    else {
        return None;
    };
    let (Expr::Column(c), Some(Expr::Lit(Literal::Num { value: n, scale: 0 }))) =
        (&**expr, otherwise.as_deref())
    else {
        return None;
    };
    if *then != Expr::Column(*c) {
        return None;
    }
    let Some(Vector::Masked { values, nulls }) = rel.get(*c) else {
        return None;
    };
    let Vector::Int(v) = &**values else {
        return None;
    };
    Some(Vector::Int(
        v.iter()
            .zip(nulls.iter())
            .map(|(&x, &null)| if null { *n } else { x })
            .collect(),
    ))
}

/// A vector the operators can read as a column (to sort or to hash):
/// itself if it is one, else an order-preserving integer encoding —
/// ranks for strings, the bits of doubles, exact values at one scale.
pub(crate) fn columnar(v: Vector<'_>) -> Result<Vector<'_>> {
    if v.col().is_some() {
        return Ok(v);
    }
    // A stored boolean's 0/1 and a stored double's ordered bits are the
    // encodings below already.
    if let Vector::Encoded { raw, .. } = v {
        return Ok(*raw);
    }
    let len = match &v {
        Vector::Double(x) => x.len(),
        Vector::Values(x) => x.len(),
        Vector::Masked { nulls, .. } => nulls.len(),
        _ => 0,
    };
    let vals: Vec<Scalar> = (0..len).map(|p| v.value_at(p)).collect();
    if vals.iter().all(|s| matches!(s, Scalar::Str(_))) {
        let mut distinct: Vec<&str> = vals
            .iter()
            .map(|s| match s {
                Scalar::Str(x) => x.as_str(),
                _ => "",
            })
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        let rank: HashMap<&str, i64> = distinct
            .iter()
            .enumerate()
            .map(|(i, s)| (*s, i as i64))
            .collect();
        return Ok(Vector::Int(
            vals.iter()
                .map(|s| match s {
                    Scalar::Str(x) => rank[x.as_str()],
                    _ => 0,
                })
                .collect(),
        ));
    }
    if vals.iter().all(|s| matches!(s, Scalar::Bool(_))) {
        // false before true, as PostgreSQL orders booleans.
        return Ok(Vector::Int(
            vals.iter()
                .map(|s| i64::from(*s == Scalar::Bool(true)))
                .collect(),
        ));
    }
    if vals.iter().all(|s| matches!(s, Scalar::Date(_))) {
        return Ok(Vector::Dates(
            vals.iter()
                .map(|s| match s {
                    Scalar::Date(d) => *d,
                    _ => 0,
                })
                .collect(),
        ));
    }
    if let Some(scale) = vals.iter().try_fold(0u8, |m, s| match s {
        Scalar::Num { scale, .. } => Some(m.max(*scale)),
        _ => None,
    }) {
        // 64-bit where the values fit: the operators' group and join keys
        // are (e.g. `mod(s_w_id * s_i_id, 10000)`, evaluated row by row).
        return Ok(super::narrowed(Vector::Wide {
            values: vals
                .iter()
                .map(|s| match s {
                    Scalar::Num { value, scale: s } => value * 10i128.pow(u32::from(scale - s)),
                    _ => 0,
                })
                .collect(),
            scale,
        }));
    }
    if vals
        .iter()
        .all(|s| matches!(s, Scalar::Double(_) | Scalar::Num { .. }))
    {
        return Ok(Vector::Int(
            vals.iter()
                .map(|s| match s {
                    Scalar::Double(d) => ordered_bits(*d),
                    Scalar::Num { value, scale } => ordered_bits(maestro_tpch::queries::ratio_f64(
                        *value,
                        10i128.pow(u32::from(*scale)),
                    )),
                    _ => 0,
                })
                .collect(),
        ));
    }
    Err(SqlError::unsupported(
        "sorting or grouping by values that mix types or contain NULL",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use maestro_storage::column::{Column, StrHeap};

    use super::native_pred;
    use crate::lower::vector::{Encoding, Relation, Vector};
    use crate::plan::{CmpOp, ColumnId, Expr};
    use crate::types::Literal;

    #[test]
    fn comparisons_of_encoded_columns_are_native_on_the_stored_integers() {
        let doubles = [-1.5, -0.0, 0.0, 2.0, f64::NAN];
        let stored = Column::Int64(
            doubles
                .iter()
                .map(|&d| crate::types::stored_double(d))
                .collect(),
        );
        let flags = Column::Int32(vec![1, 0, 1, 1, 0]);
        let encoded = |column, encoding| Vector::Encoded {
            raw: Box::new(Vector::Base {
                column,
                tail: None,
                rows: None,
            }),
            encoding,
        };
        let rel = Relation {
            len: doubles.len(),
            cols: vec![
                (ColumnId(0), encoded(&stored, Encoding::Double)),
                (ColumnId(1), encoded(&flags, Encoding::Bool)),
            ],
        };
        let kept = |e: &Expr| {
            let p = native_pred(e, &rel).expect("a native predicate");
            let mut cand: Vec<u32> = (0..doubles.len() as u32).collect();
            p.refine(&mut cand);
            cand
        };
        let x = || Expr::Column(ColumnId(0));
        let num = |value, scale| Expr::Lit(Literal::Num { value, scale });
        assert_eq!(kept(&Expr::cmp(CmpOp::Eq, x(), num(0, 0))), [1, 2]);
        assert_eq!(kept(&Expr::cmp(CmpOp::Ne, x(), num(0, 0))), [0, 3, 4]);
        assert_eq!(kept(&Expr::cmp(CmpOp::Lt, x(), num(0, 0))), [0]);
        assert_eq!(kept(&Expr::cmp(CmpOp::Ge, x(), num(0, 0))), [1, 2, 3, 4]);
        assert_eq!(
            kept(&Expr::cmp(CmpOp::Gt, num(-15, 1), x())),
            [] as [u32; 0]
        );
        assert_eq!(
            kept(&Expr::cmp(CmpOp::Le, x(), Expr::Lit(Literal::Double(2.0)))),
            [0, 1, 2, 3]
        );
        assert_eq!(kept(&Expr::Column(ColumnId(1))), [0, 2, 3]);
        assert_eq!(
            kept(&Expr::Not(Box::new(Expr::Column(ColumnId(1))))),
            [1, 4]
        );
        assert_eq!(
            kept(&Expr::cmp(
                CmpOp::Eq,
                Expr::Column(ColumnId(1)),
                Expr::Lit(Literal::Bool(false))
            )),
            [1, 4]
        );
        // A NaN constant, and a literal the encoding has no form for, are
        // left to the row-by-row evaluator.
        assert!(
            native_pred(
                &Expr::cmp(CmpOp::Eq, x(), Expr::Lit(Literal::Double(f64::NAN))),
                &rel
            )
            .is_none()
        );
        assert!(
            native_pred(
                &Expr::cmp(CmpOp::Eq, x(), Expr::Lit(Literal::Str("1".into()))),
                &rel
            )
            .is_none()
        );
    }

    #[test]
    fn substring_prefix_in_a_list_is_a_native_like() {
        let phones = Column::StrHeap(StrHeap::from_strs(["13-1", "31-2", "1", "", "13", "2-13"]));
        let rel = Relation {
            len: 6,
            cols: vec![(
                ColumnId(0),
                Vector::Base {
                    column: &phones,
                    tail: None,
                    rows: None,
                },
            )],
        };
        let code = |n| Expr::Substring {
            expr: Box::new(Expr::Column(ColumnId(0))),
            start: 1,
            len: Some(n),
        };
        let s = |x: &str| Literal::Str(x.into());
        let kept = |e: &Expr| {
            let p = native_pred(e, &rel).expect("a native predicate");
            let mut cand: Vec<u32> = (0..6).collect();
            p.refine(&mut cand);
            cand
        };
        let list = |negated| Expr::InList {
            expr: Box::new(code(2)),
            list: vec![s("13"), s("31")],
            negated,
        };
        assert_eq!(kept(&list(false)), [0, 1, 4]);
        assert_eq!(kept(&list(true)), [2, 3, 5]);
        let eq = Expr::cmp(CmpOp::Eq, Expr::Lit(s("2-")), code(2));
        assert_eq!(kept(&eq), [5]);
        // A literal of another length, or with a LIKE wildcard, stays row
        // by row (its substring never equals; `_` would match anything).
        for odd in ["1", "1_"] {
            let e = Expr::InList {
                expr: Box::new(code(2)),
                list: vec![s(odd)],
                negated: false,
            };
            assert!(native_pred(&e, &rel).is_none(), "{odd}");
        }
        // Several literals on a heap column: one in-place prefix test per
        // string, the literals compared as text (`_` is no wildcard here).
        let e = Expr::InList {
            expr: Box::new(code(2)),
            list: vec![s("1_"), s("2-"), s("31")],
            negated: false,
        };
        assert_eq!(kept(&e), [1, 5]);
        // Literals of one length in characters but not in bytes.
        let e = Expr::InList {
            expr: Box::new(code(2)),
            list: vec![s("13"), s("é1")],
            negated: false,
        };
        assert_eq!(kept(&e), [0, 4]);
        // Through row ids (a join's or a filter's output).
        let rows = std::sync::Arc::new(vec![5, 4, 1, 0]);
        let through = Relation {
            len: 4,
            cols: vec![(
                ColumnId(0),
                Vector::Base {
                    column: &phones,
                    tail: None,
                    rows: Some(super::super::vector::RowIds::unordered(rows)),
                },
            )],
        };
        let p = native_pred(&list(false), &through).expect("a native predicate");
        let mut cand: Vec<u32> = (0..4).collect();
        p.refine(&mut cand);
        assert_eq!(cand, [1, 2, 3]); // "13", "31-2", "13-1"
    }

    #[test]
    fn conjuncts_run_cheapest_first() {
        let rel = Relation {
            len: 3,
            cols: vec![(ColumnId(0), Vector::Int(vec![1, 2, 3]))],
        };
        let col = || Expr::Column(ColumnId(0));
        let lit = |v| Expr::Lit(Literal::Num { value: v, scale: 0 });
        let or = Expr::Or(vec![
            Expr::cmp(CmpOp::Eq, col(), lit(1)),
            Expr::cmp(CmpOp::Eq, col(), lit(3)),
        ]);
        let row_by_row = Expr::cmp(
            CmpOp::Gt,
            Expr::Arith(ArithOp::Div, Box::new(lit(6)), Box::new(col())),
            lit(1),
        );
        let range = Expr::cmp(CmpOp::Le, col(), lit(2));
        let es = [row_by_row.clone(), or.clone(), range.clone()];
        let order: Vec<&Expr> = cheap_first(&es, &rel);
        assert_eq!(order, [&range, &or, &row_by_row]);
        // Of equal cost, negations (which keep most rows) last.
        let ne = Expr::cmp(CmpOp::Ne, col(), lit(2));
        let not_in = Expr::InList {
            expr: Box::new(col()),
            list: vec![Literal::Num { value: 1, scale: 0 }],
            negated: true,
        };
        let is_in = Expr::InList {
            expr: Box::new(col()),
            list: vec![Literal::Num { value: 3, scale: 0 }],
            negated: false,
        };
        let es = [ne.clone(), not_in.clone(), is_in.clone(), range.clone()];
        assert_eq!(cheap_first(&es, &rel), [&is_in, &range, &ne, &not_in]);
    }
}
