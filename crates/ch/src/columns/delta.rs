//! One tracked table's column main and the delta on top of it as of a
//! snapshot — built incrementally: a later snapshot's delta is the earlier
//! one changed by the rows the journal names in between (their previous
//! versions' combined ids deleted, their visible versions appended), so
//! consecutive queries pay for the rows written between them, not for
//! every row written since the main.

use std::collections::HashMap;
use std::sync::Arc;

use maestro_sql::store::LoadedTable;
use maestro_storage::column::{Delta, DeltaError};
use maestro_txn::{RowId, Snapshot, Timestamp};

use super::mirror::Tracked;
use super::view::ViewTable;

/// No main position (a row inserted after the main's snapshot).
const NOT_IN_MAIN: u32 = u32::MAX;

/// One table's main: its column table and where its rows came from.
pub(crate) struct Main {
    /// The snapshot it was built from.
    pub(crate) ts: Timestamp,
    pub(crate) table: LoadedTable,
    /// The row id of each main position.
    row_ids: Vec<RowId>,
    /// The main position of each row id below its length (`NOT_IN_MAIN`:
    /// none).
    position: Vec<u32>,
}

impl Main {
    /// Allocated bytes: the columns (dictionaries included), the NULL masks
    /// and the row-id maps.
    pub(crate) fn heap_bytes(&self) -> usize {
        let masks: usize = self
            .table
            .nulls
            .iter()
            .flatten()
            .map(|m| m.capacity())
            .sum();
        self.table.data.heap_bytes()
            + masks
            + self.row_ids.capacity() * std::mem::size_of::<RowId>()
            + self.position.capacity() * std::mem::size_of::<u32>()
    }

    pub(crate) fn new(ts: Timestamp, table: LoadedTable, row_ids: Vec<RowId>) -> Main {
        let len = row_ids.iter().max().map_or(0, |&r| r as usize + 1);
        let mut position = vec![NOT_IN_MAIN; len];
        for (p, &r) in row_ids.iter().enumerate() {
            position[r as usize] = p as u32;
        }
        Main {
            ts,
            table,
            row_ids,
            position,
        }
    }

    /// The table as `snapshot` sees it, read whole (the fallback when a
    /// delta cannot hold a change).
    pub(crate) fn scanned(source: &dyn Tracked, snapshot: &Snapshot) -> Result<Main, String> {
        let (loaded, row_ids) = source.rows(snapshot, None)?;
        Ok(Main::new(snapshot.read_ts(), loaded, row_ids))
    }

    fn position_of(&self, row: RowId) -> Option<u32> {
        usize::try_from(row)
            .ok()
            .and_then(|r| self.position.get(r))
            .copied()
            .filter(|&p| p != NOT_IN_MAIN)
    }
}

/// A main and its delta as of `ts`.
pub(crate) struct Built {
    pub(crate) main: Arc<Main>,
    pub(crate) ts: Timestamp,
    pub(crate) table: Arc<ViewTable>,
    /// Each row changed since the main: the combined id of its live
    /// appended version, or `None` (deleted, or inserted and deleted).
    changed: HashMap<RowId, Option<u32>>,
    /// The row id of each appended row (combined id `main rows + i`).
    appended_ids: Vec<RowId>,
}

/// Why a delta could not be extended.
pub(crate) enum Extend {
    /// A string a dictionary column's main lacks: read the table whole.
    NewString,
    Failed(String),
}

impl Built {
    /// Allocated bytes of the delta beyond its main (appended rows, masks,
    /// the changed-row map).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.table.delta_heap_bytes()
            + self.changed.capacity() * std::mem::size_of::<(RowId, Option<u32>)>()
            + self.appended_ids.capacity() * std::mem::size_of::<RowId>()
    }

    /// `main` with no change on top.
    pub(crate) fn of(main: &Arc<Main>) -> Built {
        Built {
            main: Arc::clone(main),
            ts: main.ts,
            table: Arc::new(ViewTable::main(main.table.clone())),
            changed: HashMap::new(),
            appended_ids: Vec::new(),
        }
    }

    /// Brings the delta to `snapshot` (at or after `self.ts`); returns the
    /// journal rows it read.
    pub(crate) fn extend(
        &mut self,
        source: &dyn Tracked,
        snapshot: &Snapshot,
    ) -> Result<usize, Extend> {
        let upto = snapshot.read_ts();
        debug_assert!(upto >= self.ts, "extending a delta back in time");
        let rows = source.changed(self.ts, upto);
        if rows.is_empty() {
            self.ts = upto;
            return Ok(0);
        }
        let main = &self.main.table.data;
        let mut deleted: Vec<u32> = rows
            .iter()
            .filter_map(|r| match self.changed.get(r) {
                Some(appended) => *appended,
                None => self.main.position_of(*r),
            })
            .collect();
        deleted.sort_unstable();
        let (appended, ids) = source.rows(snapshot, Some(&rows)).map_err(Extend::Failed)?;
        let base = self.table.raw_delta();
        let empty;
        let base = match base {
            Some(d) => d,
            None => {
                empty = Delta::empty(main);
                &empty
            }
        };
        let before = base.id_space();
        let delta = base
            .change(main, &deleted, &appended.data)
            .map_err(|e| match e {
                DeltaError::NewString { .. } => Extend::NewString,
                e => Extend::Failed(format!("{}: {e}", source.name())),
            })?;
        for r in &rows {
            self.changed.insert(*r, None);
        }
        for (i, r) in ids.iter().enumerate() {
            self.changed.insert(*r, Some((before + i) as u32));
        }
        self.appended_ids.extend_from_slice(&ids);
        let nulls = self
            .table
            .nulls()
            .iter()
            .zip(&appended.nulls)
            .map(|(m, a)| concat_masks(m, before, a, ids.len()))
            .collect();
        self.table = Arc::new(ViewTable::with_delta(&self.main.table, delta, nulls));
        self.ts = upto;
        Ok(rows.len())
    }

    /// What [`MergeInput::merged`] needs (shares the data; copies the
    /// appended rows' ids).
    pub(crate) fn merge_input(&self) -> MergeInput {
        MergeInput {
            main: Arc::clone(&self.main),
            ts: self.ts,
            table: Arc::clone(&self.table),
            appended_ids: self.appended_ids.clone(),
            changes: self.changed.len(),
        }
    }
}

/// A delta to fold into a new main.
pub(crate) struct MergeInput {
    main: Arc<Main>,
    ts: Timestamp,
    table: Arc<ViewTable>,
    appended_ids: Vec<RowId>,
    changes: usize,
}

impl MergeInput {
    /// Rows changed since the main.
    pub(crate) fn changes(&self) -> usize {
        self.changes
    }

    /// The main this delta merged into, as of its snapshot.
    pub(crate) fn merged(&self) -> Result<Main, String> {
        let Some(delta) = self.table.delta() else {
            return Ok(Main::new(
                self.ts,
                self.main.table.clone(),
                self.main.row_ids.clone(),
            ));
        };
        let main = &self.main.table.data;
        let data = delta
            .merge(main)
            .map_err(|e| format!("{}: {e}", main.name()))?;
        let main_rows = main.num_rows();
        let live = delta.live_ids();
        let row_ids = live
            .iter()
            .map(|&id| match (id as usize).checked_sub(main_rows) {
                None => self.main.row_ids[id as usize],
                Some(i) => self.appended_ids[i],
            })
            .collect();
        let nulls = self
            .table
            .nulls()
            .iter()
            .map(|mask| {
                let mask = mask.as_ref()?;
                let kept: Vec<bool> = live.iter().map(|&id| mask[id as usize]).collect();
                kept.contains(&true).then(|| Arc::new(kept))
            })
            .collect();
        let table = LoadedTable {
            data: Arc::new(data),
            nulls,
            ..self.main.table.clone()
        };
        Ok(Main::new(self.ts, table, row_ids))
    }
}

/// The NULL mask over `before` rows then `appended_rows` more, by combined
/// id (`None`: no NULL in either).
fn concat_masks(
    before: &Option<Arc<Vec<bool>>>,
    before_rows: usize,
    appended: &Option<Arc<Vec<bool>>>,
    appended_rows: usize,
) -> Option<Arc<Vec<bool>>> {
    if before.is_none() && appended.is_none() {
        return None;
    }
    let mut mask = Vec::with_capacity(before_rows + appended_rows);
    match before {
        Some(m) => mask.extend_from_slice(m),
        None => mask.resize(before_rows, false),
    }
    match appended {
        Some(a) => mask.extend_from_slice(a),
        None => mask.resize(before_rows + appended_rows, false),
    }
    Some(Arc::new(mask))
}
