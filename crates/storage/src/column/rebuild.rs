//! Copy-on-write versions of columns and tables: the rows a change keeps,
//! followed by the rows it appends. A committed bulk change (TPC-H's refresh
//! functions RF1/RF2) produces a new version this way while readers keep the
//! old one; nothing here mutates a column in place.
//!
//! Dictionary columns stay globally sorted: when the appended rows bring
//! strings the dictionary lacks, the union becomes the new dictionary and the
//! kept codes are remapped through a table of the old dictionary's size.

use super::builder::ColumnBuilder;
use super::column::Column;
use super::date::Date;
use super::decimal::DecimalColumn;
use super::dict::DictColumn;
use super::error::ColumnError;
use super::heap::StrHeap;
use super::table::Table;
use super::types::Value;

/// Which rows of the old version survive.
#[derive(Debug, Clone, Copy)]
pub enum Keep<'a> {
    /// Every row, in order.
    All,
    /// The rows at these positions, strictly ascending.
    Rows(&'a [u32]),
}

impl Keep<'_> {
    fn count(&self, len: usize) -> usize {
        match self {
            Keep::All => len,
            Keep::Rows(rows) => rows.len(),
        }
    }

    fn check(&self, len: usize) -> Result<(), ColumnError> {
        let Keep::Rows(rows) = self else {
            return Ok(());
        };
        let ascending = rows.windows(2).all(|w| w[0] < w[1]);
        let in_range = rows.last().is_none_or(|&r| (r as usize) < len);
        if ascending && in_range {
            Ok(())
        } else {
            Err(ColumnError::InvalidRebuild {
                reason: format!(
                    "kept rows must be strictly ascending and below {len} (ascending: \
                     {ascending}, last: {:?})",
                    rows.last()
                ),
            })
        }
    }
}

fn take<T: Copy>(values: &[T], keep: Keep, appended: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(keep.count(values.len()) + appended.len());
    match keep {
        Keep::All => out.extend_from_slice(values),
        Keep::Rows(rows) => {
            for run in runs(rows) {
                out.extend_from_slice(&values[run]);
            }
        }
    }
    out.extend_from_slice(appended);
    out
}

/// `rows` (strictly ascending) as maximal ranges of consecutive rows: a
/// merge keeps most of a main's rows, so a few long runs, each copied at
/// once.
fn runs(rows: &[u32]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let start = *rows.get(i)? as usize;
        let mut end = start + 1;
        i += 1;
        while rows.get(i).is_some_and(|&r| r as usize == end) {
            end += 1;
            i += 1;
        }
        Some(start..end)
    })
}

fn take_heap(heap: &StrHeap, keep: Keep, appended: &StrHeap) -> StrHeap {
    match keep {
        // Sized once: a clone then an append copied the kept bytes twice
        // (the append outgrows the clone's exact capacity).
        Keep::All => StrHeap::joined(&[heap, appended]),
        Keep::Rows(rows) => {
            let bytes: usize = runs(rows).map(|run| heap.range_byte_len(run)).sum();
            let mut out =
                StrHeap::with_capacity(rows.len() + appended.len(), bytes + appended.byte_len());
            for run in runs(rows) {
                out.append_range(heap, run);
            }
            out.append(appended);
            out
        }
    }
}

fn take_dict(dict: &DictColumn, keep: Keep, appended: &DictColumn) -> DictColumn {
    if dict.shares_dictionary(appended) {
        // The commonest case of all (a delta's rows are coded in their
        // main's dictionary when it holds their strings, `Delta::change`):
        // the codes are the dictionary's already — no string is looked up
        // (translating them would cost a binary search per distinct string
        // of the whole dictionary, per merge).
        return dict
            .with_codes(take(dict.codes(), keep, appended.codes()))
            .expect("codes of one dictionary");
    }
    let old = dict.dictionary();
    let new = appended.dictionary();
    let known = new.iter().all(|s| dict.code_of(s).is_some());
    if known {
        // The common case (refresh rows draw from the loaded domains): the
        // dictionary stays, appended codes are translated into it.
        let translate: Vec<u32> = new
            .iter()
            .map(|s| dict.code_of(s).expect("checked above"))
            .collect();
        let appended_codes: Vec<u32> = appended
            .codes()
            .iter()
            .map(|&c| translate[c as usize])
            .collect();
        let codes = take(dict.codes(), keep, &appended_codes);
        return dict
            .with_codes(codes)
            .expect("kept and translated codes are in the dictionary");
    }
    let mut union: Vec<&str> = old.iter().chain(new.iter()).collect();
    union.sort_unstable();
    union.dedup();
    let code = |s: &str| union.binary_search(&s).expect("in the union") as u32;
    let old_to_union: Vec<u32> = old.iter().map(code).collect();
    let new_to_union: Vec<u32> = new.iter().map(code).collect();
    let kept = keep.count(dict.len());
    let mut codes = Vec::with_capacity(kept + appended.len());
    match keep {
        Keep::All => codes.extend(dict.codes().iter().map(|&c| old_to_union[c as usize])),
        Keep::Rows(rows) => codes.extend(
            rows.iter()
                .map(|&r| old_to_union[dict.codes()[r as usize] as usize]),
        ),
    }
    codes.extend(appended.codes().iter().map(|&c| new_to_union[c as usize]));
    DictColumn::from_parts(StrHeap::from_strs(union.iter().copied()), codes)
}

impl Column {
    /// A new column: this column's rows that `keep` names, then every row of
    /// `appended`, which must have the same type.
    pub fn rebuild(&self, keep: Keep, appended: &Column) -> Result<Column, ColumnError> {
        keep.check(self.len())?;
        Ok(match (self, appended) {
            (Column::Int32(v), Column::Int32(a)) => Column::Int32(take(v, keep, a)),
            (Column::Int64(v), Column::Int64(a)) => Column::Int64(take(v, keep, a)),
            (Column::Date(v), Column::Date(a)) => Column::Date(take(v, keep, a)),
            (Column::Decimal(v), Column::Decimal(a)) if v.scale() == a.scale() => Column::Decimal(
                DecimalColumn::new(v.scale(), take(v.values(), keep, a.values()))?,
            ),
            (Column::Str(d), Column::Str(a)) => Column::Str(take_dict(d, keep, a)),
            (Column::StrHeap(h), Column::StrHeap(a)) => Column::StrHeap(take_heap(h, keep, a)),
            _ => {
                return Err(ColumnError::MixedParts {
                    expected: self.data_type(),
                    found: appended.data_type(),
                });
            }
        })
    }
}

impl Table {
    /// The new version of column `i` (see [`Column::rebuild`]); `appended`
    /// has this table's schema.
    pub fn rebuild_column(
        &self,
        i: usize,
        keep: Keep,
        appended: &Table,
    ) -> Result<Column, ColumnError> {
        self.check_same_schema(appended)?;
        self.column_at(i).rebuild(keep, appended.column_at(i))
    }

    /// A table with this one's name and schema made of `columns` (typically
    /// the [`Table::rebuild_column`] results, built in parallel by the caller).
    pub fn with_columns(&self, columns: Vec<Column>) -> Result<Table, ColumnError> {
        let columns = match self.sharing_schema(columns) {
            Ok(table) => return Ok(table),
            // Not this table's shape: the checked path names what differs.
            Err(columns) => columns,
        };
        let schema: Vec<_> = self
            .schema()
            .fields()
            .iter()
            .map(|f| (f.name.as_str(), f.data_type))
            .collect();
        Table::with_schema(self.name(), &schema, columns)
    }

    /// A table with this one's name and schema and no rows: what a rebuild
    /// that only deletes appends.
    pub fn empty_like(&self) -> Table {
        let columns = self
            .schema()
            .fields()
            .iter()
            .map(|f| ColumnBuilder::new(f.data_type).finish())
            .collect::<Result<Vec<_>, _>>()
            .expect("an empty column of a valid type builds");
        self.with_columns(columns)
            .expect("empty columns of this table's own schema")
    }

    /// [`Table::rebuild_column`] for every column, one after another.
    pub fn rebuild(&self, keep: Keep, appended: &Table) -> Result<Table, ColumnError> {
        let columns = (0..self.num_columns())
            .map(|i| self.rebuild_column(i, keep, appended))
            .collect::<Result<Vec<_>, _>>()?;
        self.with_columns(columns)
    }

    /// A table of this one's schema holding, in the order of `ids`, the rows
    /// at those combined ids of this table followed by `tail` (a delta's
    /// appended rows, of the same schema): rows an UPSERT updates, picked
    /// in the order of the rows that update them. Any order, repeats allowed.
    pub fn gather(&self, tail: Option<&Table>, ids: &[u32]) -> Result<Table, ColumnError> {
        if let Some(t) = tail {
            self.check_same_schema(t)?;
        }
        let main_rows = self.num_rows();
        let tail_rows = tail.map_or(0, Table::num_rows);
        if let Some(&id) = ids.iter().find(|&&id| id as usize >= main_rows + tail_rows) {
            return Err(ColumnError::InvalidRebuild {
                reason: format!("row {id} of a table of {} rows", main_rows + tail_rows),
            });
        }
        let columns = (0..self.num_columns())
            .map(|i| {
                let main = self.column_at(i);
                let at = |id: u32| match tail {
                    Some(t) if id as usize >= main_rows => {
                        (t.column_at(i), id as usize - main_rows)
                    }
                    _ => (main, id as usize),
                };
                gather_column(main, ids.iter().map(|&id| at(id)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.with_columns(columns)
    }

    fn check_same_schema(&self, other: &Table) -> Result<(), ColumnError> {
        if self.schema() == other.schema() {
            return Ok(());
        }
        Err(ColumnError::InvalidRebuild {
            reason: format!(
                "appended rows of table {} have another schema than {}",
                other.name(),
                self.name()
            ),
        })
    }
}

/// A column of `like`'s type of the values at `picks` (column, row).
fn gather_column<'c>(
    like: &Column,
    picks: impl Iterator<Item = (&'c Column, usize)>,
) -> Result<Column, ColumnError> {
    let int = |c: &Column, r: usize| match c.value(r) {
        Value::Int32(v) | Value::Date(Date(v)) => i64::from(v),
        Value::Int64(v) => v,
        Value::Decimal(d) => d.value,
        Value::Str(_) => unreachable!("a schema-checked string column read as a number"),
    };
    let text = |c: &'c Column, r: usize| c.get_str(r).expect("a string column");
    Ok(match like {
        Column::Int32(_) => Column::Int32(picks.map(|(c, r)| int(c, r) as i32).collect()),
        Column::Date(_) => Column::Date(picks.map(|(c, r)| int(c, r) as i32).collect()),
        Column::Int64(_) => Column::Int64(picks.map(|(c, r)| int(c, r)).collect()),
        Column::Decimal(d) => Column::Decimal(DecimalColumn::new(
            d.scale(),
            picks.map(|(c, r)| int(c, r)).collect(),
        )?),
        Column::Str(_) => Column::Str(DictColumn::from_strs(picks.map(|(c, r)| text(c, r)))),
        Column::StrHeap(_) => Column::StrHeap(StrHeap::from_strs(picks.map(|(c, r)| text(c, r)))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::DataType;
    use std::sync::Arc;

    /// Kept rows in runs of every shape (single rows, long runs, the first
    /// and the last row) give each kept row once, in order, for numbers
    /// and heap strings, with the appended rows after them.
    #[test]
    fn runs_of_kept_rows_copy_as_row_by_row() {
        let n = 200u32;
        let strings: Vec<String> = (0..n)
            .map(|i| "s".repeat(i as usize % 7) + &i.to_string())
            .collect();
        let heap = StrHeap::from_strs(strings.iter().map(String::as_str));
        let ints: Vec<i64> = (0..i64::from(n)).map(|i| i * 3).collect();
        let tail = StrHeap::from_strs(["x", "", "yz"]);
        let kept_sets: Vec<Vec<u32>> = vec![
            vec![],
            vec![0],
            vec![n - 1],
            (0..n).collect(),
            (0..n).filter(|r| r % 3 != 1).collect(),
            (0..n).filter(|r| !(50..120).contains(r)).collect(),
            vec![1, 2, 3, 7, 9, 10, 199],
        ];
        for kept in &kept_sets {
            assert_eq!(
                runs(kept).flatten().map(|r| r as u32).collect::<Vec<_>>(),
                *kept
            );
            let got = take_heap(&heap, Keep::Rows(kept), &tail);
            let want: Vec<&str> = kept
                .iter()
                .map(|&r| strings[r as usize].as_str())
                .chain(["x", "", "yz"])
                .collect();
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "kept {kept:?}");
            let got = take(&ints, Keep::Rows(kept), &[-1]);
            let want: Vec<i64> = kept.iter().map(|&r| ints[r as usize]).chain([-1]).collect();
            assert_eq!(got, want);
        }
    }

    fn table(ids: &[i64], modes: &[&str], notes: &[&str]) -> Table {
        Table::new(
            "t",
            [
                ("id", Column::Int64(ids.to_vec())),
                (
                    "mode",
                    Column::Str(DictColumn::from_strs(modes.iter().copied())),
                ),
                (
                    "note",
                    Column::StrHeap(StrHeap::from_strs(notes.iter().copied())),
                ),
                (
                    "price",
                    Column::Decimal(
                        DecimalColumn::new(2, ids.iter().map(|i| i * 100).collect()).unwrap(),
                    ),
                ),
            ],
        )
        .unwrap()
    }

    #[test]
    fn gather_picks_rows_of_the_main_and_the_tail_in_any_order() {
        let main = table(&[1, 2, 3], &["a", "b", "a"], &["x", "y", "z"]);
        let tail = table(&[4, 5], &["c", "a"], &["v", "w"]);
        let g = main.gather(Some(&tail), &[4, 0, 3, 0]).unwrap();
        assert_eq!(g.schema(), main.schema());
        assert_eq!(g.column("id").unwrap().as_i64().unwrap(), &[5, 1, 4, 1]);
        assert_eq!(strings(&g, "mode"), ["a", "a", "c", "a"]);
        assert_eq!(strings(&g, "note"), ["w", "x", "v", "x"]);
        let price = g.column("price").unwrap().as_decimal().unwrap();
        assert_eq!(price.values(), &[500, 100, 400, 100]);
        assert!(main.gather(Some(&tail), &[5]).is_err());
        assert!(main.gather(None, &[3]).is_err());
        assert_eq!(main.gather(None, &[]).unwrap().num_rows(), 0);
    }

    fn strings(t: &Table, name: &str) -> Vec<String> {
        let c = t.column(name).unwrap();
        (0..t.num_rows())
            .map(|r| c.get_str(r).unwrap().to_string())
            .collect()
    }

    #[test]
    fn keeps_then_appends_with_known_strings() {
        let old = table(
            &[1, 2, 3, 4],
            &["AIR", "MAIL", "AIR", "SHIP"],
            &["a", "b", "c", "d"],
        );
        let add = table(&[9], &["MAIL"], &["z"]);
        let new = old.rebuild(Keep::Rows(&[0, 2]), &add).unwrap();
        assert_eq!(new.i64("id").unwrap(), &[1, 3, 9]);
        assert_eq!(strings(&new, "mode"), ["AIR", "AIR", "MAIL"]);
        assert_eq!(strings(&new, "note"), ["a", "c", "z"]);
        assert_eq!(new.decimal("price").unwrap().values(), &[100, 300, 900]);
        // The dictionary is the old one: codes stay comparable with it.
        assert_eq!(
            new.dict("mode").unwrap().dictionary(),
            old.dict("mode").unwrap().dictionary()
        );
    }

    /// Rows coded in the main's own dictionary (as a delta's are) keep
    /// their codes: the rebuilt column shares that dictionary.
    #[test]
    fn rows_in_the_main_dictionary_keep_their_codes() {
        let old = DictColumn::from_strs(["MAIL", "AIR", "TRUCK", "AIR"]);
        let code = |s| old.code_of(s).unwrap();
        let add = old.with_codes(vec![code("TRUCK"), code("AIR")]).unwrap();
        let Column::Str(new) = Column::Str(old.clone())
            .rebuild(Keep::Rows(&[1, 2]), &Column::Str(add))
            .unwrap()
        else {
            panic!("a dictionary column");
        };
        let got: Vec<&str> = (0..new.len()).map(|r| new.get(r)).collect();
        assert_eq!(got, ["AIR", "TRUCK", "TRUCK", "AIR"]);
        assert!(std::ptr::eq(new.dictionary(), old.dictionary()));
    }

    #[test]
    fn new_strings_extend_a_sorted_dictionary() {
        let old = table(&[1, 2], &["MAIL", "TRUCK"], &["a", "b"]);
        let add = table(&[3, 4], &["AIR", "RAIL"], &["c", "d"]);
        let new = old.rebuild(Keep::All, &add).unwrap();
        assert_eq!(strings(&new, "mode"), ["MAIL", "TRUCK", "AIR", "RAIL"]);
        let dict = new.dict("mode").unwrap();
        let sorted: Vec<&str> = dict.dictionary().iter().collect();
        assert_eq!(sorted, ["AIR", "MAIL", "RAIL", "TRUCK"]);
        // Codes still order like the strings.
        let codes = dict.codes();
        assert!(codes[2] < codes[0] && codes[0] < codes[3] && codes[3] < codes[1]);
        assert_eq!(strings(&new, "note"), ["a", "b", "c", "d"]);
    }

    #[test]
    fn deleting_everything_and_appending_nothing_leaves_an_empty_table() {
        let old = table(&[1, 2], &["MAIL", "TRUCK"], &["a", "b"]);
        let new = old.rebuild(Keep::Rows(&[]), &old.empty_like()).unwrap();
        assert_eq!(new.num_rows(), 0);
        assert_eq!(new.schema(), old.schema());
    }

    #[test]
    fn bad_input_is_an_error() {
        let old = table(&[1, 2], &["MAIL", "TRUCK"], &["a", "b"]);
        let add = table(&[3], &["AIR"], &["c"]);
        for keep in [&[1u32, 0][..], &[2], &[0, 0]] {
            let err = old.rebuild(Keep::Rows(keep), &add).unwrap_err();
            assert!(matches!(err, ColumnError::InvalidRebuild { .. }), "{err}");
        }
        let other = Table::new("u", [("id", Column::Int32(vec![1]))]).unwrap();
        assert!(old.rebuild(Keep::All, &other).is_err());
        let err = Column::Int32(vec![1]).rebuild(Keep::All, &Column::Int64(vec![2]));
        assert!(matches!(err, Err(ColumnError::MixedParts { .. })));
    }

    /// A table's next version shares its schema, and is what the checked
    /// path builds; columns of another shape still get the checked path's
    /// error.
    #[test]
    fn with_columns_shares_the_schema_and_still_checks() {
        let t = Table::new(
            "t",
            [
                ("a", Column::Int64(vec![1, 2])),
                ("b", Column::StrHeap(StrHeap::from_strs(["x", "y"]))),
            ],
        )
        .unwrap();
        let columns = vec![
            Column::Int64(vec![3]),
            Column::StrHeap(StrHeap::from_strs(["z"])),
        ];
        let next = t.with_columns(columns.clone()).unwrap();
        assert!(Arc::ptr_eq(
            &t.schema().shared_fields(),
            &next.schema().shared_fields()
        ));
        let checked = Table::with_schema(
            "t",
            &[("a", DataType::Int64), ("b", DataType::StrHeap)],
            columns,
        )
        .unwrap();
        assert_eq!(next.schema(), checked.schema());
        assert_eq!(next.num_rows(), 1);
        assert_eq!(next.column_at(1), checked.column_at(1));
        let wrong_type = t.with_columns(vec![
            Column::Int32(vec![3]),
            Column::StrHeap(StrHeap::from_strs(["z"])),
        ]);
        assert!(
            matches!(wrong_type, Err(ColumnError::TypeMismatch { .. })),
            "{wrong_type:?}"
        );
        let wrong_length = t.with_columns(vec![
            Column::Int64(vec![3, 4]),
            Column::StrHeap(StrHeap::from_strs(["z"])),
        ]);
        assert!(
            matches!(wrong_length, Err(ColumnError::LengthMismatch { .. })),
            "{wrong_length:?}"
        );
    }
}
