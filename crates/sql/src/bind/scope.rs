//! Name resolution: the tables of a FROM clause under their aliases, and the
//! lookup of qualified and unqualified column names.

use sqlparser::ast::Ident;

use crate::error::{ErrorKind, Result, SqlError};
use crate::plan::ColumnId;

/// One table of the FROM clause.
pub(crate) struct TableScope {
    /// The name the query refers to it by (its alias, or its name).
    pub alias: String,
    /// (column name, id) in the table's order.
    pub columns: Vec<(String, ColumnId)>,
    /// Whether its columns are reached only through its name
    /// ([`crate::catalog::Catalog::qualified_only`]).
    pub qualified_only: bool,
}

/// The tables visible to a SELECT's expressions; a subquery's scope has
/// the enclosing query's as its parent (correlated references).
#[derive(Default)]
pub(crate) struct Scope<'p> {
    pub tables: Vec<TableScope>,
    pub parent: Option<&'p Scope<'p>>,
}

/// An identifier as SQL folds it: unquoted names to lower case.
pub(crate) fn normalize(id: &Ident) -> String {
    match id.quote_style {
        Some(_) => id.value.clone(),
        None => id.value.to_lowercase(),
    }
}

impl Scope<'_> {
    pub fn add(&mut self, table: TableScope, at: &Ident) -> Result<()> {
        if self.tables.iter().any(|t| t.alias == table.alias) {
            return Err(SqlError::invalid(format!(
                "table name \"{}\" specified more than once (use an alias)",
                table.alias
            ))
            .at(at.span));
        }
        self.tables.push(table);
        Ok(())
    }

    /// Every column of the enclosing queries' tables.
    pub fn outer_columns(&self) -> std::collections::BTreeSet<ColumnId> {
        let mut out = std::collections::BTreeSet::new();
        let mut s = self.parent;
        while let Some(p) = s {
            for t in &p.tables {
                out.extend(t.columns.iter().map(|c| c.1));
            }
            s = p.parent;
        }
        out
    }

    pub fn table(&self, qualifier: &Ident) -> Result<&TableScope> {
        let q = normalize(qualifier);
        if let Some(t) = self.tables.iter().find(|t| t.alias == q) {
            return Ok(t);
        }
        if let Some(p) = self.parent
            && let Ok(t) = p.table(qualifier)
        {
            return Ok(t);
        }
        self.tables.iter().find(|t| t.alias == q).ok_or_else(|| {
            SqlError::new(
                ErrorKind::UnknownTable,
                format!("unknown table \"{q}\" (no such name in FROM)"),
            )
            .at(qualifier.span)
        })
    }

    /// The column `qualifier.name` or `name`.
    pub fn resolve(&self, qualifier: Option<&Ident>, name: &Ident) -> Result<ColumnId> {
        let n = normalize(name);
        let find = |t: &TableScope| t.columns.iter().find(|c| c.0 == n).map(|c| c.1);
        if let Some(q) = qualifier {
            if !self.tables.iter().any(|t| t.alias == normalize(q))
                && let Some(p) = self.parent
            {
                return p.resolve(qualifier, name);
            }
            let t = self.table(q)?;
            return find(t).ok_or_else(|| {
                SqlError::new(
                    ErrorKind::UnknownColumn,
                    format!("unknown column \"{n}\" in table \"{}\"", t.alias),
                )
                .at(name.span)
            });
        }
        let hits: Vec<(&str, ColumnId)> = self
            .tables
            .iter()
            .filter(|t| !t.qualified_only)
            .filter_map(|t| find(t).map(|c| (t.alias.as_str(), c)))
            .collect();
        match hits.as_slice() {
            [(_, c)] => Ok(*c),
            [] if self.parent.is_some() => self.parent.expect("a parent").resolve(None, name),
            [] => Err(
                SqlError::new(ErrorKind::UnknownColumn, format!("unknown column \"{n}\""))
                    .at(name.span),
            ),
            many => {
                let tables: Vec<&str> = many.iter().map(|h| h.0).collect();
                Err(SqlError::new(
                    ErrorKind::AmbiguousColumn,
                    format!(
                        "column reference \"{n}\" is ambiguous (in {})",
                        tables.join(", ")
                    ),
                )
                .at(name.span))
            }
        }
    }
}
