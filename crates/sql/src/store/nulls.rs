//! NULLs in stored columns. A nullable column `c` has a hidden *mask
//! column* after the table's declared columns, named [`mask_name`]`(c)`:
//! Int32, 1 where `c` is NULL, 0 elsewhere; `c` itself holds a placeholder
//! there (0, the empty string, day 0), which every reader masks.
//!
//! The mask is a column like any other, so everything that moves rows
//! carries it without knowing about NULLs: a write's appended rows (the
//! delta), the merge and its rebase, the durable store's bases and changes
//! (`codec.rs`), recovery. What knows:
//! - the writers build it (`convert::ColumnBuilder` pushes a NULL as the
//!   placeholder plus a 1; `dml::table_of` adds the mask columns);
//! - [`Entry::null_masks`] gives the readers each declared column's NULLs
//!   over the table's combined ids (main rows, then appended rows), once
//!   per table version — `None` for a column that holds no NULL in that
//!   version, so plans over it are those of a NOT NULL column;
//! - the catalog hides the mask columns ([`super::View`]'s `table`), and
//!   the row-id column UPDATE/DELETE add comes after the declared columns,
//!   not after the data's ([`crate::Catalog::row_id_column`]);
//! - keys skip NULLs (`unique.rs`: two NULLs are distinct, as in
//!   PostgreSQL), and a key over a column that holds a NULL is no key for
//!   the planner (GROUP BY would fold the NULL rows' other columns).
//!
//! A mask column costs 4 bytes per row (the column store's narrowest
//! integer); a declared column's statistics count the placeholders as
//! values (estimates only).

use std::sync::Arc;

use maestro_storage::column::{Column, Table, ValueRange};

use super::Entry;

/// What a mask column's name starts with: no SQL column can take it
/// (CREATE TABLE refuses names with a NUL character).
const MASK_PREFIX: &str = "\0null:";

/// The name of column `column`'s mask column.
pub(crate) fn mask_name(column: &str) -> String {
    format!("{MASK_PREFIX}{column}")
}

/// Whether a stored column's name is a mask column's.
pub(crate) fn is_mask(name: &str) -> bool {
    name.starts_with(MASK_PREFIX)
}

impl Entry {
    /// Column `i`'s mask column in the data, if the column is nullable.
    pub(crate) fn mask_column(&self, i: usize) -> Option<usize> {
        self.mask_column_of(&self.columns.get(i)?.name)
    }

    /// Column `name`'s mask column in the data, if the column is nullable.
    pub(crate) fn mask_column_of(&self, name: &str) -> Option<usize> {
        // Without building the mask's name: writes and plan tokens ask
        // this per column per statement.
        self.data
            .schema()
            .fields()
            .iter()
            .position(|f| f.name.strip_prefix(MASK_PREFIX) == Some(name))
    }

    /// Whether declared column `i` may hold NULLs.
    pub fn nullable(&self, i: usize) -> bool {
        self.mask_column(i).is_some()
    }

    /// Per declared column, where this version of the table is NULL (`true`
    /// at those combined ids: main rows, then the delta's appended rows,
    /// deleted ones included), `None` where it holds no NULL. Computed on
    /// first use: O(rows) per column holding NULLs per table version, so
    /// only readers of such a column call it (the planner asks
    /// [`Entry::holds_nulls`]).
    pub fn null_masks(&self) -> &[Option<Arc<Vec<bool>>>] {
        self.null_masks.get_or_init(|| {
            (0..self.columns.len())
                .map(|i| {
                    let (main, appended) = self.flag_parts(i)?;
                    let mask: Vec<bool> = main.iter().chain(appended).map(|&f| f != 0).collect();
                    Some(Arc::new(mask))
                })
                .collect()
        })
    }

    /// [`Entry::null_masks`]'s column `i` read at the combined ids `ids`
    /// only, straight from the mask column: O(ids), where the whole mask is
    /// O(rows) per version — and every write makes a version, so an index
    /// lookup of a table with NULLs (TPC-C's `oorder`, `order_line`) built
    /// a whole-table mask per statement. `None` where the version holds no
    /// NULL in that column.
    pub(crate) fn null_flags_at(&self, i: usize, ids: &[u32]) -> Option<Vec<bool>> {
        if let Some(masks) = self.null_masks.get() {
            let mask = masks.get(i)?.as_ref()?;
            return Some(ids.iter().map(|&r| mask[r as usize]).collect());
        }
        let (main, appended) = self.flag_parts(i)?;
        Some(
            ids.iter()
                .map(|&r| {
                    let r = r as usize;
                    match r.checked_sub(main.len()) {
                        None => main[r] != 0,
                        Some(a) => appended[a] != 0,
                    }
                })
                .collect(),
        )
    }

    /// Declared column `i`'s NULL flags in the main and in the delta's
    /// appended rows, if the version holds a NULL in it.
    fn flag_parts(&self, i: usize) -> Option<(&[i32], &[i32])> {
        let m = self.mask_column(i)?;
        if !self.mask_flags_any(m) {
            return None;
        }
        let main = flags(self.data.column_at(m));
        let appended = self
            .delta
            .as_deref()
            .map_or(&[][..], |d| flags(d.appended().column_at(m)));
        Some((main, appended))
    }

    /// Whether declared column `i` holds a NULL in this version (deleted
    /// rows included, as in [`Entry::null_masks`]). O(1) for a version a
    /// write made (`Entry::delta_flagged`), else O(appended rows): every
    /// statement's binding asks it for every nullable column of the tables
    /// it names, and every write makes a table version, so it must not
    /// rescan the main (it did: 7 % of a pgbench transaction's CPU, a
    /// 100 000-row mask per statement) nor the delta (4 % at pgbench scale
    /// 50, deltas of tens of thousands of rows).
    pub fn holds_nulls(&self, i: usize) -> bool {
        if let Some(masks) = self.null_masks.get() {
            return masks.get(i).is_some_and(Option::is_some);
        }
        self.mask_column(i).is_some_and(|m| self.mask_flags_any(m))
    }

    /// Whether mask column `m` flags a row: the main's part read off its
    /// column statistics (one pass, cached with the main, which versions
    /// share until a merge replaces it), the delta's appended rows scanned.
    fn mask_flags_any(&self, m: usize) -> bool {
        let in_main = match self.data.column_stats(m).range {
            ValueRange::Empty => false,
            ValueRange::Numeric { min, max } => min != 0.0 || max != 0.0,
            ValueRange::Text { .. } => panic!("a mask column is Int32, not text"),
        };
        in_main || self.delta_flags(m)
    }

    /// Whether mask column `m` flags one of the delta's appended rows
    /// (deleted ones included): `delta_flagged` when a write recorded it,
    /// else a scan.
    fn delta_flags(&self, m: usize) -> bool {
        let Some(d) = self.delta.as_deref() else {
            return false;
        };
        match &self.delta_flagged {
            Some(flagged) => flagged.get(m).copied().unwrap_or(false),
            None => flags(d.appended().column_at(m)).iter().any(|&f| f != 0),
        }
    }

    /// `delta_flagged` of the version a write of this one makes by
    /// appending `appended` to this version's delta: this version's flags
    /// (its delta's appended rows stay in the next delta) or-ed with the
    /// write's rows'. Per data column; `false` for columns that are not
    /// mask columns.
    pub(super) fn delta_flagged_after(&self, appended: &Table) -> Vec<bool> {
        (0..self.data.num_columns())
            .map(|c| {
                is_mask(&self.data.schema().fields()[c].name)
                    && (self.delta_flags(c) || flags(appended.column_at(c)).iter().any(|&f| f != 0))
            })
            .collect()
    }
}

/// Whether row `r` of `t` (a table of the entry's schema: its main, its
/// delta's appended rows, a write's) is NULL by the mask column `mask`.
pub(crate) fn null_at(t: &Table, mask: usize, r: usize) -> bool {
    flags(t.column_at(mask))[r] != 0
}

/// A mask column's flags.
fn flags(c: &Column) -> &[i32] {
    match c {
        Column::Int32(v) => v,
        other => panic!("a mask column is Int32, not {:?}", other.data_type()),
    }
}

/// `data` with a mask column added for every `(column, mask)` given (the
/// tables `maestro.load_ch` puts carry their masks beside the data).
pub(crate) fn with_masks(
    data: &Table,
    masks: &[(String, &[bool])],
) -> Result<Table, maestro_storage::column::ColumnError> {
    let columns = data
        .schema()
        .fields()
        .iter()
        .map(|f| f.name.clone())
        .zip(data.columns().iter().cloned())
        .chain(masks.iter().map(|(name, mask)| {
            (
                mask_name(name),
                Column::Int32(mask.iter().map(|&n| i32::from(n)).collect()),
            )
        }));
    Table::new(data.name().to_string(), columns)
}

#[cfg(test)]
mod tests {
    use super::super::spec::{ColumnSpec, ColumnType};
    use super::*;

    /// A version whose main and delta both hold NULLs, one main row and
    /// one appended row deleted: the flags read at some ids are the whole
    /// mask's at those ids, before and after the mask is cached.
    #[test]
    fn flags_at_ids_are_the_whole_masks() {
        let main = Table::new("t", [("a", Column::Int64(vec![1, 2, 3, 4]))]).unwrap();
        let main = with_masks(&main, &[("a".into(), &[false, true, false, true])]).unwrap();
        let columns = || {
            vec![ColumnSpec {
                name: "a".into(),
                ty: ColumnType::Int64,
            }]
        };
        let first = Entry::first("t".into(), columns(), Arc::new(main));
        let more = Table::new("t", [("a", Column::Int64(vec![5, 6, 7]))]).unwrap();
        let more = with_masks(&more, &[("a".into(), &[true, false, true])]).unwrap();
        let (e, _) = super::super::merge::next_version(&first, &[], &more).unwrap();
        let (e, _) = super::super::merge::next_version(&e, &[1, 4], &more.empty_like()).unwrap();
        let ids = [0u32, 2, 3, 5, 6];
        let expected = vec![false, false, true, false, true];
        assert_eq!(e.null_flags_at(0, &ids), Some(expected.clone()));
        let whole = e.null_masks()[0].clone().expect("the column holds NULLs");
        assert_eq!(ids.map(|r| whole[r as usize]).to_vec(), expected);
        assert_eq!(e.null_flags_at(0, &ids), Some(expected));
        // A version without NULLs in the column: none.
        let plain = Table::new("t", [("a", Column::Int64(vec![1]))]).unwrap();
        let plain = with_masks(&plain, &[("a".into(), &[false])]).unwrap();
        let none = Entry::first("u".into(), columns(), Arc::new(plain));
        assert_eq!(none.null_flags_at(0, &[0]), None);
    }

    #[test]
    fn mask_names_are_not_column_names() {
        assert!(is_mask(&mask_name("a")));
        assert!(!is_mask("a"));
        assert!(!is_mask("null:a"));
        let t = Table::new("t", [("a", Column::Int64(vec![1, 2]))]).unwrap();
        let m = with_masks(&t, &[("a".to_string(), &[false, true])]).unwrap();
        assert_eq!(m.num_columns(), 2);
        assert_eq!(
            m.column(&mask_name("a")).unwrap(),
            &Column::Int32(vec![0, 1])
        );
    }
}
