//! `INSERT … ON CONFLICT (key) DO UPDATE SET c = e, … [WHERE p]`,
//! PostgreSQL's upsert: a proposed row whose value of the arbiter key a
//! live row holds updates that row instead of being inserted; `e` and `p`
//! read the row's current values by the table's name (or alias, or
//! unqualified) and the proposed row's as `excluded.c`. A row `p` rejects
//! is neither inserted nor updated. Two proposed rows with one key value
//! are 21000 (`unique::conflict_targets`), as in PostgreSQL.
//!
//! The updates are one query over a catalog ([`UpsertRows`]) in which the
//! table *is* the rows to update — gathered from the main and the delta in
//! the order of the proposed rows that hit them — and `excluded` the
//! proposed rows, so row `k` of each belong together:
//!
//! ```sql
//! SELECT t.row, <each column's new value or t.c> FROM t [AS a]
//!   JOIN excluded ON t.row = excluded.row [WHERE p]
//! ```
//!
//! `excluded` is [`Catalog::qualified_only`], so an unqualified column is
//! the table's. The write then deletes the updated rows and appends the
//! inserted and the updated ones in the order they were proposed (which
//! RETURNING gives, as PostgreSQL does), as UPDATE and INSERT each do.

use std::sync::Arc;

use maestro_storage::column::{Delta, Keep, Table};
use maestro_txn::Transaction;
use sqlparser::ast::{DoUpdate, Expr, SelectItem, SetExpr, Statement};

use super::dml::{
    QueryRunner, ROW_COLUMN, appended, assigned, query, row_position, with_row_column,
};
use super::generated;
use super::{Entry, Store, View};
use crate::catalog::{Catalog, IndexInfo, TableDef};
use crate::error::{Result, SqlError};
use crate::params::ParamValue;

/// The name the proposed rows go by.
pub(super) const EXCLUDED: &str = "excluded";

/// What an upsert writes: the rows to append (the inserted and the updated
/// ones, in the order proposed) and the combined ids of the rows it updates
/// (ascending).
pub(super) struct Upserted {
    pub add: Table,
    pub hit: Vec<u32>,
}

impl Store {
    /// Splits the proposed rows `add` of an INSERT into `entry` into those
    /// inserted and those that update the live row holding their `key`
    /// value, and computes the updated rows (module doc).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn upsert(
        &self,
        txn: &mut Transaction,
        view: &View,
        row: maestro_txn::RowId,
        entry: &Entry,
        alias: Option<&str>,
        add: Table,
        key: &[String],
        action: &DoUpdate,
        params: &[ParamValue],
        run: QueryRunner,
        drawn: &mut Vec<(usize, i64)>,
    ) -> Result<Upserted> {
        if entry.name == EXCLUDED {
            return Err(SqlError::unsupported(
                "ON CONFLICT DO UPDATE on a table named excluded",
            ));
        }
        let holders = super::unique::conflict_targets(entry, &add, key)?;
        let mut inserted = Vec::new();
        let mut proposed = Vec::new();
        let mut targets = Vec::new();
        for (p, h) in (0u32..).zip(&holders) {
            match h {
                None => inserted.push(p),
                Some(id) => {
                    proposed.push(p);
                    targets.push(*id);
                }
            }
        }
        if proposed.is_empty() {
            return Ok(Upserted {
                add,
                hit: Vec::new(),
            });
        }
        let excluded = add
            .rebuild(Keep::Rows(&proposed), &add.empty_like())
            .map_err(SqlError::store)?;
        let current = entry
            .data
            .gather(entry.live_delta().map(Delta::appended), &targets)
            .map_err(SqlError::store)?;
        let assigned = assigned(entry, &action.assignments)?;
        let catalog = UpsertRows {
            view,
            current: entry.with_data_of(Arc::new(current)),
            excluded: entry.with_data_of(Arc::new(excluded)),
        };
        let select = upsert_select(entry, alias, &assigned.values, action.selection.as_ref())?;
        let mut result = query(&catalog, &select, params, run)?;
        let mut drew = Vec::new();
        for &c in &assigned.from_sequence {
            let n = result.rows.len() as u64;
            let mut fill = self.fill(txn, view, row, entry, c, n, run, &mut drew)?;
            for r in &mut result.rows {
                r[1 + c] = fill.next_value();
            }
        }
        drawn.extend(drew);
        let mut hit = result
            .rows
            .iter()
            .map(|r| Ok(targets[row_position(&r[0])? as usize]))
            .collect::<Result<Vec<u32>>>()?;
        hit.sort_unstable();
        let columns: Vec<usize> = (0..entry.columns.len()).collect();
        let rows: Vec<&[maestro_tpch::queries::Value]> =
            result.rows.iter().map(|r| &r[1..]).collect();
        let updated = appended(entry, &columns, &rows, &mut [])?;
        let add = add
            .rebuild(Keep::Rows(&inserted), &updated)
            .map_err(SqlError::store)?;
        // The rows in the order they were proposed, as PostgreSQL's
        // RETURNING lists them: `proposed_at[i]` is the proposed position
        // of appended row i (the inserted ones, then the updated ones).
        let mut proposed_at = inserted;
        for r in &result.rows {
            proposed_at.push(proposed[row_position(&r[0])? as usize]);
        }
        if proposed_at.is_sorted() {
            return Ok(Upserted { add, hit });
        }
        let mut order: Vec<u32> = (0..proposed_at.len() as u32).collect();
        order.sort_unstable_by_key(|&i| proposed_at[i as usize]);
        let add = add.gather(None, &order).map_err(SqlError::store)?;
        Ok(Upserted { add, hit })
    }
}

/// The parameter types of an upsert's DO UPDATE clause (`declared`: those
/// known from the rest of the INSERT), from its query over no rows.
pub(super) fn describe_upsert(
    view: &View,
    entry: &Entry,
    alias: Option<&str>,
    action: &DoUpdate,
    declared: &[Option<crate::types::SqlType>],
) -> Result<Vec<crate::types::SqlType>> {
    let assigned = assigned(entry, &action.assignments)?;
    let select = upsert_select(entry, alias, &assigned.values, action.selection.as_ref())?;
    let empty = Arc::new(entry.data.empty_like());
    let catalog = UpsertRows {
        view,
        current: entry.with_data_of(Arc::clone(&empty)),
        excluded: entry.with_data_of(empty),
    };
    Ok(crate::describe_parsed(&catalog, &select, declared)?.param_types)
}

/// `SELECT t.row, <values[i] or t.c_i> FROM t [AS a] JOIN excluded ON
/// t.row = excluded.row [WHERE p]` (every column of the table qualified).
fn upsert_select(
    entry: &Entry,
    alias: Option<&str>,
    values: &[Option<&Expr>],
    selection: Option<&Expr>,
) -> Result<Statement> {
    let quoted = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let t = alias.unwrap_or(&entry.name);
    let text = format!(
        "SELECT 1 FROM {} AS {t} JOIN {EXCLUDED} ON {t}.{row} = {EXCLUDED}.{row}",
        quoted(&entry.name),
        t = quoted(t),
        row = quoted(ROW_COLUMN),
    );
    let mut stmt = crate::parse(&text)?;
    let Statement::Query(q) = &mut stmt else {
        unreachable!("a SELECT parses as a query, not {stmt}")
    };
    let SetExpr::Select(s) = q.body.as_mut() else {
        unreachable!("a SELECT's body is a select, not {}", q.body)
    };
    let of_t = |c: &str| Expr::CompoundIdentifier(vec![generated::ident(t), generated::ident(c)]);
    s.projection = std::iter::once(of_t(ROW_COLUMN))
        .chain(values.iter().zip(&entry.columns).map(|(v, c)| match v {
            Some(e) => generated::typed(e, c),
            None => of_t(&c.name),
        }))
        .map(SelectItem::UnnamedExpr)
        .collect();
    s.selection = selection.cloned();
    Ok(stmt)
}

/// The view with the upserted table read as `current` (the rows to update)
/// and `excluded` as the proposed rows that update them, each with the
/// hidden [`ROW_COLUMN`] of its positions.
struct UpsertRows<'v> {
    view: &'v View,
    current: Entry,
    excluded: Entry,
}

impl UpsertRows<'_> {
    fn part(&self, name: &str) -> Option<&Entry> {
        if name == EXCLUDED {
            Some(&self.excluded)
        } else if name == self.current.name {
            Some(&self.current)
        } else {
            None
        }
    }
}

impl Catalog for UpsertRows<'_> {
    fn table(&self, name: &str) -> Option<TableDef> {
        let Some(e) = self.part(name) else {
            return self.view.table(name);
        };
        let mut def = with_row_column(e.definition().clone());
        def.name = name.to_string();
        Some(def)
    }

    fn data(&self, name: &str) -> Option<&Table> {
        match self.part(name) {
            Some(e) => Some(&e.data),
            None => self.view.data(name),
        }
    }

    fn delta(&self, name: &str) -> Option<&Delta> {
        match self.part(name) {
            Some(_) => None,
            None => self.view.delta(name),
        }
    }

    fn row_id_column(&self, name: &str) -> Option<usize> {
        self.part(name).map(|e| e.columns.len())
    }

    fn indexes(&self, name: &str) -> Vec<IndexInfo> {
        match self.part(name) {
            Some(_) => Vec::new(),
            None => self.view.indexes(name),
        }
    }

    fn null_mask(&self, name: &str, column: usize) -> Option<Arc<Vec<bool>>> {
        match self.part(name) {
            Some(e) => e.null_masks().get(column)?.clone(),
            None => self.view.null_mask(name, column),
        }
    }

    fn null_flags_at(&self, name: &str, column: usize, ids: &[u32]) -> Option<Vec<bool>> {
        match self.part(name) {
            Some(e) => e.null_flags_at(column, ids),
            None => self.view.null_flags_at(name, column, ids),
        }
    }

    fn plan_cache(&self) -> Option<&crate::plan_cache::PlanCache> {
        self.view.plan_cache()
    }

    fn plan_token(&self, name: &str) -> Option<u64> {
        match self.part(name) {
            Some(e) => Some(super::token_as(e.plan_token(), name)),
            None => self.view.plan_token(name),
        }
    }

    fn qualified_only(&self, name: &str) -> bool {
        name == EXCLUDED
    }

    fn transaction_clock_us(&self) -> Option<i64> {
        self.view.transaction_clock_us()
    }

    fn table_names(&self) -> Vec<String> {
        self.view.table_names()
    }
}
