//! The 22 TPC-H queries as hand-written plans over `maestro-execution`'s
//! operators, with the spec's substitution parameters ([`QueryParams`]), their
//! answers as typed rows ([`QueryResult`]) and the checker against an
//! independent engine's answers ([`check`]).
//!
//! Each `qNN` module holds one query: the spec's SQL in its doc comment, then
//! the plan. Plans read columns in place (late materialization: row-id
//! vectors, [`maestro_execution::gather_positions`]), ask the [`ExecContext`]'s
//! granularity policy how many tasks each operator creates, and de-correlate
//! subqueries into aggregations joined back (Q2, Q4, Q17, Q20–Q22), as the
//! issue asks.

pub mod answers;
pub mod check;
mod params;
mod result;
mod sql_text;
mod stream_order;
mod util;

mod q01;
mod q02;
mod q03;
mod q04;
mod q05;
mod q06;
mod q07;
mod q08;
mod q09;
mod q10;
mod q11;
mod q12;
mod q13;
mod q14;
mod q15;
mod q16;
mod q17;
mod q18;
mod q19;
mod q20;
mod q21;
mod q22;

use maestro_execution::{ExecContext, ExecError, Executor, QueryProfile};
use maestro_scheduler::CancelToken;

pub use params::{
    FRACTION_SCALE, ParamError, ParamValue, QueryParams, parse_query_number, region_of_nation,
};
pub use result::{
    ColumnType, OutputFormat, QueryResult, Value, format_decimal, format_double, format_timestamp,
    ratio_f64,
};
pub use sql_text::{SqlTextError, sql_template, sql_text, substitute};
pub use stream_order::{STREAM_ORDERS, stream_order};

use crate::Database;

/// Number of TPC-H queries.
pub const QUERY_COUNT: u8 = 22;

/// Runs the query `params` are for, in `ctx`.
pub fn run(
    ctx: &ExecContext,
    db: &Database,
    params: &QueryParams,
) -> Result<QueryResult, ExecError> {
    let p = params;
    match params.query() {
        1 => q01::run(ctx, db, p),
        2 => q02::run(ctx, db, p),
        3 => q03::run(ctx, db, p),
        4 => q04::run(ctx, db, p),
        5 => q05::run(ctx, db, p),
        6 => q06::run(ctx, db, p),
        7 => q07::run(ctx, db, p),
        8 => q08::run(ctx, db, p),
        9 => q09::run(ctx, db, p),
        10 => q10::run(ctx, db, p),
        11 => q11::run(ctx, db, p),
        12 => q12::run(ctx, db, p),
        13 => q13::run(ctx, db, p),
        14 => q14::run(ctx, db, p),
        15 => q15::run(ctx, db, p),
        16 => q16::run(ctx, db, p),
        17 => q17::run(ctx, db, p),
        18 => q18::run(ctx, db, p),
        19 => q19::run(ctx, db, p),
        20 => q20::run(ctx, db, p),
        21 => q21::run(ctx, db, p),
        22 => q22::run(ctx, db, p),
        q => panic!("QueryParams for query {q}: QueryParams only exist for 1..=22"),
    }
}

/// Runs a query in a fresh context of `exec` (template `Q<n>`, so `adaptive`
/// learns per query) — on the caller's thread, or on the executor's plan pool
/// under the thread-pool baselines ([`maestro_execution::Backend`]); the
/// answer and the operators' profile.
pub fn run_profiled(
    exec: &Executor,
    db: &Database,
    params: &QueryParams,
) -> Result<(QueryResult, QueryProfile), ExecError> {
    run_profiled_cancellable(exec, db, params, CancelToken::new())
}

/// [`run_profiled`] that stops at its operators' next checkpoint once `cancel`
/// is cancelled or times out: then [`ExecError::Cancelled`], and a cancelled
/// run gives no feedback to `adaptive` (its time says nothing about its plan).
pub fn run_profiled_cancellable(
    exec: &Executor,
    db: &Database,
    params: &QueryParams,
    cancel: CancelToken,
) -> Result<(QueryResult, QueryProfile), ExecError> {
    let ctx = exec.context_cancellable(template(params.query()), cancel);
    let result = exec.run_plan_cancellable(|| run(&ctx, db, params))?;
    Ok((result, ctx.finish()))
}

/// The template name of query `q` (`"Q1"`…`"Q22"`).
pub fn template(q: u8) -> &'static str {
    const NAMES: [&str; 22] = [
        "Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8", "Q9", "Q10", "Q11", "Q12", "Q13", "Q14",
        "Q15", "Q16", "Q17", "Q18", "Q19", "Q20", "Q21", "Q22",
    ];
    NAMES[usize::from(q) - 1]
}
