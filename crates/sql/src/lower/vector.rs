//! The data between operators: a [`Relation`] is a number of positions and,
//! per plan column, a [`Vector`] with a value at each position. Base-table
//! columns stay in the column store and are read through a row-id vector
//! (late materialization, as the hand-written TPC-H plans do); computed
//! columns (projections, aggregates) own their values.

use std::sync::Arc;

use maestro_execution::{Col, ExecContext, gather_positions};
use maestro_storage::column::Column;

use crate::plan::ColumnId;

/// One value, for the row-at-a-time evaluator and the output.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar {
    /// Only the result of SUM/AVG/MIN/MAX over no rows.
    Null,
    /// `value / 10^scale`, exact.
    Num {
        value: i128,
        scale: u8,
    },
    Double(f64),
    /// Days since 1970-01-01.
    Date(i32),
    Str(String),
    Bool(bool),
}

/// Row ids into a base table, shared by the columns of that table.
#[derive(Clone, Debug)]
pub(crate) struct RowIds {
    ids: Arc<Vec<u32>>,
    /// Known to ascend (a filter's output, a delta's live rows, such ids
    /// taken at ascending positions): a column with a tail then reads the
    /// positions before its first tail row from the main's slice alone
    /// (`Col::at_ascending`). Only tracked for columns with a tail.
    ascending: bool,
}

impl RowIds {
    /// Ids in no known order.
    #[cfg(test)]
    pub fn unordered(ids: Arc<Vec<u32>>) -> RowIds {
        RowIds {
            ids,
            ascending: false,
        }
    }

    /// Ids the caller knows ascend.
    pub fn ascending(ids: Arc<Vec<u32>>) -> RowIds {
        RowIds {
            ids,
            ascending: true,
        }
    }

    fn same(&self, other: &RowIds) -> bool {
        Arc::ptr_eq(&self.ids, &other.ids)
    }
}

impl std::ops::Deref for RowIds {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        &self.ids
    }
}

/// How a stored column's integers encode its values (`store::ColumnType`'s
/// encoded types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// BOOLEAN: 0 is false, 1 is true (so integer order is SQL's order).
    Bool,
    /// REAL and DOUBLE PRECISION: the double's ordered bits
    /// ([`crate::types::ordered_bits`]; integer order is IEEE total order).
    Double,
}

impl Encoding {
    /// The value stored as `raw`.
    pub fn decode(self, raw: i64) -> Scalar {
        match self {
            Encoding::Bool => Scalar::Bool(raw != 0),
            Encoding::Double => Scalar::Double(crate::types::from_ordered_bits(raw)),
        }
    }
}

/// A column's values at the positions of a relation.
#[derive(Clone, Debug)]
pub(crate) enum Vector<'d> {
    /// A base table's column, at `rows[p]` (or at `p` without row ids);
    /// ids past the column's end read `tail` (the table's delta rows).
    Base {
        column: &'d Column,
        tail: Option<&'d Column>,
        rows: Option<RowIds>,
    },
    Int(Vec<i64>),
    Dec {
        values: Vec<i64>,
        scale: u8,
    },
    Dates(Vec<i32>),
    /// Exact 128-bit values (sums).
    Wide {
        values: Vec<i128>,
        scale: u8,
    },
    Double(Vec<f64>),
    /// A stored column whose integers encode its values (`raw`, a base
    /// column): read lazily, so a filter compares the stored integers
    /// (`compile::encoded_cmp`) and only the rows it keeps are ever decoded.
    Encoded {
        raw: Box<Vector<'d>>,
        encoding: Encoding,
    },
    /// Anything else, one value per position (strings, NULLs, …).
    Values(Vec<Scalar>),
    /// `values` where `nulls` is false, NULL where it is true (the padded
    /// side of a LEFT JOIN: `values` holds some row's value there).
    Masked {
        values: Box<Vector<'d>>,
        nulls: Arc<Vec<bool>>,
    },
}

impl<'d> Vector<'d> {
    /// The column as the operators read it, if it has that form (numbers,
    /// dates, strings of the column store, wide sums).
    pub fn col(&self) -> Option<Col<'_>> {
        Some(match self {
            Vector::Base { column, tail, rows } => {
                let mut c = Col::from_column(column);
                if let Some(t) = tail {
                    c = c.with_tail(Col::from_column(t));
                }
                match rows {
                    Some(r) if r.ascending && tail.is_some() => c.at_ascending(r),
                    Some(r) => c.at(r),
                    None => c,
                }
            }
            Vector::Int(v) => Col::i64(v),
            Vector::Dec { values, scale } => Col::decimal_raw(values, *scale),
            Vector::Dates(v) => Col::date(v),
            Vector::Wide { values, scale } => Col::wide(values, *scale),
            Vector::Double(_)
            | Vector::Encoded { .. }
            | Vector::Values(_)
            | Vector::Masked { .. } => return None,
        })
    }

    /// The value at position `p`.
    pub fn value_at(&self, p: usize) -> Scalar {
        match self {
            Vector::Base { column, tail, rows } => {
                let mut r = rows.as_ref().map_or(p, |r| r[p] as usize);
                let mut column = *column;
                if let Some(t) = tail.filter(|_| r >= column.len()) {
                    r -= column.len();
                    column = t;
                }
                match column {
                    Column::Int32(v) => num(v[r].into(), 0),
                    Column::Int64(v) => num(v[r].into(), 0),
                    Column::Decimal(c) => num(c.values()[r].into(), c.scale()),
                    Column::Date(v) => Scalar::Date(v[r]),
                    Column::Str(d) => Scalar::Str(d.get(r).to_string()),
                    Column::StrHeap(h) => Scalar::Str(h.get(r).to_string()),
                }
            }
            Vector::Int(v) => num(v[p].into(), 0),
            Vector::Dec { values, scale } => num(values[p].into(), *scale),
            Vector::Dates(v) => Scalar::Date(v[p]),
            Vector::Wide { values, scale } => num(values[p], *scale),
            Vector::Double(v) => Scalar::Double(v[p]),
            Vector::Encoded { raw, encoding } => match raw.value_at(p) {
                Scalar::Num { value, scale: 0 } => encoding.decode(value as i64),
                other => unreachable!("an encoded column stores integers, not {other:?}"),
            },
            Vector::Values(v) => v[p].clone(),
            Vector::Masked { values, nulls } => {
                if nulls[p] {
                    Scalar::Null
                } else {
                    values.value_at(p)
                }
            }
        }
    }

    /// The stored integers of an encoded column, as the operators read
    /// them, and their encoding.
    pub fn encoded(&self) -> Option<(Col<'_>, Encoding)> {
        match self {
            Vector::Encoded { raw, encoding } => Some((raw.col()?, *encoding)),
            _ => None,
        }
    }

    /// Whether this is a base column of dictionary strings (whose codes
    /// order and compare like the strings).
    pub fn is_dict(&self) -> bool {
        matches!(
            self,
            Vector::Base {
                column: Column::Str(_),
                ..
            }
        )
    }

    /// The column as the operators read it, unwrapped from its NULL mask,
    /// and that mask if it has one — not for dictionary strings, whose codes
    /// compare only within one dictionary (comparisons across two columns,
    /// or with NULLs, read them this way).
    pub fn col_with_nulls(&self) -> Option<(Col<'_>, Option<&Arc<Vec<bool>>>)> {
        let (values, nulls) = match self {
            Vector::Masked { values, nulls } => (&**values, Some(nulls)),
            v => (v, None),
        };
        if values.is_dict() {
            return None;
        }
        Some((values.col()?, nulls))
    }
}

fn num(value: i128, scale: u8) -> Scalar {
    Scalar::Num { value, scale }
}

/// Positions and the vectors of the plan columns a node outputs.
#[derive(Clone, Debug)]
pub(crate) struct Relation<'d> {
    pub len: usize,
    pub cols: Vec<(ColumnId, Vector<'d>)>,
}

impl<'d> Relation<'d> {
    pub fn get(&self, id: ColumnId) -> Option<&Vector<'d>> {
        self.cols.iter().find(|c| c.0 == id).map(|c| &c.1)
    }

    /// The relation at `pos` (positions of this one, any order, repeats
    /// allowed): base columns compose their row ids (shared by the columns of
    /// one table), owned values are gathered.
    pub fn take(&self, ctx: &ExecContext, pos: &[u32]) -> Relation<'d> {
        // (row ids before, row ids after): one composition per base table.
        let mut composed: Vec<(Option<RowIds>, RowIds)> = Vec::new();
        let cols = self
            .cols
            .iter()
            .map(|(id, v)| (*id, take_vector(v, ctx, pos, &mut composed)))
            .collect();
        Relation {
            len: pos.len(),
            cols,
        }
    }
}

/// `v` at `pos`; base columns reuse the row ids composed for another column
/// of the same table (`composed`).
fn take_vector<'d>(
    v: &Vector<'d>,
    ctx: &ExecContext,
    pos: &[u32],
    composed: &mut Vec<(Option<RowIds>, RowIds)>,
) -> Vector<'d> {
    match v {
        Vector::Base { column, tail, rows } => {
            let same = |k: &Option<RowIds>| match (k, rows) {
                (None, None) => true,
                (Some(a), Some(b)) => a.same(b),
                _ => false,
            };
            let new_rows = match composed.iter().find(|(k, _)| same(k)) {
                Some((_, r)) => r.clone(),
                None => {
                    let ids = Arc::new(match rows {
                        Some(r) => gather_positions(ctx, "sql_take", r, pos),
                        None => pos.to_vec(),
                    });
                    // Order matters only to a column with a tail: the check
                    // (one pass over `pos`) is skipped for the others.
                    let ascending = tail.is_some()
                        && rows.as_ref().is_none_or(|r| r.ascending)
                        && pos.is_sorted();
                    let r = RowIds { ids, ascending };
                    composed.push((rows.clone(), r.clone()));
                    r
                }
            };
            Vector::Base {
                column,
                tail: *tail,
                rows: Some(new_rows),
            }
        }
        Vector::Int(x) => Vector::Int(gather(x, pos)),
        Vector::Dec { values, scale } => Vector::Dec {
            values: gather(values, pos),
            scale: *scale,
        },
        Vector::Dates(x) => Vector::Dates(gather(x, pos)),
        Vector::Wide { values, scale } => Vector::Wide {
            values: gather(values, pos),
            scale: *scale,
        },
        Vector::Double(x) => Vector::Double(gather(x, pos)),
        Vector::Encoded { raw, encoding } => Vector::Encoded {
            raw: Box::new(take_vector(raw, ctx, pos, composed)),
            encoding: *encoding,
        },
        Vector::Values(x) => Vector::Values(pos.iter().map(|&p| x[p as usize].clone()).collect()),
        Vector::Masked { values, nulls } => Vector::Masked {
            values: Box::new(take_vector(values, ctx, pos, composed)),
            nulls: Arc::new(gather(nulls, pos)),
        },
    }
}

fn gather<T: Copy>(x: &[T], pos: &[u32]) -> Vec<T> {
    pos.iter().map(|&p| x[p as usize]).collect()
}
