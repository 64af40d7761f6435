//! `RETURNING` of INSERT, UPDATE and DELETE: the written rows, projected.
//!
//! INSERT and UPDATE return the rows as written — their appended rows, so
//! defaults and sequence values show — and evaluate the list as `SELECT
//! row, items FROM t` over a catalog in which table `t` *is* those rows
//! ([`RowsAsTable`]); DELETE evaluates it in its own `SELECT row, items
//! FROM t WHERE p` over the rows it deletes (`dml.rs`). Either way the rows
//! come back in the order of the hidden row column, which is the order the
//! write appended (or found) them: a query's operators may return rows in
//! any order.

use std::sync::Arc;

use maestro_storage::column::{Delta, Table};
use maestro_tpch::queries::{QueryResult, Value};
use sqlparser::ast::{Expr, SelectItem, SelectItemQualifiedWildcardKind, Statement};

use super::dml::{QueryRunner, ROW_COLUMN, with_row_column};
use super::generated::{self, column};
use super::{Entry, View};
use crate::bind::scope::normalize;
use crate::catalog::{Catalog, IndexInfo, TableDef};
use crate::error::{ErrorKind, Result, SqlError};
use crate::params::ParamValue;
use crate::types::SqlType;

/// What a write's RETURNING list gave: its columns and one row per row
/// written, in the order written.
#[derive(Clone, Debug, PartialEq)]
pub struct Returned {
    pub columns: Vec<(String, SqlType)>,
    pub rows: Vec<Vec<Value>>,
}

/// The view with table `name` read as `rows` (the rows a write appended,
/// an [`Entry`] of the table's columns without a delta), plus the hidden
/// [`ROW_COLUMN`] of their positions.
pub(super) struct RowsAsTable<'v> {
    view: &'v View,
    rows: Entry,
}

impl<'v> RowsAsTable<'v> {
    /// `view` with `entry`'s table read as `rows` (a table of its schema).
    fn new(view: &'v View, entry: &Entry, rows: Arc<Table>) -> RowsAsTable<'v> {
        RowsAsTable {
            view,
            rows: entry.with_data_of(rows),
        }
    }
}

impl Catalog for RowsAsTable<'_> {
    fn table(&self, name: &str) -> Option<TableDef> {
        if name != self.rows.name {
            return self.view.table(name);
        }
        Some(with_row_column(self.rows.definition().clone()))
    }

    fn data(&self, name: &str) -> Option<&Table> {
        if name == self.rows.name {
            return Some(&self.rows.data);
        }
        self.view.data(name)
    }

    fn delta(&self, name: &str) -> Option<&Delta> {
        if name == self.rows.name {
            return None;
        }
        self.view.delta(name)
    }

    fn row_id_column(&self, name: &str) -> Option<usize> {
        (name == self.rows.name).then_some(self.rows.columns.len())
    }

    fn indexes(&self, name: &str) -> Vec<IndexInfo> {
        if name == self.rows.name {
            return Vec::new();
        }
        self.view.indexes(name)
    }

    fn null_mask(&self, name: &str, column: usize) -> Option<Arc<Vec<bool>>> {
        if name == self.rows.name {
            return self.rows.null_masks().get(column)?.clone();
        }
        self.view.null_mask(name, column)
    }

    fn null_flags_at(&self, name: &str, column: usize, ids: &[u32]) -> Option<Vec<bool>> {
        if name == self.rows.name {
            return self.rows.null_flags_at(column, ids);
        }
        self.view.null_flags_at(name, column, ids)
    }

    fn plan_cache(&self) -> Option<&crate::plan_cache::PlanCache> {
        self.view.plan_cache()
    }

    fn plan_token(&self, name: &str) -> Option<u64> {
        if name == self.rows.name {
            return Some(super::token_as(self.rows.shape_token(), "returned rows"));
        }
        self.view.plan_token(name)
    }

    fn transaction_clock_us(&self) -> Option<i64> {
        self.view.transaction_clock_us()
    }

    fn table_names(&self) -> Vec<String> {
        self.view.table_names()
    }
}

/// `items` with `*` and `t.*` spelled out as the columns of `entry` (the
/// hidden row column must not show), `t` being the table's name or alias.
pub(super) fn expanded(
    items: &[SelectItem],
    entry: &Entry,
    alias: Option<&str>,
) -> Result<Vec<SelectItem>> {
    let all = || {
        entry
            .columns
            .iter()
            .map(|c| SelectItem::UnnamedExpr(column(&c.name)))
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            SelectItem::Wildcard(_) => out.extend(all()),
            SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(n), _) => {
                let named = n.0.last().and_then(|p| p.as_ident()).map(normalize);
                let me = alias.unwrap_or(&entry.name);
                if named.as_deref() != Some(me) || n.0.len() > 2 {
                    return Err(SqlError::new(
                        ErrorKind::UnknownTable,
                        format!("missing FROM-clause entry for table \"{n}\""),
                    ));
                }
                out.extend(all());
            }
            SelectItem::QualifiedWildcard(other, _) => {
                return Err(SqlError::unsupported(format!("{other}.* in RETURNING")));
            }
            other => out.push(other.clone()),
        }
    }
    Ok(out)
}

/// `SELECT row, items FROM name [AS alias] [WHERE selection]`.
pub(super) fn returning_select(
    name: &str,
    alias: Option<&str>,
    items: Vec<SelectItem>,
    selection: Option<&Expr>,
) -> Statement {
    let items = std::iter::once(SelectItem::UnnamedExpr(column(ROW_COLUMN)))
        .chain(items)
        .collect();
    generated::select_items(items, Some((name, alias)), selection)
}

/// Runs a [`returning_select`] on `catalog`: its row column, and the
/// returned rows in row order.
pub(super) fn run_returning(
    catalog: &dyn Catalog,
    select: &Statement,
    params: &[ParamValue],
    run: QueryRunner,
) -> Result<(Vec<u32>, Returned)> {
    let (columns, result) = super::dml::query_described(catalog, select, params, run)?;
    let QueryResult { rows, .. } = result;
    let mut keyed: Vec<(u32, Vec<Value>)> = rows
        .into_iter()
        .map(|mut r| {
            let rest = r.split_off(1);
            Ok((super::dml::row_position(&r[0])?, rest))
        })
        .collect::<Result<_>>()?;
    keyed.sort_unstable_by_key(|(p, _)| *p);
    let (positions, rows) = keyed.into_iter().unzip();
    Ok((
        positions,
        Returned {
            columns: columns.into_iter().skip(1).collect(),
            rows,
        },
    ))
}

/// The RETURNING list `items` (`None`: the write has none) of a write to
/// `entry` that appended `rows` (a table of `entry`'s schema), evaluated
/// over them.
pub(super) fn returned_rows(
    view: &View,
    entry: &Entry,
    alias: Option<&str>,
    rows: &Arc<Table>,
    items: Option<&Vec<SelectItem>>,
    params: &[ParamValue],
    run: QueryRunner,
) -> Result<Option<Returned>> {
    let Some(items) = items else {
        return Ok(None);
    };
    let catalog = RowsAsTable::new(view, entry, Arc::clone(rows));
    let select = returning_select(&entry.name, alias, expanded(items, entry, alias)?, None);
    run_returning(&catalog, &select, params, run).map(|(_, r)| Some(r))
}

/// The columns a RETURNING list of a write to `entry` would give, and its
/// parameters' types (Describe).
pub(super) fn describe_returning(
    view: &View,
    entry: &Entry,
    alias: Option<&str>,
    items: &[SelectItem],
    declared: &[Option<SqlType>],
) -> Result<crate::Description> {
    let catalog = RowsAsTable::new(view, entry, Arc::new(entry.data.empty_like()));
    let select = returning_select(&entry.name, alias, expanded(items, entry, alias)?, None);
    let mut d = crate::describe_parsed(&catalog, &select, declared)?;
    d.columns.remove(0);
    Ok(d)
}
