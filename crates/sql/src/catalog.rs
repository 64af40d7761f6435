//! `Catalog`: what the binder and the executor need to know about tables —
//! their columns and types, their size, and (for running) their data. The
//! TPC-H implementation reads the loaded column store; a later one can be
//! backed by the shared MVCC storage (a snapshot's tables).

use std::sync::Arc;

use maestro_storage::column::{Delta, DeltaIndex, Table};
use maestro_tpch::Database;

use crate::types::SqlType;

/// A column as the binder sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    /// Whether the column holds NULLs ([`Catalog::null_mask`] says where).
    pub nullable: bool,
}

/// A table as the binder sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct TableDef {
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Row count (for join ordering and EXPLAIN).
    pub rows: usize,
    /// Columns whose values are unique (single-column keys), for join
    /// ordering; may be empty.
    pub unique_columns: Vec<String>,
    /// Composite keys: column sets whose values together are unique in the
    /// table (CH's `(o_w_id, o_d_id, o_id)`), for GROUP BY's functional
    /// dependencies (`functional.rs`); may be empty.
    pub keys: Vec<Vec<String>>,
}

/// An index a table declares (CREATE INDEX), as the planner sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexInfo {
    pub name: String,
    /// The indexed column's position in the table's definition (and data).
    pub column: usize,
}

/// Tables by name (lower case, as unquoted SQL identifiers are folded).
pub trait Catalog: Sync {
    /// The definition of table `name`, if it exists.
    fn table(&self, name: &str) -> Option<TableDef>;

    /// The table's data, in the column store, for execution; column `i` of
    /// the data is column `i` of [`Catalog::table`]'s definition.
    fn data(&self, name: &str) -> Option<&Table>;

    /// Every table name, for error messages.
    fn table_names(&self) -> Vec<String>;

    /// The writes on top of table `name`'s data (its main part) since it
    /// was last merged, if any: a scan reads the delta's live rows
    /// ([`Delta::live_ids`]), the appended ones after the main's.
    fn delta(&self, name: &str) -> Option<&Delta> {
        let _ = name;
        None
    }

    /// The index of table `name`'s delta in column `column` (declared
    /// indexes only), covering a prefix of the appended rows
    /// ([`DeltaIndex::covered`]); an index scan reads the rest itself.
    fn delta_index(&self, name: &str, column: usize) -> Option<&DeltaIndex> {
        let _ = (name, column);
        None
    }

    /// The position of table `name`'s hidden column of each row's
    /// combined id — the row positions UPDATE and DELETE select — if it
    /// has one: the column after its declared ones (a stored table's
    /// hidden NULL-mask columns come after those in its data, so the
    /// position is not the data's column count).
    fn row_id_column(&self, name: &str) -> Option<usize> {
        let _ = name;
        None
    }

    /// The indexes declared on table `name` (its main's sorted index of
    /// each such column is built eagerly: [`Table::sorted_index`]); the
    /// planner chooses index scans on these columns only.
    fn indexes(&self, name: &str) -> Vec<IndexInfo> {
        let _ = name;
        Vec::new()
    }

    /// Where column `column` of table `name` is NULL (`true` at those rows,
    /// by combined id when the table has a delta: main rows, then appended
    /// ones), for a column its definition says is nullable; `None`: no
    /// NULLs.
    fn null_mask(&self, name: &str, column: usize) -> Option<Arc<Vec<bool>>> {
        let _ = (name, column);
        None
    }

    /// [`Catalog::null_mask`] read at the combined ids `ids` only (`None`:
    /// no NULLs there or anywhere): what an index scan's candidates need,
    /// without a whole-table mask. A store computes it in O(ids) from its
    /// mask columns; the default reads the whole mask.
    fn null_flags_at(&self, name: &str, column: usize, ids: &[u32]) -> Option<Vec<bool>> {
        let mask = self.null_mask(name, column)?;
        Some(
            ids.iter()
                .map(|&r| mask.get(r as usize).copied().unwrap_or(false))
                .collect(),
        )
    }

    /// Whether table `name`'s columns are reached only through its name
    /// (`excluded.c`): an UPSERT's `excluded` rows beside the target table,
    /// whose unqualified columns are the target's, as in PostgreSQL.
    fn qualified_only(&self, name: &str) -> bool {
        let _ = name;
        false
    }

    /// The cache of plans kept across executions of a statement
    /// (`plan_cache.rs`), if this catalog's statements use one.
    fn plan_cache(&self) -> Option<&crate::plan_cache::PlanCache> {
        None
    }

    /// A value that changes whenever what the planner reads of table
    /// `name` changes in a way a kept plan depends on: its columns and
    /// their types, which hold NULLs, its keys and indexes, the hidden
    /// columns this catalog adds, and the order of magnitude of its rows
    /// (join orders come from estimates). `None`: no such value (plans
    /// reading the table are not kept), or no such table.
    fn plan_token(&self, name: &str) -> Option<u64> {
        let _ = name;
        None
    }

    /// When the transaction reading this catalog began, µs since the epoch
    /// (UTC): what `now()` and the other clock functions answer, the same
    /// for every statement of the transaction. `None`: no transaction (the
    /// statement reads the clock once itself).
    fn transaction_clock_us(&self) -> Option<i64> {
        None
    }
}

/// The eight loaded TPC-H tables.
pub struct TpchCatalog<'d> {
    db: &'d Database,
}

impl<'d> TpchCatalog<'d> {
    pub fn new(db: &'d Database) -> TpchCatalog<'d> {
        TpchCatalog { db }
    }
}

impl Catalog for TpchCatalog<'_> {
    fn table(&self, name: &str) -> Option<TableDef> {
        let mut def = table_def(self.data(name)?);
        def.unique_columns = tpch_key(name).map(str::to_string).into_iter().collect();
        Some(def)
    }

    fn data(&self, name: &str) -> Option<&Table> {
        self.db.table(name)
    }

    fn table_names(&self) -> Vec<String> {
        self.db
            .tables()
            .iter()
            .map(|t| t.name().to_string())
            .collect()
    }
}

/// The single-column primary key of a TPC-H table (spec clause 1.4.2;
/// partsupp's and lineitem's keys are composite).
pub fn tpch_key(table: &str) -> Option<&'static str> {
    Some(match table {
        "region" => "r_regionkey",
        "nation" => "n_nationkey",
        "supplier" => "s_suppkey",
        "customer" => "c_custkey",
        "part" => "p_partkey",
        "orders" => "o_orderkey",
        _ => return None,
    })
}

/// The definition of a column-store table (no keys declared).
pub fn table_def(t: &Table) -> TableDef {
    TableDef {
        name: t.name().to_string(),
        columns: t
            .schema()
            .fields()
            .iter()
            .map(|f| ColumnDef {
                name: f.name.clone(),
                ty: SqlType::of_column(f.data_type),
                nullable: false,
            })
            .collect(),
        rows: t.num_rows(),
        unique_columns: Vec::new(),
        keys: Vec::new(),
    }
}
