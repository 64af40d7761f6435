//! The keys CREATE TABLE declares: PRIMARY KEY and UNIQUE, on a column or
//! as a table constraint. A one-column key becomes one of the table's
//! unique columns, a key of several columns one of its composite keys;
//! `unique.rs` enforces both on every write (23505), and the planner
//! builds on them (join ordering, GROUP BY's functional dependencies).
//! Stored columns are NOT NULL, so a key never meets a NULL.
//!
//! A one-column key is also an index declaration (`index.rs`), named as
//! PostgreSQL names a key's index (`t_pkey`, `t_c_key`, or the
//! constraint's own name): the main's sorted index then answers the
//! write's key check by binary search, and `WHERE c = v` by an index scan.
//! Dropping that index keeps the key (its check then scans); composite
//! keys have no index (indexes are single-column) and are checked by a
//! pass over their first column.
//!
//! Constraints nothing here would enforce (FOREIGN KEY, CHECK, deferrable
//! or unenforced keys) are refused (0A000) rather than accepted and
//! ignored.

use sqlparser::ast::{
    ColumnOption, ConstraintCharacteristics, CreateTable, Expr as AstExpr, IndexColumn,
    TableConstraint,
};

use super::spec::ColumnSpec;
use crate::bind::scope::normalize;
use crate::error::{ErrorKind, Result, SqlError};

/// One key as declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Key {
    /// Column names in declaration order.
    pub columns: Vec<String>,
    /// Which constraint declared it.
    pub kind: KeyKind,
    /// The constraint's name (`CONSTRAINT name …`), if given.
    pub name: Option<String>,
}

/// Which constraint declared a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum KeyKind {
    /// PRIMARY KEY: at most one per table.
    Primary,
    /// UNIQUE: any number.
    Unique,
}

impl KeyKind {
    fn sql(self) -> &'static str {
        match self {
            KeyKind::Primary => "primary key",
            KeyKind::Unique => "unique",
        }
    }
}

impl Key {
    /// The name of a one-column key's index when the constraint names
    /// none: PostgreSQL's (`t_pkey`, `t_c_key`).
    pub fn default_index_name(&self, table: &str) -> String {
        match self.kind {
            KeyKind::Primary => format!("{table}_pkey"),
            KeyKind::Unique => format!("{table}_{}_key", self.columns.join("_")),
        }
    }
}

/// The keys `create` declares over `columns`, checked: each names existing
/// columns, none twice; at most one PRIMARY KEY. A key declared twice (the
/// same columns in any order) is kept once.
pub(super) fn declared_keys(create: &CreateTable, columns: &[ColumnSpec]) -> Result<Vec<Key>> {
    let mut keys: Vec<Key> = Vec::new();
    for c in &create.columns {
        let col = normalize(&c.name);
        for o in &c.options {
            let (kind, characteristics, name) = match &o.option {
                ColumnOption::PrimaryKey(p) => (KeyKind::Primary, &p.characteristics, &o.name),
                ColumnOption::Unique(u) => (KeyKind::Unique, &u.characteristics, &o.name),
                _ => continue,
            };
            refuse_characteristics(characteristics)?;
            keys.push(Key {
                columns: vec![col.clone()],
                kind,
                name: name.as_ref().map(normalize),
            });
        }
    }
    for t in &create.constraints {
        keys.push(table_constraint(t)?);
    }
    let mut primary = 0;
    for k in &keys {
        if k.kind == KeyKind::Primary {
            primary += 1;
        }
        if primary > 1 {
            let table = super::ddl::table_name(&create.name)?;
            return Err(SqlError::new(
                ErrorKind::InvalidTableDefinition,
                format!("multiple primary keys for table \"{table}\" are not allowed"),
            ));
        }
        for (i, c) in k.columns.iter().enumerate() {
            match columns.iter().find(|s| &s.name == c) {
                None => {
                    return Err(SqlError::new(
                        ErrorKind::UnknownColumn,
                        format!("column \"{c}\" named in key does not exist"),
                    ));
                }
                // Its index would compare the encoding with the constants.
                Some(s) if s.ty.is_encoded() => {
                    return Err(SqlError::unsupported(format!(
                        "a {} key on a {} column",
                        k.kind.sql(),
                        s.ty.pg_name()
                    )));
                }
                Some(_) => {}
            }
            if k.columns[..i].contains(c) {
                return Err(SqlError::new(
                    ErrorKind::DuplicateColumn,
                    format!(
                        "column \"{c}\" appears twice in {} constraint",
                        k.kind.sql()
                    ),
                ));
            }
        }
    }
    let mut kept: Vec<Key> = Vec::new();
    for k in keys {
        let same = |o: &Key| {
            o.columns.len() == k.columns.len() && k.columns.iter().all(|c| o.columns.contains(c))
        };
        match kept.iter_mut().find(|o| same(o)) {
            // The primary key's declaration wins (its index name).
            Some(o) if k.kind == KeyKind::Primary => *o = k,
            Some(_) => {}
            None => kept.push(k),
        }
    }
    Ok(kept)
}

fn table_constraint(t: &TableConstraint) -> Result<Key> {
    let (kind, name, columns, extras, characteristics) = match t {
        TableConstraint::PrimaryKey(p) => (
            KeyKind::Primary,
            &p.name,
            &p.columns,
            p.index_name.is_some()
                || p.index_type.is_some()
                || !p.include.is_empty()
                || !p.index_options.is_empty(),
            &p.characteristics,
        ),
        TableConstraint::Unique(u) => (
            KeyKind::Unique,
            &u.name,
            &u.columns,
            u.index_name.is_some()
                || u.index_type.is_some()
                || !u.include.is_empty()
                || !u.index_options.is_empty(),
            &u.characteristics,
        ),
        TableConstraint::ForeignKey(_) => {
            return Err(SqlError::unsupported(
                "FOREIGN KEY constraints (nothing here would enforce them)",
            ));
        }
        TableConstraint::Check(_) => {
            return Err(SqlError::unsupported(
                "CHECK constraints (nothing here would enforce them)",
            ));
        }
        other => {
            return Err(SqlError::unsupported(format!("table constraint {other}")));
        }
    };
    if extras {
        return Err(SqlError::unsupported(format!(
            "index options in a {} constraint",
            kind.sql()
        )));
    }
    refuse_characteristics(characteristics)?;
    Ok(Key {
        columns: columns.iter().map(key_column).collect::<Result<_>>()?,
        kind,
        name: name.as_ref().map(normalize),
    })
}

/// A key's column: a plain column name (ASC/DESC accepted: a key has no
/// order).
fn key_column(c: &IndexColumn) -> Result<String> {
    if c.operator_class.is_some() || c.column.with_fill.is_some() {
        return Err(SqlError::unsupported("an operator class in a key"));
    }
    match &c.column.expr {
        AstExpr::Identifier(ident) => Ok(normalize(ident)),
        other => Err(SqlError::unsupported(format!(
            "an expression in a key ({other}): keys are on columns"
        ))),
    }
}

/// DEFERRABLE, INITIALLY DEFERRED and NOT ENFORCED would each make a key
/// something other than what `unique.rs` checks at every write.
fn refuse_characteristics(c: &Option<ConstraintCharacteristics>) -> Result<()> {
    match c {
        None => Ok(()),
        Some(c) => Err(SqlError::unsupported(format!(
            "a key that is {c} (keys here are checked at every write)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::ast::Statement;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    use super::*;
    use crate::store::spec::ColumnType;

    /// `ident` as the catalog names it.
    fn name(ident: &str) -> String {
        normalize(&sqlparser::ast::Ident::new(ident))
    }

    fn keys(sql: &str) -> Result<Vec<Key>> {
        let stmt = Parser::parse_sql(&PostgreSqlDialect {}, sql)
            .unwrap()
            .remove(0);
        let Statement::CreateTable(create) = stmt else {
            panic!("{sql}: not a CREATE TABLE");
        };
        let columns: Vec<ColumnSpec> = create
            .columns
            .iter()
            .map(|c| ColumnSpec {
                name: normalize(&c.name),
                ty: ColumnType::Int64,
            })
            .collect();
        declared_keys(&create, &columns)
    }

    fn key(columns: &[&str], kind: KeyKind, constraint: Option<&str>) -> Key {
        Key {
            columns: columns.iter().map(|c| name(c)).collect(),
            kind,
            name: constraint.map(name),
        }
    }

    #[test]
    fn column_and_table_keys_are_read_and_repeats_kept_once() {
        assert_eq!(
            keys(
                "create table t (a int primary key, b int unique, c int, d int, \
                 unique (c, d), constraint cd unique (d, c), unique (a))"
            )
            .unwrap(),
            vec![
                key(&["a"], KeyKind::Primary, None),
                key(&["b"], KeyKind::Unique, None),
                key(&["c", "d"], KeyKind::Unique, None),
            ]
        );
        assert_eq!(
            keys("create table t (a int, b int, constraint t_k primary key (b, a))").unwrap(),
            vec![key(&["b", "a"], KeyKind::Primary, Some("t_k"))]
        );
        assert_eq!(keys("create table t (a int not null)").unwrap(), vec![]);
    }

    #[test]
    fn bad_keys_are_errors() {
        let kind = |sql: &str| keys(sql).expect_err(sql).kind;
        assert_eq!(
            kind("create table t (a int primary key, b int, primary key (b))"),
            ErrorKind::InvalidTableDefinition
        );
        assert_eq!(
            kind("create table t (a int, unique (a, z))"),
            ErrorKind::UnknownColumn
        );
        assert_eq!(
            kind("create table t (a int, primary key (a, a))"),
            ErrorKind::DuplicateColumn
        );
        for sql in [
            "create table t (a int, b int, foreign key (a) references u (b))",
            "create table t (a int, check (a > 0))",
            "create table t (a int primary key deferrable)",
            "create table t (a int, unique ((a + 1)))",
        ] {
            assert_eq!(kind(sql), ErrorKind::Unsupported, "{sql}");
        }
    }
}
