//! CREATE TABLE and DROP TABLE: a catalog row inserted or deleted inside the
//! statement's transaction (so a rolled-back CREATE leaves nothing, and a
//! snapshot taken before a DROP still reads the table).

use std::sync::Arc;

use maestro_storage::column::Table;
use maestro_txn::Transaction;
use sqlparser::ast::{ColumnOption, CreateTable, ObjectName};

use super::spec::{ColumnSpec, ColumnType};
use super::{Entry, Store, txn_error};
use crate::bind::scope::normalize;
use crate::error::{ErrorKind, Result, SqlError};

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
    /// `CREATE TABLE name (col type, …)`.
    pub(crate) fn create_table(&self, txn: &mut Transaction, create: &CreateTable) -> Result<()> {
        if create.query.is_some() {
            return Err(SqlError::unsupported("CREATE TABLE … AS SELECT"));
        }
        if create.temporary {
            return Err(SqlError::unsupported("temporary tables"));
        }
        let name = table_name(&create.name)?;
        let mut columns: Vec<ColumnSpec> = Vec::new();
        for c in &create.columns {
            let col = normalize(&c.name);
            if columns.iter().any(|s| s.name == col) {
                return Err(SqlError::new(
                    ErrorKind::Invalid,
                    format!("column \"{col}\" specified more than once"),
                ));
            }
            for o in &c.options {
                match &o.option {
                    ColumnOption::NotNull => {}
                    ColumnOption::Null => {
                        return Err(SqlError::unsupported(format!(
                            "nullable column \"{col}\" (stored columns are NOT NULL)"
                        )));
                    }
                    // A key only informs join ordering; nothing enforces it.
                    ColumnOption::PrimaryKey(_) | ColumnOption::Unique(_) => {}
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "column option {other} on \"{col}\""
                        )));
                    }
                }
            }
            columns.push(ColumnSpec {
                name: col,
                ty: ColumnType::of_ast(&c.data_type)?,
            });
        }
        if columns.is_empty() {
            return Err(SqlError::unsupported("a table without columns"));
        }
        self.lock_name(txn, &name)?;
        // After the lock: a concurrent CREATE that committed first is
        // either visible now or made the lock conflict.
        let view = self.view(txn);
        if view.tables.contains_key(&name) {
            if create.if_not_exists {
                return Ok(());
            }
            return Err(SqlError::new(
                ErrorKind::DuplicateTable,
                format!("relation \"{name}\" already exists"),
            ));
        }
        let data = Table::new(
            name.clone(),
            columns
                .iter()
                .map(|c| (c.name.clone(), c.ty.empty_column())),
        )
        .map_err(|e| SqlError::new(ErrorKind::Store, e.to_string()))?;
        let entry = Entry {
            name,
            columns,
            unique_columns: Vec::new(),
            data: Arc::new(data),
        };
        txn.insert(&self.tables, Arc::new(entry))
            .map_err(txn_error)?;
        Ok(())
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
                Some((row, _)) => txn.delete(&self.tables, *row).map_err(txn_error)?,
                None if if_exists => {}
                None => return Err(super::unknown_table(&name)),
            }
        }
        Ok(())
    }
}
