//! Constants: numbers (exact: `0.05` is a decimal of scale 2), booleans,
//! strings, `DATE '…'` and intervals.

use sqlparser::ast::{self, Value};

use crate::error::{ErrorKind, Result, SqlError};
use crate::types::Literal;
use maestro_storage::column::{Date, MAX_SCALE};

pub(super) fn string_value(v: &Value) -> Option<&str> {
    match v {
        Value::SingleQuotedString(s) => Some(s),
        _ => None,
    }
}

pub(super) fn parse_date(s: &str) -> Result<Date> {
    Date::parse(s.trim())
        .map_err(|_| SqlError::mismatch(format!("invalid date '{s}' (expected YYYY-MM-DD)")))
}

/// A number or string constant.
pub(super) fn literal(v: &Value) -> Result<Literal> {
    match v {
        Value::Number(s, _) => number(s),
        Value::SingleQuotedString(s) => Ok(Literal::Str(s.clone())),
        Value::Boolean(b) => Ok(Literal::Bool(*b)),
        other => Err(SqlError::unsupported(format!("literal {other}"))),
    }
}

/// `123` (an integer) or `0.05` (a decimal of scale 2), exactly.
fn number(s: &str) -> Result<Literal> {
    let bad = || SqlError::new(ErrorKind::Invalid, format!("number {s} out of range"));
    if s.contains(['e', 'E']) {
        // Exact where a decimal constant holds it (`1e3`, `2.5E-2`); a
        // double beyond that (`1e-40`, `6.02e23`).
        let exact = crate::store::convert::parse_number_exact(s)
            .filter(|&(_, scale)| scale <= u32::from(MAX_SCALE))
            .and_then(|(value, scale)| Some((i64::try_from(value).ok()?, scale as u8)));
        return match exact {
            Some((value, scale)) => Ok(Literal::Num { value, scale }),
            None => crate::types::parse_double(s)
                .filter(|d| d.is_finite())
                .map(Literal::Double)
                .ok_or_else(bad),
        };
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let scale = u8::try_from(frac.len()).map_err(|_| bad())?;
    if scale > MAX_SCALE {
        return Err(bad());
    }
    let digits = format!("{int}{frac}");
    let value: i64 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| bad())?
    };
    Ok(Literal::Num { value, scale })
}

/// `INTERVAL '90' DAY`, `INTERVAL '3' MONTH`, `INTERVAL '1' YEAR`, or the
/// field inside the string: `INTERVAL '90 days'`.
pub(super) fn interval(iv: &ast::Interval) -> Result<Literal> {
    let text = match iv.value.as_ref() {
        ast::Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => s.clone(),
            Value::Number(n, _) => n.clone(),
            _ => return Err(SqlError::unsupported(format!("interval {iv}"))),
        },
        _ => return Err(SqlError::unsupported(format!("interval {iv}"))),
    };
    let mut parts = text.split_whitespace();
    let amount: i32 = parts
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| SqlError::mismatch(format!("interval '{text}': expected a whole number")))?;
    let unit = match (&iv.leading_field, parts.next()) {
        (Some(f), None) => f.to_string().to_lowercase(),
        (None, Some(u)) if parts.next().is_none() => u.to_lowercase(),
        _ => return Err(SqlError::unsupported(format!("interval {iv}"))),
    };
    if iv.last_field.is_some() {
        return Err(SqlError::unsupported(format!("interval {iv}")));
    }
    match unit.trim_end_matches('s') {
        "day" => Ok(Literal::Interval {
            months: 0,
            days: amount,
        }),
        "month" => Ok(Literal::Interval {
            months: amount,
            days: 0,
        }),
        "year" => Ok(Literal::Interval {
            months: 12 * amount,
            days: 0,
        }),
        _ => Err(SqlError::unsupported(format!("interval unit {unit}"))),
    }
}
