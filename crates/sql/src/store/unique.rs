//! Declared keys stay keys. A table's unique columns (TPC-H's primary keys,
//! CH's single-column keys: [`Entry::unique_columns`]) and composite keys
//! (CH's TPC-C primary keys: [`Entry::keys`]) are facts the planner builds
//! on — join ordering, and GROUP BY's functional
//! dependencies, which read a grouped column back from one row of each key
//! (`functional.rs`). A write that left two live rows with one key value
//! would make those plans give wrong answers (`GROUP BY o_orderkey,
//! o_custkey` folding two customers into one group), so such a write is
//! refused with PostgreSQL's `unique_violation` (23505), as a primary key
//! refuses it there.
//!
//! The check runs inside the writing transaction, before its next table
//! version is built: the appended rows' keys must be distinct and absent
//! from the table's live rows, not counting the rows this same write
//! deletes (an UPDATE that keeps a row's key). Concurrent writers of one
//! table conflict at commit (first updater wins on the table's catalog
//! row), so two transactions cannot both add one key.
//!
//! Cost: one pass over the appended rows; nothing for an appended row that
//! keeps the key of a row the same write deletes (an UPDATE not setting a
//! key column); nothing for the main when some key column's appended values
//! all lie outside the main's range (its column statistics, computed once
//! per main); else a binary search per key in the main's sorted index of a
//! key column when one is built (`CREATE INDEX`), or one pass over the key
//! column with the most distinct values, with a range test before the hash
//! probe (~1–2 ms per million rows), and the whole tuple compared for the
//! candidates; plus the same through the delta's index or over its
//! appended rows.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use maestro_storage::column::{Column, Delta, DeltaIndex, FxHasher, IndexKey, Table, ValueRange};

use super::Entry;
use super::nulls::null_at;
use crate::error::{ErrorKind, Result, SqlError};

pub(super) type Set<T> = HashSet<T, BuildHasherDefault<FxHasher>>;

/// The appended rows' values of one key column: a row of the table whose
/// value is not among them cannot repeat an appended key.
pub(super) enum Keys<'a> {
    /// Integer-valued columns (integers, dates, decimals by their raw value:
    /// one column has one scale), with their range for a cheap first test.
    Ints {
        set: Set<i64>,
        lo: i64,
        hi: i64,
    },
    Strs(Set<&'a str>),
}

impl Keys<'_> {
    /// Integer keys, with their range.
    pub(super) fn ints(set: Set<i64>) -> Keys<'static> {
        let lo = set.iter().copied().min().unwrap_or(i64::MAX);
        let hi = set.iter().copied().max().unwrap_or(i64::MIN);
        Keys::Ints { set, lo, hi }
    }
}

fn int_at(col: &Column, r: usize) -> Option<i64> {
    Some(match col {
        Column::Int32(v) => v[r].into(),
        Column::Int64(v) => v[r],
        Column::Date(v) => v[r].into(),
        Column::Decimal(d) => d.values()[r],
        Column::Str(_) | Column::StrHeap(_) => return None,
    })
}

fn str_at(col: &Column, r: usize) -> Option<&str> {
    match col {
        Column::Str(d) => Some(d.get(r)),
        Column::StrHeap(h) => Some(h.get(r)),
        _ => None,
    }
}

/// `col[r]` as the error message shows it.
fn shown(col: &Column, r: usize) -> String {
    match col {
        Column::Decimal(d) => d.get(r).to_string(),
        Column::Date(v) => maestro_storage::column::Date(v[r]).to_string(),
        _ => int_at(col, r).map_or_else(
            || str_at(col, r).unwrap_or("").to_string(),
            |v| v.to_string(),
        ),
    }
}

fn violation(table: &str, columns: &[&str], values: &[String]) -> SqlError {
    let (columns, values) = (columns.join(", "), values.join(", "));
    SqlError::new(
        ErrorKind::UniqueViolation,
        format!(
            "duplicate key value violates the key ({columns}) of table \"{table}\": \
             Key ({columns})=({values}) already exists"
        ),
    )
}

/// One value of a key column, hashable (a tuple of them is a key).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Part<'a> {
    Int(i64),
    Str(&'a str),
}

fn part(col: &Column, r: usize) -> Part<'_> {
    match int_at(col, r) {
        Some(v) => Part::Int(v),
        None => Part::Str(str_at(col, r).unwrap_or("")),
    }
}

/// Row `r`'s values of the columns `idx` of `t`.
fn tuple<'t>(idx: &[usize], t: &'t Table, r: usize) -> Vec<Part<'t>> {
    idx.iter().map(|&i| part(t.column_at(i), r)).collect()
}

/// The set of `col`'s values at `rows`, for the first, cheap test of a row.
fn values_of<'c>(col: &'c Column, rows: &[usize]) -> Keys<'c> {
    match col {
        Column::Str(_) | Column::StrHeap(_) => {
            Keys::Strs(rows.iter().filter_map(|&r| str_at(col, r)).collect())
        }
        _ => Keys::ints(rows.iter().filter_map(|&r| int_at(col, r)).collect()),
    }
}

/// The positions of `key`'s columns in `entry`'s data and the one to look
/// candidates up by (the *probe* column); `None` for a key naming a column
/// the data lacks or no column.
///
/// The probe is a key column with a sorted index in the main (`CREATE
/// INDEX`: a search per key), else the one with the most distinct values in
/// the main's cached statistics: TPC-C's keys begin with the warehouse, one
/// value at W = 1, so probing by the first column made every row of
/// `stock` a candidate whose whole tuple was hashed — 5 ms per one-row
/// UPDATE at W = 1.
fn key_columns(entry: &Entry, key: &[String]) -> Option<(Vec<usize>, usize)> {
    let idx = key
        .iter()
        .map(|c| entry.data.column_index(c).ok())
        .collect::<Option<Vec<usize>>>()?;
    let probe = match idx.as_slice() {
        [] => return None,
        [only] => *only,
        _ => match idx.iter().find(|&&i| entry.data.has_sorted_index(i)) {
            Some(&i) => i,
            None => *idx
                .iter()
                .max_by_key(|&&i| entry.data.column_stats(i).distinct)
                .expect("a key of at least two columns"),
        },
    };
    Some((idx, probe))
}

/// A hash of each value `appended` holds of each of `entry`'s keys (a
/// unique column, or a composite key), with the key it belongs to,
/// ascending, once each: what a write inserting those rows locks
/// (`row_locks.rs`, `LockKey::Key`).
pub(super) fn key_hashes(entry: &Entry, appended: &Table) -> Vec<u64> {
    use std::hash::BuildHasher;
    if appended.num_rows() == 0 {
        return Vec::new();
    }
    let singles = entry.unique_columns.iter().map(std::slice::from_ref);
    let mut hashes = Vec::new();
    for (k, key) in singles
        .chain(entry.keys.iter().map(Vec::as_slice))
        .enumerate()
    {
        let Some((idx, _)) = key_columns(entry, key) else {
            continue;
        };
        let hasher = BuildHasherDefault::<FxHasher>::default();
        for r in 0..appended.num_rows() {
            hashes.push(hasher.hash_one((k, tuple(&idx, appended, r))));
        }
    }
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// Refuses the write of `entry` that deletes the live rows `deleted`
/// (combined ids, any order) and appends `appended` if it would leave two
/// live rows with one value of a key: a unique column, or a composite key
/// (`Entry::keys`: CH's `(o_w_id, o_d_id, o_id)`).
pub(super) fn check_unique(entry: &Entry, deleted: &[u32], appended: &Table) -> Result<()> {
    if appended.num_rows() == 0 || (entry.unique_columns.is_empty() && entry.keys.is_empty()) {
        return Ok(());
    }
    let mut gone = deleted.to_vec();
    gone.sort_unstable();
    let delta = entry.live_delta();
    let live = |id: usize| {
        let id = u32::try_from(id).expect("combined ids are u32");
        gone.binary_search(&id).is_err()
            && delta.is_none_or(|d| d.deleted().binary_search(&id).is_err())
    };
    let singles = entry.unique_columns.iter().map(std::slice::from_ref);
    for key in singles.chain(entry.keys.iter().map(Vec::as_slice)) {
        let Some((idx, probe)) = key_columns(entry, key) else {
            continue;
        };
        let names: Vec<&str> = key.iter().map(String::as_str).collect();
        let shown_at = |t: &Table, r: usize| -> Vec<String> {
            idx.iter().map(|&i| shown(t.column_at(i), r)).collect()
        };
        // A row with a NULL in the key repeats no key (two NULLs are
        // distinct, as in PostgreSQL): not checked, not matched.
        let masks: Vec<usize> = key.iter().filter_map(|c| entry.mask_column_of(c)).collect();
        let null_in_key = |t: &Table, r: usize| masks.iter().any(|&m| null_at(t, m, r));
        let rows: Vec<usize> = (0..appended.num_rows())
            .filter(|&r| !null_in_key(appended, r))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let mut tuples: Set<Vec<Part>> = Set::default();
        for &r in &rows {
            if !tuples.insert(tuple(&idx, appended, r)) {
                return Err(violation(&entry.name, &names, &shown_at(appended, r)));
            }
        }
        // An appended row holding the key of a row this write deletes (an
        // UPDATE that keeps a row's key) repeats no key: the deleted row
        // was live, so no other live row held its key (every version keeps
        // its keys unique), and the appended rows' keys are distinct.
        let kept = kept_keys(entry, &idx, deleted, &null_in_key);
        tuples.retain(|t| !kept.contains(t));
        let rows: Vec<usize> = rows
            .into_iter()
            .filter(|&r| !kept.contains(&tuple(&idx, appended, r)))
            .collect();
        if rows.is_empty() {
            continue;
        }
        // A row is a candidate when its probe column holds one of the
        // appended values (a search in its index, or a range test and a
        // hash probe), and a match when its whole tuple does.
        let values: Vec<Keys> = idx
            .iter()
            .map(|&i| values_of(appended.column_at(i), &rows))
            .collect();
        let probes = &values[idx
            .iter()
            .position(|&i| i == probe)
            .expect("probe is a key column")];
        let main = &entry.data;
        let outside = idx
            .iter()
            .zip(&values)
            .any(|(&i, v)| outside_main_range(entry, i, v));
        let matches_main = |r: usize| {
            live(r)
                && !null_in_key(main, r)
                && (idx.len() == 1 || tuples.contains(&tuple(&idx, main, r)))
        };
        let existing = if outside {
            None
        } else if main.has_sorted_index(probe) {
            in_index(entry, probe, appended.column_at(probe), &rows)
                .into_iter()
                .find(|&r| matches_main(r))
        } else {
            scan(main.column_at(probe), probes, &matches_main)
        };
        if let Some(r) = existing {
            return Err(violation(&entry.name, &names, &shown_at(main, r)));
        }
        if let Some(d) = delta {
            let tail = d.appended();
            let base = d.main_rows();
            let matches = |r: usize| {
                live(base + r)
                    && !null_in_key(tail, r)
                    && (idx.len() == 1 || tuples.contains(&tuple(&idx, tail, r)))
            };
            let hit = delta_rows_holding(entry, d, probe, appended, &rows, probes)
                .into_iter()
                .find(|&r| matches(r));
            if let Some(r) = hit {
                return Err(violation(&entry.name, &names, &shown_at(tail, r)));
            }
        }
    }
    Ok(())
}

/// The key tuples (columns `idx`) of the rows at `deleted` (combined ids of
/// `entry`) that are live there and hold no NULL in the key: keys a write
/// deleting those rows may append again without a look at the table.
fn kept_keys<'e>(
    entry: &'e Entry,
    idx: &[usize],
    deleted: &[u32],
    null_in_key: &dyn Fn(&Table, usize) -> bool,
) -> Set<Vec<Part<'e>>> {
    let delta = entry.live_delta();
    let main_rows = entry.data.num_rows();
    deleted
        .iter()
        .filter(|&id| delta.is_none_or(|d| d.deleted().binary_search(id).is_err()))
        .filter_map(|&id| {
            let id = id as usize;
            let (t, r) = if id < main_rows {
                (&*entry.data, id)
            } else {
                (delta?.appended(), id - main_rows)
            };
            (r < t.num_rows() && !null_in_key(t, r)).then(|| tuple(idx, t, r))
        })
        .collect()
}

/// Which of `appended`'s rows an `INSERT … ON CONFLICT DO NOTHING` into
/// `entry` skips: those whose value of one of `keys` (column sets) a live
/// row of `entry` holds, or an earlier row of `appended` that is kept (a
/// NULL in a key conflicts with nothing). Reads the key's probe column
/// (`key_columns`) of the main and of the delta once per key.
pub(super) fn conflicting(entry: &Entry, appended: &Table, keys: &[Vec<String>]) -> Vec<bool> {
    let rows = appended.num_rows();
    let delta = entry.live_delta();
    let live = |id: usize| {
        let id = u32::try_from(id).expect("combined ids are u32");
        delta.is_none_or(|d| d.deleted().binary_search(&id).is_err())
    };
    struct KeyState<'t> {
        idx: Vec<usize>,
        masks: Vec<usize>,
        taken: Set<Vec<Part<'t>>>,
    }
    let mut states: Vec<KeyState> = Vec::with_capacity(keys.len());
    for key in keys {
        let Some((idx, probe)) = key_columns(entry, key) else {
            continue;
        };
        let masks: Vec<usize> = key.iter().filter_map(|c| entry.mask_column_of(c)).collect();
        let null_in_key = |t: &Table, r: usize| masks.iter().any(|&m| null_at(t, m, r));
        let candidates: Vec<usize> = (0..rows).filter(|&r| !null_in_key(appended, r)).collect();
        let probes = values_of(appended.column_at(probe), &candidates);
        let mut taken: Set<Vec<Part>> = Set::default();
        let main = &*entry.data;
        for r in main_rows_holding(entry, probe, appended, &candidates, &probes) {
            if live(r) && !null_in_key(main, r) {
                taken.insert(tuple(&idx, main, r));
            }
        }
        if let Some(d) = delta {
            let (tail, base) = (d.appended(), d.main_rows());
            for r in delta_rows_holding(entry, d, probe, appended, &candidates, &probes) {
                if live(base + r) && !null_in_key(tail, r) {
                    taken.insert(tuple(&idx, tail, r));
                }
            }
        }
        states.push(KeyState { idx, masks, taken });
    }
    let mut skip = vec![false; rows];
    for (r, skipped) in skip.iter_mut().enumerate() {
        let tuples: Vec<Option<Vec<Part>>> = states
            .iter()
            .map(|k| {
                (!k.masks.iter().any(|&m| null_at(appended, m, r)))
                    .then(|| tuple(&k.idx, appended, r))
            })
            .collect();
        if states
            .iter()
            .zip(&tuples)
            .any(|(k, t)| t.as_ref().is_some_and(|t| k.taken.contains(t)))
        {
            *skipped = true;
            continue;
        }
        // Kept: later rows with one of its keys conflict with it.
        for (k, t) in states.iter_mut().zip(tuples) {
            if let Some(t) = t {
                k.taken.insert(t);
            }
        }
    }
    skip
}

/// For each row of `appended`, the combined id of the live row of `entry`
/// holding its value of `key` (`None`: no such row, or a NULL in its key):
/// the row an `INSERT … ON CONFLICT (key) DO UPDATE` updates instead.
/// Two rows of `appended` with one key value are 21000, as PostgreSQL's
/// "cannot affect row a second time". Reads the key's probe column of the
/// main and of the delta once.
pub(super) fn conflict_targets(
    entry: &Entry,
    appended: &Table,
    key: &[String],
) -> Result<Vec<Option<u32>>> {
    let rows = appended.num_rows();
    let Some((idx, probe)) = key_columns(entry, key) else {
        return Ok(vec![None; rows]);
    };
    let delta = entry.live_delta();
    let live = |id: usize| delta.is_none_or(|d| d.deleted().binary_search(&(id as u32)).is_err());
    let masks: Vec<usize> = key.iter().filter_map(|c| entry.mask_column_of(c)).collect();
    let null_in_key = |t: &Table, r: usize| masks.iter().any(|&m| null_at(t, m, r));
    let candidates: Vec<usize> = (0..rows).filter(|&r| !null_in_key(appended, r)).collect();
    let probes = values_of(appended.column_at(probe), &candidates);
    let mut holder: std::collections::HashMap<Vec<Part>, u32, BuildHasherDefault<FxHasher>> =
        Default::default();
    let main = &*entry.data;
    for r in main_rows_holding(entry, probe, appended, &candidates, &probes) {
        if live(r) && !null_in_key(main, r) {
            holder.insert(tuple(&idx, main, r), r as u32);
        }
    }
    if let Some(d) = delta {
        let (tail, base) = (d.appended(), d.main_rows());
        for r in delta_rows_holding(entry, d, probe, appended, &candidates, &probes) {
            if live(base + r) && !null_in_key(tail, r) {
                holder.insert(tuple(&idx, tail, r), (base + r) as u32);
            }
        }
    }
    let mut seen: Set<Vec<Part>> = Set::default();
    let mut out = vec![None; rows];
    for r in candidates {
        let t = tuple(&idx, appended, r);
        out[r] = holder.get(&t).copied();
        if !seen.insert(t) {
            return Err(SqlError::new(
                ErrorKind::CardinalityViolation,
                format!(
                    "ON CONFLICT DO UPDATE command cannot affect row a second time: two \
                     proposed rows have one value of ({})",
                    key.join(", ")
                ),
            ));
        }
    }
    Ok(out)
}

/// The first row of `col` holding one of `keys` for which `live` holds.
fn scan(col: &Column, keys: &Keys, live: &dyn Fn(usize) -> bool) -> Option<usize> {
    rows_holding(col, keys).find(|&r| live(r))
}

/// The rows of `col` holding one of `keys`, ascending: over the column's
/// own slice, with the keys' range tested before the hash probe (a loop
/// the compiler keeps tight: ~1 ms per million rows). Also RF2's search
/// for the rows of the orders it deletes (`refresh.rs`).
pub(super) fn rows_holding<'c>(
    col: &'c Column,
    keys: &'c Keys,
) -> Box<dyn Iterator<Item = usize> + 'c> {
    fn ints<'c, T: Copy + Into<i64>>(
        v: &'c [T],
        set: &'c Set<i64>,
        lo: i64,
        hi: i64,
    ) -> Box<dyn Iterator<Item = usize> + 'c> {
        Box::new(v.iter().enumerate().filter_map(move |(r, &x)| {
            let x: i64 = x.into();
            (x >= lo && x <= hi && set.contains(&x)).then_some(r)
        }))
    }
    match keys {
        Keys::Ints { set, lo, hi } => match col {
            Column::Int32(v) | Column::Date(v) => ints(v, set, *lo, *hi),
            Column::Int64(v) => ints(v, set, *lo, *hi),
            Column::Decimal(d) => ints(d.values(), set, *lo, *hi),
            Column::Str(_) | Column::StrHeap(_) => Box::new(std::iter::empty()),
        },
        Keys::Strs(set) => Box::new(
            (0..col.len()).filter(move |&r| str_at(col, r).is_some_and(|s| set.contains(s))),
        ),
    }
}

/// Whether the main's column statistics put every key outside the main's
/// values: new keys above the largest (TPC-H's refresh orders, a sequence)
/// need no look at the main. The statistics are kept with the main
/// (queries and merges compute them too); the first write that needs them
/// computes them, one pass, which later writes to this main reuse. Only
/// exact for keys below 2^53 (statistics are doubles); others are looked
/// up.
fn outside_main_range(entry: &Entry, i: usize, keys: &Keys) -> bool {
    const EXACT_MAX: i64 = 1 << 53;
    let Keys::Ints { lo, hi, .. } = keys else {
        return false;
    };
    if lo.unsigned_abs() >= EXACT_MAX.unsigned_abs()
        || hi.unsigned_abs() >= EXACT_MAX.unsigned_abs()
    {
        return false;
    }
    let unit = match entry.data.column_at(i) {
        Column::Decimal(d) => 10f64.powi(i32::from(d.scale())),
        _ => 1.0,
    };
    match entry.data.column_stats(i).range {
        ValueRange::Empty => true,
        ValueRange::Numeric { min, max } => {
            let (lo, hi) = (*lo as f64 / unit, *hi as f64 / unit);
            lo > max || hi < min
        }
        ValueRange::Text { .. } => false,
    }
}

/// The rows of `entry`'s main whose probe column (`key_columns`) holds one
/// of `probes` (the values of `appended` at `rows`): through the column's
/// sorted index when it has one (a point upsert then costs a search, not a
/// scan of the column), else a scan. Callers compare the whole key.
fn main_rows_holding(
    entry: &Entry,
    probe: usize,
    appended: &Table,
    rows: &[usize],
    probes: &Keys,
) -> Vec<usize> {
    if entry.data.has_sorted_index(probe) {
        in_index(entry, probe, appended.column_at(probe), rows)
    } else {
        rows_holding(entry.data.column_at(probe), probes).collect()
    }
}

/// The main's rows holding one of `added`'s values at `rows` in column
/// `i`, by its sorted index.
fn in_index(entry: &Entry, i: usize, added: &Column, rows: &[usize]) -> Vec<usize> {
    let main = entry.data.column_at(i);
    let index = entry.data.sorted_index(i);
    index
        .any_of(main, &index_keys(main, added, rows))
        .map_or_else(Vec::new, |rows| {
            rows.into_iter().map(|r| r as usize).collect()
        })
}

/// The appended rows (positions, ascending) of `entry`'s delta `d` whose
/// column `probe` holds one of `probes` (the values of `appended` there at
/// `rows`): through the delta's index of the column where it has one, the
/// rows past its covered prefix scanned (only a version no write made, a
/// merge's swap or DDL, has such rows); else a scan of the whole delta.
fn delta_rows_holding(
    entry: &Entry,
    d: &Delta,
    probe: usize,
    appended: &Table,
    rows: &[usize],
    probes: &Keys,
) -> Vec<usize> {
    let tail = d.appended().column_at(probe);
    let found = entry
        .delta_index(probe)
        .and_then(|index| Some((in_delta_index(index, tail, appended, probe, rows)?, index)));
    // No index, or one that cannot answer (it never fails for keys taken
    // from the same column): the scan.
    let Some((mut out, index)) = found else {
        return rows_holding(tail, probes).collect();
    };
    let covered = index.covered();
    if covered < tail.len() {
        out.extend(rows_holding(tail, probes).filter(|&r| r >= covered));
    }
    out
}

/// The delta's appended rows (positions) below its index's covered prefix
/// holding one of the values of `appended`'s column `i` at `rows`; `None`
/// if the index cannot answer ([`DeltaIndex::any_of`]).
fn in_delta_index(
    index: &DeltaIndex,
    tail: &Column,
    appended: &Table,
    i: usize,
    rows: &[usize],
) -> Option<Vec<usize>> {
    let keys = index_keys(tail, appended.column_at(i), rows);
    let found = index.any_of(tail, &keys)?;
    Some(found.into_iter().map(|r| r as usize).collect())
}

/// `added`'s values at `rows` as keys of an index of column `col` (same
/// type: a decimal keeps its column's scale).
fn index_keys(col: &Column, added: &Column, rows: &[usize]) -> Vec<IndexKey> {
    let scale = match col {
        Column::Decimal(d) => d.scale(),
        _ => 0,
    };
    rows.iter()
        .map(|&r| match int_at(added, r) {
            Some(v) => IndexKey::Num {
                value: v.into(),
                scale,
            },
            None => IndexKey::Str(str_at(added, r).unwrap_or("").to_string()),
        })
        .collect()
}
