//! ALTER TABLE: `ADD [COLUMN] [IF NOT EXISTS] c type [NULL | NOT NULL]
//! [DEFAULT e]`, `DROP [COLUMN] [IF EXISTS] c [CASCADE | RESTRICT]`,
//! `RENAME [COLUMN] a TO b`, `RENAME TO u`, and `ALTER [COLUMN] c SET
//! DEFAULT e | DROP DEFAULT | SET NOT NULL | DROP NOT NULL`, several in one
//! statement, applied in order.
//!
//! The statement builds the table's next version from all of its rows —
//! main and delta merged, this transaction's own writes installed first, as
//! other DDL does — and updates its catalog row in the statement's
//! transaction, so it is transactional and a concurrent write to the table
//! conflicts with it as with other DDL (40001 for the later committer). A
//! durable store gets a new base of the whole table replacing its base and
//! changes (the change sequence restarts at 0): the change records address
//! the columns by position, which ADD and DROP move. PostgreSQL rewrites a
//! table for some ALTERs too; here every one that changes columns or names
//! copies the table once (O(rows): the column store's tables own their
//! columns, so a rename is a copy too); one that changes only defaults
//! keeps the data, its delta and its change sequence — the logged catalog
//! row carries the defaults.
//!
//! As in PostgreSQL: ADD COLUMN fills the existing rows with the default
//! evaluated once (NULL without one; a NOT NULL column without a default on
//! a table with rows is 23502); DROP COLUMN drops the indexes on the column
//! and the keys that include it; SET NOT NULL checks the rows (23502). Not
//! here (0A000): a serial or identity column in ADD COLUMN, constraints in
//! it, changing a column's type, ADD/DROP CONSTRAINT and the other forms.

use std::sync::Arc;

use maestro_storage::column::{Column, Table};
use maestro_tpch::queries::Value;
use maestro_txn::Transaction;
use sqlparser::ast::{
    AlterColumnOperation, AlterTable, AlterTableOperation, ColumnDef, ColumnOption, Ident,
    RenameTableNameKind,
};

use super::convert::ColumnBuilder;
use super::ddl::table_name;
use super::defaults::{ColumnDefault, Defaults, column_default};
use super::dml::QueryRunner;
use super::index::IndexDecl;
use super::nulls::mask_name;
use super::spec::ColumnSpec;
use super::{Entry, Store, View, txn_error};
use crate::bind::scope::normalize;
use crate::error::{ErrorKind, Result, SqlError};

/// A table being altered: its columns with their values, masks and
/// defaults side by side, and what names them.
struct Shape {
    name: String,
    rows: usize,
    columns: Vec<ColumnSpec>,
    values: Vec<Column>,
    /// Per column, its NULL mask (1 = NULL) if the column is nullable.
    masks: Vec<Option<Column>>,
    defaults: Vec<ColumnDefault>,
    /// Per column (empty: no column drew from a sequence).
    drawn: Vec<i64>,
    unique_columns: Vec<String>,
    keys: Vec<Vec<String>>,
    indexes: Vec<IndexDecl>,
    unique_indexes: Vec<String>,
    /// Whether a column moved (ADD or DROP): the sequence counters, kept
    /// by column position, start again from `drawn`.
    moved: bool,
    /// Whether the stored table changes (anything but the defaults).
    reshaped: bool,
    /// Whether `values` and `masks` hold the table's rows (`Shape::of`).
    with_rows: bool,
}

impl Shape {
    /// `entry`'s shape; its rows (a copy of the table) only `with_rows`
    /// — without, `values` is empty and each nullable column's mask an
    /// empty placeholder, for statements that change only defaults.
    fn of(entry: &Entry, with_rows: bool) -> Result<Shape> {
        let data = if with_rows {
            entry.materialized()?
        } else {
            Arc::new(entry.data.empty_like())
        };
        let n = entry.columns.len();
        let declared = entry.defaults.declared();
        Ok(Shape {
            name: entry.name.clone(),
            rows: data.num_rows(),
            columns: entry.columns.clone(),
            values: (0..n).map(|i| data.column_at(i).clone()).collect(),
            masks: (0..n)
                .map(|i| entry.mask_column(i).map(|m| data.column_at(m).clone()))
                .collect(),
            defaults: (0..n)
                .map(|i| declared.get(i).cloned().unwrap_or(ColumnDefault::Null))
                .collect(),
            drawn: entry.drawn.clone(),
            unique_columns: entry.unique_columns.clone(),
            keys: entry.keys.clone(),
            indexes: entry.indexes.clone(),
            unique_indexes: entry.unique_indexes.clone(),
            moved: false,
            reshaped: false,
            with_rows,
        })
    }

    fn position(&self, column: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == column)
    }

    /// Column `column`'s position, or 42703.
    fn existing(&self, column: &str) -> Result<usize> {
        self.position(column).ok_or_else(|| {
            SqlError::new(
                ErrorKind::UnknownColumn,
                format!(
                    "column \"{column}\" of relation \"{}\" does not exist",
                    self.name
                ),
            )
        })
    }

    fn not_null_violation(&self, column: &str) -> SqlError {
        SqlError::new(
            ErrorKind::NotNullViolation,
            format!(
                "column \"{column}\" of relation \"{}\" contains null values",
                self.name
            ),
        )
    }

    /// Whether ADD COLUMN of `col` adds it: `false` if it exists and IF NOT
    /// EXISTS says that is fine, 42701 if it exists otherwise.
    fn adds(&self, col: &str, if_not_exists: bool) -> Result<bool> {
        match self.position(col) {
            None => Ok(true),
            Some(_) if if_not_exists => Ok(false),
            Some(_) => Err(SqlError::new(
                ErrorKind::DuplicateColumn,
                format!(
                    "column \"{col}\" of relation \"{}\" already exists",
                    self.name
                ),
            )),
        }
    }

    /// Column `c` added, every existing row holding `default`.
    fn add(&mut self, c: Added, default: Value) -> Result<()> {
        if default == Value::Null && !c.nullable && self.rows > 0 {
            return Err(self.not_null_violation(&c.spec.name));
        }
        let mut b = ColumnBuilder::new(&self.name, &c.spec).with_nulls(c.nullable);
        for _ in 0..self.rows {
            b.push(&default)?;
        }
        let (values, mask) = b.finish_with_mask();
        self.columns.push(c.spec);
        self.values.push(values);
        self.masks.push(mask);
        self.defaults.push(c.declared);
        if !self.drawn.is_empty() {
            self.drawn.push(0);
        }
        self.moved = true;
        self.reshaped = true;
        Ok(())
    }

    fn drop(&mut self, col: &str) -> Result<()> {
        let i = self.existing(col)?;
        if self.columns.len() == 1 {
            return Err(SqlError::unsupported(format!(
                "dropping \"{col}\", the last column of \"{}\" (a table without columns)",
                self.name
            )));
        }
        self.columns.remove(i);
        self.values.remove(i);
        self.masks.remove(i);
        self.defaults.remove(i);
        if !self.drawn.is_empty() {
            self.drawn.remove(i);
        }
        // Its indexes and the keys that include it go with it.
        let dropped: Vec<String> = self
            .indexes
            .iter()
            .filter(|d| d.column == col)
            .map(|d| d.name.clone())
            .collect();
        self.indexes.retain(|d| d.column != col);
        self.unique_indexes.retain(|n| !dropped.contains(n));
        self.unique_columns.retain(|c| c != col);
        self.keys.retain(|k| !k.iter().any(|c| c == col));
        self.moved = true;
        self.reshaped = true;
        Ok(())
    }

    fn rename(&mut self, old: &str, new: &str) -> Result<()> {
        let i = self.existing(old)?;
        if self.position(new).is_some() {
            return Err(SqlError::new(
                ErrorKind::DuplicateColumn,
                format!(
                    "column \"{new}\" of relation \"{}\" already exists",
                    self.name
                ),
            ));
        }
        self.columns[i].name = new.to_string();
        let renamed = |c: &mut String| {
            if c == old {
                *c = new.to_string();
            }
        };
        self.indexes.iter_mut().for_each(|d| renamed(&mut d.column));
        self.unique_columns.iter_mut().for_each(renamed);
        self.keys
            .iter_mut()
            .for_each(|k| k.iter_mut().for_each(renamed));
        self.reshaped = true;
        Ok(())
    }

    fn set_not_null(&mut self, col: &str) -> Result<()> {
        let i = self.existing(col)?;
        if let Some(Column::Int32(flags)) = &self.masks[i]
            && flags.contains(&1)
        {
            return Err(self.not_null_violation(col));
        }
        self.masks[i] = None;
        self.reshaped = true;
        Ok(())
    }

    fn drop_not_null(&mut self, col: &str) -> Result<()> {
        let i = self.existing(col)?;
        if self.masks[i].is_none() {
            self.masks[i] = Some(Column::Int32(vec![0; self.rows]));
            self.reshaped = true;
        }
        Ok(())
    }

    /// The table holding the altered columns (each nullable one's mask
    /// after the declared columns, `nulls.rs`).
    fn table(&self) -> Result<Table> {
        assert!(self.with_rows, "a shape read without its rows has no table");
        let values = self
            .columns
            .iter()
            .zip(&self.values)
            .map(|(c, v)| (c.name.clone(), v.clone()));
        let masks = self
            .columns
            .iter()
            .zip(&self.masks)
            .filter_map(|(c, m)| Some((mask_name(&c.name), m.clone()?)));
        Table::new(self.name.clone(), values.chain(masks)).map_err(SqlError::store)
    }
}

/// An ADD COLUMN's column: its spec, declared default and nullability.
struct Added {
    spec: ColumnSpec,
    declared: ColumnDefault,
    nullable: bool,
}

impl Added {
    fn of(c: &ColumnDef) -> Result<Added> {
        let name = column_name(&c.name)?;
        let (ty, declared) = column_default(c, &name)?;
        let nullable = !c
            .options
            .iter()
            .any(|o| matches!(o.option, ColumnOption::NotNull));
        Ok(Added {
            spec: ColumnSpec { name, ty },
            declared,
            nullable,
        })
    }
}

fn column_name(ident: &Ident) -> Result<String> {
    let col = normalize(ident);
    if col.contains('\0') {
        return Err(SqlError::invalid(format!(
            "column name {col:?} contains a NUL character"
        )));
    }
    Ok(col)
}

impl Store {
    /// `ALTER TABLE [IF EXISTS] name op, …` (module doc).
    pub(crate) fn alter_table(
        &self,
        txn: &mut Transaction,
        alter: &AlterTable,
        run: QueryRunner,
    ) -> Result<()> {
        if alter.table_type.is_some() || alter.on_cluster.is_some() || alter.location.is_some() {
            return Err(SqlError::unsupported(format!("{alter}")));
        }
        let name = table_name(&alter.name)?;
        match self.view(txn).entry(&name) {
            // DDL builds on the table's version with this transaction's writes.
            Ok((row, _)) => self.install_pending(txn, row)?,
            Err(_) if alter.if_exists => return Ok(()),
            Err(e) => return Err(e),
        }
        self.lock_name(txn, &name)?;
        let view = self.view(txn);
        view.refuse_ddl_after_rebase(&name)?;
        let (row, entry) = view.entry(&name)?;
        let defaults_only = alter.operations.iter().all(|op| {
            matches!(
                op,
                AlterTableOperation::AlterColumn {
                    op: AlterColumnOperation::SetDefault { .. } | AlterColumnOperation::DropDefault,
                    ..
                }
            )
        });
        let mut shape = Shape::of(entry, !defaults_only)?;
        let mut renamed_to = None;
        for op in &alter.operations {
            match op {
                AlterTableOperation::AddColumn {
                    if_not_exists,
                    column_def,
                    column_position: None,
                    ..
                } => {
                    refuse_options(column_def)?;
                    let added = Added::of(column_def)?;
                    if shape.adds(&added.spec.name, *if_not_exists)? {
                        let value = self.added_column_value(&view, &shape.name, &added, run)?;
                        shape.add(added, value)?;
                    }
                }
                AlterTableOperation::DropColumn {
                    column_names,
                    if_exists,
                    ..
                } => {
                    for c in column_names {
                        let col = normalize(c);
                        if shape.position(&col).is_none() && *if_exists {
                            continue;
                        }
                        shape.drop(&col)?;
                    }
                }
                AlterTableOperation::RenameColumn {
                    old_column_name,
                    new_column_name,
                } => shape.rename(&normalize(old_column_name), &column_name(new_column_name)?)?,
                AlterTableOperation::RenameTable { table_name: to } => {
                    let (RenameTableNameKind::To(n) | RenameTableNameKind::As(n)) = to;
                    renamed_to = Some(table_name(n)?);
                }
                AlterTableOperation::AlterColumn { column_name, op } => {
                    let col = normalize(column_name);
                    match op {
                        AlterColumnOperation::SetNotNull => shape.set_not_null(&col)?,
                        AlterColumnOperation::DropNotNull => shape.drop_not_null(&col)?,
                        AlterColumnOperation::SetDefault { value } => {
                            let i = shape.existing(&col)?;
                            // Checked once into the column, as CREATE TABLE does
                            // (its text parsing back is checked where the
                            // defaults are built, below).
                            let nullable = shape.masks[i].is_some();
                            let column = &shape.columns[i];
                            self.evaluate_default(
                                &view,
                                &shape.name,
                                column,
                                nullable,
                                value,
                                run,
                            )?;
                            shape.defaults[i] = ColumnDefault::Expr(value.to_string());
                        }
                        AlterColumnOperation::DropDefault => {
                            let i = shape.existing(&col)?;
                            shape.defaults[i] = ColumnDefault::Null;
                        }
                        other => {
                            return Err(SqlError::unsupported(format!(
                                "ALTER TABLE … ALTER COLUMN {col} {other}"
                            )));
                        }
                    }
                }
                other => {
                    return Err(SqlError::unsupported(format!("ALTER TABLE … {other}")));
                }
            }
        }
        if let Some(to) = &renamed_to
            && *to != name
        {
            self.lock_name(txn, to)?;
            // After the lock: a concurrent CREATE of the name that
            // committed first is visible now or made the lock conflict.
            if self.view(txn).name_taken(to) {
                return Err(SqlError::new(
                    ErrorKind::DuplicateTable,
                    format!("relation \"{to}\" already exists"),
                ));
            }
            shape.name = to.clone();
            shape.reshaped = true;
        }
        if !shape.reshaped {
            // Only defaults changed (`defaults_only`, or nothing at all): the
            // same data, delta and change sequence; the catalog row (logged)
            // carries the defaults.
            let next = Entry {
                defaults: Arc::new(Defaults::new(shape.defaults)?),
                ..entry.with_indexes(entry.indexes.clone())
            };
            return txn
                .update(&self.tables, row, Arc::new(next))
                .map_err(txn_error);
        }
        let data = Arc::new(shape.table()?);
        let next = Entry {
            unique_columns: shape.unique_columns,
            keys: shape.keys,
            indexes: shape.indexes,
            unique_indexes: shape.unique_indexes,
            defaults: Arc::new(Defaults::new(shape.defaults)?),
            drawn: shape.drawn,
            ..Entry::first(shape.name, shape.columns, Arc::clone(&data))
        };
        next.build_indexes(&next.data);
        if shape.moved {
            self.sequences.forget(row);
        }
        txn.update(&self.tables, row, Arc::new(next))
            .map_err(txn_error)?;
        // The change records address columns by position: the altered
        // table starts over from a base of its own.
        self.drop_data(txn, row)?;
        self.put_base(txn, row, &data)
    }

    /// The value ADD COLUMN gives the existing rows: its DEFAULT evaluated
    /// once (checked against the column), or NULL.
    fn added_column_value(
        &self,
        view: &View,
        table: &str,
        c: &Added,
        run: QueryRunner,
    ) -> Result<Value> {
        match &c.declared {
            ColumnDefault::Null => Ok(Value::Null),
            ColumnDefault::Sequence { .. } => Err(SqlError::unsupported(format!(
                "ADD COLUMN \"{}\" with a serial type or identity (its rows would \
                 each draw a value)",
                c.spec.name
            ))),
            ColumnDefault::Expr(_) => {
                let check = Defaults::new(vec![c.declared.clone()])?;
                let e = check.expr(0).expect("an expression default");
                self.evaluate_default(view, table, &c.spec, c.nullable, e, run)
            }
        }
    }
}

/// ADD COLUMN takes NULL, NOT NULL and DEFAULT (and a serial type, refused
/// with its own message); keys, references and checks are not here.
fn refuse_options(c: &ColumnDef) -> Result<()> {
    for o in &c.options {
        match &o.option {
            ColumnOption::NotNull | ColumnOption::Null | ColumnOption::Default(_) => {}
            ColumnOption::Generated {
                generation_expr: None,
                ..
            } => {}
            other => {
                return Err(SqlError::unsupported(format!(
                    "column option {other} in ALTER TABLE … ADD COLUMN"
                )));
            }
        }
    }
    Ok(())
}
