//! What one analytical query reads from the column mirror: every CH table
//! as a main and (for the tracked ones) a delta, all as one snapshot sees
//! them — a [`Catalog`] for the SQL engine.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use maestro_sql::catalog::table_def;
use maestro_sql::store::LoadedTable;
use maestro_sql::{Catalog, TableDef};
use maestro_storage::column::{Delta, Table};
use maestro_tpcc::mvcc::MvccDatabase;
use maestro_txn::Snapshot;

use super::mirror::{ColumnMirror, counted_tables};

/// One table of a view.
pub struct ViewTable {
    table: LoadedTable,
    delta: Option<Delta>,
    /// By combined id (main rows, then appended ones), for the columns
    /// with NULLs.
    nulls: Vec<Option<Arc<Vec<bool>>>>,
}

impl ViewTable {
    /// Allocated bytes of the delta's appended rows and of the NULL masks
    /// by combined id (the main's columns are the main's: `Main::heap_bytes`).
    pub(crate) fn delta_heap_bytes(&self) -> usize {
        // Without a delta the masks are the main's own (shared).
        self.delta.as_ref().map_or(0, |d| {
            let masks: usize = self.nulls.iter().flatten().map(|m| m.capacity()).sum();
            d.appended().heap_bytes() + d.deleted().len() * 4 + masks
        })
    }

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

    /// The delta, also when empty.
    pub(crate) fn raw_delta(&self) -> Option<&Delta> {
        self.delta.as_ref()
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

/// Every CH table as one snapshot sees it: the tracked tables' mains and
/// deltas (built when the view is made, `ColumnMirror::view`), WAREHOUSE
/// and DISTRICT read whole when a query first reads them, the fixed CH
/// tables.
pub struct ColumnView<'m> {
    mirror: &'m ColumnMirror,
    db: &'m MvccDatabase,
    snapshot: Snapshot,
    taken_at: Instant,
    /// Per tracked table, its main and delta at `snapshot`.
    tracked: Vec<Arc<ViewTable>>,
    /// WAREHOUSE and DISTRICT, once read.
    counted: OnceLock<Result<[ViewTable; 2], String>>,
    /// Journal rows the deltas were brought to `snapshot` with.
    delta_rows: usize,
}

/// Where a table of the view comes from.
#[derive(Clone, Copy)]
enum Source {
    Tracked(usize),
    /// WAREHOUSE (0) or DISTRICT (1).
    Counted(usize),
    Fixed(usize),
}

impl<'m> ColumnView<'m> {
    pub(crate) fn new(
        mirror: &'m ColumnMirror,
        db: &'m MvccDatabase,
        snapshot: Snapshot,
        tables: Vec<Arc<ViewTable>>,
        delta_rows: usize,
    ) -> ColumnView<'m> {
        ColumnView {
            tracked: tables,
            mirror,
            db,
            snapshot,
            taken_at: Instant::now(),
            counted: OnceLock::new(),
            delta_rows,
        }
    }

    /// The snapshot every table is read at.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// When the snapshot was taken (a query's freshness is its age at the
    /// end).
    pub fn taken_at(&self) -> Instant {
        self.taken_at
    }

    /// Journal rows the view's deltas were brought to its snapshot with
    /// (the rows written since the previous view, or since the mains for a
    /// delta built from its main).
    pub fn delta_rows(&self) -> usize {
        self.delta_rows
    }

    /// Why WAREHOUSE or DISTRICT failed to build, if they did (the
    /// [`Catalog`] methods can only say "no such table").
    pub fn build_failure(&self) -> Option<String> {
        self.counted.get()?.as_ref().err().cloned()
    }

    fn source(&self, name: &str) -> Option<Source> {
        let name = if name == "oorder" { "orders" } else { name };
        match name {
            "warehouse" => return Some(Source::Counted(0)),
            "district" => return Some(Source::Counted(1)),
            _ => {}
        }
        if let Some(i) = self.mirror.tracked_names().position(|n| n == name) {
            return Some(Source::Tracked(i));
        }
        self.mirror
            .fixed()
            .iter()
            .position(|t| t.name() == name)
            .map(Source::Fixed)
    }

    fn get(&self, name: &str) -> Result<&ViewTable, String> {
        let source = self
            .source(name)
            .ok_or_else(|| format!("no CH table {name}"))?;
        match source {
            Source::Tracked(i) => Ok(&self.tracked[i]),
            Source::Counted(i) => self
                .counted
                .get_or_init(|| {
                    let (w, d) = counted_tables(self.db, &self.snapshot)?;
                    Ok([ViewTable::main(w), ViewTable::main(d)])
                })
                .as_ref()
                .map(|t| &t[i])
                .map_err(Clone::clone),
            Source::Fixed(i) => Ok(&self.mirror.fixed()[i]),
        }
    }
}

impl Catalog for ColumnView<'_> {
    fn table(&self, name: &str) -> Option<TableDef> {
        let t = self.get(name).ok()?;
        let mut def = table_def(&t.table.data);
        def.name = name.to_string();
        def.rows = t.live_rows();
        def.unique_columns = t.table.unique_columns.clone();
        def.keys = t.table.keys.clone();
        for (i, (c, spec)) in def.columns.iter_mut().zip(&t.table.columns).enumerate() {
            c.ty = spec.ty.sql_type();
            c.nullable = t.nulls.get(i).is_some_and(Option::is_some);
        }
        Some(def)
    }

    fn data(&self, name: &str) -> Option<&Table> {
        self.get(name).ok().map(|t| &*t.table.data)
    }

    fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.mirror.tracked_names().map(String::from).collect();
        names.extend(["oorder", "warehouse", "district"].map(String::from));
        names.extend(self.mirror.fixed().iter().map(|t| t.name().to_string()));
        names.sort();
        names
    }

    fn delta(&self, name: &str) -> Option<&Delta> {
        self.get(name).ok()?.delta()
    }

    fn null_mask(&self, name: &str, column: usize) -> Option<Arc<Vec<bool>>> {
        self.get(name).ok()?.nulls.get(column)?.clone()
    }
}
