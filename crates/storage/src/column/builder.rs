//! `ColumnBuilder`: a column under construction, typically one part of it
//! produced by one loader task; [`ColumnBuilder::concat`] joins the parts into a
//! [`Column`] of exact capacity (dictionaries are merged and sorted there).

use super::column::Column;
use super::decimal::DecimalColumn;
use super::dict::DictBuilder;
use super::error::ColumnError;
use super::heap::StrHeap;
use super::types::DataType;

#[derive(Debug, Clone)]
pub enum ColumnBuilder {
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Decimal { scale: u8, values: Vec<i64> },
    Date(Vec<i32>),
    Str(DictBuilder),
    StrHeap(StrHeap),
}

impl ColumnBuilder {
    /// An empty builder for a column of `data_type`.
    pub fn new(data_type: DataType) -> ColumnBuilder {
        match data_type {
            DataType::Int32 => ColumnBuilder::Int32(Vec::new()),
            DataType::Int64 => ColumnBuilder::Int64(Vec::new()),
            DataType::Decimal { scale } => ColumnBuilder::Decimal {
                scale,
                values: Vec::new(),
            },
            DataType::Date => ColumnBuilder::Date(Vec::new()),
            DataType::Str => ColumnBuilder::Str(DictBuilder::new()),
            DataType::StrHeap => ColumnBuilder::StrHeap(StrHeap::new()),
        }
    }

    pub fn data_type(&self) -> DataType {
        match self {
            ColumnBuilder::Int32(_) => DataType::Int32,
            ColumnBuilder::Int64(_) => DataType::Int64,
            ColumnBuilder::Decimal { scale, .. } => DataType::Decimal { scale: *scale },
            ColumnBuilder::Date(_) => DataType::Date,
            ColumnBuilder::Str(_) => DataType::Str,
            ColumnBuilder::StrHeap(_) => DataType::StrHeap,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            ColumnBuilder::Int32(v) => v.len(),
            ColumnBuilder::Int64(v) => v.len(),
            ColumnBuilder::Decimal { values, .. } => values.len(),
            ColumnBuilder::Date(v) => v.len(),
            ColumnBuilder::Str(b) => b.len(),
            ColumnBuilder::StrHeap(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Allocated bytes (capacities).
    pub fn heap_bytes(&self) -> usize {
        match self {
            ColumnBuilder::Int32(v) | ColumnBuilder::Date(v) => v.capacity() * 4,
            ColumnBuilder::Int64(v) | ColumnBuilder::Decimal { values: v, .. } => v.capacity() * 8,
            ColumnBuilder::Str(b) => b.heap_bytes(),
            ColumnBuilder::StrHeap(h) => h.heap_bytes(),
        }
    }

    pub fn finish(self) -> Result<Column, ColumnError> {
        ColumnBuilder::concat(self.data_type(), vec![self])
    }

    /// Concatenates parts (all of `data_type`) in order into one column of exact
    /// capacity, freeing each part once copied. No parts gives an empty column.
    pub fn concat(data_type: DataType, parts: Vec<ColumnBuilder>) -> Result<Column, ColumnError> {
        if let Some(p) = parts.iter().find(|p| p.data_type() != data_type) {
            return Err(ColumnError::MixedParts {
                expected: data_type,
                found: p.data_type(),
            });
        }
        let rows = parts.iter().map(ColumnBuilder::len).sum();
        Ok(match data_type {
            DataType::Int32 => Column::Int32(concat_vecs(rows, parts, |p| match p {
                ColumnBuilder::Int32(v) => v,
                _ => unreachable!("types checked above"),
            })),
            DataType::Int64 => Column::Int64(concat_vecs(rows, parts, |p| match p {
                ColumnBuilder::Int64(v) => v,
                _ => unreachable!("types checked above"),
            })),
            DataType::Decimal { scale } => {
                let values = concat_vecs(rows, parts, |p| match p {
                    ColumnBuilder::Decimal { values, .. } => values,
                    _ => unreachable!("types checked above"),
                });
                Column::Decimal(DecimalColumn::new(scale, values)?)
            }
            DataType::Date => Column::Date(concat_vecs(rows, parts, |p| match p {
                ColumnBuilder::Date(v) => v,
                _ => unreachable!("types checked above"),
            })),
            DataType::Str => Column::Str(DictBuilder::merge(
                parts
                    .into_iter()
                    .map(|p| match p {
                        ColumnBuilder::Str(b) => b,
                        _ => unreachable!("types checked above"),
                    })
                    .collect(),
            )),
            DataType::StrHeap => Column::StrHeap(StrHeap::concat(
                parts
                    .into_iter()
                    .map(|p| match p {
                        ColumnBuilder::StrHeap(h) => h,
                        _ => unreachable!("types checked above"),
                    })
                    .collect(),
            )),
        })
    }
}

fn concat_vecs<T: Copy>(
    rows: usize,
    parts: Vec<ColumnBuilder>,
    take: impl Fn(ColumnBuilder) -> Vec<T>,
) -> Vec<T> {
    let mut out = Vec::with_capacity(rows);
    for part in parts {
        out.extend_from_slice(&take(part));
    }
    out
}
