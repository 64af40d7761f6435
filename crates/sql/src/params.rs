//! Statement parameters (`$1`, `$2`, …): the values a client binds to a
//! prepared statement, their text form parsed by the parameter's type, and
//! the constant expression each becomes in the plan.
//!
//! A statement with parameters is bound twice: once without values, to infer
//! each parameter's type from its context ([`crate::prepare`], what a wire
//! protocol's Describe announces), then once per execution with the values
//! ([`crate::plan_with`]), where each `$n` is a constant — so the optimizer
//! and the operators see an ordinary statement.

use maestro_storage::column::{Date, MAX_SCALE};

use crate::error::{ErrorKind, Result, SqlError};
use crate::plan::Expr;
use crate::types::{Literal, SqlType, parse_exact};

/// One parameter's value, of the parameter's type.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// SQL NULL of this type.
    Null(SqlType),
    Int(i64),
    /// `value / 10^scale`, exactly.
    Num {
        value: i64,
        scale: u8,
    },
    Double(f64),
    Str(String),
    Date(Date),
    /// Microseconds since 1970-01-01 00:00:00 UTC.
    Timestamp(i64),
    Bool(bool),
}

fn bad_text(ty: SqlType, s: &str) -> SqlError {
    let name = match ty {
        SqlType::Int => "bigint",
        SqlType::Decimal(_) => "numeric",
        SqlType::Double => "double precision",
        SqlType::Bool => "boolean",
        SqlType::Date => "date",
        SqlType::Timestamp => "timestamp",
        SqlType::Str | SqlType::Interval => "text",
    };
    SqlError::new(
        ErrorKind::InvalidText,
        format!("invalid input syntax for type {name}: \"{s}\""),
    )
}

/// A date in PostgreSQL's text input: `YYYY-MM-DD`, optionally followed by
/// a time of day and a time zone, which a date ignores (as PostgreSQL's
/// `date_in` does). pgJDBC's `setDate` sends `2026-11-01 +00`.
fn parse_date_text(t: &str) -> Option<Date> {
    let (date, rest) = match t.find([' ', 'T']) {
        Some(i) => (&t[..i], t[i + 1..].trim()),
        None => (t, ""),
    };
    let date = Date::parse(date).ok()?;
    let (time, zone) = match rest.find(['+', '-', 'Z', 'z']) {
        Some(i) => (rest[..i].trim(), &rest[i..]),
        None => (rest, ""),
    };
    let digits = |s: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
    };
    let time_ok = time.is_empty() || {
        let (hms, fraction) = time.split_once('.').unwrap_or((time, "0"));
        let parts: Vec<&str> = hms.split(':').collect();
        (2..=3).contains(&parts.len())
            && digits(parts[0], 1..=2)
            && parts[1..].iter().all(|p| digits(p, 2..=2))
            && digits(fraction, 1..=9)
    };
    let zone_ok = match zone.as_bytes().first() {
        None => true,
        Some(b'Z' | b'z') => zone.len() == 1,
        Some(_) => {
            let offset = &zone[1..];
            match offset.split_once(':') {
                Some((h, m)) => digits(h, 1..=2) && digits(m, 2..=2),
                None => digits(offset, 1..=4),
            }
        }
    };
    (time_ok && zone_ok).then_some(date)
}

impl ParamValue {
    /// A value in PostgreSQL's text format for a parameter of type `ty`; a
    /// text that is not one is an [`ErrorKind::InvalidText`] error.
    pub fn parse(s: &str, ty: SqlType) -> Result<ParamValue> {
        let t = s.trim();
        match ty {
            SqlType::Int => t.parse().map(ParamValue::Int).map_err(|_| bad_text(ty, s)),
            SqlType::Decimal(_) => parse_decimal(t)
                .map(|(value, scale)| ParamValue::Num { value, scale })
                .ok_or_else(|| bad_text(ty, s)),
            SqlType::Double => crate::types::parse_double(t)
                .map(ParamValue::Double)
                .ok_or_else(|| bad_text(ty, s)),
            SqlType::Bool => crate::types::parse_bool(t)
                .map(ParamValue::Bool)
                .ok_or_else(|| bad_text(ty, s)),
            SqlType::Date => parse_date_text(t)
                .map(ParamValue::Date)
                .ok_or_else(|| bad_text(ty, s)),
            SqlType::Timestamp => crate::types::parse_timestamp(t)
                .map(ParamValue::Timestamp)
                .ok_or_else(|| bad_text(ty, s)),
            SqlType::Str => Ok(ParamValue::Str(s.to_string())),
            SqlType::Interval => Err(SqlError::unsupported("interval parameters")),
        }
    }

    /// The constant this value is in a bound expression.
    pub(crate) fn to_expr(&self) -> Result<Expr> {
        Ok(match self {
            ParamValue::Null(ty) => Expr::Cast(Box::new(Expr::null()), *ty),
            ParamValue::Int(v) => Expr::Lit(Literal::int(*v)),
            ParamValue::Num { value, scale } => Expr::Lit(Literal::Num {
                value: *value,
                scale: *scale,
            }),
            ParamValue::Double(f) => Expr::Lit(Literal::Double(*f)),
            ParamValue::Str(s) => Expr::Lit(Literal::Str(s.clone())),
            ParamValue::Date(d) => Expr::Lit(Literal::Date(*d)),
            ParamValue::Timestamp(t) => Expr::Lit(Literal::Timestamp(*t)),
            ParamValue::Bool(b) => Expr::Lit(Literal::Bool(*b)),
        })
    }

    /// A non-NULL value of type `ty` standing in for a parameter while its
    /// statement is only described (never run).
    pub(crate) fn stand_in(ty: SqlType) -> ParamValue {
        match ty {
            SqlType::Int | SqlType::Interval => ParamValue::Int(0),
            SqlType::Decimal(scale) => ParamValue::Num { value: 0, scale },
            SqlType::Double => ParamValue::Double(0.0),
            SqlType::Date => ParamValue::Date(Date(0)),
            SqlType::Timestamp => ParamValue::Timestamp(0),
            SqlType::Str => ParamValue::Str(String::new()),
            SqlType::Bool => ParamValue::Bool(false),
        }
    }
}

/// [`parse_exact`] within a stored decimal's bounds: `None` beyond 64 bits
/// or [`MAX_SCALE`] fractional digits.
pub(crate) fn parse_decimal(s: &str) -> Option<(i64, u8)> {
    let (value, scale) = parse_exact(s).filter(|&(_, scale)| scale <= MAX_SCALE)?;
    Some((i64::try_from(value).ok()?, scale))
}

/// What the binder knows about the parameters of the statement it binds.
#[derive(Debug, Default)]
pub(crate) struct Params {
    /// Each parameter's type, as declared by the client or inferred from the
    /// first context it appears in (`None`: not seen yet).
    pub types: Vec<Option<SqlType>>,
    /// The values (an execution), or none (a Describe: stand-ins).
    pub values: Option<Vec<ParamValue>>,
}

impl Params {
    /// The expression for placeholder `name` (`$n`) in a context that
    /// expects `hint` (none: TEXT, as PostgreSQL's unknown).
    pub fn bind(&mut self, name: &str, hint: Option<SqlType>) -> Result<Expr> {
        let n: usize = name
            .strip_prefix('$')
            .and_then(|d| d.parse().ok())
            .filter(|&n| (1..=65535).contains(&n))
            .ok_or_else(|| SqlError::unsupported(format!("parameter {name} (write $1, $2, …)")))?;
        if let Some(values) = &self.values {
            let v = values.get(n - 1).ok_or_else(|| {
                SqlError::new(
                    ErrorKind::UndefinedParameter,
                    format!("there is no parameter ${n}"),
                )
            })?;
            return v.to_expr();
        }
        if self.types.len() < n {
            self.types.resize(n, None);
        }
        let ty = *self.types[n - 1].get_or_insert(match hint {
            // `$1 + INTERVAL '…'`: only a date adds to an interval.
            Some(SqlType::Interval) => SqlType::Date,
            Some(t) => t,
            // No context: text (PostgreSQL's unknown), unless a clearer
            // context comes first.
            None => SqlType::Str,
        });
        // A TEXT parameter where a date or timestamp is expected: execution
        // parses its text as one (as a string literal there), so its
        // stand-in is one too — an empty string would not parse.
        let stand_in = match (ty, hint) {
            (SqlType::Str, Some(h @ (SqlType::Date | SqlType::Timestamp))) => h,
            _ => ty,
        };
        ParamValue::stand_in(stand_in).to_expr()
    }

    /// The parameters' types (unseen ones between seen ones are TEXT).
    pub fn final_types(&self) -> Vec<SqlType> {
        self.types
            .iter()
            .map(|t| t.unwrap_or(SqlType::Str))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_parameter_ignores_a_time_of_day_and_a_zone_as_postgresql_does() {
        let day = Date::parse("2026-11-01").unwrap();
        for text in [
            "2026-11-01",
            " 2026-11-01 ",
            "2026-11-01 +00",
            "2026-11-01 -08",
            "2026-11-01 +05:30",
            "2026-11-01 00:00:00",
            "2026-11-01T13:45:00.123Z",
            "2026-11-01 13:45 +0100",
        ] {
            assert_eq!(
                ParamValue::parse(text, SqlType::Date).unwrap(),
                ParamValue::Date(day),
                "{text:?}"
            );
        }
        for text in [
            "2026-11-01 x",
            "2026-11-01 +",
            "2026-11-01 25",
            "2026-13-01",
            "2026-11-01 12:3",
            "2026-11-01Zulu",
        ] {
            let e = ParamValue::parse(text, SqlType::Date).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidText, "{text:?}: {e}");
        }
    }
}
