//! INSERT, UPDATE and DELETE: each builds the table's next version with
//! `rebuild` (the rows kept, then the rows appended) inside the statement's
//! transaction.
//!
//! The expressions are evaluated by the query machinery itself — a VALUES
//! row is `SELECT e1, e2, …`, an UPDATE is `SELECT row, <new values> FROM t
//! WHERE p`, a DELETE `SELECT row FROM t WHERE p` — run against the table
//! with one extra column, [`ROW_COLUMN`], its row positions. So WHERE has
//! exactly SELECT's semantics (three-valued: only rows where it is true), and
//! the operators may return the rows in any order. The SELECTs are built as
//! parsed statements from the write's own expressions (`generated.rs`).

use maestro_storage::column::{Column, DataType, Delta, DictColumn, Table};
use maestro_tpch::queries::{QueryResult, Value};
use maestro_txn::Transaction;
use sqlparser::ast::{
    AssignmentTarget, Delete, Expr, FromTable, Insert, ObjectName, Query, SetExpr, Statement,
    TableFactor, TableObject, TableWithJoins, Update,
};

use super::convert::ColumnBuilder;
use super::ddl::table_name;
use super::generated::{self, column, select};
use super::nulls::mask_name;
use super::{Entry, Store, View};
use crate::bind::scope::normalize;
use crate::catalog::{Catalog, ColumnDef, TableDef};
use crate::error::{ErrorKind, Result, SqlError};
use crate::params::ParamValue;
use crate::plan::LogicalPlan;
use crate::types::SqlType;

/// The hidden column of row positions UPDATE and DELETE select.
pub const ROW_COLUMN: &str = "__maestro_row";

/// Runs a planned query against a catalog (the caller's executor, with its
/// cancellation): how DML evaluates its expressions.
pub type QueryRunner<'a> = &'a (dyn Fn(&dyn Catalog, &LogicalPlan) -> Result<QueryResult> + Sync);

/// What a write did, for its CommandComplete tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    CreateTable,
    /// CREATE TABLE … AS SELECT: the rows (tag `SELECT n`, as PostgreSQL).
    CreateTableAs(u64),
    DropTable,
    CreateIndex,
    DropIndex,
    Insert(u64),
    Update(u64),
    Delete(u64),
    Copy(u64),
}

/// Plans a generated SELECT (`generated.rs`) and runs it; its errors lose
/// their positions (they would point into the generated statement, not the
/// client's text).
pub(crate) fn query(
    catalog: &dyn Catalog,
    stmt: &Statement,
    params: &[ParamValue],
    run: QueryRunner,
) -> Result<QueryResult> {
    let strip = |mut e: SqlError| {
        e.position = None;
        e
    };
    let (plan, _) = crate::plan_parsed(catalog, stmt, params).map_err(strip)?;
    run(catalog, &plan).map_err(strip)
}

/// A query of the client's written into a write (`INSERT … SELECT`,
/// `CREATE TABLE … AS`) as a statement of its own.
pub(super) fn query_statement(q: &Query) -> Statement {
    Statement::Query(Box::new(q.clone()))
}

/// The view with table `name` extended by [`ROW_COLUMN`], a hidden last
/// column of each row's combined id (the scan computes it; no copy).
struct WithRowIds<'v> {
    view: &'v View,
    entry: &'v Entry,
}

impl Catalog for WithRowIds<'_> {
    fn table(&self, name: &str) -> Option<TableDef> {
        let mut def = self.view.table(name)?;
        if name == self.entry.name {
            def.columns.push(ColumnDef {
                name: ROW_COLUMN.to_string(),
                ty: SqlType::Int,
                nullable: false,
            });
        }
        Some(def)
    }

    fn data(&self, name: &str) -> Option<&Table> {
        self.view.data(name)
    }

    fn delta(&self, name: &str) -> Option<&Delta> {
        self.view.delta(name)
    }

    fn row_id_column(&self, name: &str) -> Option<usize> {
        (name == self.entry.name).then_some(self.entry.columns.len())
    }

    // UPDATE and DELETE find their rows through an index too.
    fn indexes(&self, name: &str) -> Vec<crate::catalog::IndexInfo> {
        self.view.indexes(name)
    }

    fn null_mask(&self, name: &str, column: usize) -> Option<std::sync::Arc<Vec<bool>>> {
        self.view.null_mask(name, column)
    }

    fn transaction_clock_us(&self) -> Option<i64> {
        self.view.transaction_clock_us()
    }

    fn table_names(&self) -> Vec<String> {
        self.view.table_names()
    }
}

/// The rows to append, as a table of `entry`'s schema: `rows[i][j]` goes to
/// column `targets[j]` (no column twice); the columns not among `targets`
/// are NULL (23502 for a NOT NULL one).
fn appended(entry: &Entry, targets: &[usize], rows: &[&[Value]]) -> Result<Table> {
    let mut builders = entry.builders();
    let untargeted: Vec<usize> = (0..entry.columns.len())
        .filter(|i| !targets.contains(i))
        .collect();
    for row in rows {
        for (&t, v) in targets.iter().zip(row.iter()) {
            builders[t].push(v)?;
        }
        for &u in &untargeted {
            builders[u].push_null()?;
        }
    }
    table_of(entry, builders)
}

impl Entry {
    /// One builder per declared column for rows to append, taking NULLs
    /// where the column is nullable.
    pub(crate) fn builders(&self) -> Vec<ColumnBuilder<'_>> {
        self.columns
            .iter()
            .enumerate()
            .map(|(i, c)| ColumnBuilder::new(&self.name, c).with_nulls(self.nullable(i)))
            .collect()
    }
}

/// The builders' columns as a table of `entry`'s schema (dictionary string
/// columns of loaded tables get their appended strings as a dictionary),
/// the nullable columns' masks after them (`nulls.rs`).
pub(crate) fn table_of(entry: &Entry, builders: Vec<ColumnBuilder>) -> Result<Table> {
    let schema = entry.data.schema().fields();
    let declared = entry.columns.len();
    let mut columns: Vec<(String, Column)> = Vec::with_capacity(schema.len());
    let mut masks: Vec<Option<Column>> = Vec::with_capacity(declared);
    for (b, f) in builders.into_iter().zip(&schema[..declared]) {
        let (c, mask) = b.finish_with_mask();
        let c = match (f.data_type, c) {
            (DataType::Str, Column::StrHeap(h)) => Column::Str(DictColumn::from_strs(h.iter())),
            (_, c) => c,
        };
        columns.push((f.name.clone(), c));
        masks.push(mask);
    }
    let rows = columns.first().map_or(0, |(_, c)| c.len());
    for f in &schema[declared..] {
        let mask = entry
            .columns
            .iter()
            .position(|c| mask_name(&c.name) == f.name)
            .and_then(|j| masks[j].take())
            .unwrap_or_else(|| Column::Int32(vec![0; rows]));
        columns.push((f.name.clone(), mask));
    }
    Table::new(entry.name.clone(), columns)
        .map_err(|e| SqlError::new(ErrorKind::Store, e.to_string()))
}

fn column_index(entry: &Entry, name: &ObjectName) -> Result<usize> {
    let col = name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(normalize)
        .ok_or_else(|| SqlError::unsupported(format!("column {name}")))?;
    entry
        .columns
        .iter()
        .position(|c| c.name == col)
        .ok_or_else(|| {
            SqlError::new(
                ErrorKind::UnknownColumn,
                format!(
                    "column \"{col}\" of relation \"{}\" does not exist",
                    entry.name
                ),
            )
        })
}

/// `hit` sorted, or an error if a row is in it twice.
fn sorted_once(mut hit: Vec<u32>) -> Result<Vec<u32>> {
    hit.sort_unstable();
    if hit.windows(2).any(|w| w[0] == w[1]) {
        return Err(SqlError::new(ErrorKind::Store, "a row matched twice"));
    }
    Ok(hit)
}

fn row_position(v: &Value) -> Result<u32> {
    match v {
        Value::Int(i) => u32::try_from(*i)
            .map_err(|_| SqlError::new(ErrorKind::Store, "row position out of range")),
        other => Err(SqlError::new(
            ErrorKind::Store,
            format!("row position {other:?} is not an integer"),
        )),
    }
}

/// The single plain table an UPDATE/DELETE names, and its alias.
fn target(t: &TableWithJoins) -> Result<(String, Option<String>)> {
    if !t.joins.is_empty() {
        return Err(SqlError::unsupported("joins in UPDATE/DELETE"));
    }
    match &t.relation {
        TableFactor::Table { name, alias, .. } => Ok((
            table_name(name)?,
            alias.as_ref().map(|a| normalize(&a.name)),
        )),
        other => Err(SqlError::unsupported(format!("UPDATE/DELETE of {other}"))),
    }
}

/// `SELECT row, <each column's new value or itself> FROM t WHERE p`: the
/// rows an UPDATE hits and what they become (`values[i]`: column `i`'s
/// assigned expression).
fn update_select(
    entry: &Entry,
    name: &str,
    alias: &Option<String>,
    values: &[Option<&Expr>],
    selection: Option<&Expr>,
) -> Statement {
    let items = std::iter::once(column(ROW_COLUMN))
        .chain(values.iter().zip(&entry.columns).map(|(v, c)| match v {
            Some(e) => generated::typed(e, c),
            None => column(&c.name),
        }))
        .collect();
    select(items, Some((name, alias.as_deref())), selection)
}

/// `SELECT row FROM t WHERE p`: the rows a DELETE hits.
fn delete_select(name: &str, alias: &Option<String>, selection: Option<&Expr>) -> Statement {
    select(
        vec![column(ROW_COLUMN)],
        Some((name, alias.as_deref())),
        selection,
    )
}

/// `SELECT e1, e2, …` of VALUES rows, each value typed by its target column.
fn values_select<'a>(
    entry: &Entry,
    targets: &[usize],
    rows: impl IntoIterator<Item = &'a [Expr]>,
) -> Statement {
    let items = rows
        .into_iter()
        .flat_map(|row| {
            row.iter()
                .zip(targets)
                .map(|(e, &t)| generated::typed(e, &entry.columns[t]))
        })
        .collect();
    select(items, None, None)
}

/// Column `i`'s assigned expression per column of `entry`, or an error for
/// a tuple target or a column assigned twice.
fn assigned<'u>(entry: &Entry, upd: &'u Update) -> Result<Vec<Option<&'u Expr>>> {
    let mut values: Vec<Option<&Expr>> = vec![None; entry.columns.len()];
    for a in &upd.assignments {
        let AssignmentTarget::ColumnName(col) = &a.target else {
            return Err(SqlError::unsupported("UPDATE of a tuple of columns"));
        };
        let i = column_index(entry, col)?;
        if values[i].replace(&a.value).is_some() {
            return Err(SqlError::invalid(format!(
                "multiple assignments to same column \"{}\"",
                entry.columns[i].name
            )));
        }
    }
    Ok(values)
}

impl Store {
    /// The parameter types of a write (`declared`: those the client gave),
    /// from the queries it would run: a parameter assigned to a column has
    /// the column's type, one in WHERE its context's.
    pub fn describe_write(
        &self,
        view: &View,
        stmt: &sqlparser::ast::Statement,
        declared: &[Option<crate::types::SqlType>],
    ) -> Result<Vec<crate::types::SqlType>> {
        use sqlparser::ast::Statement as S;
        let describe = |catalog: &dyn Catalog, stmt: &Statement| {
            crate::describe_parsed(catalog, stmt, declared)
                .map(|d| d.param_types)
                .map_err(|mut e| {
                    e.position = None;
                    e
                })
        };
        match stmt {
            S::Insert(ins) => {
                let Some(source) = ins.source.as_deref() else {
                    return Ok(Vec::new());
                };
                let TableObject::TableName(name) = &ins.table else {
                    return Ok(Vec::new());
                };
                let (_, entry) = view.entry(&table_name(name)?)?;
                let targets: Vec<usize> = if ins.columns.is_empty() {
                    (0..entry.columns.len()).collect()
                } else {
                    ins.columns
                        .iter()
                        .map(|c| column_index(entry, c))
                        .collect::<Result<_>>()?
                };
                match source.body.as_ref() {
                    SetExpr::Values(values) => {
                        if values.rows.iter().all(|r| r.is_empty()) {
                            return Ok(Vec::new());
                        }
                        let rows = values.rows.iter().map(|r| r.as_slice());
                        describe(view, &values_select(entry, &targets, rows))
                    }
                    _ => describe(view, &query_statement(source)),
                }
            }
            S::Update(upd) => {
                let (name, alias) = target(&upd.table)?;
                let (_, entry) = view.entry(&name)?;
                let values = assigned(entry, upd)?;
                let select = update_select(entry, &name, &alias, &values, upd.selection.as_ref());
                describe(&WithRowIds { view, entry }, &select)
            }
            S::Delete(del) => {
                let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) =
                    &del.from;
                let [t] = from.as_slice() else {
                    return Ok(Vec::new());
                };
                let (name, alias) = target(t)?;
                let (_, entry) = view.entry(&name)?;
                let select = delete_select(&name, &alias, del.selection.as_ref());
                describe(&WithRowIds { view, entry }, &select)
            }
            _ => Ok(Vec::new()),
        }
    }

    /// `INSERT INTO t [(cols)] VALUES … | SELECT …`; the rows inserted.
    pub(crate) fn insert(
        &self,
        txn: &mut Transaction,
        view: &View,
        ins: &Insert,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Result<u64> {
        if ins.returning.is_some() || ins.on.is_some() || ins.source.is_none() {
            return Err(SqlError::unsupported(
                "INSERT with RETURNING, ON CONFLICT or without VALUES/SELECT",
            ));
        }
        let TableObject::TableName(name) = &ins.table else {
            return Err(SqlError::unsupported("INSERT into a table function"));
        };
        let name = table_name(name)?;
        let (_, entry) = view.entry(&name)?;
        let targets: Vec<usize> = if ins.columns.is_empty() {
            (0..entry.columns.len()).collect()
        } else {
            ins.columns
                .iter()
                .map(|c| column_index(entry, c))
                .collect::<Result<_>>()?
        };
        let mut seen = vec![false; entry.columns.len()];
        for &t in &targets {
            if std::mem::replace(&mut seen[t], true) {
                return Err(SqlError::new(
                    ErrorKind::DuplicateColumn,
                    format!(
                        "column \"{}\" specified more than once",
                        entry.columns[t].name
                    ),
                ));
            }
        }
        // No defaults: an unnamed column is NULL.
        if let Some(missing) = (0..seen.len()).find(|&i| !seen[i] && !entry.nullable(i)) {
            return Err(SqlError::new(
                ErrorKind::NotNullViolation,
                format!(
                    "null value in column \"{}\" of relation \"{name}\" violates not-null \
                     constraint (columns have no defaults)",
                    entry.columns[missing].name
                ),
            ));
        }
        let source: &Query = ins.source.as_deref().expect("checked above");
        let results: Vec<QueryResult> = match source.body.as_ref() {
            SetExpr::Values(values)
                if source.order_by.is_none() && source.limit_clause.is_none() =>
            {
                // Rows of plain literals (the bulk of INSERTs) skip the
                // planner; the others run as `SELECT e1, e2, …`.
                let mut all = QueryResult::new(&[]);
                for row in &values.rows {
                    if row.len() != targets.len() {
                        return Err(width_error(row.len(), targets.len()));
                    }
                    match row.iter().map(literal_value).collect::<Option<Vec<_>>>() {
                        Some(values) => all.rows.push(values),
                        None => {
                            let select = values_select(entry, &targets, [row.as_slice()]);
                            all.rows.extend(query(view, &select, params, run)?.rows);
                        }
                    }
                }
                vec![all]
            }
            _ => vec![query(view, &query_statement(source), params, run)?],
        };
        let mut rows: Vec<&[Value]> = Vec::new();
        for r in &results {
            for row in &r.rows {
                if row.len() != targets.len() {
                    return Err(width_error(row.len(), targets.len()));
                }
                rows.push(row);
            }
        }
        let add = appended(entry, &targets, &rows)?;
        self.replace(txn, view, &name, Vec::new(), add)?;
        Ok(rows.len() as u64)
    }

    /// `UPDATE t SET c = e, … [WHERE p]`: the untouched rows kept, the
    /// updated ones appended; the rows updated.
    pub(crate) fn update(
        &self,
        txn: &mut Transaction,
        view: &View,
        upd: &Update,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Result<u64> {
        if upd.from.is_some() || upd.returning.is_some() || upd.limit.is_some() {
            return Err(SqlError::unsupported(
                "UPDATE with FROM, RETURNING or LIMIT",
            ));
        }
        let (name, alias) = target(&upd.table)?;
        let (_, entry) = view.entry(&name)?;
        let values = assigned(entry, upd)?;
        let select = update_select(entry, &name, &alias, &values, upd.selection.as_ref());
        let catalog = WithRowIds { view, entry };
        let result = query(&catalog, &select, params, run)?;
        let hit: Vec<u32> = result
            .rows
            .iter()
            .map(|r| row_position(&r[0]))
            .collect::<Result<_>>()?;
        let targets: Vec<usize> = (0..entry.columns.len()).collect();
        let rows: Vec<&[Value]> = result.rows.iter().map(|r| &r[1..]).collect();
        let add = appended(entry, &targets, &rows)?;
        let hit = sorted_once(hit)?;
        let n = hit.len() as u64;
        self.replace(txn, view, &name, hit, add)?;
        Ok(n)
    }

    /// `DELETE FROM t [WHERE p]`; the rows deleted.
    pub(crate) fn delete(
        &self,
        txn: &mut Transaction,
        view: &View,
        del: &Delete,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Result<u64> {
        if del.using.is_some()
            || del.returning.is_some()
            || del.limit.is_some()
            || !del.tables.is_empty()
        {
            return Err(SqlError::unsupported(
                "DELETE with USING, RETURNING or LIMIT",
            ));
        }
        let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) = &del.from;
        let [t] = from.as_slice() else {
            return Err(SqlError::unsupported("DELETE from several tables"));
        };
        let (name, alias) = target(t)?;
        let (_, entry) = view.entry(&name)?;
        let hit: Vec<u32> = match &del.selection {
            None => entry.live_ids(),
            Some(selection) => {
                let select = delete_select(&name, &alias, Some(selection));
                let catalog = WithRowIds { view, entry };
                query(&catalog, &select, params, run)?
                    .rows
                    .iter()
                    .map(|r| row_position(&r[0]))
                    .collect::<Result<_>>()?
            }
        };
        let hit = sorted_once(hit)?;
        let n = hit.len() as u64;
        self.replace(txn, view, &name, hit, entry.data.empty_like())?;
        Ok(n)
    }
}

/// A literal's value as a query would compute it: a number exactly, a
/// string as text (cast to the column's type like PostgreSQL's untyped
/// literals), NULL; `None` for anything else.
fn literal_value(e: &Expr) -> Option<Value> {
    use sqlparser::ast::{UnaryOperator, Value as Lit};
    let number = |s: &str| {
        let (value, scale) = super::convert::parse_number(s)?;
        Some(Value::Decimal { value, scale })
    };
    match e {
        Expr::Value(v) => match &v.value {
            Lit::Number(n, false) => number(n),
            Lit::SingleQuotedString(s) => Some(Value::Str(s.clone())),
            Lit::Null => Some(Value::Null),
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            Expr::Value(v) => match &v.value {
                Lit::Number(n, false) => number(&format!("-{n}")),
                _ => None,
            },
            _ => None,
        },
        Expr::Nested(inner) => literal_value(inner),
        _ => None,
    }
}

fn width_error(got: usize, want: usize) -> SqlError {
    SqlError::invalid(if got > want {
        "INSERT has more expressions than target columns"
    } else {
        "INSERT has more target columns than expressions"
    })
}
