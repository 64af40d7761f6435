//! A table's change journal: which rows committed transactions wrote, in
//! commit order — what a read-optimized copy of the table (a column main
//! built from one snapshot, `maestro_ch::columns`) needs to find the rows
//! that changed after its snapshot without reading every row.
//!
//! Protocol. [`Journal::record`] is called for every row of a committing
//! transaction's write set *under the clock's commit lock*, after the
//! commit timestamp is drawn and before `visible` is published
//! (`Transaction::commit`). Hence:
//! - entries are appended in ascending timestamp order (commit timestamps
//!   are drawn one at a time under that lock), so a range lookup is a
//!   binary search;
//! - a snapshot reading at `read_ts` finds every entry with `ts ≤ read_ts`
//!   already present: that transaction published `visible ≥ ts` (the
//!   snapshot's source) only after recording.
//!
//! An aborted transaction never records (validation and log failures return
//! before the notes). Rows written by transactions that committed before
//! the journal was enabled are not recorded, so a reader must build its
//! base from a snapshot taken after [`crate::Table::track_changes`] returned
//! *and* after every transaction writing the table at that moment finished
//! — in practice: enable before writers start (the CH database does so
//! before its terminals run).
//!
//! Memory: one `(Timestamp, RowId)` per written row until the reader calls
//! [`Journal::forget_upto`] (the column copy's merge does, after installing
//! the main that includes those writes).

use std::collections::VecDeque;

use parking_lot::Mutex;

use crate::arena::RowId;
use crate::clock::Timestamp;

#[derive(Default)]
pub(crate) struct Journal {
    entries: Mutex<VecDeque<(Timestamp, RowId)>>,
}

impl Journal {
    /// Row `row` was written by the transaction committing at `ts`. Called
    /// under the commit lock (see the module docs).
    pub(crate) fn record(&self, ts: Timestamp, row: RowId) {
        let mut entries = self.entries.lock();
        debug_assert!(
            entries.back().is_none_or(|&(last, _)| last <= ts),
            "journal entries out of commit order: {:?} then {ts}",
            entries.back()
        );
        entries.push_back((ts, row));
    }

    /// The rows written by transactions committed in `(after, upto]`,
    /// ascending and each once.
    pub(crate) fn rows_between(&self, after: Timestamp, upto: Timestamp) -> Vec<RowId> {
        let mut rows: Vec<RowId> = {
            let entries = self.entries.lock();
            let start = entries.partition_point(|&(ts, _)| ts <= after);
            let end = entries.partition_point(|&(ts, _)| ts <= upto);
            entries
                .range(start..end.max(start))
                .map(|&(_, row)| row)
                .collect()
        };
        rows.sort_unstable();
        rows.dedup();
        rows
    }

    /// Drops the entries of transactions committed at or before `ts`.
    pub(crate) fn forget_upto(&self, ts: Timestamp) {
        let mut entries = self.entries.lock();
        let n = entries.partition_point(|&(t, _)| t <= ts);
        entries.drain(..n);
    }

    /// Entries of transactions committed after `after`.
    pub(crate) fn count_after(&self, after: Timestamp) -> usize {
        let entries = self.entries.lock();
        entries.len() - entries.partition_point(|&(ts, _)| ts <= after)
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_half_open_sorted_and_deduplicated() {
        let j = Journal::default();
        for (ts, row) in [(3, 9), (3, 1), (5, 4), (5, 9), (8, 2)] {
            j.record(ts, row);
        }
        assert_eq!(j.rows_between(0, 10), vec![1, 2, 4, 9]);
        assert_eq!(j.rows_between(3, 5), vec![4, 9]);
        assert_eq!(j.rows_between(5, 7), Vec::<RowId>::new());
        assert_eq!(j.rows_between(8, 3), Vec::<RowId>::new());
        assert_eq!(j.count_after(3), 3);
        assert_eq!(j.count_after(8), 0);
        j.forget_upto(5);
        assert_eq!(j.len(), 1);
        assert_eq!(j.rows_between(0, 10), vec![2]);
    }
}
