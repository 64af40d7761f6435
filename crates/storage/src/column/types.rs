//! Column types (`DataType`) and single values (`Value`).

use std::fmt;

use super::date::Date;
use super::decimal::Decimal;

/// The type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    Int32,
    Int64,
    /// Fixed-point `i64` with `scale` fractional digits.
    Decimal {
        scale: u8,
    },
    /// Days since 1970-01-01 as `i32`.
    Date,
    /// Dictionary-encoded string (global sorted dictionary, `u32` codes).
    Str,
    /// Free text in one contiguous heap (no dictionary).
    StrHeap,
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Int32 => f.write_str("int32"),
            DataType::Int64 => f.write_str("int64"),
            DataType::Decimal { scale } => write!(f, "decimal({scale})"),
            DataType::Date => f.write_str("date"),
            DataType::Str => f.write_str("str"),
            DataType::StrHeap => f.write_str("str-heap"),
        }
    }
}

/// One value of a column, borrowed from it (for printing, tests, row access —
/// operators read the typed slices instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Int32(i32),
    Int64(i64),
    Decimal(Decimal),
    Date(Date),
    Str(&'a str),
}

impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int32(v) => write!(f, "{v}"),
            Value::Int64(v) => write!(f, "{v}"),
            Value::Decimal(v) => write!(f, "{v}"),
            Value::Date(v) => write!(f, "{v}"),
            Value::Str(v) => f.write_str(v),
        }
    }
}
