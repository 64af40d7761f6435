//! Maestro's partitionable operators: the bridge between the column store and
//! the scheduler (`../shared/DESIGN.md`, crate `execution`). Queries are
//! hand-written plans that call these operators; there is no SQL planner.
//!
//! - **Granularity** ([`Granularity`]): every partitionable operator asks its
//!   [`ExecContext`] how many tasks to create — `fixed:N`, `static` (one per
//!   context), `hint` (the scheduler's concurrency hint, with splitting), or
//!   `adaptive` (a learned degree per query template and operator,
//!   [`AdaptiveState`]) — and reports its time and task count ([`QueryProfile`]).
//! - **Data**: operators read columns at *positions* ([`Col`]): the rows of a
//!   base table, or rows picked by a row-id vector after a selection or a join
//!   (late materialization). [`Input`] is `0..len`, optionally filtered by a
//!   [`Pred`] on the fly.
//! - **Operators**: [`select`]/[`select_bitmap`], [`project`] and
//!   [`gather_positions`], [`aggregate`] (hash, partial per task + merge),
//!   [`JoinTable`] (hash join: inner, left outer, semi, anti, mark), [`sort`]
//!   and [`top_k`]. Arithmetic is exact fixed-point ([`Expr`]).
//! - **Plans as task graphs**: [`PlanGraph`], one node per pipeline.
//!
//! ```no_run
//! use std::sync::Arc;
//! use maestro_execution::*;
//! use maestro_scheduler::{Scheduler, SchedulerConfig};
//! use maestro_storage::column::{Date, Decimal};
//!
//! # fn main() -> Result<(), ExecError> {
//! let scheduler = Arc::new(Scheduler::new(SchedulerConfig::single_hints()).unwrap());
//! let db = maestro_tpch_like_load();
//! # fn maestro_tpch_like_load() -> maestro_storage::column::Table { unimplemented!() }
//! let exec = Executor::new(scheduler, "hint".parse().unwrap());
//! // TPC-H Q6.
//! let ctx = exec.context("Q6");
//! let li = &db;
//! let date = |s| Date::parse(s).unwrap();
//! let dec = |s| Decimal::parse(s, 2).unwrap();
//! let filter = Pred::and(vec![
//!     Pred::cmp(Col::of(li, "l_shipdate")?, CmpOp::Ge, date("1994-01-01"))?,
//!     Pred::cmp(Col::of(li, "l_shipdate")?, CmpOp::Lt, date("1995-01-01"))?,
//!     Pred::between(Col::of(li, "l_discount")?, dec("0.05"), dec("0.07"))?,
//!     Pred::cmp(Col::of(li, "l_quantity")?, CmpOp::Lt, 24i64)?,
//! ]);
//! let revenue = Expr::col(Col::of(li, "l_extendedprice")?) * Expr::col(Col::of(li, "l_discount")?);
//! let r = aggregate(&ctx, "agg", Input::filtered(li.num_rows(), &filter), &[], &[Agg::sum(revenue)])?;
//! println!("revenue = {} (scale {})", r.agg(0).values[0], r.agg(0).scale);
//! println!("{}", ctx.finish().summary());
//! # Ok(())
//! # }
//! ```

mod adaptive;
mod agg;
mod bitmap;
mod col;
mod driver;
mod error;
mod executor;
mod expr;
mod granularity;
mod graph;
mod input;
mod join;
mod keys;
mod like;
mod pred;
mod profile;
mod project;
mod select;
mod sort;

#[cfg(test)]
mod testkit;

pub use adaptive::{AdaptiveConfig, AdaptiveState, DopPlan, SearchPhase, TemplateReport};
pub use agg::{Agg, AggColumn, AggFunc, AggResult, aggregate, round_div};
pub use bitmap::Bitmap;
pub use col::{Col, Data};
pub use error::ExecError;
pub use executor::{Backend, DEFAULT_MIN_ROWS_PER_TASK, ExecContext, Executor};
pub use expr::{Expr, ValueFn};
pub use granularity::{Granularity, ParseGranularityError};
pub use graph::{Output, PlanGraph};
pub use input::{Input, VECTOR_SIZE};
pub use join::{JoinKind, JoinOutput, JoinPairs, JoinTable, NO_ROW, Residual};
pub use keys::MAX_KEYS;
pub use like::{Like, LikeShape};
pub use pred::{CmpOp, Lit, PosFn, Pred};
pub use profile::{OpId, OpKind, OpProfile, QueryProfile};
pub use project::{Projection, gather_positions, project};
pub use select::{select, select_bitmap};
pub use sort::{Order, SortKey, sort, top_k};
