//! SQL types and literals, mapped onto the column store's types: integers
//! (`Int32`/`Int64`), exact fixed-point decimals with their scale, dates (days
//! since 1970), strings (dictionary or heap), and DOUBLE only where SQL
//! produces one from exact values (`AVG`, `/`).

use std::fmt;

use maestro_storage::column::{DataType, Date};

/// The type of a bound expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SqlType {
    /// A 64-bit integer (sums of integers are 128-bit at run time).
    Int,
    /// An exact fixed-point number with this many fractional digits.
    Decimal(u8),
    Double,
    Date,
    Str,
    Bool,
    /// Only as an operand of date arithmetic with constants.
    Interval,
}

impl SqlType {
    pub fn of_column(t: DataType) -> SqlType {
        match t {
            DataType::Int32 | DataType::Int64 => SqlType::Int,
            DataType::Decimal { scale } => SqlType::Decimal(scale),
            DataType::Date => SqlType::Date,
            DataType::Str | DataType::StrHeap => SqlType::Str,
        }
    }

    /// Integers and decimals (exact numbers).
    pub fn is_exact(self) -> bool {
        matches!(self, SqlType::Int | SqlType::Decimal(_))
    }

    pub fn is_numeric(self) -> bool {
        self.is_exact() || self == SqlType::Double
    }

    /// Fractional digits of an exact number (0 for integers).
    pub fn scale(self) -> u8 {
        match self {
            SqlType::Decimal(s) => s,
            _ => 0,
        }
    }

    /// The exact type with `scale` fractional digits.
    pub fn exact(scale: u8) -> SqlType {
        if scale == 0 {
            SqlType::Int
        } else {
            SqlType::Decimal(scale)
        }
    }

    /// Whether values of the two types can be compared.
    pub fn comparable(self, other: SqlType) -> bool {
        (self.is_numeric() && other.is_numeric()) || self == other
    }
}

impl fmt::Display for SqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlType::Int => f.write_str("integer"),
            SqlType::Decimal(s) => write!(f, "decimal(scale {s})"),
            SqlType::Double => f.write_str("double"),
            SqlType::Date => f.write_str("date"),
            SqlType::Str => f.write_str("varchar"),
            SqlType::Bool => f.write_str("boolean"),
            SqlType::Interval => f.write_str("interval"),
        }
    }
}

/// A constant.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// `value / 10^scale` (scale 0: an integer).
    Num {
        value: i64,
        scale: u8,
    },
    Date(Date),
    Str(String),
    Interval {
        months: i32,
        days: i32,
    },
}

impl Literal {
    pub fn int(value: i64) -> Literal {
        Literal::Num { value, scale: 0 }
    }

    pub fn sql_type(&self) -> SqlType {
        match self {
            Literal::Num { scale, .. } => SqlType::exact(*scale),
            Literal::Date(_) => SqlType::Date,
            Literal::Str(_) => SqlType::Str,
            Literal::Interval { .. } => SqlType::Interval,
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Num { value, scale: 0 } => write!(f, "{value}"),
            Literal::Num { value, scale } => {
                let d = maestro_storage::column::Decimal {
                    value: *value,
                    scale: *scale,
                };
                write!(f, "{d}")
            }
            Literal::Date(d) => write!(f, "DATE '{d}'"),
            Literal::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Literal::Interval { months, days } => {
                write!(f, "INTERVAL '{months} months {days} days'")
            }
        }
    }
}

/// `[+-]digits[.digits]` exactly, as (value, scale): `-12.50` is (−1250, 2);
/// `None` if it is not one, has more than 30 fractional digits or does not
/// fit 128 bits.
pub(crate) fn parse_exact(s: &str) -> Option<(i128, u8)> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let scale = u8::try_from(frac.len()).ok().filter(|&s| s <= 30)?;
    let v: i128 = format!("{int}{frac}").parse().ok()?;
    Some((if neg { -v } else { v }, scale))
}
