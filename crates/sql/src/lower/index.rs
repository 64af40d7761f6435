//! The index scan (`crate::index_scan` chooses it): the candidate rows are
//! the main's positions the sorted index selects and the appended rows
//! the delta's index selects (`store/index.rs`, "The delta's index"), plus
//! the appended rows past that index's covered prefix (none after a write;
//! the whole delta after a merge's swap or DDL), less the rows the delta
//! deleted; the scan's whole filter then runs on those ascending row ids.
//! Everything above reads the relation as a plain scan's.

use std::sync::Arc;

use maestro_storage::column::Delta;

use super::Lowering;
use super::vector::{Relation, RowIds, Vector};
use crate::error::{Result, SqlError};
use crate::plan::{ColumnId, Expr, IndexScan};

impl<'a> Lowering<'a> {
    pub(super) fn index_scan(
        &self,
        table: &str,
        columns: &[(ColumnId, usize)],
        filter: &[Expr],
        ix: &IndexScan,
    ) -> Result<Relation<'a>> {
        let data = self
            .catalog
            .data(table)
            .ok_or_else(|| SqlError::invalid(format!("table {table} has no data")))?;
        if ix.column >= data.num_columns() {
            return Err(SqlError::invalid(format!(
                "index {} is on no column of table {table}",
                ix.name
            )));
        }
        let col = data.column_at(ix.column);
        // Cached in the main (built when the index was declared or the
        // main merged; here only if neither happened on this version).
        let sorted = data.sorted_index(ix.column);
        let main = crate::index_scan::rows(&sorted, col, &ix.lookup).ok_or_else(|| {
            SqlError::invalid(format!("index {}: a key of another type", ix.name))
        })?;
        let delta = self.catalog.delta(table).filter(|d| !d.is_empty());
        let ids = Arc::new(match delta {
            Some(d) => {
                let appended = d.appended().column_at(ix.column);
                let hits = self.catalog.delta_index(table, ix.column).and_then(|dix| {
                    let rows = crate::index_scan::delta_rows(dix, appended, &ix.lookup)?;
                    Some((rows, dix.covered()))
                });
                candidates(main, d, hits)
            }
            None => main,
        });
        let cols = columns
            .iter()
            .map(|&(id, i)| {
                if self.catalog.row_id_column(table) == Some(i) {
                    return (id, Vector::Int(ids.iter().map(|&r| i64::from(r)).collect()));
                }
                let base = Vector::Base {
                    column: data.column_at(i),
                    tail: delta.map(|d| d.appended().column_at(i)),
                    rows: Some(RowIds::ascending(Arc::clone(&ids))),
                };
                // A NULL mask is by table row: taken at the candidates.
                let nulls = self.catalog.null_flags_at(table, i, &ids).map(Arc::new);
                (id, self.stored_vector(id, base, nulls))
            })
            .collect();
        let rel = Relation {
            len: ids.len(),
            cols,
        };
        self.filter(rel, filter)
    }
}

/// The combined ids of the live rows among the main positions `main`
/// (ascending) and the delta's appended rows, ascending: with `indexed` =
/// (the appended positions the delta's index selected, ascending; the
/// index's covered prefix), those and every appended row past the prefix;
/// without, every appended row. One merge pass against the delta's
/// deleted ids (ascending too).
fn candidates(main: Vec<u32>, d: &Delta, indexed: Option<(Vec<u32>, usize)>) -> Vec<u32> {
    let base = d.main_rows() as u32;
    let (hits, covered) = indexed.unwrap_or_default();
    let appended = hits
        .into_iter()
        .map(|p| base + p)
        .chain(base + covered as u32..d.id_space() as u32);
    let ids = main.into_iter().chain(appended);
    let deleted = d.deleted();
    // A point lookup's few candidates against tens of thousands of deleted
    // ids: a binary search each (~log₂ d steps) instead of walking the
    // deleted ids up to the last candidate (the walk was ~1.4 % of a pgbench
    // server at scale 50). Bound guessed: a search costs ~16 steps of the walk.
    let few = ids
        .size_hint()
        .1
        .is_some_and(|n| n.saturating_mul(16) < deleted.len());
    if few {
        return ids
            .filter(|id| deleted.binary_search(id).is_err())
            .collect();
    }
    let mut out = Vec::with_capacity(ids.size_hint().0);
    let mut dead = deleted.iter().copied().peekable();
    for id in ids {
        while dead.next_if(|&x| x < id).is_some() {}
        if dead.peek() != Some(&id) {
            out.push(id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use maestro_storage::column::{Column, Table};

    #[test]
    fn candidates_drop_deleted_ids_and_add_live_appended_rows() {
        let main = Table::new("t", [("k", Column::Int64(vec![1, 2, 3, 4]))]).unwrap();
        let more = Table::new("t", [("k", Column::Int64(vec![5, 6]))]).unwrap();
        // Delete main rows 1 and 3 and appended row 5 (id 5).
        let d = Delta::empty(&main).change(&main, &[], &more).unwrap();
        let d = d.change(&main, &[1, 3, 5], &main.empty_like()).unwrap();
        assert_eq!(candidates(vec![0, 1, 2], &d, None), [0, 2, 4]);
        assert_eq!(candidates(vec![], &d, None), [4]);
        assert_eq!(candidates(vec![3], &d, None), [4]);
        // With the delta's index: its hits (appended positions) below its
        // prefix, every appended row past it.
        assert_eq!(candidates(vec![0], &d, Some((vec![], 2))), [0]);
        assert_eq!(candidates(vec![0], &d, Some((vec![0], 1))), [0, 4]);
        assert_eq!(
            candidates(vec![0], &d, Some((vec![1], 2))),
            [0],
            "5 is deleted"
        );
        // Few candidates among many deleted ids take the binary searches:
        // the same answers as the walk.
        let big = Table::new("t", [("k", Column::Int64((0..100).collect()))]).unwrap();
        let odd: Vec<u32> = (1..100).step_by(2).collect();
        let d = Delta::empty(&big)
            .change(&big, &odd, &big.empty_like())
            .unwrap();
        assert_eq!(candidates(vec![2, 3, 98], &d, None), [2, 98]);
        assert_eq!(candidates((0..100).collect(), &d, None).len(), 50);
    }
}
