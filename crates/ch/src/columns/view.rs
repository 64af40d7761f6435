//! What one analytical query reads from the column mirror: every CH table
//! as a main and (for the tracked ones) a delta, all as one snapshot saw
//! them — a [`Catalog`] for the SQL engine.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use maestro_sql::catalog::table_def;
use maestro_sql::store::LoadedTable;
use maestro_sql::{Catalog, TableDef};
use maestro_storage::column::{Delta, Table};
use maestro_txn::Snapshot;

/// One table of a view.
pub struct ViewTable {
    table: LoadedTable,
    delta: Option<Delta>,
    /// By combined id (main rows, then appended ones), for the columns
    /// with NULLs.
    nulls: Vec<Option<Arc<Vec<bool>>>>,
}

impl ViewTable {
    /// A table that is its main alone.
    pub(crate) fn main(table: LoadedTable) -> ViewTable {
        let nulls = table.nulls.clone();
        ViewTable {
            table,
            delta: None,
            nulls,
        }
    }

    /// `main` with `delta` on top; `nulls` by combined id.
    pub(crate) fn with_delta(
        main: &LoadedTable,
        delta: Delta,
        nulls: Vec<Option<Arc<Vec<bool>>>>,
    ) -> ViewTable {
        ViewTable {
            table: main.clone(),
            delta: Some(delta),
            nulls,
        }
    }

    pub(crate) fn name(&self) -> &str {
        self.table.data.name()
    }

    pub(crate) fn delta(&self) -> Option<&Delta> {
        self.delta.as_ref().filter(|d| !d.is_empty())
    }

    pub(crate) fn nulls(&self) -> &[Option<Arc<Vec<bool>>>] {
        &self.nulls
    }

    /// Rows the table holds (main and delta).
    pub fn live_rows(&self) -> usize {
        self.delta()
            .map_or(self.table.data.num_rows(), Delta::live_rows)
    }
}

/// Every CH table as one snapshot sees it.
pub struct ColumnView {
    snapshot: Snapshot,
    taken_at: Instant,
    tables: HashMap<String, Arc<ViewTable>>,
    delta_rows: usize,
}

impl ColumnView {
    pub(crate) fn new(
        snapshot: Snapshot,
        taken_at: Instant,
        tables: HashMap<String, Arc<ViewTable>>,
        delta_rows: usize,
    ) -> ColumnView {
        ColumnView {
            snapshot,
            taken_at,
            tables,
            delta_rows,
        }
    }

    /// The snapshot every table was read at.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// When the snapshot was taken (a query's freshness is its age at the
    /// end).
    pub fn taken_at(&self) -> Instant {
        self.taken_at
    }

    /// Rows the journal named since the mains' snapshot (all tables): what
    /// the deltas were built from.
    pub fn delta_rows(&self) -> usize {
        self.delta_rows
    }

    pub fn table_rows(&self, name: &str) -> Option<usize> {
        Some(self.tables.get(name)?.live_rows())
    }
}

impl Catalog for ColumnView {
    fn table(&self, name: &str) -> Option<TableDef> {
        let t = self.tables.get(name)?;
        let mut def = table_def(&t.table.data);
        def.rows = t.live_rows();
        def.unique_columns = t.table.unique_columns.clone();
        for (i, (c, spec)) in def.columns.iter_mut().zip(&t.table.columns).enumerate() {
            c.ty = spec.ty.sql_type();
            c.nullable = t.nulls.get(i).is_some_and(Option::is_some);
        }
        Some(def)
    }

    fn data(&self, name: &str) -> Option<&Table> {
        self.tables.get(name).map(|t| &*t.table.data)
    }

    fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tables.keys().cloned().collect();
        names.sort();
        names
    }

    fn delta(&self, name: &str) -> Option<&Delta> {
        self.tables.get(name)?.delta()
    }

    fn null_mask(&self, name: &str, column: usize) -> Option<Arc<Vec<bool>>> {
        self.tables.get(name)?.nulls.get(column)?.clone()
    }
}
