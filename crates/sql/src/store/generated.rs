//! The SELECTs a write runs to evaluate its expressions (`dml.rs`: a VALUES
//! row with expressions is `SELECT e1, e2, …`, an UPDATE `SELECT row, <new
//! values> FROM t WHERE p`, a DELETE `SELECT row FROM t WHERE p`), built as
//! parsed statements from the write's own expressions instead of as text
//! parsed again: with pgbench's one-row UPDATEs, printing and re-parsing the
//! generated text was a parse per write on top of the client's own.

use std::sync::LazyLock;

use sqlparser::ast::{
    CastKind, CharacterLength, DataType, ExactNumberInfo, Expr, Ident, ObjectName, Query,
    SelectItem, SetExpr, Statement, TableAlias, TableFactor, TimezoneInfo,
};

use super::spec::{ColumnSpec, ColumnType};

/// `SELECT 1 FROM t AS a`, parsed once: every generated SELECT is a copy
/// with its items, table and WHERE put in (the parser knows the many
/// fields of a `Select`; this module sets four).
static TEMPLATE: LazyLock<Query> = LazyLock::new(|| match crate::parse("SELECT 1 FROM t AS a") {
    Ok(Statement::Query(q)) => *q,
    other => panic!("the generated SELECT's template parses as a query: {other:?}"),
});

/// `SELECT items [FROM table [AS alias]] [WHERE selection]`; the table and
/// alias are names as stored (normalized), quoted so they stay so.
pub(crate) fn select(
    items: Vec<Expr>,
    from: Option<(&str, Option<&str>)>,
    selection: Option<&Expr>,
) -> Statement {
    let items = items.into_iter().map(SelectItem::UnnamedExpr).collect();
    select_items(items, from, selection)
}

/// [`select`] of items that may carry aliases (a RETURNING list).
pub(crate) fn select_items(
    items: Vec<SelectItem>,
    from: Option<(&str, Option<&str>)>,
    selection: Option<&Expr>,
) -> Statement {
    let mut q = TEMPLATE.clone();
    let SetExpr::Select(s) = q.body.as_mut() else {
        panic!("the template is a SELECT, not {}", q.body)
    };
    s.projection = items;
    match from {
        None => s.from.clear(),
        Some((name, alias)) => {
            let TableFactor::Table {
                name: table,
                alias: table_alias,
                ..
            } = &mut s.from[0].relation
            else {
                panic!("the template reads a table, not {}", s.from[0].relation)
            };
            *table = ObjectName::from(vec![quoted(name)]);
            *table_alias = alias.map(|a| TableAlias {
                name: quoted(a),
                ..table_alias.clone().expect("the template has an alias")
            });
        }
    }
    s.selection = selection.cloned();
    Statement::Query(Box::new(q))
}

/// A column by its stored name.
pub(crate) fn column(name: &str) -> Expr {
    Expr::Identifier(quoted(name))
}

/// An identifier spelled exactly (quoted).
pub(crate) fn ident(name: &str) -> Ident {
    quoted(name)
}

fn quoted(name: &str) -> Ident {
    Ident::with_quote('"', name)
}

/// A value for column `c`: a parameter cast to the column's type (so
/// Describe announces it as the column's), anything else as written.
pub(crate) fn typed(e: &Expr, c: &ColumnSpec) -> Expr {
    let is_param =
        matches!(e, Expr::Value(v) if matches!(v.value, sqlparser::ast::Value::Placeholder(_)));
    if !is_param {
        return Expr::Nested(Box::new(e.clone()));
    }
    let data_type = match c.ty {
        ColumnType::Int32 => DataType::Integer(None),
        ColumnType::Int64 => DataType::BigInt(None),
        ColumnType::Decimal { scale, .. } => {
            DataType::Decimal(ExactNumberInfo::PrecisionAndScale(18, i64::from(scale)))
        }
        ColumnType::Date => DataType::Date,
        ColumnType::Str { .. } => DataType::Varchar(None::<CharacterLength>),
        ColumnType::Timestamp => DataType::Timestamp(None, TimezoneInfo::None),
        ColumnType::Int16 => DataType::SmallInt(None),
        ColumnType::Bool => DataType::Boolean,
        ColumnType::Float64
        | ColumnType::Float32
        | ColumnType::Float64Bits
        | ColumnType::Float32Bits => DataType::DoublePrecision,
    };
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(e.clone()),
        data_type,
        format: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(sql: &str) -> Expr {
        match crate::parse(&format!("SELECT {sql}")) {
            Ok(Statement::Query(q)) => match *q.body {
                SetExpr::Select(s) => match s.projection.into_iter().next() {
                    Some(SelectItem::UnnamedExpr(e)) => e,
                    other => panic!("{other:?}"),
                },
                other => panic!("{other}"),
            },
            other => panic!("{other:?}"),
        }
    }

    /// The statements print as the text the writes used to generate.
    #[test]
    fn generated_selects_print_as_their_text() {
        let p = parsed("k = 1");
        let s = select(
            vec![column("__maestro_row"), parsed("v + 1")],
            Some(("t", Some("x"))),
            Some(&p),
        );
        assert_eq!(
            s.to_string(),
            "SELECT \"__maestro_row\", v + 1 FROM \"t\" AS \"x\" WHERE k = 1"
        );
        let s = select(vec![column("a")], Some(("My Table", None)), None);
        assert_eq!(s.to_string(), "SELECT \"a\" FROM \"My Table\"");
        let s = select(vec![parsed("1 + 2")], None, None);
        assert_eq!(s.to_string(), "SELECT 1 + 2");
    }

    #[test]
    fn a_parameter_is_cast_to_its_column_type() {
        let spec = |ty| ColumnSpec {
            name: "c".into(),
            ty,
        };
        let p = parsed("$1");
        let decimal = typed(
            &p,
            &spec(ColumnType::Decimal {
                precision: Some(12),
                scale: 2,
            }),
        );
        assert_eq!(decimal.to_string(), "CAST($1 AS DECIMAL(18,2))");
        assert_eq!(
            typed(&p, &spec(ColumnType::Int64)).to_string(),
            "CAST($1 AS BIGINT)"
        );
        assert_eq!(
            typed(&parsed("a + 1"), &spec(ColumnType::Int64)).to_string(),
            "(a + 1)"
        );
    }
}
