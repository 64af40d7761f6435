//! `Col`: a typed column that operators read at *positions* — the base table's
//! rows, or rows picked by a row-id vector (late materialization: after a
//! selection or a join, a column is read through the surviving row ids instead
//! of being copied).

use std::cmp::Ordering;

use maestro_storage::column::{Column, DecimalColumn, DictColumn, StrHeap, Table};

use crate::error::ExecError;

/// The values of a column, borrowed.
#[derive(Clone, Copy, Debug)]
pub enum Data<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
    /// Fixed-point values in units of `10^-scale`.
    Decimal {
        values: &'a [i64],
        scale: u8,
    },
    /// Days since 1970-01-01.
    Date(&'a [i32]),
    /// Dictionary codes; they order like the strings.
    Dict(&'a DictColumn),
    /// Free text.
    Heap(&'a StrHeap),
    /// Wide fixed-point values (aggregate sums) in units of `10^-scale`.
    Wide {
        values: &'a [i128],
        scale: u8,
    },
}

impl Data<'_> {
    pub fn len(&self) -> usize {
        match self {
            Data::I32(v) | Data::Date(v) => v.len(),
            Data::I64(v) | Data::Decimal { values: v, .. } => v.len(),
            Data::Dict(d) => d.len(),
            Data::Heap(h) => h.len(),
            Data::Wide { values, .. } => values.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A short name for error messages.
    pub fn type_name(&self) -> String {
        match self {
            Data::I32(_) => "int32".into(),
            Data::I64(_) => "int64".into(),
            Data::Decimal { scale, .. } => format!("decimal({scale})"),
            Data::Date(_) => "date".into(),
            Data::Dict(_) => "str (dictionary)".into(),
            Data::Heap(_) => "str (heap)".into(),
            Data::Wide { scale, .. } => format!("wide decimal({scale})"),
        }
    }
}

/// A column read at positions `0..len()`: position `p` is row `rows[p]` of the
/// data, or row `p` when there is no row-id vector.
///
/// A column may have a *tail* (a table's delta: rows appended after its
/// main part): rows `data.len()..` are the tail's rows `0..`. The tail has
/// the data's type (dictionary columns: the same dictionary, so codes
/// compare). Operators read such a column through the accessors below. The
/// positions below [`Col::main_positions`] read only the main: without row
/// ids those are the main's rows, with ascending row ids
/// ([`Col::at_ascending`]) the positions before the first tail row; kernels
/// handed positions below it read the main's slice as for a column without
/// a tail, and locate each value's part only past it.
#[derive(Clone, Copy, Debug)]
pub struct Col<'a> {
    data: Data<'a>,
    tail: Option<Data<'a>>,
    rows: Option<&'a [u32]>,
    /// With a tail: positions `< main_positions` read the main's rows (0
    /// when not known: row ids in no known order).
    main_positions: u32,
}

impl<'a> Col<'a> {
    pub fn new(data: Data<'a>) -> Col<'a> {
        Col {
            data,
            tail: None,
            rows: None,
            main_positions: 0,
        }
    }

    /// This column followed by the rows of `tail` (same type; a dictionary
    /// tail must share this column's dictionary). Panics otherwise: the two
    /// parts come from one table's main and delta.
    pub fn with_tail(self, tail: Col<'a>) -> Col<'a> {
        let same = match (self.data, tail.data) {
            (Data::Dict(a), Data::Dict(b)) => a.shares_dictionary(b),
            (Data::Decimal { scale: a, .. }, Data::Decimal { scale: b, .. }) => a == b,
            (a, b) => std::mem::discriminant(&a) == std::mem::discriminant(&b),
        };
        assert!(
            same && tail.rows.is_none() && tail.tail.is_none() && self.tail.is_none(),
            "a tail of another type or shape: {:?} after {:?}",
            tail.data.type_name(),
            self.data.type_name()
        );
        Col {
            tail: Some(tail.data),
            main_positions: match self.rows {
                None => self.data.len() as u32,
                Some(_) => 0,
            },
            ..self
        }
    }

    /// The tail's values, if the column has one.
    pub fn tail(&self) -> Option<Data<'a>> {
        self.tail
    }

    /// Column `name` of `table`.
    pub fn of(table: &'a Table, name: &str) -> Result<Col<'a>, ExecError> {
        Ok(Col::from_column(table.column(name)?))
    }

    pub fn from_column(column: &'a Column) -> Col<'a> {
        Col::new(match column {
            Column::Int32(v) => Data::I32(v),
            Column::Int64(v) => Data::I64(v),
            Column::Decimal(c) => Data::Decimal {
                values: c.values(),
                scale: c.scale(),
            },
            Column::Date(v) => Data::Date(v),
            Column::Str(d) => Data::Dict(d),
            Column::StrHeap(h) => Data::Heap(h),
        })
    }

    pub fn i32(values: &'a [i32]) -> Col<'a> {
        Col::new(Data::I32(values))
    }

    pub fn i64(values: &'a [i64]) -> Col<'a> {
        Col::new(Data::I64(values))
    }

    /// Days since 1970-01-01.
    pub fn date(days: &'a [i32]) -> Col<'a> {
        Col::new(Data::Date(days))
    }

    pub fn decimal(column: &'a DecimalColumn) -> Col<'a> {
        Col::decimal_raw(column.values(), column.scale())
    }

    /// Raw fixed-point values (e.g. a projection's output) at `scale`.
    pub fn decimal_raw(values: &'a [i64], scale: u8) -> Col<'a> {
        Col::new(Data::Decimal { values, scale })
    }

    pub fn dict(column: &'a DictColumn) -> Col<'a> {
        Col::new(Data::Dict(column))
    }

    pub fn heap(heap: &'a StrHeap) -> Col<'a> {
        Col::new(Data::Heap(heap))
    }

    pub fn wide(values: &'a [i128], scale: u8) -> Col<'a> {
        Col::new(Data::Wide { values, scale })
    }

    /// This column read through `rows`: position `p` is row `rows[p]`. Replaces
    /// any row-id vector already set (compose vectors with
    /// [`crate::gather_positions`] first).
    pub fn at(self, rows: &'a [u32]) -> Col<'a> {
        Col {
            rows: Some(rows),
            main_positions: 0,
            ..self
        }
    }

    /// [`Self::at`] with `rows` known to be ascending (a filter's output,
    /// a delta's live rows): a column with a tail then knows which
    /// positions read only its main. Ascending is the caller's promise;
    /// debug builds check it.
    pub fn at_ascending(self, rows: &'a [u32]) -> Col<'a> {
        debug_assert!(rows.is_sorted(), "row ids promised ascending are not");
        let main_len = self.data.len();
        Col {
            rows: Some(rows),
            main_positions: rows.partition_point(|&r| (r as usize) < main_len) as u32,
            ..self
        }
    }

    /// With a tail: the positions below this one read only the main
    /// (0 when the row ids' order is not known). Without a tail: every
    /// position reads the main, and this is meaningless.
    pub fn main_positions(&self) -> u32 {
        self.main_positions
    }

    pub fn data(&self) -> Data<'a> {
        self.data
    }

    pub fn rows(&self) -> Option<&'a [u32]> {
        self.rows
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.rows.map_or_else(
            || self.data.len() + self.tail.map_or(0, |t| t.len()),
            <[u32]>::len,
        )
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fractional digits of the values (0 for integers, dates, codes, strings).
    pub fn scale(&self) -> u8 {
        match self.data {
            Data::Decimal { scale, .. } | Data::Wide { scale, .. } => scale,
            _ => 0,
        }
    }

    /// The row read at position `p` (past `data().len()`: a tail row).
    #[inline]
    pub fn row(&self, p: u32) -> usize {
        match self.rows {
            Some(r) => r[p as usize] as usize,
            None => p as usize,
        }
    }

    /// The part holding position `p` and the row in it.
    #[inline]
    fn locate(&self, p: u32) -> (Data<'a>, usize) {
        let r = self.row(p);
        match self.tail {
            Some(t) if r >= self.data.len() => (t, r - self.data.len()),
            _ => (self.data, r),
        }
    }

    /// Whether the values are `i64`-representable numbers (integers, decimals,
    /// dates, dictionary codes).
    pub fn is_narrow_numeric(&self) -> bool {
        !matches!(self.data, Data::Heap(_) | Data::Wide { .. })
    }

    /// The number at position `p` (codes for dictionary strings), or `None` for
    /// heap strings.
    pub fn i128_at(&self, p: u32) -> Option<i128> {
        let (data, r) = self.locate(p);
        Some(match data {
            Data::I32(v) | Data::Date(v) => i128::from(v[r]),
            Data::I64(v) | Data::Decimal { values: v, .. } => i128::from(v[r]),
            Data::Dict(d) => i128::from(d.codes()[r]),
            Data::Wide { values, .. } => values[r],
            Data::Heap(_) => return None,
        })
    }

    /// The string at position `p` (dictionary or heap), or `None` for numbers.
    pub fn str_at(&self, p: u32) -> Option<&'a str> {
        let (data, r) = self.locate(p);
        match data {
            Data::Dict(d) => Some(d.get(r)),
            Data::Heap(h) => Some(h.get(r)),
            _ => None,
        }
    }

    /// Compares the values at two positions (numbers numerically, dictionary
    /// codes like their strings, heap strings bytewise).
    pub fn cmp_at(&self, a: u32, b: u32) -> Ordering {
        if self.tail.is_some() {
            return match self.data {
                // `str` orders bytewise, as the heap comparison below.
                Data::Heap(_) => self.str_at(a).cmp(&self.str_at(b)),
                _ => self.i128_at(a).cmp(&self.i128_at(b)),
            };
        }
        let (ra, rb) = (self.row(a), self.row(b));
        match self.data {
            Data::I32(v) | Data::Date(v) => v[ra].cmp(&v[rb]),
            Data::I64(v) | Data::Decimal { values: v, .. } => v[ra].cmp(&v[rb]),
            Data::Dict(d) => d.codes()[ra].cmp(&d.codes()[rb]),
            Data::Heap(h) => h.get_bytes(ra).cmp(h.get_bytes(rb)),
            Data::Wide { values, .. } => values[ra].cmp(&values[rb]),
        }
    }

    /// Appends the values at `pos` as `i64` (narrow numeric columns only: a
    /// caller checks [`Self::is_narrow_numeric`] when it builds its plan).
    pub(crate) fn gather_i64(&self, pos: &[u32], out: &mut Vec<i64>) {
        if self.tail.is_some() && !self.reads_main_only(pos) {
            match self.narrow_parts() {
                Some(NarrowParts::I32(v)) => gather_parts(v, self.rows, pos, out),
                Some(NarrowParts::I64(v)) => gather_parts(v, self.rows, pos, out),
                Some(NarrowParts::Codes(v)) => gather_parts(v, self.rows, pos, out),
                None => unreachable!("plans check that only narrow numeric columns are gathered"),
            }
            return;
        }
        match self.data {
            Data::I32(v) | Data::Date(v) => gather(v, self.rows, pos, out),
            Data::I64(v) | Data::Decimal { values: v, .. } => gather(v, self.rows, pos, out),
            Data::Dict(d) => gather(d.codes(), self.rows, pos, out),
            Data::Heap(_) | Data::Wide { .. } => {
                unreachable!("plans check that only narrow numeric columns are gathered")
            }
        }
    }

    /// Whether every position of `pos` reads the main (one pass for the
    /// largest position: far cheaper than the gather it spares a part test
    /// per value).
    #[inline]
    fn reads_main_only(&self, pos: &[u32]) -> bool {
        self.main_positions > 0
            && pos
                .iter()
                .copied()
                .max()
                .is_none_or(|m| m < self.main_positions)
    }

    /// A narrow numeric column with a tail as its two typed slices (`None`
    /// without a tail, or for other types).
    pub(crate) fn narrow_parts(&self) -> Option<NarrowParts<'a>> {
        Some(match (self.data, self.tail?) {
            (Data::I32(main), Data::I32(tail)) | (Data::Date(main), Data::Date(tail)) => {
                NarrowParts::I32(Parts { main, tail })
            }
            (Data::I64(main), Data::I64(tail))
            | (Data::Decimal { values: main, .. }, Data::Decimal { values: tail, .. }) => {
                NarrowParts::I64(Parts { main, tail })
            }
            (Data::Dict(main), Data::Dict(tail)) => NarrowParts::Codes(Parts {
                main: main.codes(),
                tail: tail.codes(),
            }),
            _ => return None,
        })
    }

    /// An error unless the column is narrow numeric.
    pub(crate) fn expect_narrow(&self, context: &str) -> Result<(), ExecError> {
        if self.is_narrow_numeric() {
            return Ok(());
        }
        Err(ExecError::Type {
            context: context.to_string(),
            expected: "a number, date or dictionary string",
            found: self.data.type_name(),
        })
    }
}

/// A column's values in two parts, main then tail, indexed as one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parts<'a, T> {
    pub main: &'a [T],
    pub tail: &'a [T],
}

impl<T: Copy> Parts<'_, T> {
    /// Row `r` (past the main's end: the tail's row `r - main.len()`).
    #[inline]
    pub fn get(&self, r: usize) -> T {
        match self.main.get(r) {
            Some(&v) => v,
            None => self.tail[r - self.main.len()],
        }
    }
}

/// The typed parts of a narrow numeric column with a tail.
#[derive(Clone, Copy, Debug)]
pub(crate) enum NarrowParts<'a> {
    /// Int32 and dates.
    I32(Parts<'a, i32>),
    /// Int64 and decimals.
    I64(Parts<'a, i64>),
    /// Dictionary codes.
    Codes(Parts<'a, u32>),
}

#[inline]
fn gather_parts<T: Copy + Into<i64>>(
    vals: Parts<'_, T>,
    rows: Option<&[u32]>,
    pos: &[u32],
    out: &mut Vec<i64>,
) {
    match rows {
        None => out.extend(pos.iter().map(|&p| vals.get(p as usize).into())),
        Some(r) => out.extend(pos.iter().map(|&p| vals.get(r[p as usize] as usize).into())),
    }
}

#[inline]
fn gather<T: Copy + Into<i64>>(vals: &[T], rows: Option<&[u32]>, pos: &[u32], out: &mut Vec<i64>) {
    match rows {
        None => out.extend(pos.iter().map(|&p| vals[p as usize].into())),
        Some(r) => out.extend(pos.iter().map(|&p| vals[r[p as usize] as usize].into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_read_through_row_ids() {
        let dict = DictColumn::from_strs(["b", "a", "c"]);
        let ids = [2u32, 0];
        let c = Col::dict(&dict).at(&ids);
        assert_eq!(c.len(), 2);
        assert_eq!(c.str_at(0), Some("c"));
        assert_eq!(c.i128_at(1), Some(1));
        assert_eq!(c.cmp_at(0, 1), Ordering::Greater);
        let mut out = Vec::new();
        c.gather_i64(&[1, 0], &mut out);
        assert_eq!(out, [1, 2]);
        let heap = StrHeap::from_strs(["x"]);
        assert!(Col::heap(&heap).expect_narrow("t").is_err());
        assert_eq!(Col::decimal_raw(&[5], 2).scale(), 2);
    }
}
