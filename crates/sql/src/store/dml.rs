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

use std::sync::{Arc, LazyLock};

use maestro_storage::column::{Column, DataType, Delta, DictColumn, Keep, StrHeap, Table};
use maestro_tpch::queries::{QueryResult, Value};
use maestro_txn::Transaction;
use sqlparser::ast::{
    Assignment, AssignmentTarget, ConflictTarget, Delete, Expr, FromTable, Insert,
    InsertOverriding, ObjectName, OnConflict, OnConflictAction, OnInsert, Query, SetExpr,
    Statement, TableFactor, TableObject, TableWithJoins, Update,
};

use super::convert::ColumnBuilder;
use super::ddl::table_name;
use super::defaults::{ColumnDefault, Fill};
use super::generated::{self, column, select};
use super::nulls::mask_name;
use super::pending::ChangeNotes;
use super::returning::{self, Returned};
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
    AlterTable,
    Insert(u64),
    Update(u64),
    Delete(u64),
    Copy(u64),
    /// `SELECT … FOR UPDATE`: the rows it returned, locked
    /// (`for_update.rs`).
    Select(u64),
}

/// What a write did, and the rows its RETURNING list gave (`None`
/// without one).
#[derive(Clone, Debug, PartialEq)]
pub struct Executed {
    pub written: Written,
    pub returned: Option<Returned>,
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

/// [`query`] with its result columns' SQL types (a RETURNING list's).
pub(super) fn query_described(
    catalog: &dyn Catalog,
    stmt: &Statement,
    params: &[ParamValue],
    run: QueryRunner,
) -> Result<(Vec<(String, SqlType)>, QueryResult)> {
    let strip = |mut e: SqlError| {
        e.position = None;
        e
    };
    let (plan, _) = crate::plan_parsed(catalog, stmt, params).map_err(strip)?;
    let columns = crate::lower::result_columns(&plan);
    Ok((columns, run(catalog, &plan).map_err(strip)?))
}

/// A query of the client's written into a write (`INSERT … SELECT`,
/// `CREATE TABLE … AS`) as a statement of its own.
pub(super) fn query_statement(q: &Query) -> Statement {
    Statement::Query(Box::new(q.clone()))
}

/// `def` with [`ROW_COLUMN`] after its columns.
pub(super) fn with_row_column(mut def: TableDef) -> TableDef {
    def.columns.push(ColumnDef {
        name: ROW_COLUMN.to_string(),
        ty: SqlType::Int,
        nullable: false,
    });
    def
}

/// The view with table `name` extended by [`ROW_COLUMN`], a hidden last
/// column of each row's combined id (the scan computes it; no copy).
pub(super) struct WithRowIds<'v> {
    pub(super) view: &'v View,
    pub(super) entry: &'v Entry,
}

impl Catalog for WithRowIds<'_> {
    fn table(&self, name: &str) -> Option<TableDef> {
        let def = self.view.table(name)?;
        Some(if name == self.entry.name {
            with_row_column(def)
        } else {
            def
        })
    }

    fn data(&self, name: &str) -> Option<&Table> {
        self.view.data(name)
    }

    fn delta(&self, name: &str) -> Option<&Delta> {
        self.view.delta(name)
    }

    fn delta_index(
        &self,
        name: &str,
        column: usize,
    ) -> Option<&maestro_storage::column::DeltaIndex> {
        self.view.delta_index(name, column)
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

    fn null_flags_at(&self, name: &str, column: usize, ids: &[u32]) -> Option<Vec<bool>> {
        self.view.null_flags_at(name, column, ids)
    }

    fn plan_cache(&self) -> Option<&crate::plan_cache::PlanCache> {
        self.view.plan_cache()
    }

    // The table whose rows the write selects is read with its row column:
    // its token is the view's (which `table` reads), marked so.
    fn plan_token(&self, name: &str) -> Option<u64> {
        let token = self.view.plan_token(name)?;
        Some(if name == self.entry.name {
            super::token_as(token, "row ids")
        } else {
            token
        })
    }

    fn transaction_clock_us(&self) -> Option<i64> {
        self.view.transaction_clock_us()
    }

    fn table_names(&self) -> Vec<String> {
        self.view.table_names()
    }
}

/// The rows to append, as a table of `entry`'s schema: `rows[i][j]` goes to
/// column `targets[j]` (no column twice); a column not among `targets`
/// gets its [`Fill`] (NULL without one: 23502 for a NOT NULL column).
pub(super) fn appended<R: AsRef<[Value]>>(
    entry: &Entry,
    targets: &[usize],
    rows: &[R],
    fills: &mut [Fill],
) -> Result<Table> {
    let mut builders = entry.builders();
    for row in rows {
        for (&t, v) in targets.iter().zip(row.as_ref()) {
            builders[t].push(v)?;
        }
    }
    for (i, b) in builders.iter_mut().enumerate() {
        if targets.contains(&i) {
            continue;
        }
        let mut null = Fill::Null;
        let fill = fills.get_mut(i).unwrap_or(&mut null);
        for _ in 0..rows.len() {
            fill.push(b)?;
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
    let mut columns: Vec<Column> = Vec::with_capacity(schema.len());
    let mut masks: Vec<Option<Column>> = Vec::with_capacity(declared);
    for (i, (b, f)) in builders.into_iter().zip(&schema[..declared]).enumerate() {
        let (c, mask) = b.finish_with_mask();
        let c = match (f.data_type, c) {
            (DataType::Str, Column::StrHeap(h)) => Column::Str(dictionary_coded(entry, i, &h)),
            (_, c) => c,
        };
        columns.push(c);
        masks.push(mask);
    }
    let rows = columns.first().map_or(0, Column::len);
    for f in &schema[declared..] {
        let mask = entry
            .columns
            .iter()
            .position(|c| mask_name(&c.name) == f.name)
            .and_then(|j| masks[j].take())
            .unwrap_or_else(|| Column::Int32(vec![0; rows]));
        columns.push(mask);
    }
    // The main's schema, shared (`Table::with_columns`).
    entry.data.with_columns(columns).map_err(SqlError::store)
}

/// `strings` as a dictionary column for column `i` of `entry`: in the
/// main's dictionary when it holds every one of them (the common case: a
/// delta's rows then need no recoding, `Delta::change`), else in their own.
fn dictionary_coded(entry: &Entry, i: usize, strings: &StrHeap) -> DictColumn {
    if let Some(main) = entry.data.column_at(i).as_dict()
        && let Some(codes) = strings
            .iter()
            .map(|s| main.code_of(s))
            .collect::<Option<Vec<u32>>>()
        && let Some(coded) = main.with_codes(codes)
    {
        return coded;
    }
    DictColumn::from_strs(strings.iter())
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

pub(super) fn row_position(v: &Value) -> Result<u32> {
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
pub(super) fn target(t: &TableWithJoins) -> Result<(String, Option<String>)> {
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

/// `SELECT e1, e2, …` of VALUES expressions, each typed by its target
/// column (`(expression, column)` pairs).
fn values_select<'a>(
    entry: &Entry,
    values: impl IntoIterator<Item = (&'a Expr, usize)>,
) -> Statement {
    let items = values
        .into_iter()
        .map(|(e, t)| generated::typed(e, &entry.columns[t]))
        .collect();
    select(items, None, None)
}

/// An UPDATE as the SELECT that evaluates it (`update_select`), for its
/// execution and its Describe.
struct PlannedUpdate<'v> {
    name: String,
    alias: Option<String>,
    row: maestro_txn::RowId,
    entry: &'v Entry,
    assigned: Assigned<'v>,
    select: Statement,
}

impl<'v> PlannedUpdate<'v> {
    fn of(view: &'v View, upd: &'v Update) -> Result<PlannedUpdate<'v>> {
        let (name, alias) = target(&upd.table)?;
        let (row, entry) = view.entry(&name)?;
        let assigned = assigned(entry, &upd.assignments)?;
        let select = update_select(
            entry,
            &name,
            &alias,
            &assigned.values,
            upd.selection.as_ref(),
        );
        Ok(PlannedUpdate {
            name,
            alias,
            row,
            entry,
            assigned,
            select,
        })
    }
}

/// The NULL an UPDATE's `SET c = DEFAULT` assigns to a column without a
/// default, and to a sequence column until its values are drawn.
static NULL_EXPR: LazyLock<Expr> = LazyLock::new(|| Expr::value(sqlparser::ast::Value::Null));

/// What an UPDATE (or an upsert's DO UPDATE) assigns.
pub(super) struct Assigned<'a> {
    /// Per column of the table, its new value's expression (`None`: kept).
    pub values: Vec<Option<&'a Expr>>,
    /// Columns set to DEFAULT that draw from their sequence (their value
    /// in `values` is a NULL standing in).
    pub from_sequence: Vec<usize>,
}

/// Column `i`'s assigned expression per column of `entry` (`DEFAULT`: its
/// default's), or an error for a tuple target, a column assigned twice or
/// a `GENERATED ALWAYS` identity column set to anything but DEFAULT
/// (428C9).
pub(super) fn assigned<'a>(
    entry: &'a Entry,
    assignments: &'a [Assignment],
) -> Result<Assigned<'a>> {
    let mut values: Vec<Option<&Expr>> = vec![None; entry.columns.len()];
    let mut from_sequence = Vec::new();
    for a in assignments {
        let AssignmentTarget::ColumnName(col) = &a.target else {
            return Err(SqlError::unsupported("UPDATE of a tuple of columns"));
        };
        let i = column_index(entry, col)?;
        let value = if is_default_keyword(&a.value) {
            match entry.defaults.of(i) {
                ColumnDefault::Null => &*NULL_EXPR,
                ColumnDefault::Expr(_) => entry.defaults.expr(i).expect("parsed with the table"),
                ColumnDefault::Sequence { .. } => {
                    from_sequence.push(i);
                    &*NULL_EXPR
                }
            }
        } else {
            if let ColumnDefault::Sequence { always: true } = entry.defaults.of(i) {
                return Err(SqlError::new(
                    ErrorKind::GeneratedAlways,
                    format!(
                        "column \"{}\" can only be updated to DEFAULT: it is an identity column \
                         defined as GENERATED ALWAYS",
                        entry.columns[i].name
                    ),
                ));
            }
            &a.value
        };
        if values[i].replace(value).is_some() {
            return Err(SqlError::invalid(format!(
                "multiple assignments to same column \"{}\"",
                entry.columns[i].name
            )));
        }
    }
    Ok(Assigned {
        values,
        from_sequence,
    })
}

impl Store {
    /// The parameter types of a write (`declared`: those the client gave),
    /// from the queries it would run: a parameter assigned to a column has
    /// the column's type, one in WHERE its context's; and the columns its
    /// RETURNING list gives (none without one).
    pub fn describe_write(
        &self,
        view: &View,
        stmt: &sqlparser::ast::Statement,
        declared: &[Option<crate::types::SqlType>],
    ) -> Result<crate::Description> {
        use sqlparser::ast::Statement as S;
        let strip = |mut e: SqlError| {
            e.position = None;
            e
        };
        let describe = |catalog: &dyn Catalog, stmt: &Statement| {
            crate::describe_parsed(catalog, stmt, declared)
                .map(|d| d.param_types)
                .map_err(strip)
        };
        let none = || crate::Description {
            columns: Vec::new(),
            param_types: Vec::new(),
            explain: false,
        };
        // The written statement's parameters and its RETURNING list's
        // columns (and any parameters only RETURNING uses).
        let with_returning = |param_types: Vec<SqlType>,
                              entry: &Entry,
                              alias: Option<&str>,
                              items: Option<&Vec<sqlparser::ast::SelectItem>>|
         -> Result<crate::Description> {
            let mut d = crate::Description {
                columns: Vec::new(),
                param_types,
                explain: false,
            };
            if let Some(items) = items {
                let r = returning::describe_returning(view, entry, alias, items, declared)
                    .map_err(strip)?;
                d.columns = r.columns;
                if r.param_types.len() > d.param_types.len() {
                    let known = d.param_types.len();
                    d.param_types.extend_from_slice(&r.param_types[known..]);
                }
            }
            Ok(d)
        };
        match stmt {
            S::Insert(ins) => {
                let TableObject::TableName(name) = &ins.table else {
                    return Ok(none());
                };
                let (_, entry) = view.entry(&table_name(name)?)?;
                let alias = ins.table_alias.as_ref().map(|a| normalize(&a.alias));
                let params = match ins.source.as_deref() {
                    None => Vec::new(),
                    Some(source) => {
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
                                let given: Vec<(&Expr, usize)> = values
                                    .rows
                                    .iter()
                                    .flat_map(|row| row.iter().zip(targets.iter().copied()))
                                    .filter(|(e, _)| !is_default_keyword(e))
                                    .collect();
                                if given.is_empty() {
                                    Vec::new()
                                } else {
                                    describe(view, &values_select(entry, given))?
                                }
                            }
                            _ => describe(view, &query_statement(source))?,
                        }
                    }
                };
                // DO UPDATE's parameters, typed by their place in it.
                let params = match &ins.on {
                    Some(OnInsert::OnConflict(OnConflict {
                        action: OnConflictAction::DoUpdate(action),
                        ..
                    })) => {
                        let known: Vec<Option<SqlType>> = (0..params.len().max(declared.len()))
                            .map(|i| {
                                declared
                                    .get(i)
                                    .copied()
                                    .flatten()
                                    .or(params.get(i).copied())
                            })
                            .collect();
                        let all = super::upsert::describe_upsert(
                            view,
                            entry,
                            alias.as_deref(),
                            action,
                            &known,
                        )
                        .map_err(strip)?;
                        if all.len() > params.len() {
                            all
                        } else {
                            params
                        }
                    }
                    _ => params,
                };
                with_returning(params, entry, alias.as_deref(), ins.returning.as_ref())
            }
            S::Update(upd) => {
                let u = PlannedUpdate::of(view, upd)?;
                let params = describe(
                    &WithRowIds {
                        view,
                        entry: u.entry,
                    },
                    &u.select,
                )?;
                with_returning(params, u.entry, u.alias.as_deref(), upd.returning.as_ref())
            }
            S::Delete(del) => {
                let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) =
                    &del.from;
                let [t] = from.as_slice() else {
                    return Ok(none());
                };
                let (name, alias) = target(t)?;
                let (_, entry) = view.entry(&name)?;
                let select = delete_select(&name, &alias, del.selection.as_ref());
                let params = describe(&WithRowIds { view, entry }, &select)?;
                with_returning(params, entry, alias.as_deref(), del.returning.as_ref())
            }
            _ => Ok(none()),
        }
    }

    /// `INSERT INTO t [AS a] [(cols)] [OVERRIDING … VALUE] VALUES … | SELECT
    /// … | DEFAULT VALUES [RETURNING …]`; the rows inserted, and what
    /// RETURNING gave.
    pub(crate) fn insert(
        &self,
        txn: &mut Transaction,
        view: &View,
        ins: &Insert,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Result<(u64, Option<Returned>)> {
        let TableObject::TableName(name) = &ins.table else {
            return Err(SqlError::unsupported("INSERT into a table function"));
        };
        let name = table_name(name)?;
        let alias = ins.table_alias.as_ref().map(|a| normalize(&a.alias));
        let (row, entry) = view.entry(&name)?;
        let on_conflict = match &ins.on {
            None => OnConflictDo::Fail,
            Some(OnInsert::OnConflict(OnConflict {
                conflict_target,
                action: OnConflictAction::DoNothing,
            })) => OnConflictDo::Skip(arbiter_keys(entry, conflict_target.as_ref())?),
            Some(OnInsert::OnConflict(OnConflict {
                conflict_target: None,
                action: OnConflictAction::DoUpdate(_),
            })) => {
                return Err(SqlError::new(
                    ErrorKind::Parse,
                    "ON CONFLICT DO UPDATE requires inference specification or constraint name",
                ));
            }
            Some(OnInsert::OnConflict(OnConflict {
                conflict_target: Some(target),
                action: OnConflictAction::DoUpdate(action),
            })) => {
                let mut keys = arbiter_keys(entry, Some(target))?;
                let key = keys.pop().expect("a target names one key");
                OnConflictDo::Update(key, action)
            }
            Some(other) => return Err(SqlError::unsupported(format!("INSERT … {other}"))),
        };
        let targets: Vec<usize> = if ins.source.is_none() {
            // DEFAULT VALUES
            Vec::new()
        } else if ins.columns.is_empty() {
            (0..entry.columns.len()).collect()
        } else {
            ins.columns
                .iter()
                .map(|c| column_index(entry, c))
                .collect::<Result<_>>()?
        };
        let mut named = vec![false; entry.columns.len()];
        for &t in &targets {
            if std::mem::replace(&mut named[t], true) {
                return Err(SqlError::new(
                    ErrorKind::DuplicateColumn,
                    format!(
                        "column \"{}\" specified more than once",
                        entry.columns[t].name
                    ),
                ));
            }
        }
        if let Some(missing) = (0..named.len()).find(|&i| !named[i] && entry.needs_value(i)) {
            return Err(SqlError::new(
                ErrorKind::NotNullViolation,
                format!(
                    "null value in column \"{}\" of relation \"{name}\" violates not-null \
                     constraint (the column has no default)",
                    entry.columns[missing].name
                ),
            ));
        }
        let InsertRows {
            mut rows,
            mut defaulted,
        } = self.insert_rows(view, entry, &targets, ins, params, run)?;
        for (j, &t) in targets.iter().enumerate() {
            let ColumnDefault::Sequence { always } = *entry.defaults.of(t) else {
                continue;
            };
            match ins.overriding {
                Some(InsertOverriding::User) => defaulted[j] = (0..rows.len()).collect(),
                Some(InsertOverriding::System) => {}
                None if always && defaulted[j].len() != rows.len() => {
                    return Err(SqlError::new(
                        ErrorKind::GeneratedAlways,
                        format!(
                            "cannot insert a non-DEFAULT value into column \"{}\": it is an \
                             identity column defined as GENERATED ALWAYS (use OVERRIDING SYSTEM \
                             VALUE to override)",
                            entry.columns[t].name
                        ),
                    ));
                }
                None => {}
            }
        }
        let mut drawn = Vec::new();
        for (j, at) in defaulted.iter().enumerate() {
            if at.is_empty() {
                continue;
            }
            let n = at.len() as u64;
            let mut fill = self.fill(txn, view, row, entry, targets[j], n, run, &mut drawn)?;
            for &r in at {
                rows[r][j] = fill.next_value();
            }
        }
        let n = rows.len() as u64;
        let mut fills = self.fills(txn, view, row, entry, &named, n, run, &mut drawn)?;
        let mut add = appended(entry, &targets, &rows, &mut fills)?;
        let mut hit = Vec::new();
        match &on_conflict {
            OnConflictDo::Fail => {}
            OnConflictDo::Skip(keys) => {
                add = without_conflicts(entry, add, keys)?;
                // A repeat the snapshot shows of a key the target does not
                // name is 23505 here; only keys taken by later commits
                // become 40001 (`ChangeNotes::key_error`).
                super::unique::check_unique(entry, &[], &add)?;
            }
            OnConflictDo::Update(key, action) => {
                let up = self.upsert(
                    txn,
                    view,
                    row,
                    entry,
                    alias.as_deref(),
                    add,
                    key,
                    action,
                    params,
                    run,
                    &mut drawn,
                )?;
                add = up.add;
                hit = up.hit;
                // As above: what the snapshot shows is 23505 now.
                super::unique::check_unique(entry, &hit, &add)?;
            }
        }
        let n = add.num_rows() as u64;
        let add = Arc::new(add);
        let items = ins.returning.as_ref();
        let returned =
            returning::returned_rows(view, entry, alias.as_deref(), &add, items, params, run)?;
        let notes = ChangeNotes {
            drawn,
            skips_conflicts: !matches!(on_conflict, OnConflictDo::Fail),
        };
        self.replace_drawing(txn, view, &name, hit, add, notes)?;
        Ok((n, returned))
    }

    /// An INSERT's rows, each value in `targets`' order, and per target
    /// position the rows (ascending) whose value is the `DEFAULT` keyword
    /// (a NULL stands there until the caller puts the default in).
    fn insert_rows(
        &self,
        view: &View,
        entry: &Entry,
        targets: &[usize],
        ins: &Insert,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Result<InsertRows> {
        let mut defaulted: Vec<Vec<usize>> = vec![Vec::new(); targets.len()];
        let Some(source) = ins.source.as_deref() else {
            // DEFAULT VALUES: one row, every column its default.
            return Ok(InsertRows {
                rows: vec![Vec::new()],
                defaulted,
            });
        };
        let mut rows: Vec<Vec<Value>> = Vec::new();
        match source.body.as_ref() {
            SetExpr::Values(values)
                if source.order_by.is_none() && source.limit_clause.is_none() =>
            {
                // Rows of plain literals (the bulk of INSERTs) skip the
                // planner; the others run as `SELECT e1, e2, …`.
                for (r, exprs) in values.rows.iter().enumerate() {
                    if exprs.len() != targets.len() {
                        return Err(width_error(exprs.len(), targets.len()));
                    }
                    let mut row = Vec::with_capacity(exprs.len());
                    let mut computed: Vec<usize> = Vec::new();
                    for (j, e) in exprs.iter().enumerate() {
                        if is_default_keyword(e) {
                            defaulted[j].push(r);
                            row.push(Value::Null);
                        } else if let Some(v) = literal_value(e) {
                            row.push(v);
                        } else {
                            computed.push(j);
                            row.push(Value::Null);
                        }
                    }
                    if !computed.is_empty() {
                        let (select, row_params) = match renumbered(&computed, exprs, params) {
                            // Each row of bare parameters as the same
                            // statement (`$1`, `$2`, … of that row's
                            // values): one kept plan for every row
                            // (`plan_cache.rs`), not one per row position.
                            Some((own, row_params)) => (
                                values_select(
                                    entry,
                                    own.iter().zip(&computed).map(|(e, &j)| (e, targets[j])),
                                ),
                                row_params,
                            ),
                            None => (
                                values_select(
                                    entry,
                                    computed.iter().map(|&j| (&exprs[j], targets[j])),
                                ),
                                params.to_vec(),
                            ),
                        };
                        let values = query(view, &select, &row_params, run)?
                            .rows
                            .pop()
                            .ok_or_else(|| SqlError::invalid("a VALUES row without values"))?;
                        for (&j, v) in computed.iter().zip(values) {
                            row[j] = v;
                        }
                    }
                    rows.push(row);
                }
            }
            _ => {
                rows = query(view, &query_statement(source), params, run)?.rows;
                if let Some(r) = rows.iter().find(|r| r.len() != targets.len()) {
                    return Err(width_error(r.len(), targets.len()));
                }
            }
        }
        Ok(InsertRows { rows, defaulted })
    }

    /// `UPDATE t SET c = e | DEFAULT, … [WHERE p] [RETURNING …]`: the
    /// untouched rows kept, the updated ones appended; the rows updated, and
    /// what RETURNING gave (the rows as updated).
    pub(crate) fn update(
        &self,
        txn: &mut Transaction,
        view: &View,
        upd: &Update,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Result<(u64, Option<Returned>)> {
        if upd.from.is_some() || upd.limit.is_some() {
            return Err(SqlError::unsupported("UPDATE with FROM or LIMIT"));
        }
        let PlannedUpdate {
            name,
            alias,
            row,
            entry,
            assigned,
            select,
        } = PlannedUpdate::of(view, upd)?;
        let catalog = WithRowIds { view, entry };
        let mut result = query(&catalog, &select, params, run)?;
        let hit: Vec<u32> = result
            .rows
            .iter()
            .map(|r| row_position(&r[0]))
            .collect::<Result<_>>()?;
        let mut drawn = Vec::new();
        for &c in &assigned.from_sequence {
            let n = result.rows.len() as u64;
            let mut fill = self.fill(txn, view, row, entry, c, n, run, &mut drawn)?;
            for r in &mut result.rows {
                r[1 + c] = fill.next_value();
            }
        }
        let targets: Vec<usize> = (0..entry.columns.len()).collect();
        let rows: Vec<&[Value]> = result.rows.iter().map(|r| &r[1..]).collect();
        let add = Arc::new(appended(entry, &targets, &rows, &mut [])?);
        let items = upd.returning.as_ref();
        let returned =
            returning::returned_rows(view, entry, alias.as_deref(), &add, items, params, run)?;
        let hit = sorted_once(hit)?;
        let n = hit.len() as u64;
        let notes = ChangeNotes {
            drawn,
            skips_conflicts: false,
        };
        self.replace_drawing(txn, view, &name, hit, add, notes)?;
        Ok((n, returned))
    }

    /// `DELETE FROM t [WHERE p] [RETURNING …]`; the rows deleted, and
    /// what RETURNING gave (the rows as they were).
    pub(crate) fn delete(
        &self,
        txn: &mut Transaction,
        view: &View,
        del: &Delete,
        params: &[ParamValue],
        run: QueryRunner,
    ) -> Result<(u64, Option<Returned>)> {
        if del.using.is_some() || del.limit.is_some() || !del.tables.is_empty() {
            return Err(SqlError::unsupported("DELETE with USING or LIMIT"));
        }
        let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) = &del.from;
        let [t] = from.as_slice() else {
            return Err(SqlError::unsupported("DELETE from several tables"));
        };
        let (name, alias) = target(t)?;
        let (_, entry) = view.entry(&name)?;
        let catalog = WithRowIds { view, entry };
        let (hit, returned) = match (&del.selection, &del.returning) {
            (None, None) => (entry.live_ids(), None),
            (selection, Some(items)) => {
                let items = returning::expanded(items, entry, alias.as_deref())?;
                let select =
                    returning::returning_select(&name, alias.as_deref(), items, selection.as_ref());
                let (hit, returned) = returning::run_returning(&catalog, &select, params, run)?;
                (hit, Some(returned))
            }
            (Some(selection), None) => {
                let select = delete_select(&name, &alias, Some(selection));
                let hit = query(&catalog, &select, params, run)?
                    .rows
                    .iter()
                    .map(|r| row_position(&r[0]))
                    .collect::<Result<_>>()?;
                (hit, None)
            }
        };
        let hit = sorted_once(hit)?;
        let n = hit.len() as u64;
        self.replace(txn, view, &name, hit, entry.data.empty_like())?;
        Ok((n, returned))
    }
}

/// The keys an `ON CONFLICT [target] DO NOTHING` skips rows by: every key
/// of the table without a target, else the key whose columns the target
/// names (42P10 when none does) or the key index it names.
fn arbiter_keys(entry: &Entry, target: Option<&ConflictTarget>) -> Result<Vec<Vec<String>>> {
    let all: Vec<Vec<String>> = entry
        .unique_columns
        .iter()
        .map(|c| vec![c.clone()])
        .chain(entry.keys.iter().cloned())
        .collect();
    let mut named: Vec<String> = match target {
        None => return Ok(all),
        Some(ConflictTarget::Columns {
            predicate: Some(_), ..
        }) => {
            return Err(SqlError::unsupported(
                "ON CONFLICT (…) WHERE (partial unique indexes)",
            ));
        }
        Some(ConflictTarget::Columns { columns, .. }) => columns.iter().map(normalize).collect(),
        Some(ConflictTarget::OnConstraint(n)) => {
            let n = table_name(n)?;
            let key_index = entry
                .indexes
                .iter()
                .find(|d| d.name == n && entry.unique_columns.contains(&d.column));
            return match key_index {
                Some(d) => Ok(vec![vec![d.column.clone()]]),
                None => Err(SqlError::new(
                    ErrorKind::UndefinedObject,
                    format!(
                        "constraint \"{n}\" for table \"{}\" does not exist (ON CONSTRAINT \
                         names a one-column key's index here)",
                        entry.name
                    ),
                )),
            };
        }
    };
    named.sort();
    named.dedup();
    let found = all.into_iter().find(|k| {
        let mut k = k.clone();
        k.sort();
        k == named
    });
    match found {
        Some(k) => Ok(vec![k]),
        None => Err(SqlError::new(
            ErrorKind::InvalidColumnReference,
            "there is no unique or exclusion constraint matching the ON CONFLICT specification",
        )),
    }
}

/// What an INSERT does with a row whose key value a live row holds.
enum OnConflictDo<'a> {
    /// Fails the statement (23505): no ON CONFLICT clause.
    Fail,
    /// Skips the row (`DO NOTHING`), for these keys.
    Skip(Vec<Vec<String>>),
    /// Updates the row holding the value of this key (`DO UPDATE`:
    /// `upsert.rs`).
    Update(Vec<String>, &'a sqlparser::ast::DoUpdate),
}

/// `add` without the rows ON CONFLICT DO NOTHING skips (`keys` taken by a
/// live row, or by an earlier row of `add`).
fn without_conflicts(entry: &Entry, add: Table, keys: &[Vec<String>]) -> Result<Table> {
    let skip = super::unique::conflicting(entry, &add, keys);
    if !skip.contains(&true) {
        return Ok(add);
    }
    let kept: Vec<u32> = (0u32..)
        .zip(&skip)
        .filter(|&(_, &s)| !s)
        .map(|(r, _)| r)
        .collect();
    add.rebuild(Keep::Rows(&kept), &add.empty_like())
        .map_err(SqlError::store)
}

/// An INSERT's rows, each value in its target columns' order, and per
/// target position the rows (ascending) whose value is the `DEFAULT`
/// keyword (a NULL stands there until the default is put in).
struct InsertRows {
    rows: Vec<Vec<Value>>,
    defaulted: Vec<Vec<usize>>,
}

/// When every expression of a VALUES row at positions `computed` is a bare
/// parameter `$n` given in `params`: those expressions as `$1`, `$2`, …
/// and the values they take. `None` otherwise (the row's SELECT then
/// takes the statement's parameters as they are).
fn renumbered(
    computed: &[usize],
    exprs: &[Expr],
    params: &[ParamValue],
) -> Option<(Vec<Expr>, Vec<ParamValue>)> {
    use sqlparser::ast::Value as Lit;
    let mut own = Vec::with_capacity(computed.len());
    let mut values = Vec::with_capacity(computed.len());
    for &j in computed {
        let Expr::Value(v) = &exprs[j] else {
            return None;
        };
        let Lit::Placeholder(name) = &v.value else {
            return None;
        };
        let n: usize = name.strip_prefix('$')?.parse().ok()?;
        values.push(params.get(n.checked_sub(1)?)?.clone());
        own.push(Expr::value(Lit::Placeholder(format!("${}", values.len()))));
    }
    Some((own, values))
}

/// Whether `e` is the `DEFAULT` keyword standing for a value (VALUES,
/// UPDATE's SET): sqlparser reads it as an unquoted identifier, which no
/// column can be there (DEFAULT is reserved; a column of that name is
/// quoted).
fn is_default_keyword(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"))
}

/// A literal's value as a query would compute it: a number exactly, a
/// string as text (cast to the column's type like PostgreSQL's untyped
/// literals), NULL; `None` for anything else.
pub(super) fn literal_value(e: &Expr) -> Option<Value> {
    use sqlparser::ast::{UnaryOperator, Value as Lit};
    // Exactly where a decimal holds it; a double past 30 fractional
    // digits or 128 bits (`1e-40`, `1e50`), as the binder's constants.
    let number = |s: &str| match super::convert::parse_number_exact(s) {
        Some((value, scale @ 0..=30)) => Some(Value::Decimal {
            value,
            scale: scale as u8,
        }),
        _ => crate::types::parse_double(s)
            .filter(|d| d.is_finite())
            .map(Value::Double),
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
