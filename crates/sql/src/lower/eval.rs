//! The row-at-a-time evaluator: any bound expression at one position. The
//! operators' vectorized `Expr`/`Pred` cover the common cases (see
//! `compile.rs`); this covers the rest — division (a DOUBLE, as in DuckDB and
//! PostgreSQL for `DECIMAL / DECIMAL`), arithmetic on 128-bit sums, CASE with
//! string results, LIKE with `_` — and produces the output rows. It is not
//! in `maestro-execution` because it works on SQL values (NULL, DOUBLE,
//! strings), which that crate's integer kernels deliberately do not.
//!
//! Evaluation can fail ([`EvalError`]: division by zero, exact arithmetic
//! past 128 bits). Only the rows that reach an expression are evaluated —
//! CASE evaluates the branch it picks, AND/OR stop at the first deciding
//! operand, filters run on the rows earlier conditions kept — so
//! `CASE WHEN b = 0 THEN NULL ELSE a / b END` and `WHERE b <> 0 AND a / b > 1`
//! do not fail, as in PostgreSQL. Where the caller cannot return an error
//! (an operator's predicate or join residual callback) it records the first
//! one in a [`Fault`] and checks it when the operator returns.

use std::cmp::Ordering;
use std::sync::OnceLock;

use maestro_storage::column::Date;
use maestro_tpch::queries::ratio_f64;

use super::vector::{Relation, Scalar};
use crate::error::{ErrorKind, SqlError};
use crate::plan::{ArithOp, ColumnId, Expr, TextFn};
use crate::types::{Literal, SqlType, parse_exact};

/// Why a value could not be computed (a runtime error of the statement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EvalError {
    /// `x / 0` or `x % 0` (SQLSTATE 22012).
    DivisionByZero,
    /// Exact arithmetic past 128 bits, or a cast result outside its type
    /// (SQLSTATE 22003).
    Overflow,
    /// A string cast to a type it is no value of (SQLSTATE 22P02; 22007
    /// for a date, the server tells them apart by the message).
    InvalidText(SqlType),
}

impl From<EvalError> for SqlError {
    fn from(e: EvalError) -> SqlError {
        match e {
            EvalError::DivisionByZero => {
                SqlError::new(ErrorKind::DivisionByZero, "division by zero")
            }
            EvalError::Overflow => {
                SqlError::new(ErrorKind::OutOfRange, "numeric value out of range")
            }
            EvalError::InvalidText(t) => SqlError::new(
                ErrorKind::InvalidText,
                format!("invalid input syntax for type {}", pg_type_name(t)),
            ),
        }
    }
}

pub(crate) type Eval<T = Scalar> = Result<T, EvalError>;

/// The first evaluation error inside an operator callback that returns a
/// plain `bool` (a `Pred::func`, a join residual): the callback records it
/// and answers `false`; the caller turns it into the statement's error with
/// [`Fault::check`] once the operator returns. Shared by the operator's
/// parallel tasks, hence the `OnceLock`.
#[derive(Default)]
pub(crate) struct Fault(OnceLock<EvalError>);

impl Fault {
    /// `v`'s value, or `false` after recording its error.
    pub fn truth(&self, v: Eval) -> bool {
        match v {
            Ok(s) => s == Scalar::Bool(true),
            Err(e) => {
                let _ = self.0.set(e);
                false
            }
        }
    }

    /// The recorded error, if any.
    pub fn check(&self) -> Result<(), SqlError> {
        self.0.get().map_or(Ok(()), |e| Err((*e).into()))
    }
}

/// The value of `e` at position `p` of `rel`.
pub(crate) fn eval_row(e: &Expr, rel: &Relation, p: usize) -> Eval {
    eval_with(e, &|c| rel.get(c).map_or(Scalar::Null, |v| v.value_at(p)))
}

/// The value of `e` with each column's value given by `col` (a row of one
/// relation, or a pair of rows of a join's two sides). SQL's three-valued
/// logic: a comparison with NULL is NULL, `NULL AND false` is false, `NULL
/// OR true` is true, `NOT NULL` is NULL.
pub(crate) fn eval_with(e: &Expr, col: &dyn Fn(ColumnId) -> Scalar) -> Eval {
    let ev = |x: &Expr| eval_with(x, col);
    Ok(match e {
        Expr::Column(c) => col(*c),
        Expr::Lit(l) => literal(l),
        // Both operands, then NULL if either is (`NULL / 0` is NULL, as
        // PostgreSQL's strict operators give).
        Expr::Arith(op, a, b) => arith(*op, ev(a)?, ev(b)?)?,
        Expr::Cmp(op, a, b) => match compare(&ev(a)?, &ev(b)?) {
            Some(o) => Scalar::Bool(op.holds(o)),
            None => Scalar::Null,
        },
        Expr::And(es) => {
            let mut unknown = false;
            for x in es {
                match ev(x)? {
                    Scalar::Bool(false) => return Ok(Scalar::Bool(false)),
                    Scalar::Bool(true) => {}
                    _ => unknown = true,
                }
            }
            if unknown {
                Scalar::Null
            } else {
                Scalar::Bool(true)
            }
        }
        Expr::Or(es) => {
            let mut unknown = false;
            for x in es {
                match ev(x)? {
                    Scalar::Bool(true) => return Ok(Scalar::Bool(true)),
                    Scalar::Bool(false) => {}
                    _ => unknown = true,
                }
            }
            if unknown {
                Scalar::Null
            } else {
                Scalar::Bool(false)
            }
        }
        Expr::Not(x) => match ev(x)? {
            Scalar::Bool(b) => Scalar::Bool(!b),
            _ => Scalar::Null,
        },
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let v = ev(expr)?;
            if v == Scalar::Null {
                return Ok(Scalar::Null);
            }
            let found = list
                .iter()
                .any(|l| compare(&v, &literal(l)) == Some(Ordering::Equal));
            Scalar::Bool(found != *negated)
        }
        Expr::Like {
            expr,
            pattern,
            negated,
        } => match ev(expr)? {
            Scalar::Str(s) => Scalar::Bool(like(s.as_bytes(), pattern.as_bytes()) != *negated),
            _ => Scalar::Null,
        },
        Expr::Case { whens, otherwise } => {
            // In order, each condition only when the ones before it did
            // not hold, and only the chosen branch.
            for (c, v) in whens {
                if ev(c)? == Scalar::Bool(true) {
                    return ev(v);
                }
            }
            match otherwise {
                Some(o) => ev(o)?,
                None => Scalar::Null,
            }
        }
        Expr::Year(x) => match ev(x)? {
            Scalar::Date(d) => Scalar::Num {
                value: Date(d).year().into(),
                scale: 0,
            },
            _ => Scalar::Null,
        },
        Expr::Ascii(x) => match ev(x)? {
            Scalar::Str(s) => Scalar::Num {
                value: s.chars().next().map_or(0, |c| i128::from(u32::from(c))),
                scale: 0,
            },
            _ => Scalar::Null,
        },
        Expr::Substring { expr, start, len } => match ev(expr)? {
            Scalar::Str(s) => Scalar::Str(substring(&s, *start, *len)),
            _ => Scalar::Null,
        },
        Expr::IsNull { expr, negated } => Scalar::Bool((ev(expr)? == Scalar::Null) != *negated),
        Expr::Cast(x, t) => cast(ev(x)?, *t)?,
        Expr::Text(t, x) => match (t, ev(x)?) {
            (TextFn::Upper, Scalar::Str(s)) => Scalar::Str(s.to_uppercase()),
            (TextFn::Lower, Scalar::Str(s)) => Scalar::Str(s.to_lowercase()),
            (TextFn::Length, Scalar::Str(s)) => Scalar::Num {
                value: s.chars().count() as i128,
                scale: 0,
            },
            _ => Scalar::Null,
        },
        Expr::Concat(a, b) => match (ev(a)?, ev(b)?) {
            (Scalar::Str(a), Scalar::Str(b)) => Scalar::Str(a + &b),
            _ => Scalar::Null,
        },
    })
}

/// PostgreSQL's `substring(s from start for len)`: characters
/// `start .. start + len` (1-based), clipped to the string.
pub(crate) fn substring(s: &str, start: i64, len: Option<i64>) -> String {
    let end = len.map(|n| start.saturating_add(n.max(0)));
    let from = start.max(1);
    s.chars()
        .enumerate()
        .map(|(i, c)| (i as i64 + 1, c))
        .filter(|(i, _)| *i >= from && end.is_none_or(|e| *i < e))
        .map(|(_, c)| c)
        .collect()
}

/// `value / 10^from` at scale `to`, rounded half away from zero.
fn rescale(value: i128, from: u8, to: u8) -> Option<i128> {
    if to >= from {
        return value.checked_mul(pow10(to - from));
    }
    let d = pow10(from - to);
    let (q, r) = (value / d, value % d);
    Some(if 2 * r.abs() >= d {
        q + value.signum()
    } else {
        q
    })
}

/// PostgreSQL's name of a type in its error messages.
pub(crate) fn pg_type_name(t: SqlType) -> &'static str {
    match t {
        SqlType::Int => "integer",
        SqlType::Decimal(_) => "numeric",
        SqlType::Double => "double precision",
        SqlType::Date => "date",
        SqlType::Str => "character varying",
        SqlType::Bool => "boolean",
        SqlType::Interval => "interval",
        SqlType::Timestamp => "timestamp without time zone",
    }
}

/// A value converted to `t`, as PostgreSQL's CAST: a string that is no
/// value of `t` is an error (22P02), not NULL, and so is a number that does
/// not fit (22003); a conversion the binder does not allow is NULL.
pub(crate) fn cast(v: Scalar, t: SqlType) -> Eval {
    let invalid = EvalError::InvalidText(t);
    Ok(match (v, t) {
        (Scalar::Null, _) => Scalar::Null,
        (Scalar::Num { value, scale }, SqlType::Int | SqlType::Decimal(_)) => Scalar::Num {
            value: rescale(value, scale, t.scale()).ok_or(EvalError::Overflow)?,
            scale: t.scale(),
        },
        (Scalar::Double(d), SqlType::Int | SqlType::Decimal(_)) => {
            let scaled = (d * 10f64.powi(i32::from(t.scale()))).round();
            if !(scaled.is_finite() && scaled.abs() < 1e36) {
                return Err(EvalError::Overflow);
            }
            Scalar::Num {
                value: scaled as i128,
                scale: t.scale(),
            }
        }
        (v @ (Scalar::Num { .. } | Scalar::Double(_)), SqlType::Double) => {
            as_f64(&v).map_or(Scalar::Null, Scalar::Double)
        }
        (Scalar::Str(s), SqlType::Date) => {
            Scalar::Date(Date::parse(s.trim()).map_err(|_| invalid)?.0)
        }
        (Scalar::Str(s), SqlType::Int | SqlType::Decimal(_)) => {
            let (value, scale) = parse_exact(s.trim()).ok_or(invalid)?;
            Scalar::Num {
                value: rescale(value, scale, t.scale()).ok_or(EvalError::Overflow)?,
                scale: t.scale(),
            }
        }
        (Scalar::Str(s), SqlType::Double) => {
            Scalar::Double(crate::types::parse_double(&s).ok_or(invalid)?)
        }
        (Scalar::Str(s), SqlType::Bool) => {
            Scalar::Bool(crate::types::parse_bool(&s).ok_or(invalid)?)
        }
        (Scalar::Num { value, scale: 0 }, SqlType::Bool) => Scalar::Bool(value != 0),
        (v @ Scalar::Str(_), SqlType::Str) => v,
        (Scalar::Num { value, scale }, SqlType::Str) => Scalar::Str(show_exact(value, scale)),
        (Scalar::Double(d), SqlType::Str) => Scalar::Str(crate::types::double_text(d)),
        (Scalar::Date(d), SqlType::Str) => Scalar::Str(Date(d).to_string()),
        (v @ Scalar::Date(_), SqlType::Date) => v,
        // Only a timestamp (microseconds) casts from a number to a date:
        // the binder allows no other number-to-date cast.
        (Scalar::Num { value, scale: 0 }, SqlType::Date) => i64::try_from(value)
            .ok()
            .and_then(crate::types::timestamp_date)
            .map_or(Scalar::Null, |d| Scalar::Date(d.0)),
        (Scalar::Str(s), SqlType::Timestamp) => Scalar::Num {
            value: crate::types::parse_timestamp(&s).ok_or(invalid)?.into(),
            scale: 0,
        },
        (v @ Scalar::Num { scale: 0, .. }, SqlType::Timestamp) => v,
        (Scalar::Bool(b), SqlType::Str) => Scalar::Str(b.to_string()),
        (v @ Scalar::Bool(_), SqlType::Bool) => v,
        (Scalar::Bool(b), SqlType::Int) => Scalar::Num {
            value: i128::from(b),
            scale: 0,
        },
        _ => Scalar::Null,
    })
}

fn show_exact(value: i128, scale: u8) -> String {
    if scale == 0 {
        return value.to_string();
    }
    let d = pow10(scale);
    let sign = if value < 0 { "-" } else { "" };
    let a = value.unsigned_abs();
    let d = d as u128;
    format!("{sign}{}.{:0w$}", a / d, a % d, w = usize::from(scale))
}

/// Whether a condition holds at `p` (NULL does not); an error is recorded
/// in `fault` and counts as not holding.
pub(crate) fn truth(e: &Expr, rel: &Relation, p: usize, fault: &Fault) -> bool {
    fault.truth(eval_row(e, rel, p))
}

pub(crate) fn literal(l: &Literal) -> Scalar {
    match l {
        Literal::Num { value, scale } => Scalar::Num {
            value: (*value).into(),
            scale: *scale,
        },
        Literal::Date(d) => Scalar::Date(d.0),
        // A timestamp is its microseconds at run time (an Int64 column).
        Literal::Timestamp(t) => Scalar::Num {
            value: (*t).into(),
            scale: 0,
        },
        Literal::Str(s) => Scalar::Str(s.clone()),
        Literal::Interval { .. } => Scalar::Null,
        Literal::Double(d) => Scalar::Double(*d),
        Literal::Bool(b) => Scalar::Bool(*b),
    }
}

fn pow10(d: u8) -> i128 {
    10i128.pow(u32::from(d))
}

/// `(a, b)` at the larger of their scales (`None` past 128 bits).
fn align(a: i128, sa: u8, b: i128, sb: u8) -> Option<(i128, i128, u8)> {
    let s = sa.max(sb);
    Some((
        a.checked_mul(pow10(s - sa))?,
        b.checked_mul(pow10(s - sb))?,
        s,
    ))
}

/// `n / d` (`d != 0`) as the nearest double when the fraction reduced to
/// lowest terms has both parts below 2^53 (then both convert exactly and
/// IEEE division rounds correctly), else within a few ulps (`ratio_f64`).
/// Reducing first matters: `100.00 * sum(…) / sum(…)` carries factors of
/// ten that would otherwise push the operands past 2^53.
pub(crate) fn exact_ratio(n: i128, d: i128) -> f64 {
    let g = gcd(n.unsigned_abs(), d.unsigned_abs()).max(1) as i128;
    ratio_f64(n / g, d / g)
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

pub(crate) fn as_f64(v: &Scalar) -> Option<f64> {
    match *v {
        Scalar::Num { value, scale } => Some(ratio_f64(value, pow10(scale))),
        Scalar::Double(d) => Some(d),
        _ => None,
    }
}

fn arith(op: ArithOp, a: Scalar, b: Scalar) -> Eval {
    Ok(match (&a, &b) {
        (
            Scalar::Num {
                value: x,
                scale: sx,
            },
            Scalar::Num {
                value: y,
                scale: sy,
            },
        ) => exact_arith(op, (*x, *sx), (*y, *sy))?,
        _ => match (as_f64(&a), as_f64(&b)) {
            (Some(x), Some(y)) => match op {
                ArithOp::Add => Scalar::Double(x + y),
                ArithOp::Sub => Scalar::Double(x - y),
                ArithOp::Mul => Scalar::Double(x * y),
                // PostgreSQL raises for `float8 / 0` too (DuckDB gives
                // inf/NaN); PostgreSQL's choice, as everywhere else.
                ArithOp::Div | ArithOp::Mod if y == 0.0 => return Err(EvalError::DivisionByZero),
                ArithOp::Div => Scalar::Double(x / y),
                // The binder admits `%` on exact operands only.
                ArithOp::Mod => Scalar::Double(x % y),
            },
            _ => Scalar::Null,
        },
    })
}

/// Exact arithmetic in 128 bits: an error when it overflows or divides by
/// zero.
fn exact_arith(op: ArithOp, (x, sx): (i128, u8), (y, sy): (i128, u8)) -> Eval {
    let overflow = EvalError::Overflow;
    Ok(match op {
        ArithOp::Add | ArithOp::Sub => {
            let (x, y, s) = align(x, sx, y, sy).ok_or(overflow)?;
            let value = if op == ArithOp::Add {
                x.checked_add(y)
            } else {
                x.checked_sub(y)
            };
            Scalar::Num {
                value: value.ok_or(overflow)?,
                scale: s,
            }
        }
        ArithOp::Mul => Scalar::Num {
            value: x.checked_mul(y).ok_or(overflow)?,
            scale: sx + sy,
        },
        ArithOp::Div | ArithOp::Mod if y == 0 => return Err(EvalError::DivisionByZero),
        // x/10^sx ÷ y/10^sy at the larger scale: x / (y·10^(sx−sy)) or
        // (x·10^(sy−sx)) / y.
        ArithOp::Div => {
            let (n, d, _) = align(x, sx, y, sy).ok_or(overflow)?;
            Scalar::Double(exact_ratio(n, d))
        }
        // The remainder takes the dividend's sign (PostgreSQL, DuckDB and
        // Rust's `%` agree), at the larger scale.
        ArithOp::Mod => {
            let (n, d, s) = align(x, sx, y, sy).ok_or(overflow)?;
            Scalar::Num {
                value: n.checked_rem(d).ok_or(overflow)?,
                scale: s,
            }
        }
    })
}

/// SQL comparison; `None` with a NULL or incomparable values.
pub(crate) fn compare(a: &Scalar, b: &Scalar) -> Option<Ordering> {
    match (a, b) {
        (
            Scalar::Num {
                value: x,
                scale: sx,
            },
            Scalar::Num {
                value: y,
                scale: sy,
            },
        ) => match align(*x, *sx, *y, *sy) {
            Some((x, y, _)) => Some(x.cmp(&y)),
            // Past 128 bits at the common scale: compare as doubles.
            None => as_f64(a)?.partial_cmp(&as_f64(b)?),
        },
        (Scalar::Date(x), Scalar::Date(y)) => Some(x.cmp(y)),
        (Scalar::Str(x), Scalar::Str(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (Scalar::Bool(x), Scalar::Bool(y)) => Some(x.cmp(y)),
        _ => Some(double_cmp(as_f64(a)?, as_f64(b)?)),
    }
}

/// PostgreSQL's order of doubles: NaN equal to NaN and above every number
/// (so the stored doubles' ordered bits, `compile::encoded_cmp`, agree);
/// -0 equal to +0.
fn double_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).expect("neither is NaN"),
    }
}

/// SQL LIKE: `%` any run of characters, `_` one character.
pub(crate) fn like(s: &[u8], pattern: &[u8]) -> bool {
    // Iterative match with backtracking to the last `%`.
    let text = String::from_utf8_lossy(s);
    let pat = String::from_utf8_lossy(pattern);
    let (t, p): (Vec<char>, Vec<char>) = (text.chars().collect(), pat.chars().collect());
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < t.len() {
        if j < p.len() && (p[j] == '_' || (p[j] != '%' && p[j] == t[i])) {
            i += 1;
            j += 1;
        } else if j < p.len() && p[j] == '%' {
            star = Some((j, i));
            j += 1;
        } else if let Some((sj, si)) = star {
            j = sj + 1;
            i = si + 1;
            star = Some((sj, si + 1));
        } else {
            return false;
        }
    }
    p[j..].iter().all(|&c| c == '%')
}

#[cfg(test)]
mod tests {
    use super::like;

    #[test]
    fn like_patterns() {
        let m = |s: &str, p: &str| like(s.as_bytes(), p.as_bytes());
        assert!(m("PROMO BRUSHED", "PROMO%"));
        assert!(m("forest green", "%green%"));
        assert!(m("abc", "a_c"));
        assert!(!m("abc", "a_d"));
        assert!(m("special requests here", "%special%requests%"));
        assert!(!m("requests special", "%special%requests%"));
        assert!(m("", "%"));
        assert!(!m("", "_"));
    }

    #[test]
    fn substrings_and_casts() {
        use super::{Scalar, SqlType, cast, substring};
        assert_eq!(substring("25-989-741-2988", 1, Some(2)), "25");
        assert_eq!(substring("abc", 0, Some(2)), "a");
        assert_eq!(substring("abc", 2, None), "bc");
        assert_eq!(substring("abc", 5, Some(1)), "");
        let num = |value, scale| Scalar::Num { value, scale };
        let cast = |v, t| cast(v, t).unwrap();
        assert_eq!(cast(num(1250, 2), SqlType::Int), num(13, 0));
        assert_eq!(cast(num(-1250, 2), SqlType::Int), num(-13, 0));
        assert_eq!(cast(num(1249, 2), SqlType::Decimal(1)), num(125, 1));
        assert_eq!(cast(num(7, 0), SqlType::Decimal(2)), num(700, 2));
        assert_eq!(
            cast(Scalar::Str(" -3.5".into()), SqlType::Decimal(2)),
            num(-350, 2)
        );
        assert_eq!(cast(num(-5, 2), SqlType::Str), Scalar::Str("-0.05".into()));
        assert_eq!(cast(num(3, 0), SqlType::Double), Scalar::Double(3.0));
        assert_eq!(
            cast(Scalar::Str(" 2.5e1".into()), SqlType::Double),
            Scalar::Double(25.0)
        );
    }

    #[test]
    fn casts_of_text_that_is_no_value_fail() {
        use super::{EvalError, Scalar, SqlType, cast};
        let s = |x: &str| Scalar::Str(x.into());
        for (text, ty) in [
            ("x", SqlType::Int),
            ("1.5.2", SqlType::Decimal(2)),
            ("", SqlType::Int),
            ("inf", SqlType::Double),
            ("one", SqlType::Double),
            ("1994-13-01", SqlType::Date),
        ] {
            assert_eq!(
                cast(s(text), ty),
                Err(EvalError::InvalidText(ty)),
                "{text:?}"
            );
        }
        assert_eq!(
            cast(Scalar::Double(f64::INFINITY), SqlType::Int),
            Err(EvalError::Overflow)
        );
        assert_eq!(
            cast(s("-Infinity"), SqlType::Double),
            Ok(Scalar::Double(f64::NEG_INFINITY))
        );
    }

    #[test]
    fn ratios_are_reduced_before_converting() {
        use super::exact_ratio;
        // TPC-H Q14 at SF 1: 100.00 * promo (scale 6) / total (scale 4), aligned.
        let (n, d) = (45_242_880_523_010_000i128, 2_761_949_328_227_100i128);
        assert_eq!(exact_ratio(n, d), 16.38077862639554);
        assert_eq!(exact_ratio(-1, 3), -1.0 / 3.0);
        assert_eq!(exact_ratio(0, 7), 0.0);
    }
}
