//! CREATE TABLE and DROP TABLE: a catalog row inserted or deleted inside the
//! statement's transaction (so a rolled-back CREATE leaves nothing, and a
//! snapshot taken before a DROP still reads the table).

use std::sync::Arc;

use maestro_storage::column::{Column, Table};
use maestro_txn::Transaction;
use sqlparser::ast::{ColumnOption, CreateTable, ObjectName};

use maestro_tpch::queries::{ColumnType as ResultType, Value};

use super::convert::ColumnBuilder;
use super::defaults::{ColumnDefault, Defaults, column_default};
use super::dml::{QueryRunner, query, query_statement};
use super::generated;
use super::index::{IndexDecl, free_name};
use super::keys::{Key, KeyKind, declared_keys};
use super::nulls::mask_name;
use super::spec::{ColumnSpec, ColumnType};
use super::{Entry, Store, View, txn_error};
use crate::bind::scope::normalize;
use crate::error::{ErrorKind, Result, SqlError};
use crate::params::ParamValue;

/// An empty table of `columns`, with a mask column after them for each
/// nullable one (`nulls.rs`).
fn empty_table(name: &str, columns: &[ColumnSpec], nullable: &[bool]) -> Result<Table> {
    let masks = columns
        .iter()
        .zip(nullable)
        .filter(|&(_, &n)| n)
        .map(|(c, _)| (mask_name(&c.name), Column::Int32(Vec::new())));
    Table::new(
        name.to_string(),
        columns
            .iter()
            .map(|c| (c.name.clone(), c.ty.empty_column()))
            .chain(masks),
    )
    .map_err(SqlError::store)
}

/// What CREATE TABLE (or CTAS) puts in the catalog.
struct NewTable<'k> {
    name: String,
    columns: Vec<ColumnSpec>,
    keys: &'k [Key],
    defaults: Defaults,
    data: Table,
}

/// A table's name as the catalog keys it (unqualified, or `public.`).
pub(crate) fn table_name(name: &ObjectName) -> Result<String> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| {
            p.as_ident()
                .map(normalize)
                .ok_or_else(|| SqlError::unsupported(format!("table name {name}")))
        })
        .collect::<Result<_>>()?;
    match parts.as_slice() {
        [t] => Ok(t.clone()),
        [schema, t] if schema == "public" => Ok(t.clone()),
        _ => Err(SqlError::unsupported(format!(
            "table name {name} (tables live in schema public)"
        ))),
    }
}

impl Store {
    /// `CREATE TABLE name (col type [DEFAULT e | GENERATED … AS IDENTITY], …)`;
    /// `run` evaluates each default expression once, to check it.
    pub(crate) fn create_table(
        &self,
        txn: &mut Transaction,
        create: &CreateTable,
        run: QueryRunner,
    ) -> Result<()> {
        if create.temporary {
            return Err(SqlError::unsupported("temporary tables"));
        }
        let name = table_name(&create.name)?;
        let mut columns: Vec<ColumnSpec> = Vec::new();
        let mut nullable: Vec<bool> = Vec::new();
        let mut defaults: Vec<ColumnDefault> = Vec::new();
        for c in &create.columns {
            let col = normalize(&c.name);
            if col.contains('\0') {
                return Err(SqlError::invalid(format!(
                    "column name {col:?} contains a NUL character"
                )));
            }
            if columns.iter().any(|s| s.name == col) {
                return Err(SqlError::new(
                    ErrorKind::DuplicateColumn,
                    format!("column \"{col}\" specified more than once"),
                ));
            }
            // Nullable unless NOT NULL or PRIMARY KEY (as in PostgreSQL).
            let mut null_ok = true;
            let mut said_null = false;
            for o in &c.options {
                match &o.option {
                    ColumnOption::NotNull | ColumnOption::PrimaryKey(_) => null_ok = false,
                    ColumnOption::Null => said_null = true,
                    // Read by `keys::declared_keys` below.
                    ColumnOption::Unique(_) => {}
                    // Read by `defaults::column_default` below.
                    ColumnOption::Default(_)
                    | ColumnOption::Generated {
                        generation_expr: None,
                        ..
                    } => {}
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "column option {other} on \"{col}\""
                        )));
                    }
                }
            }
            if said_null && !null_ok {
                return Err(SqlError::new(
                    ErrorKind::Invalid,
                    format!("conflicting NULL/NOT NULL declarations for column \"{col}\""),
                ));
            }
            let (ty, default) = column_default(c, &col)?;
            // A serial or identity column is NOT NULL, as in PostgreSQL.
            if matches!(default, ColumnDefault::Sequence { .. }) {
                if said_null {
                    return Err(SqlError::new(
                        ErrorKind::Invalid,
                        format!("conflicting NULL/NOT NULL declarations for column \"{col}\""),
                    ));
                }
                null_ok = false;
            }
            columns.push(ColumnSpec { name: col, ty });
            nullable.push(null_ok);
            defaults.push(default);
        }
        let keys = declared_keys(create, &columns)?;
        // A table-level PRIMARY KEY's columns are NOT NULL too.
        for k in keys.iter().filter(|k| k.kind == KeyKind::Primary) {
            for c in &k.columns {
                if let Some(i) = columns.iter().position(|s| &s.name == c) {
                    nullable[i] = false;
                }
            }
        }
        let defaults = Defaults::new(defaults)?;
        self.check_defaults(txn, &name, &columns, &nullable, &defaults, run)?;
        let data = empty_table(&name, &columns, &nullable)?;
        let created = NewTable {
            name,
            columns,
            keys: &keys,
            defaults,
            data,
        };
        self.create_entry(txn, created, create.if_not_exists)
            .map(|_| ())
    }

    /// Evaluates each default expression once into its column: one that
    /// reads a column or a parameter, or whose value the column cannot hold,
    /// fails here rather than at the first INSERT (as in PostgreSQL).
    fn check_defaults(
        &self,
        txn: &mut Transaction,
        table: &str,
        columns: &[ColumnSpec],
        nullable: &[bool],
        defaults: &Defaults,
        run: QueryRunner,
    ) -> Result<()> {
        let view = self.view(txn);
        for (i, c) in columns.iter().enumerate() {
            if let Some(e) = defaults.expr(i) {
                self.evaluate_default(&view, table, c, nullable[i], e, run)?;
            }
        }
        Ok(())
    }

    /// Default expression `e` of column `c`, evaluated once and checked
    /// against the column (an expression that reads a column or a
    /// parameter, or whose value the column cannot hold, fails here).
    pub(super) fn evaluate_default(
        &self,
        view: &View,
        table: &str,
        c: &ColumnSpec,
        nullable: bool,
        e: &sqlparser::ast::Expr,
        run: QueryRunner,
    ) -> Result<Value> {
        let select = generated::select(vec![generated::typed(e, c)], None, None);
        let in_default = |mut err: SqlError| {
            err.message = format!("DEFAULT of column \"{}\": {}", c.name, err.message);
            err
        };
        let value = query(view, &select, &[], run)
            .map_err(in_default)?
            .rows
            .pop()
            .and_then(|mut r| r.pop())
            .ok_or_else(|| SqlError::invalid("a DEFAULT expression without a value"))?;
        // A NULL default of a NOT NULL column fails at the INSERT that
        // uses it, as in PostgreSQL.
        if value != Value::Null {
            ColumnBuilder::new(table, c)
                .with_nulls(nullable)
                .push(&value)
                .map_err(in_default)?;
        }
        Ok(value)
    }

    /// `CREATE TABLE name AS SELECT …`: the query's columns and rows (its
    /// integers as BIGINT, decimals with their scale); the rows inserted.
    pub(crate) fn create_table_as(
        &self,
        txn: &mut Transaction,
        create: &CreateTable,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Result<u64> {
        let Some(q) = create.query.as_deref() else {
            return Err(SqlError::invalid("CREATE TABLE … AS without a query"));
        };
        if create.temporary || !create.columns.is_empty() || !create.constraints.is_empty() {
            return Err(SqlError::unsupported(
                "CREATE TABLE … AS with a column list, constraints or TEMPORARY",
            ));
        }
        let name = table_name(&create.name)?;
        let view = self.view(txn);
        let result = query(&view, &query_statement(q), params, run)?;
        let mut columns: Vec<ColumnSpec> = Vec::new();
        for (col, ty) in &result.columns {
            if col.contains('\0') {
                return Err(SqlError::invalid(format!(
                    "column name {col:?} contains a NUL character"
                )));
            }
            if columns.iter().any(|c| &c.name == col) {
                return Err(SqlError::new(
                    ErrorKind::DuplicateColumn,
                    format!("column \"{col}\" specified more than once"),
                ));
            }
            let ty = match ty {
                ResultType::Int => ColumnType::Int64,
                ResultType::Decimal(scale) => ColumnType::Decimal {
                    precision: None,
                    scale: *scale,
                },
                ResultType::Date => ColumnType::Date,
                ResultType::Timestamp => ColumnType::Timestamp,
                ResultType::Str => ColumnType::Str { max_chars: None },
                ResultType::Double => ColumnType::Float64,
                ResultType::Bool => ColumnType::Bool,
            };
            columns.push(ColumnSpec {
                name: col.clone(),
                ty,
            });
        }
        // Every column nullable, as PostgreSQL makes them.
        let mut builders: Vec<ColumnBuilder> = columns
            .iter()
            .map(|c| ColumnBuilder::new(&name, c).with_nulls(true))
            .collect();
        for row in &result.rows {
            for (b, v) in builders.iter_mut().zip(row) {
                b.push(v)?;
            }
        }
        let mut stored: Vec<(String, Column)> = Vec::with_capacity(2 * columns.len());
        let mut masks: Vec<(String, Column)> = Vec::with_capacity(columns.len());
        for (c, b) in columns.iter().zip(builders) {
            let (values, mask) = b.finish_with_mask();
            stored.push((c.name.clone(), values));
            masks.push((mask_name(&c.name), mask.expect("built with NULLs")));
        }
        stored.extend(masks);
        let data = Table::new(name.clone(), stored).map_err(SqlError::store)?;
        let rows = result.rows.len() as u64;
        let new = NewTable {
            name,
            columns,
            keys: &[],
            defaults: Defaults::default(),
            data,
        };
        let created = self.create_entry(txn, new, create.if_not_exists)?;
        Ok(if created { rows } else { 0 })
    }

    /// Inserts the catalog row of a new table holding `data` and
    /// declaring `keys`; `false` if it exists and `if_not_exists` says that
    /// is fine.
    fn create_entry(
        &self,
        txn: &mut Transaction,
        new: NewTable,
        if_not_exists: bool,
    ) -> Result<bool> {
        let NewTable {
            name,
            columns,
            keys,
            defaults,
            data,
        } = new;
        if columns.is_empty() {
            return Err(SqlError::unsupported("a table without columns"));
        }
        self.lock_name(txn, &name)?;
        // After the lock: a concurrent CREATE that committed first is
        // either visible now or made the lock conflict.
        let view = self.view(txn);
        if view.name_taken(&name) {
            if if_not_exists {
                return Ok(false);
            }
            return Err(SqlError::new(
                ErrorKind::DuplicateTable,
                format!("relation \"{name}\" already exists"),
            ));
        }
        let indexes = self.key_indexes(txn, &name, keys)?;
        let data = Arc::new(data);
        let (singles, composite): (Vec<&Key>, Vec<&Key>) =
            keys.iter().partition(|k| k.columns.len() == 1);
        let entry = Entry {
            unique_columns: singles.iter().map(|k| k.columns[0].clone()).collect(),
            keys: composite.iter().map(|k| k.columns.clone()).collect(),
            indexes,
            defaults: Arc::new(defaults),
            ..Entry::first(name, columns, Arc::clone(&data))
        };
        let row = txn
            .insert(&self.tables, Arc::new(entry))
            .map_err(txn_error)?;
        self.put_base(txn, row, &data)?;
        Ok(true)
    }

    /// The indexes of a new table's one-column `keys`, their names locked
    /// and free: a constraint's own name must be (42P07), PostgreSQL's
    /// default name gets a suffix when taken.
    fn key_indexes(
        &self,
        txn: &mut Transaction,
        table: &str,
        keys: &[Key],
    ) -> Result<Vec<IndexDecl>> {
        let mut indexes: Vec<IndexDecl> = Vec::new();
        for k in keys.iter().filter(|k| k.columns.len() == 1) {
            let taken = |view: &super::View, n: &str| {
                n == table || view.name_taken(n) || indexes.iter().any(|d| d.name == n)
            };
            let name = match &k.name {
                Some(n) => n.clone(),
                None => {
                    let view = self.view(txn);
                    free_name(&k.default_index_name(table), |n| taken(&view, n))
                }
            };
            self.lock_name(txn, &name)?;
            // After the lock, as for the table's own name.
            if taken(&self.view(txn), &name) {
                return Err(SqlError::new(
                    ErrorKind::DuplicateTable,
                    format!("relation \"{name}\" already exists"),
                ));
            }
            indexes.push(IndexDecl {
                name,
                column: k.columns[0].clone(),
            });
        }
        Ok(indexes)
    }

    /// `DROP TABLE [IF EXISTS] name, …`.
    pub(crate) fn drop_tables(
        &self,
        txn: &mut Transaction,
        names: &[ObjectName],
        if_exists: bool,
    ) -> Result<()> {
        for n in names {
            let name = table_name(n)?;
            self.lock_name(txn, &name)?;
            let view = self.view(txn);
            match view.tables.get(&name) {
                Some((row, _)) => {
                    // Dropped: its pending writes go with it.
                    self.pending.take(txn, *row);
                    txn.delete(&self.tables, *row).map_err(txn_error)?;
                    self.drop_data(txn, *row)?;
                }
                None if if_exists => {}
                None => return Err(super::unknown_table(&name)),
            }
        }
        Ok(())
    }
}
