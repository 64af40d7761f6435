//! A table's writes since its main part was last merged: the *delta* of a
//! main + delta store (HANA's and Hyrise's layout, issue 16 part 1).
//!
//! The main is an immutable, read-optimized [`Table`]. The delta holds the
//! rows appended after it (`appended`, same schema) and the rows deleted
//! from either part (`deleted`), by *combined id*: main row `r` is id `r`,
//! appended row `i` is id `main_rows + i`. A write makes the next delta
//! from this one in O(delta) — the main is shared, never copied — and a
//! merge ([`Delta::merge`]) folds main and delta into a new main.
//!
//! Appended rows stay in `appended` when deleted (marked, not removed), so
//! the appended rows of a later delta of the same main always extend an
//! earlier one's: a background merge that started from an earlier delta can
//! carry the later writes over to the merged main ([`Delta::rebase`]).
//!
//! Dictionary columns of the delta use the main's dictionary (shared, see
//! [`DictColumn::with_codes`]), so their codes compare with the main's and
//! operators read both parts alike. A write that brings a string the
//! dictionary lacks cannot go to the delta ([`DeltaError::NewString`]): the
//! caller merges instead (a new, larger dictionary).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::builder::ColumnBuilder;
use super::column::Column;
use super::dict::DictColumn;
use super::error::ColumnError;
use super::rebuild::Keep;
use super::table::Table;

/// Why a change cannot go into the delta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeltaError {
    /// Column `column`'s new values include a string its main's dictionary
    /// lacks: merge instead.
    NewString { column: String },
    /// The change does not fit the table (schema, ids out of range or not
    /// strictly ascending).
    Invalid(String),
}

impl std::fmt::Display for DeltaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeltaError::NewString { column } => write!(
                f,
                "column {column}: a new string for its dictionary (the table must be merged)"
            ),
            DeltaError::Invalid(reason) => write!(f, "invalid delta change: {reason}"),
        }
    }
}

impl std::error::Error for DeltaError {}

impl From<ColumnError> for DeltaError {
    fn from(e: ColumnError) -> DeltaError {
        DeltaError::Invalid(e.to_string())
    }
}

/// The rows of the main and of a delta's appended rows a merge keeps
/// (`None`: all), computed once for every column ([`Delta::merge_plan`]).
#[derive(Debug, Clone)]
pub struct MergePlan {
    keep_main: Option<Vec<u32>>,
    keep_appended: Option<Vec<u32>>,
}

impl MergePlan {
    /// The main's rows a merge keeps.
    fn main(&self) -> Keep<'_> {
        keep(&self.keep_main)
    }

    /// The appended rows a merge keeps.
    fn appended(&self) -> Keep<'_> {
        keep(&self.keep_appended)
    }
}

fn keep(rows: &Option<Vec<u32>>) -> Keep<'_> {
    match rows {
        Some(rows) => Keep::Rows(rows),
        None => Keep::All,
    }
}

/// The writes on top of one main part. Immutable: a change makes a new one.
#[derive(Debug)]
pub struct Delta {
    /// Which main this delta belongs to: drawn by [`Delta::empty`], kept by
    /// every change, so a rebase can check that two deltas share a main.
    lineage: u64,
    /// Rows of the main this delta belongs to.
    main_rows: usize,
    /// Rows appended after the main's, deleted ones included.
    appended: Arc<Table>,
    /// Deleted combined ids, strictly ascending.
    deleted: Arc<Vec<u32>>,
    /// The live combined ids, ascending; computed on first use.
    live: OnceLock<Arc<Vec<u32>>>,
}

impl Delta {
    /// No writes yet on top of `main`.
    pub fn empty(main: &Table) -> Delta {
        Delta {
            lineage: next_lineage(),
            main_rows: main.num_rows(),
            appended: Arc::new(empty_appended(main)),
            deleted: Arc::new(Vec::new()),
            live: OnceLock::new(),
        }
    }

    /// Whether the delta holds no write (its table is exactly its main).
    pub fn is_empty(&self) -> bool {
        self.appended.num_rows() == 0 && self.deleted.is_empty()
    }

    /// The appended rows (deleted ones included: see [`Delta::live_ids`]).
    pub fn appended(&self) -> &Table {
        &self.appended
    }

    /// Deleted combined ids, ascending.
    pub fn deleted(&self) -> &[u32] {
        &self.deleted
    }

    /// Rows of the main this delta belongs to.
    pub fn main_rows(&self) -> usize {
        self.main_rows
    }

    /// Combined ids: main rows + appended rows.
    pub fn id_space(&self) -> usize {
        self.main_rows + self.appended.num_rows()
    }

    /// Rows the table holds (main and appended, less the deleted).
    pub fn live_rows(&self) -> usize {
        self.id_space() - self.deleted.len()
    }

    /// Rows the delta holds: appended plus deletion marks (what a merge
    /// would fold; the bound for merging is taken on it).
    pub fn size(&self) -> usize {
        self.appended.num_rows() + self.deleted.len()
    }

    /// The live combined ids in ascending order: the table's rows in order.
    pub fn live_ids(&self) -> Arc<Vec<u32>> {
        Arc::clone(self.live.get_or_init(|| {
            let mut ids = Vec::with_capacity(self.live_rows());
            let mut dead = self.deleted.iter().copied().peekable();
            for id in 0..self.id_space() as u32 {
                if dead.peek() == Some(&id) {
                    dead.next();
                } else {
                    ids.push(id);
                }
            }
            Arc::new(ids)
        }))
    }

    /// The position among the live rows of each live id in `ids` (ascending):
    /// where that row is in the table as [`Delta::merge`] lays it out.
    pub fn live_positions(&self, ids: &[u32]) -> Vec<u32> {
        let mut dead = 0usize;
        ids.iter()
            .map(|&id| {
                while dead < self.deleted.len() && self.deleted[dead] < id {
                    dead += 1;
                }
                id - dead as u32
            })
            .collect()
    }

    /// The next delta: this one with the rows at combined ids `deleted`
    /// (strictly ascending, live) deleted and the rows of `appended` (the
    /// main's schema) appended. O(delta): the main is not touched.
    pub fn change(
        &self,
        main: &Table,
        deleted: &[u32],
        appended: &Table,
    ) -> Result<Delta, DeltaError> {
        self.check_change(main, deleted)?;
        let appended = if appended.num_rows() == 0 {
            Arc::clone(&self.appended)
        } else {
            Arc::new(self.append(main, appended)?)
        };
        Ok(Delta {
            lineage: self.lineage,
            main_rows: self.main_rows,
            appended,
            deleted: Arc::new(union(&self.deleted, deleted)),
            live: OnceLock::new(),
        })
    }

    /// Whether `main` is this delta's main and `deleted` strictly ascending
    /// live ids.
    fn check_change(&self, main: &Table, deleted: &[u32]) -> Result<(), DeltaError> {
        if main.num_rows() != self.main_rows {
            return Err(DeltaError::Invalid(format!(
                "the delta belongs to a main of {} rows, not {}",
                self.main_rows,
                main.num_rows()
            )));
        }
        let space = self.id_space() as u32;
        if !deleted.windows(2).all(|w| w[0] < w[1]) || deleted.last().is_some_and(|&d| d >= space) {
            return Err(DeltaError::Invalid(format!(
                "deleted ids must be strictly ascending and below {space}"
            )));
        }
        if let Some(&id) = deleted
            .iter()
            .find(|id| self.deleted.binary_search(id).is_ok())
        {
            return Err(DeltaError::Invalid(format!("row {id} is already deleted")));
        }
        Ok(())
    }

    /// The table as one main after the change [`Delta::change`] would make
    /// (`deleted` ids removed, `appended` added), built in one pass over the
    /// main: for a change the delta cannot hold (a string a dictionary
    /// lacks — the merged dictionaries take the union).
    pub fn merge_change(
        &self,
        main: &Table,
        deleted: &[u32],
        appended: &Table,
    ) -> Result<Table, DeltaError> {
        self.check_change(main, deleted)?;
        let dead = Delta {
            lineage: self.lineage,
            main_rows: self.main_rows,
            appended: Arc::clone(&self.appended),
            deleted: Arc::new(union(&self.deleted, deleted)),
            live: OnceLock::new(),
        };
        let plan = dead.merge_plan();
        let tail = self.appended.rebuild(plan.appended(), appended)?;
        Ok(main.rebuild(plan.main(), &tail)?)
    }

    /// `self.appended` followed by `more`, dictionary columns coded in the
    /// main's dictionary.
    fn append(&self, main: &Table, more: &Table) -> Result<Table, DeltaError> {
        if more.schema() != main.schema() {
            return Err(DeltaError::Invalid(
                "appended rows have another schema than the table".into(),
            ));
        }
        let columns = (0..main.num_columns())
            .map(|i| {
                let (have, new) = (self.appended.column_at(i), more.column_at(i));
                match (main.column_at(i), have, new) {
                    (Column::Str(m), Column::Str(h), Column::Str(n)) => {
                        let mut codes = Vec::with_capacity(h.len() + n.len());
                        codes.extend_from_slice(h.codes());
                        let name = &main.schema().fields()[i].name;
                        codes.extend(recode(m, n, name)?);
                        Ok(Column::Str(
                            m.with_codes(codes).expect("codes of m's dictionary"),
                        ))
                    }
                    // Free text: the versions share the earlier rows' bytes
                    // (`StrHeap::shared_append`) — a delta's heap strings were
                    // most of what each write copied.
                    (_, Column::StrHeap(h), Column::StrHeap(n)) => {
                        Ok(Column::StrHeap(h.shared_append(n)))
                    }
                    _ => Ok(have.rebuild(Keep::All, new)?),
                }
            })
            .collect::<Result<Vec<_>, DeltaError>>()?;
        Ok(main.with_columns(columns)?)
    }

    /// The table as one main: the live rows of the main, then the live
    /// appended rows. O(table): what a merge computes (one column after
    /// another; [`Delta::merge_plan`] lets a caller build columns in
    /// parallel).
    pub fn merge(&self, main: &Table) -> Result<Table, ColumnError> {
        if self.is_empty() {
            return Ok(main.clone());
        }
        let plan = self.merge_plan();
        let columns = (0..main.num_columns())
            .map(|i| self.merge_column(main, &plan, i))
            .collect::<Result<Vec<_>, _>>()?;
        main.with_columns(columns)
    }

    /// Which rows of the main and of the appended rows a merge keeps.
    pub fn merge_plan(&self) -> MergePlan {
        let split = self
            .deleted
            .partition_point(|&d| (d as usize) < self.main_rows);
        let (main_dead, appended_dead) = self.deleted.split_at(split);
        MergePlan {
            keep_main: kept(self.main_rows, main_dead, 0),
            keep_appended: kept(
                self.appended.num_rows(),
                appended_dead,
                self.main_rows as u32,
            ),
        }
    }

    /// Column `i` of the merged table (see [`Delta::merge`]).
    pub fn merge_column(
        &self,
        main: &Table,
        plan: &MergePlan,
        i: usize,
    ) -> Result<Column, ColumnError> {
        let appended = self.appended.column_at(i);
        let live_appended;
        let appended = match &plan.keep_appended {
            None => appended,
            Some(rows) => {
                live_appended = appended.rebuild(Keep::Rows(rows), &empty_of(appended)?)?;
                &live_appended
            }
        };
        main.column_at(i).rebuild(plan.main(), appended)
    }

    /// Whether this delta is `earlier` with more writes on top: same main,
    /// `earlier`'s appended rows a prefix of this one's and its deletions a
    /// subset — so a combined id of `earlier` names the same row here.
    pub fn extends(&self, earlier: &Delta) -> bool {
        self.lineage == earlier.lineage
            && self.appended.num_rows() >= earlier.appended.num_rows()
            && is_subset(&earlier.deleted, &self.deleted)
    }

    /// The writes made on top of `base` (an earlier delta of the same main,
    /// which `merged` = `base.merge(main)` folded) as a delta of `merged`:
    /// how a background merge keeps the writes that committed while it ran.
    pub fn rebase(&self, base: &Delta, merged: &Table) -> Result<Delta, DeltaError> {
        let base_appended = base.appended.num_rows();
        if !self.extends(base) || merged.num_rows() != base.live_rows() {
            return Err(DeltaError::Invalid(
                "the delta does not extend the merged one".into(),
            ));
        }
        let mut deleted = Vec::new();
        let mut dead_before = 0usize;
        for &id in self.deleted.iter() {
            while dead_before < base.deleted.len() && base.deleted[dead_before] < id {
                dead_before += 1;
            }
            if base.deleted.get(dead_before) == Some(&id) {
                continue;
            }
            let id = id as usize;
            deleted.push(if id < base.id_space() {
                id - dead_before
            } else {
                merged.num_rows() + (id - base.id_space())
            } as u32);
        }
        let later = kept_range(base_appended, self.appended.num_rows());
        let appended = self
            .appended
            .rebuild(Keep::Rows(&later), &self.appended.empty_like())?;
        let appended = with_dictionaries_of(merged, appended)?;
        Ok(Delta {
            lineage: next_lineage(),
            main_rows: merged.num_rows(),
            appended: Arc::new(appended),
            deleted: Arc::new(deleted),
            live: OnceLock::new(),
        })
    }
}

/// A lineage no delta has yet: each main gets its own.
fn next_lineage() -> u64 {
    static LINEAGES: AtomicU64 = AtomicU64::new(0);
    LINEAGES.fetch_add(1, Ordering::Relaxed)
}

/// An empty table of `main`'s schema whose dictionary columns share the
/// main's dictionaries.
fn empty_appended(main: &Table) -> Table {
    let empty = main.empty_like();
    with_dictionaries_of(main, empty).expect("empty columns of the main's own schema")
}

/// `t` with each dictionary column's codes moved into `main`'s dictionary
/// (same strings: `t`'s dictionary columns hold only strings of main's).
fn with_dictionaries_of(main: &Table, t: Table) -> Result<Table, DeltaError> {
    let columns = (0..main.num_columns())
        .map(|i| match (main.column_at(i), t.column_at(i)) {
            (Column::Str(m), Column::Str(c)) => {
                let name = &main.schema().fields()[i].name;
                let codes = recode(m, c, name)?;
                Ok(Column::Str(m.with_codes(codes).expect("recoded into m")))
            }
            (_, c) => Ok(c.clone()),
        })
        .collect::<Result<Vec<_>, DeltaError>>()?;
    Ok(main.with_columns(columns)?)
}

/// `new`'s codes translated into `main`'s dictionary.
fn recode(main: &DictColumn, new: &DictColumn, column: &str) -> Result<Vec<u32>, DeltaError> {
    if main.shares_dictionary(new) {
        return Ok(new.codes().to_vec());
    }
    let translate = new
        .dictionary()
        .iter()
        .map(|s| main.code_of(s))
        .collect::<Option<Vec<u32>>>()
        .ok_or_else(|| DeltaError::NewString {
            column: column.to_string(),
        })?;
    Ok(new.codes().iter().map(|&c| translate[c as usize]).collect())
}

/// An empty column of `c`'s type.
fn empty_of(c: &Column) -> Result<Column, ColumnError> {
    ColumnBuilder::new(c.data_type()).finish()
}

/// Whether every id of `small` is in `big` (both ascending): one pass over
/// both (a write's rebase asks it of two deltas of tens of thousands of
/// ids; a binary search per id was ~18 % of a pgbench server's time).
fn is_subset(small: &[u32], big: &[u32]) -> bool {
    if small.len() > big.len() {
        return false;
    }
    let mut rest = big.iter().peekable();
    small.iter().all(|id| {
        while rest.next_if(|&b| b < id).is_some() {}
        rest.next_if(|&b| b == id).is_some()
    })
}

/// Ascending union of two ascending, disjoint id lists.
fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    super::delta_index::merge_by(a, b, |x, y| x > y)
}

/// Positions `0..len` without `dead` (ascending ids, offset by `first`);
/// `None` when nothing is dead.
fn kept(len: usize, dead: &[u32], first: u32) -> Option<Vec<u32>> {
    if dead.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(len - dead.len());
    let mut d = dead.iter().map(|&x| x - first).peekable();
    for r in 0..len as u32 {
        if d.peek() == Some(&r) {
            d.next();
        } else {
            out.push(r);
        }
    }
    Some(out)
}

fn kept_range(from: usize, to: usize) -> Vec<u32> {
    (from as u32..to as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::Value;

    fn table(keys: &[i64], names: &[&str]) -> Table {
        Table::new(
            "t",
            [
                ("k".to_string(), Column::Int64(keys.to_vec())),
                (
                    "s".to_string(),
                    Column::Str(DictColumn::from_strs(names.iter().copied())),
                ),
            ],
        )
        .unwrap()
    }

    fn rows(t: &Table) -> Vec<(i64, String)> {
        (0..t.num_rows())
            .map(|r| match t.row(r).as_slice() {
                [Value::Int64(k), Value::Str(s)] => (*k, s.to_string()),
                other => panic!("unexpected row {other:?}"),
            })
            .collect()
    }

    #[test]
    fn changes_fold_into_the_rows_a_rebuild_gives() {
        let main = table(&[1, 2, 3, 4], &["a", "b", "c", "a"]);
        let d0 = Delta::empty(&main);
        assert!(d0.is_empty());
        let d1 = d0
            .change(&main, &[1], &table(&[5, 6], &["c", "a"]))
            .unwrap();
        // Delete main row 3 and appended row 0 (id 4).
        let d2 = d1.change(&main, &[3, 4], &table(&[7], &["b"])).unwrap();
        assert_eq!(d2.deleted(), &[1, 3, 4]);
        assert_eq!(*d2.live_ids(), vec![0, 2, 5, 6]);
        assert_eq!(d2.live_rows(), 4);
        assert_eq!(d2.live_positions(&[0, 2, 5, 6]), vec![0, 1, 2, 3]);
        let merged = d2.merge(&main).unwrap();
        let want: Vec<(i64, String)> = [(1, "a"), (3, "c"), (6, "a"), (7, "b")]
            .iter()
            .map(|(k, s)| (*k, s.to_string()))
            .collect();
        assert_eq!(rows(&merged), want);
        // The earlier delta is untouched.
        assert_eq!(rows(&d1.merge(&main).unwrap()).len(), 5);
    }

    #[test]
    fn a_later_delta_of_the_same_main_extends_an_earlier_one() {
        let main = table(&[1, 2, 3], &["a", "b", "c"]);
        let d1 = Delta::empty(&main)
            .change(&main, &[0], &table(&[4], &["a"]))
            .unwrap();
        let d2 = d1.change(&main, &[3], &table(&[5], &["b"])).unwrap();
        assert!(d2.extends(&d1) && d1.extends(&d1));
        assert!(is_subset(&[], &[1]) && is_subset(&[2, 5], &[1, 2, 3, 5]));
        assert!(!is_subset(&[2, 4], &[1, 2, 3, 5]) && !is_subset(&[6], &[1, 5]));
        assert!(!is_subset(&[1, 2], &[2]) && !is_subset(&[0], &[1]));
        assert!(!d1.extends(&d2), "fewer rows and deletions");
        // Another delta of the same main: another lineage, no extension.
        let other = Delta::empty(&main)
            .change(&main, &[0], &table(&[4], &["a"]))
            .unwrap();
        assert!(!other.extends(&d1));
    }

    #[test]
    fn a_change_merged_at_once_equals_the_change_then_the_merge() {
        let main = table(&[1, 2, 3], &["a", "b", "c"]);
        let d = Delta::empty(&main)
            .change(&main, &[0], &table(&[4, 5], &["a", "c"]))
            .unwrap();
        // Main row 1 and appended row 1 (id 4) deleted, a row appended.
        let more = table(&[6], &["b"]);
        let want = rows(
            &d.change(&main, &[1, 4], &more)
                .unwrap()
                .merge(&main)
                .unwrap(),
        );
        assert_eq!(rows(&d.merge_change(&main, &[1, 4], &more).unwrap()), want);
        // A new string: the delta refuses it, the merged change takes it.
        let new = table(&[7], &["z"]);
        assert!(matches!(
            d.change(&main, &[], &new),
            Err(DeltaError::NewString { .. })
        ));
        let merged = d.merge_change(&main, &[2], &new).unwrap();
        let got: Vec<i64> = rows(&merged).iter().map(|r| r.0).collect();
        assert_eq!(got, [2, 4, 5, 7]);
        assert!(
            d.merge_change(&main, &[0], &new).is_err(),
            "0 is deleted already"
        );
    }

    #[test]
    fn appended_dictionary_codes_compare_with_the_main() {
        let main = table(&[1, 2], &["b", "d"]);
        let d = Delta::empty(&main)
            .change(&main, &[], &table(&[3], &["d"]))
            .unwrap();
        let (Column::Str(m), Column::Str(a)) = (main.column_at(1), d.appended().column_at(1))
        else {
            panic!("dictionary columns expected");
        };
        assert!(m.shares_dictionary(a));
        assert_eq!(a.codes(), &[m.code_of("d").unwrap()]);
        let err = d.change(&main, &[], &table(&[4], &["c"])).unwrap_err();
        assert_eq!(err, DeltaError::NewString { column: "s".into() });
    }

    #[test]
    fn bad_changes_are_errors() {
        let main = table(&[1, 2], &["a", "b"]);
        let d = Delta::empty(&main)
            .change(&main, &[0], &main.empty_like())
            .unwrap();
        assert!(matches!(
            d.change(&main, &[0], &main.empty_like()),
            Err(DeltaError::Invalid(_))
        ));
        assert!(matches!(
            d.change(&main, &[2], &main.empty_like()),
            Err(DeltaError::Invalid(_))
        ));
        assert!(matches!(
            Delta::empty(&main).change(&main, &[1, 0], &main.empty_like()),
            Err(DeltaError::Invalid(_))
        ));
        let other = table(&[1], &["a"]);
        assert!(matches!(
            d.change(&other, &[], &main.empty_like()),
            Err(DeltaError::Invalid(_))
        ));
    }

    #[test]
    fn a_rebase_keeps_the_writes_made_during_a_merge() {
        let main = table(&[1, 2, 3], &["a", "b", "c"]);
        let base = Delta::empty(&main)
            .change(&main, &[0], &table(&[4], &["a"]))
            .unwrap();
        let merged = base.merge(&main).unwrap();
        // While merging: delete main row 2 (id 2) and the first appended row
        // (id 3), append two more.
        let later = base
            .change(&main, &[2, 3], &table(&[5, 6], &["b", "c"]))
            .unwrap();
        let rebased = later.rebase(&base, &merged).unwrap();
        let want = rows(&later.merge(&main).unwrap());
        assert_eq!(rows(&rebased.merge(&merged).unwrap()), want);
        assert!(later.rebase(&Delta::empty(&merged), &merged).is_err());
    }
}
