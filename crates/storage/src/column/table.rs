//! `Table`: a schema (names and types), one column per field and a row count
//! (and the columns' statistics once computed, `stats.rs`).

use std::fmt;
use std::sync::{Arc, OnceLock};

use super::column::Column;
use super::decimal::DecimalColumn;
use super::dict::DictColumn;
use super::error::ColumnError;
use super::heap::StrHeap;
use super::index::SortedIndex;
use super::stats::ColumnStats;
use super::types::{DataType, Value};

/// A named, typed column slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub data_type: DataType,
}

/// The fields of a table, in column order. Shared by reference between a
/// table and the versions built from it ([`Table::with_columns`]).
#[derive(Debug, Clone, Default)]
pub struct Schema {
    fields: Arc<[Field]>,
}

impl PartialEq for Schema {
    fn eq(&self, other: &Schema) -> bool {
        Arc::ptr_eq(&self.fields, &other.fields) || self.fields == other.fields
    }
}

impl Eq for Schema {}

impl Schema {
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The fields as shared (tests: whether two schemas are one).
    #[cfg(test)]
    pub(crate) fn shared_fields(&self) -> Arc<[Field]> {
        Arc::clone(&self.fields)
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The position of the column called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| f.name.as_str())
    }
}

/// An immutable table of equally long columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    name: String,
    schema: Schema,
    columns: Vec<Column>,
    rows: usize,
    /// Per column, what is derived from it when first asked for.
    derived: Cache,
}

/// What is derived from one column when first asked for.
#[derive(Clone, Default)]
struct Derived {
    stats: OnceLock<Arc<ColumnStats>>,
    index: OnceLock<Arc<SortedIndex>>,
}

/// Per column, its statistics and sorted index, computed once: not part of
/// a table's value (two tables with equal columns are equal whether or not
/// either computed them). One vector for both keeps `Table` small (it sits
/// by value in enums such as TPC-H's refresh sets).
#[derive(Clone)]
struct Cache(Vec<Derived>);

impl Cache {
    fn new(columns: usize) -> Cache {
        Cache((0..columns).map(|_| Derived::default()).collect())
    }
}

impl PartialEq for Cache {
    fn eq(&self, _: &Cache) -> bool {
        true
    }
}

impl Eq for Cache {}

impl fmt::Debug for Cache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stats = self.0.iter().filter(|d| d.stats.get().is_some()).count();
        let indexes = self.0.iter().filter(|d| d.index.get().is_some()).count();
        write!(
            f,
            "Cache({stats} statistics, {indexes} indexes of {} columns)",
            self.0.len()
        )
    }
}

impl Table {
    /// A table of the named columns (the schema is taken from them). Errors on
    /// duplicate names or columns of different lengths.
    pub fn new(
        name: impl Into<String>,
        columns: impl IntoIterator<Item = (impl Into<String>, Column)>,
    ) -> Result<Table, ColumnError> {
        let name = name.into();
        let mut fields = Vec::new();
        let mut cols = Vec::new();
        for (col_name, col) in columns {
            let col_name = col_name.into();
            if fields.iter().any(|f: &Field| f.name == col_name) {
                return Err(ColumnError::DuplicateColumn {
                    table: name,
                    column: col_name,
                });
            }
            let rows = cols.first().map_or(col.len(), Column::len);
            if col.len() != rows {
                return Err(ColumnError::LengthMismatch {
                    table: name,
                    column: col_name,
                    expected: rows,
                    found: col.len(),
                });
            }
            fields.push(Field {
                name: col_name,
                data_type: col.data_type(),
            });
            cols.push(col);
        }
        let rows = cols.first().map_or(0, Column::len);
        Ok(Table {
            name,
            schema: Schema {
                fields: fields.into(),
            },
            derived: Cache::new(cols.len()),
            columns: cols,
            rows,
        })
    }

    /// A table with this one's name and schema (shared, not rebuilt: its
    /// names are known distinct) made of `columns`, if they have its
    /// columns' types and one length; else the columns back.
    pub(crate) fn sharing_schema(&self, columns: Vec<Column>) -> Result<Table, Vec<Column>> {
        let rows = columns.first().map_or(0, Column::len);
        let fits = columns.len() == self.schema.len()
            && columns
                .iter()
                .zip(self.schema.fields())
                .all(|(c, f)| c.data_type() == f.data_type && c.len() == rows);
        if !fits {
            return Err(columns);
        }
        Ok(Table {
            name: self.name.clone(),
            schema: self.schema.clone(),
            derived: Cache::new(columns.len()),
            columns,
            rows,
        })
    }

    /// Like [`Table::new`], and checks the columns against a declared schema
    /// (same names in the same order with the same types).
    pub fn with_schema(
        name: impl Into<String>,
        schema: &[(&str, DataType)],
        columns: Vec<Column>,
    ) -> Result<Table, ColumnError> {
        let name = name.into();
        if let Some(&(missing, _)) = schema.get(columns.len()) {
            return Err(ColumnError::UnknownColumn {
                table: name,
                column: missing.to_string(),
            });
        }
        for (i, col) in columns.iter().enumerate() {
            let Some(&(col_name, expected)) = schema.get(i) else {
                return Err(ColumnError::UnknownColumn {
                    table: name,
                    column: format!("#{i} (beyond the schema)"),
                });
            };
            if col.data_type() != expected {
                return Err(ColumnError::TypeMismatch {
                    table: name,
                    column: col_name.to_string(),
                    expected,
                    found: col.data_type(),
                });
            }
        }
        Table::new(name, schema.iter().map(|&(n, _)| n).zip(columns))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn num_rows(&self) -> usize {
        self.rows
    }

    pub fn num_columns(&self) -> usize {
        self.columns.len()
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The position of column `name`, or [`ColumnError::UnknownColumn`].
    pub fn column_index(&self, name: &str) -> Result<usize, ColumnError> {
        self.schema
            .index_of(name)
            .ok_or_else(|| ColumnError::UnknownColumn {
                table: self.name.clone(),
                column: name.to_string(),
            })
    }

    pub fn column(&self, name: &str) -> Result<&Column, ColumnError> {
        Ok(&self.columns[self.column_index(name)?])
    }

    /// Column `i` in schema order. Panics if `i >= num_columns()`.
    pub fn column_at(&self, i: usize) -> &Column {
        &self.columns[i]
    }

    pub fn i32(&self, name: &str) -> Result<&[i32], ColumnError> {
        self.typed(name, DataType::Int32, Column::as_i32)
    }

    pub fn i64(&self, name: &str) -> Result<&[i64], ColumnError> {
        self.typed(name, DataType::Int64, Column::as_i64)
    }

    /// A decimal column of any scale (the error names scale 2, TPC-H's).
    pub fn decimal(&self, name: &str) -> Result<&DecimalColumn, ColumnError> {
        self.typed(name, DataType::Decimal { scale: 2 }, Column::as_decimal)
    }

    /// Days since 1970-01-01.
    pub fn date(&self, name: &str) -> Result<&[i32], ColumnError> {
        self.typed(name, DataType::Date, Column::as_date)
    }

    pub fn dict(&self, name: &str) -> Result<&DictColumn, ColumnError> {
        self.typed(name, DataType::Str, Column::as_dict)
    }

    pub fn heap(&self, name: &str) -> Result<&StrHeap, ColumnError> {
        self.typed(name, DataType::StrHeap, Column::as_heap)
    }

    /// Statistics of column `i` (row, NULL and distinct counts, range),
    /// computed in one pass over it the first time they are asked for and
    /// kept with this table version. Panics if `i >= num_columns()`.
    pub fn column_stats(&self, i: usize) -> Arc<ColumnStats> {
        self.derived.0[i]
            .stats
            .get_or_init(|| Arc::new(ColumnStats::of(&self.columns[i])))
            .clone()
    }

    /// Whether column `i`'s statistics have been computed on this version
    /// (a merge computes the new main's for the same columns, off the
    /// queries' path). Panics if `i >= num_columns()`.
    pub fn has_column_stats(&self, i: usize) -> bool {
        self.derived.0[i].stats.get().is_some()
    }

    /// Column `i`'s sorted index (positions by value), built the first
    /// time it is asked for and kept with this table version (a main never
    /// changes, so neither does its index). Panics if `i >= num_columns()`.
    pub fn sorted_index(&self, i: usize) -> Arc<SortedIndex> {
        self.derived.0[i]
            .index
            .get_or_init(|| Arc::new(SortedIndex::build(&self.columns[i])))
            .clone()
    }

    /// Whether column `i`'s sorted index has been built on this version.
    /// Panics if `i >= num_columns()`.
    pub fn has_sorted_index(&self, i: usize) -> bool {
        self.derived.0[i].index.get().is_some()
    }

    /// The values of row `row` in schema order. Panics if `row >= num_rows()`.
    pub fn row(&self, row: usize) -> Vec<Value<'_>> {
        self.columns.iter().map(|c| c.value(row)).collect()
    }

    /// Allocated bytes of all columns (capacities, dictionaries included).
    pub fn heap_bytes(&self) -> usize {
        self.columns.iter().map(Column::heap_bytes).sum()
    }

    fn typed<'t, T: ?Sized>(
        &'t self,
        name: &str,
        expected: DataType,
        get: impl Fn(&'t Column) -> Option<&'t T>,
    ) -> Result<&'t T, ColumnError> {
        let col = self.column(name)?;
        get(col).ok_or_else(|| ColumnError::TypeMismatch {
            table: self.name.clone(),
            column: name.to_string(),
            expected,
            found: col.data_type(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::{ColumnBuilder, Date, DictBuilder};

    #[test]
    fn column_stats_are_computed_once_per_table_version() {
        use crate::column::{Keep, ValueRange};
        let t = sample();
        assert!(!t.has_column_stats(0));
        let k = t.column_stats(0);
        assert!(t.has_column_stats(0));
        assert!(Arc::ptr_eq(&k, &t.column_stats(0)), "cached");
        assert_eq!((k.rows, k.distinct), (3, 3));
        assert_eq!(t.column_stats(4).distinct, 2);
        // The next version (rows 1 and 2 deleted) has its own statistics.
        let next = t.rebuild(Keep::Rows(&[0]), &t.empty_like()).unwrap();
        let k1 = next.column_stats(0);
        assert_eq!((k1.rows, k1.distinct), (1, 1));
        assert_eq!(k1.range, ValueRange::Numeric { min: 1.0, max: 1.0 });
        // The dictionary keeps "a", which no row uses any more.
        assert_eq!(next.column_stats(4).distinct, 1);
        assert_eq!(t, t.clone());
    }

    #[test]
    fn sorted_indexes_are_built_once_per_table_version() {
        use crate::column::{IndexKey, Keep};
        use std::ops::Bound::Included;
        let t = sample();
        assert!(!t.has_sorted_index(1));
        let ix = t.sorted_index(1);
        assert!(t.has_sorted_index(1));
        assert!(Arc::ptr_eq(&ix, &t.sorted_index(1)), "cached");
        let k = IndexKey::Num { value: 8, scale: 0 };
        let col = t.column_at(1);
        assert_eq!(ix.range(col, Included(&k), Included(&k)), Some(vec![1]));
        let next = t.rebuild(Keep::Rows(&[0, 2]), &t.empty_like()).unwrap();
        assert!(!next.has_sorted_index(1), "a new version builds its own");
        assert_eq!(next.sorted_index(1).len(), 2);
    }

    fn sample() -> Table {
        Table::new(
            "t",
            [
                ("k", Column::Int64(vec![1, 2, 3])),
                ("n", Column::Int32(vec![7, 8, 9])),
                (
                    "price",
                    Column::Decimal(DecimalColumn::new(2, vec![100, -5, 2116823]).unwrap()),
                ),
                ("d", Column::Date(vec![0, 8035, 10_561])),
                ("s", Column::Str(DictColumn::from_strs(["b", "a", "b"]))),
                ("c", Column::StrHeap(StrHeap::from_strs(["x", "", "zz"]))),
            ],
        )
        .unwrap()
    }

    #[test]
    fn typed_access_and_rows() {
        let t = sample();
        assert_eq!(t.num_rows(), 3);
        assert_eq!(t.num_columns(), 6);
        assert_eq!(t.i64("k").unwrap(), [1, 2, 3]);
        assert_eq!(t.i32("n").unwrap(), [7, 8, 9]);
        assert_eq!(t.decimal("price").unwrap().values(), [100, -5, 2116823]);
        assert_eq!(t.date("d").unwrap()[1], 8035);
        assert_eq!(t.dict("s").unwrap().codes(), [1, 0, 1]);
        assert_eq!(t.heap("c").unwrap().get(2), "zz");
        let row: Vec<String> = t.row(2).iter().map(|v| v.to_string()).collect();
        assert_eq!(row, ["3", "9", "21168.23", "1998-12-01", "b", "zz"]);
        assert_eq!(t.row(1)[3], Value::Date(Date(8035)));
        assert!(t.heap_bytes() >= 3 * (8 + 4 + 8 + 4 + 4) + 3);
        assert_eq!(
            t.schema().names().collect::<Vec<_>>(),
            ["k", "n", "price", "d", "s", "c"]
        );
    }

    #[test]
    fn errors_instead_of_panics() {
        let t = sample();
        assert_eq!(
            t.i64("nope"),
            Err(ColumnError::UnknownColumn {
                table: "t".into(),
                column: "nope".into()
            })
        );
        assert_eq!(
            t.i64("n"),
            Err(ColumnError::TypeMismatch {
                table: "t".into(),
                column: "n".into(),
                expected: DataType::Int64,
                found: DataType::Int32
            })
        );
        assert!(matches!(t.dict("c"), Err(ColumnError::TypeMismatch { .. })));
        assert!(matches!(t.heap("s"), Err(ColumnError::TypeMismatch { .. })));
        let dup = Table::new(
            "t",
            [("a", Column::Int32(vec![])), ("a", Column::Int32(vec![]))],
        );
        assert!(matches!(dup, Err(ColumnError::DuplicateColumn { .. })));
        let ragged = Table::new(
            "t",
            [("a", Column::Int32(vec![1])), ("b", Column::Int32(vec![]))],
        );
        assert!(matches!(
            ragged,
            Err(ColumnError::LengthMismatch {
                expected: 1,
                found: 0,
                ..
            })
        ));
        let schema = [("a", DataType::Int32), ("b", DataType::Date)];
        let wrong = Table::with_schema(
            "t",
            &schema,
            vec![Column::Int32(vec![]), Column::Int32(vec![])],
        );
        assert!(matches!(wrong, Err(ColumnError::TypeMismatch { .. })));
        let short = Table::with_schema("t", &schema, vec![Column::Int32(vec![])]);
        assert!(matches!(short, Err(ColumnError::UnknownColumn { .. })));
        let mixed = ColumnBuilder::concat(
            DataType::Int32,
            vec![
                ColumnBuilder::Int32(vec![1]),
                ColumnBuilder::Str(DictBuilder::new()),
            ],
        );
        assert!(matches!(mixed, Err(ColumnError::MixedParts { .. })));
    }

    #[test]
    fn builder_parts_concatenate() {
        let mut a = DictBuilder::new();
        a.push("y");
        let mut b = DictBuilder::new();
        b.push("x");
        b.push("y");
        let col = ColumnBuilder::concat(
            DataType::Str,
            vec![ColumnBuilder::Str(a), ColumnBuilder::Str(b)],
        )
        .unwrap();
        assert_eq!(col.as_dict().unwrap().codes(), [1, 0, 1]);
        let col = ColumnBuilder::concat(
            DataType::Decimal { scale: 2 },
            vec![
                ColumnBuilder::Decimal {
                    scale: 2,
                    values: vec![1, 2],
                },
                ColumnBuilder::Decimal {
                    scale: 2,
                    values: vec![3],
                },
            ],
        )
        .unwrap();
        assert_eq!(col.as_decimal().unwrap().values(), [1, 2, 3]);
        assert_eq!(col.heap_bytes(), 24);
        let empty = ColumnBuilder::concat(DataType::StrHeap, vec![]).unwrap();
        assert!(empty.is_empty());
        assert_eq!(
            ColumnBuilder::new(DataType::Date).finish().unwrap(),
            Column::Date(vec![])
        );
    }
}
