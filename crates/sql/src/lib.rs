//! Maestro's SQL front end (first slice of issue 17): a SELECT is parsed by
//! `sqlparser`, bound against a [`Catalog`] ([`bind`]), planned as a small
//! logical tree ([`plan`]), rewritten by a rule-based optimizer ([`optimize`]:
//! predicate pushdown, join ordering, projection pruning) and lowered onto
//! `maestro-execution`'s operators on the scheduler ([`lower`]).
//!
//! Supported: SELECT [DISTINCT] … FROM tables, derived tables and WITH
//! queries (comma joins, `[INNER] JOIN … ON`, `LEFT [OUTER] JOIN … ON`)
//! WHERE … GROUP BY … HAVING … ORDER BY … [NULLS FIRST|LAST] LIMIT n OFFSET m,
//! with SUM, COUNT, COUNT(*), COUNT(DISTINCT), AVG, MIN, MAX; `+ - * /`,
//! comparisons, AND/OR/NOT (three-valued), NULL, IS [NOT] NULL, BETWEEN,
//! IN (list), LIKE, CASE WHEN [ELSE], CAST, SUBSTRING, COALESCE, NULLIF,
//! `DATE '…'`, `DATE '…' ± INTERVAL`, EXTRACT(YEAR FROM …); subqueries
//! unnested into joins (`[NOT] EXISTS`, `[NOT] IN (SELECT …)`, scalar
//! subqueries, correlated by equalities); `EXPLAIN [ANALYZE] SELECT …`. All 22 TPC-H
//! queries run from the spec's SQL. Tables that clients create and change
//! (CREATE/DROP TABLE, INSERT/UPDATE/DELETE, COPY FROM, transactions) live in
//! the transactional [`store`]. Not in this slice: RIGHT/FULL joins, set
//! operations, nullable stored columns.

pub mod bind;
pub mod catalog;
pub mod error;
mod estimate;
mod explain;
mod functional;
pub mod index_scan;
pub mod lower;
pub mod optimize;
mod outer_agg;
pub mod params;
pub mod plan;
pub mod plan_cache;
mod share;
mod share_scans;
pub mod store;
mod tpch_text;
mod twins;
pub mod types;

pub use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

use maestro_execution::{Executor, QueryProfile};
use maestro_tpch::queries::QueryResult;

pub use catalog::{Catalog, ColumnDef, IndexInfo, TableDef, TpchCatalog};
pub use error::{ErrorKind, Position, Rerun, SqlError};
pub use lower::{Analysis, NodeStats};
pub use params::ParamValue;
pub use plan::LogicalPlan;
pub use store::{Store, View, Written};
pub use tpch_text::tpch_statement;
use types::SqlType;

/// What a statement returns.
#[derive(Debug)]
pub enum Output {
    /// A query's rows.
    Rows(QueryResult),
    /// `EXPLAIN`: the optimized plan, one operator per line (`EXPLAIN
    /// ANALYZE`: with each operator's actual rows, time, tasks and memory).
    Explain(String),
}

/// Whether a statement is an `EXPLAIN`, and which.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Explain {
    /// Not an EXPLAIN: run it.
    No,
    /// `EXPLAIN`: the plan, not run.
    Plan,
    /// `EXPLAIN ANALYZE`: run it, return the plan with what each operator did
    /// (the rows are discarded, as PostgreSQL does).
    Analyze,
}

/// Parses one statement (PostgreSQL dialect).
pub fn parse(sql: &str) -> Result<Statement, SqlError> {
    let mut stmts = Parser::parse_sql(&PostgreSqlDialect {}, sql).map_err(parse_error)?;
    match stmts.len() {
        1 => Ok(stmts.remove(0)),
        0 => Err(SqlError::new(ErrorKind::Parse, "empty statement")),
        _ => Err(SqlError::unsupported(
            "several statements at once (one per call)",
        )),
    }
}

/// Parses, binds and optimizes one statement, and says whether it was an
/// `EXPLAIN` [`ANALYZE`](Explain::Analyze).
pub fn plan(catalog: &dyn Catalog, sql: &str) -> Result<(LogicalPlan, Explain), SqlError> {
    plan_with(catalog, sql, &[])
}

/// [`plan`] of a statement with parameters: `$n` is `params[n - 1]` (of the
/// type [`describe`] gave it).
pub fn plan_with(
    catalog: &dyn Catalog,
    sql: &str,
    params: &[ParamValue],
) -> Result<(LogicalPlan, Explain), SqlError> {
    plan_parsed(catalog, &parse(sql)?, params)
}

/// [`plan_with`] of a statement already parsed ([`parse`]): a server that
/// parsed it to see what it is does not parse it again. Through the
/// catalog's plan cache when it has one
/// ([`Catalog::plan_cache`]).
pub fn plan_parsed(
    catalog: &dyn Catalog,
    stmt: &Statement,
    params: &[ParamValue],
) -> Result<(LogicalPlan, Explain), SqlError> {
    match catalog.plan_cache() {
        Some(cache) => cache
            .plan(catalog, stmt, params)
            .map(|(plan, explain, _)| (plan, explain)),
        None => plan_uncached(catalog, stmt, params),
    }
}

/// [`plan_parsed`] bound and optimized for this execution, whatever the
/// catalog's plan cache holds.
pub fn plan_uncached(
    catalog: &dyn Catalog,
    stmt: &Statement,
    params: &[ParamValue],
) -> Result<(LogicalPlan, Explain), SqlError> {
    let bound = bind::bind_with(catalog, stmt, &[], Some(params.to_vec()))?;
    Ok((optimize::optimize(bound.plan, catalog)?, bound.explain))
}

/// What a statement returns and takes, without running it: what a wire
/// protocol's Describe announces.
#[derive(Clone, Debug, PartialEq)]
pub struct Description {
    /// The result columns (`EXPLAIN`: one text column, `QUERY PLAN`).
    pub columns: Vec<(String, SqlType)>,
    /// The types of `$1`, `$2`, …: `declared` where the client gave one,
    /// else inferred from the context (a comparison's other side, a CAST,
    /// an IN list's operand, LIMIT; TEXT where nothing says).
    pub param_types: Vec<SqlType>,
    /// An `EXPLAIN` [`ANALYZE`]: it answers text rows of its plan.
    pub explain: bool,
}

/// Parses and binds one statement to describe it ([`Description`]).
pub fn describe(
    catalog: &dyn Catalog,
    sql: &str,
    declared: &[Option<SqlType>],
) -> Result<Description, SqlError> {
    describe_parsed(catalog, &parse(sql)?, declared)
}

/// [`describe`] of a statement already parsed.
pub fn describe_parsed(
    catalog: &dyn Catalog,
    stmt: &Statement,
    declared: &[Option<SqlType>],
) -> Result<Description, SqlError> {
    // A locking clause changes what the store does with the rows
    // (`store/for_update.rs`), not their columns or parameters.
    let unlocked;
    let stmt = match stmt {
        Statement::Query(q) if !q.locks.is_empty() => {
            let mut q = q.clone();
            q.locks.clear();
            unlocked = Statement::Query(q);
            &unlocked
        }
        other => other,
    };
    let bound = bind::bind_with(catalog, stmt, declared, None)?;
    Ok(Description {
        columns: if bound.explain != Explain::No {
            vec![("QUERY PLAN".to_string(), SqlType::Str)]
        } else {
            lower::result_columns(&bound.plan)
        },
        param_types: bound.param_types,
        explain: bound.explain != Explain::No,
    })
}

/// Runs one statement on `exec` (the whole plan as one scheduler job) and
/// returns its rows or, for `EXPLAIN`, its plan.
pub fn execute(exec: &Executor, catalog: &dyn Catalog, sql: &str) -> Result<Output, SqlError> {
    execute_profiled(exec, catalog, sql).map(|(o, _)| o)
}

/// [`execute`] with the operators' profile (none for `EXPLAIN`).
pub fn execute_profiled(
    exec: &Executor,
    catalog: &dyn Catalog,
    sql: &str,
) -> Result<(Output, Option<QueryProfile>), SqlError> {
    let (plan, explain) = plan(catalog, sql)?;
    let ctx = exec.context("SQL");
    match explain {
        Explain::Plan => Ok((Output::Explain(plan.explain()), None)),
        Explain::No => {
            let result = exec.run_plan(|| lower::run(&ctx, catalog, &plan))?;
            Ok((Output::Rows(result), Some(ctx.finish())))
        }
        Explain::Analyze => {
            let (_, analysis) = exec.run_plan(|| lower::run_analyzed(&ctx, catalog, &plan))?;
            let profile = ctx.finish();
            Ok((
                Output::Explain(explain_analyze(&plan, &analysis, &profile)),
                Some(profile),
            ))
        }
    }
}

/// `EXPLAIN ANALYZE`'s text: the annotated plan and the run's totals.
pub fn explain_analyze(
    plan: &LogicalPlan,
    analysis: &lower::Analysis,
    profile: &QueryProfile,
) -> String {
    format!(
        "{}Execution: {:.3} ms, {} tasks, {:.1} KiB charged\n",
        plan.explain_analyzed(analysis),
        profile.elapsed.as_secs_f64() * 1e3,
        profile.tasks,
        profile.memory_charged as f64 / 1024.0
    )
}

/// sqlparser's message, with its "at Line: l, Column: c" as a position.
fn parse_error(e: sqlparser::parser::ParserError) -> SqlError {
    let msg = e.to_string();
    let msg = msg
        .strip_prefix("sql parser error: ")
        .unwrap_or(&msg)
        .to_string();
    let mut err = SqlError::new(ErrorKind::Parse, format!("syntax error: {msg}"));
    if let Some(rest) = msg.split(" at Line: ").nth(1) {
        let nums: Vec<u64> = rest
            .split(", Column: ")
            .filter_map(|s| s.trim().parse().ok())
            .collect();
        if let [line, column] = nums[..] {
            err.position = Some(Position { line, column });
            err.message = format!(
                "syntax error: {}",
                msg.split(" at Line: ").next().unwrap_or(&msg)
            );
        }
    }
    err
}
