//! `Column`: one typed vector per variant — what scans read.

use super::date::Date;
use super::decimal::DecimalColumn;
use super::dict::DictColumn;
use super::heap::StrHeap;
use super::types::{DataType, Value};

/// A column of one type. The `as_*` accessors return the plain slices operators
/// scan, or `None` for another type ([`super::Table`]'s getters turn that into a
/// [`super::ColumnError::TypeMismatch`] naming the column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Decimal(DecimalColumn),
    /// Days since 1970-01-01.
    Date(Vec<i32>),
    Str(DictColumn),
    StrHeap(StrHeap),
}

impl Column {
    pub fn data_type(&self) -> DataType {
        match self {
            Column::Int32(_) => DataType::Int32,
            Column::Int64(_) => DataType::Int64,
            Column::Decimal(c) => DataType::Decimal { scale: c.scale() },
            Column::Date(_) => DataType::Date,
            Column::Str(_) => DataType::Str,
            Column::StrHeap(_) => DataType::StrHeap,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Column::Int32(v) => v.len(),
            Column::Int64(v) => v.len(),
            Column::Decimal(c) => c.len(),
            Column::Date(v) => v.len(),
            Column::Str(c) => c.len(),
            Column::StrHeap(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn as_i32(&self) -> Option<&[i32]> {
        match self {
            Column::Int32(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<&[i64]> {
        match self {
            Column::Int64(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_decimal(&self) -> Option<&DecimalColumn> {
        match self {
            Column::Decimal(c) => Some(c),
            _ => None,
        }
    }

    /// Days since 1970-01-01.
    pub fn as_date(&self) -> Option<&[i32]> {
        match self {
            Column::Date(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_dict(&self) -> Option<&DictColumn> {
        match self {
            Column::Str(c) => Some(c),
            _ => None,
        }
    }

    pub fn as_heap(&self) -> Option<&StrHeap> {
        match self {
            Column::StrHeap(h) => Some(h),
            _ => None,
        }
    }

    /// The string at `row` of either string representation.
    pub fn get_str(&self, row: usize) -> Option<&str> {
        match self {
            Column::Str(c) => Some(c.get(row)),
            Column::StrHeap(h) => Some(h.get(row)),
            _ => None,
        }
    }

    /// The value at `row`. Panics if `row >= len()`, like slice indexing.
    pub fn value(&self, row: usize) -> Value<'_> {
        match self {
            Column::Int32(v) => Value::Int32(v[row]),
            Column::Int64(v) => Value::Int64(v[row]),
            Column::Decimal(c) => Value::Decimal(c.get(row)),
            Column::Date(v) => Value::Date(Date(v[row])),
            Column::Str(c) => Value::Str(c.get(row)),
            Column::StrHeap(h) => Value::Str(h.get(row)),
        }
    }

    /// Allocated bytes (capacities, dictionaries included).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Column::Int32(v) => v.capacity() * size_of::<i32>(),
            Column::Int64(v) => v.capacity() * size_of::<i64>(),
            Column::Decimal(c) => c.heap_bytes(),
            Column::Date(v) => v.capacity() * size_of::<i32>(),
            Column::Str(c) => c.heap_bytes(),
            Column::StrHeap(h) => h.heap_bytes(),
        }
    }
}
