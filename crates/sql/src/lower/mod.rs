//! Lowering: runs a [`LogicalPlan`] with `maestro-execution`'s operators on
//! the scheduler — `select` for filters, `JoinTable` build/probe for joins
//! (built on the smaller input), `aggregate` (hash, partial per task then
//! merged) for GROUP BY, `sort`/`top_k` for ORDER BY [LIMIT], `project` for
//! arithmetic — inside the one scheduler job of the statement
//! (`Executor::run_plan`), each operator partitioned by the context's
//! granularity policy, and the two inputs of every join computed
//! concurrently (fork-join: the plan tree is the statement's task graph). Intermediate results are relations of row ids into
//! the column store plus computed columns ([`vector`]).

mod aggregate;
mod compile;
mod eval;
mod fused_join;
mod index;
mod per_code;
mod residual;
mod stacked;
mod vector;

pub(crate) use eval::like;
pub(crate) use stacked::stacked;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use maestro_execution::{
    ExecContext, Expr as ExecExpr, Input, JoinKind as ExecJoinKind, JoinOutput, JoinTable,
    MAX_KEYS, NO_ROW, Order, Pred, Residual, SortKey, select, sort,
};
use maestro_storage::column::{Column, Date};
use maestro_tpch::queries::{ColumnType, QueryResult, Value, ratio_f64};

use crate::bind::type_of;
use crate::catalog::Catalog;
use crate::error::{Result, SqlError};
use crate::plan::{CmpOp, ColumnId, Direction, Expr, JoinKind, LogicalPlan, Plan};
use crate::types::SqlType;
use compile::{columnar, eval_vector, to_exec_expr, to_pred};
use eval::{Fault, eval_row, eval_with};
use vector::{Encoding, Relation, RowIds, Scalar, Vector};

/// A constant converted to `to` at bind time: `Ok(None)` if the result is
/// no literal (an exact number past 64 bits), an error if the
/// constant does not convert (a string that is no number: 22P02).
pub(crate) fn cast_literal(
    l: &crate::types::Literal,
    to: SqlType,
) -> Result<Option<crate::types::Literal>> {
    use crate::types::Literal;
    Ok(match eval::cast(eval::literal(l), to)? {
        // A timestamp is a number at run time; as a constant it keeps its type.
        Scalar::Num { value, .. } if to == SqlType::Timestamp => {
            i64::try_from(value).ok().map(Literal::Timestamp)
        }
        Scalar::Num { value, scale } => i64::try_from(value)
            .ok()
            .map(|value| Literal::Num { value, scale }),
        Scalar::Date(d) => Some(Literal::Date(Date(d))),
        Scalar::Str(s) => Some(Literal::Str(s)),
        Scalar::Double(d) => Some(Literal::Double(d)),
        Scalar::Bool(b) => Some(Literal::Bool(b)),
        Scalar::Null => None,
    })
}

/// Runs `plan` in `ctx` (call it inside `Executor::run_plan`).
pub fn run(ctx: &ExecContext, catalog: &dyn Catalog, plan: &LogicalPlan) -> Result<QueryResult> {
    Lowering {
        ctx,
        catalog,
        plan,
        analysis: None,
        shared: Mutex::default(),
    }
    .run()
}

/// What one plan node did in an `EXPLAIN ANALYZE` run, inclusive of its
/// inputs (as PostgreSQL's actual times are).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Rows the node output.
    pub rows: usize,
    /// Wall time from the node's start to its output, its inputs included.
    pub elapsed: Duration,
    /// Operator tasks created, its inputs included.
    pub tasks: u64,
    /// Bytes charged to the statement's memory account, its inputs included.
    pub memory_bytes: u64,
}

/// The [`NodeStats`] of each node of one run, by the node's address in the
/// plan it ran (so valid for that plan only, while it is not moved).
#[derive(Debug, Default)]
pub struct Analysis {
    nodes: HashMap<usize, NodeStats>,
}

impl Analysis {
    /// The stats of `node`, a node of the plan that ran; `None` for a node
    /// that did not run (under a join whose other side was empty, …).
    pub fn get(&self, node: &Plan) -> Option<NodeStats> {
        self.nodes.get(&node_key(node)).copied()
    }
}

fn node_key(node: &Plan) -> usize {
    std::ptr::from_ref(node) as usize
}

/// [`run`], also measuring every node (`EXPLAIN ANALYZE`).
pub fn run_analyzed(
    ctx: &ExecContext,
    catalog: &dyn Catalog,
    plan: &LogicalPlan,
) -> Result<(QueryResult, Analysis)> {
    let l = Lowering {
        ctx,
        catalog,
        plan,
        analysis: Some(Mutex::new(Analysis::default())),
        shared: Mutex::default(),
    };
    let result = l.run()?;
    let analysis = l
        .analysis
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .unwrap_or_default();
    Ok((result, analysis))
}

/// How much smaller than a filtered subquery table a semi or anti join's
/// left side must be for the table to be reduced by the left side's keys
/// before its filter runs (rows ÷ rows; a guess: the reduction probes every
/// row of the table, worth it when few survive to be filtered).
const REDUCE_FIRST_RATIO: usize = 4;

/// Whether [`Lowering::keyed_join`] may still reduce its right side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reduce {
    /// Reduce it when the left side is the smaller.
    IfSmaller,
    /// Already reduced to the left side's keys.
    Done,
}

struct Lowering<'a> {
    ctx: &'a ExecContext,
    catalog: &'a dyn Catalog,
    plan: &'a LogicalPlan,
    /// `Some` for EXPLAIN ANALYZE: each node's stats go here.
    analysis: Option<Mutex<Analysis>>,
    /// The result of each [`Plan::Shared`] by id, computed before the
    /// statement's tree runs (see [`Lowering::run_shared`]).
    shared: Mutex<HashMap<usize, Relation<'a>>>,
}

/// Where a node's measurement starts (see [`Lowering::measured`]).
struct Mark {
    at: Instant,
    tasks: u64,
    memory_bytes: u64,
}

impl<'a> Lowering<'a> {
    pub(super) fn ty(&self, e: &Expr) -> SqlType {
        type_of(e, &|c| self.plan.column(c).ty)
    }

    fn run(&self) -> Result<QueryResult> {
        let Plan::Project { input, outputs } = &self.plan.root else {
            return Err(SqlError::invalid("a plan ends with its projection"));
        };
        self.run_shared(&self.plan.root)?;
        let mark = self.mark();
        let rel = self.node(input)?;
        let result = self.output(&rel, outputs)?;
        self.measured(&self.plan.root, mark, result.rows.len());
        Ok(result)
    }

    fn mark(&self) -> Option<Mark> {
        self.analysis.as_ref().map(|_| Mark {
            at: Instant::now(),
            tasks: self.ctx.tasks_created(),
            memory_bytes: self.ctx.memory_charged(),
        })
    }

    /// Records `node`'s stats since `mark` (nothing outside EXPLAIN ANALYZE).
    fn measured(&self, node: &Plan, mark: Option<Mark>, rows: usize) {
        let (Some(a), Some(m)) = (&self.analysis, mark) else {
            return;
        };
        let stats = NodeStats {
            rows,
            elapsed: m.at.elapsed(),
            tasks: self.ctx.tasks_created().saturating_sub(m.tasks),
            memory_bytes: self.ctx.memory_charged().saturating_sub(m.memory_bytes),
        };
        a.lock()
            .unwrap_or_else(|e| e.into_inner())
            .nodes
            .insert(node_key(node), stats);
    }

    /// Sets the row count of `node`'s stats, recorded before the count was
    /// known (a filter fused into the operator above it).
    fn recount(&self, node: &Plan, rows: usize) {
        if let Some(a) = &self.analysis {
            let mut a = a.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = a.nodes.get_mut(&node_key(node)) {
                s.rows = rows;
            }
        }
    }

    /// Computes every [`Plan::Shared`] under `p`, one after the other and
    /// before the tree that reads them runs: its result is then there for
    /// every reference, in whichever branch of a fork-join it sits, and no
    /// task ever waits for another to compute it (a worker blocked on such
    /// a wait could hold, lower on its stack, a task the computing one
    /// waits for). Shared plans nested in a shared plan come first (its
    /// tree reads them). Costs the overlap of a shared plan with its
    /// consumers' sibling branches, not the parallelism of its operators.
    fn run_shared(&self, p: &'a Plan) -> Result<()> {
        for c in p.children() {
            self.run_shared(c)?;
        }
        if let Plan::Shared { id, input } = p {
            let mark = self.mark();
            let rel = self.node(input)?;
            self.measured(p, mark, rel.len);
            self.lock_shared().insert(*id, rel);
        }
        Ok(())
    }

    fn lock_shared(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Relation<'a>>> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The result of shared plan `id` (a copy: row ids are shared, owned
    /// vectors copied).
    fn shared_result(&self, id: usize) -> Result<Relation<'a>> {
        self.lock_shared()
            .get(&id)
            .cloned()
            .ok_or_else(|| SqlError::invalid(format!("shared plan #{id} was not computed")))
    }

    fn node(&self, p: &'a Plan) -> Result<Relation<'a>> {
        if let Plan::Shared { id, .. } = p {
            // Measured where it was computed (`run_shared`).
            return self.shared_result(*id);
        }
        let mark = self.mark();
        let rel = self.node_unmeasured(p)?;
        self.measured(p, mark, rel.len);
        Ok(rel)
    }

    /// Both inputs of a join, concurrently: the right side is a scheduler
    /// task that idle workers steal while this one computes the left side
    /// (fork-join; the plan tree is the statement's task graph, a join's two
    /// subtrees its independent branches, each operator inside them split by
    /// the granularity policy). Under EXPLAIN ANALYZE one after the other: a
    /// node's time and task count are then its own, not its sibling's too.
    fn join_inputs(
        &self,
        left: &'a Plan,
        right: &'a Plan,
    ) -> (Result<Relation<'a>>, Result<Relation<'a>>) {
        if self.analysis.is_some() {
            return (self.node(left), self.node(right));
        }
        maestro_scheduler::join(|| self.node(left), || self.node(right))
    }

    fn node_unmeasured(&self, p: &'a Plan) -> Result<Relation<'a>> {
        if let Some(s) = stacked(p) {
            return self.stacked_joins(p, s);
        }
        if let Plan::Join {
            left,
            right,
            kind: JoinKind::Inner,
            keys,
            residual,
        } = p
            && !keys.is_empty()
        {
            let (hashed, extra) = keys.split_at(keys.len().min(MAX_KEYS));
            if let Some(scan_is_left) = self.fused_scan_side(left, right, hashed) {
                let out = self.fused_join(left, right, hashed, scan_is_left)?;
                return self.inner_checks(out, extra, residual);
            }
        }
        match p {
            Plan::Scan {
                table,
                columns,
                filter,
                index: Some(ix),
                ..
            } => self.index_scan(table, columns, filter, ix),
            Plan::Scan {
                table,
                columns,
                filter,
                ..
            } => self.scan(table, columns, filter),
            Plan::Filter { input, predicate } => {
                let rel = self.node(input)?;
                self.filter(rel, predicate)
            }
            Plan::Join {
                left,
                right,
                // Not NOT IN: its NULL test reads the whole subquery.
                kind: kind @ (JoinKind::Semi | JoinKind::Anti),
                keys,
                residual,
            } if !keys.is_empty()
                && matches!(
                    right.as_ref(),
                    Plan::Scan { filter, index: None, .. } if !filter.is_empty()
                ) =>
            {
                self.reduce_then_filter(left, right, *kind, keys, residual)
            }
            Plan::Join {
                left,
                right,
                kind,
                keys,
                residual,
            } => {
                let (l, r) = self.join_inputs(left, right);
                let (l, r) = (l?, r?);
                match kind {
                    JoinKind::Inner if keys.is_empty() => self.cross(l, r),
                    JoinKind::Inner => {
                        // The operators hash at most MAX_KEYS key columns
                        // (CH's Q5 joins on five): further equalities are
                        // checked on the joined pairs, with the residual.
                        let (hashed, extra) = keys.split_at(keys.len().min(MAX_KEYS));
                        let out = self.join(l, r, hashed)?;
                        self.inner_checks(out, extra, residual)
                    }
                    _ => self.keyed_join(l, r, *kind, keys, residual, Reduce::IfSmaller),
                }
            }
            Plan::Map { input, exprs } => {
                let mut rel = self.node(input)?;
                for (id, e) in exprs {
                    let v = eval_vector(self.ctx, e, self.ty(e), &rel)?;
                    rel.cols.push((*id, v));
                }
                Ok(rel)
            }
            Plan::Aggregate {
                input,
                groups,
                aggs,
            } => {
                let dependent = crate::functional::dependent_groups(input, groups, self.catalog);
                self.aggregate_node(input, groups, aggs, &dependent)
            }
            Plan::Sort { input, keys } => {
                let rel = self.node(input)?;
                self.sort(&rel, keys, None)
            }
            Plan::Limit {
                input,
                count,
                offset,
            } => {
                let end = count.saturating_add(*offset);
                let rel = match input.as_ref() {
                    // One top-k sort: measured as the sort node too.
                    sort_node @ Plan::Sort { input, keys } => {
                        let mark = self.mark();
                        let rel = self.node(input)?;
                        let rel = self.sort(&rel, keys, (end < usize::MAX).then_some(end))?;
                        self.measured(sort_node, mark, rel.len);
                        rel
                    }
                    other => self.node(other)?,
                };
                if *offset == 0 && rel.len <= end {
                    return Ok(rel);
                }
                let pos: Vec<u32> = (rel.len.min(*offset)..rel.len.min(end))
                    .map(|p| p as u32)
                    .collect();
                Ok(rel.take(self.ctx, &pos))
            }
            Plan::Project { .. } => Err(SqlError::unsupported("a projection below the top")),
            Plan::Shared { id, .. } => self.shared_result(*id),
            Plan::SharedRef { id, columns } => {
                let all = self.lock_shared();
                let shared = all.get(id).ok_or_else(|| {
                    SqlError::invalid(format!("shared plan #{id} was not computed"))
                })?;
                // Only the columns this reference reads are copied.
                let cols = columns
                    .iter()
                    .map(|&(mine, theirs)| {
                        shared
                            .get(theirs)
                            .cloned()
                            .map(|v| (mine, v))
                            .ok_or_else(|| {
                                SqlError::invalid(format!("shared plan #{id} lacks a column"))
                            })
                    })
                    .collect::<Result<_>>()?;
                Ok(Relation {
                    len: shared.len,
                    cols,
                })
            }
            Plan::OneRow => Ok(Relation {
                len: 1,
                cols: Vec::new(),
            }),
            Plan::Series {
                column,
                start,
                step,
                rows,
            } => Ok(Relation {
                len: *rows,
                cols: vec![(*column, Vector::Int(series(*start, *step, *rows)))],
            }),
        }
    }

    fn scan(
        &self,
        table: &str,
        columns: &[(ColumnId, usize)],
        filter: &[Expr],
    ) -> Result<Relation<'a>> {
        let (rel, deleted) = self.scan_unfiltered(table, columns, !filter.is_empty())?;
        if filter.is_empty() {
            return Ok(rel);
        }
        self.filter_live(rel, filter, deleted)
    }

    /// A scan's relation before its filter, and the ascending combined ids
    /// of deleted rows the filter must drop (empty unless `filtered`).
    pub(super) fn scan_unfiltered(
        &self,
        table: &str,
        columns: &[(ColumnId, usize)],
        filtered: bool,
    ) -> Result<(Relation<'a>, &'a [u32])> {
        let data = self
            .catalog
            .data(table)
            .ok_or_else(|| SqlError::invalid(format!("table {table} has no data")))?;
        // With a delta: the appended rows are read from the delta's
        // columns (the columns' tails). With deletions, a filtered scan
        // runs over every combined id and drops the deleted ones with its
        // filter, reading the columns directly; an unfiltered one reads
        // through the live rows' combined ids (cached by the delta).
        let delta = self.catalog.delta(table).filter(|d| !d.is_empty());
        let deleted = delta.filter(|_| filtered).map_or(&[][..], |d| d.deleted());
        let ids = delta
            .filter(|d| !d.deleted().is_empty() && !filtered)
            .map(|d| d.live_ids());
        let len = match (&ids, delta) {
            (Some(ids), _) => ids.len(),
            (None, Some(d)) => d.id_space(),
            (None, None) => data.num_rows(),
        };
        let rel = Relation {
            len,
            cols: columns
                .iter()
                .map(|&(id, i)| {
                    if self.catalog.row_id_column(table) == Some(i) {
                        let row_ids = match &ids {
                            Some(ids) => ids.iter().map(|&r| i64::from(r)).collect(),
                            None => (0..len as i64).collect(),
                        };
                        return (id, Vector::Int(row_ids));
                    }
                    let base = Vector::Base {
                        column: data.column_at(i),
                        tail: delta.map(|d| d.appended().column_at(i)),
                        rows: ids.clone().map(RowIds::ascending),
                    };
                    // The mask is by combined id; a scan through live ids
                    // reads it at those ids.
                    let nulls = self.catalog.null_mask(table, i).map(|nulls| match &ids {
                        Some(ids) => Arc::new(ids.iter().map(|&r| nulls[r as usize]).collect()),
                        None => nulls,
                    });
                    (id, self.stored_vector(id, base, nulls))
                })
                .collect(),
        };
        Ok((rel, deleted))
    }

    /// A stored column as plan column `id` reads it: a BOOLEAN's or a
    /// REAL's/DOUBLE PRECISION's stored integers (their encoding:
    /// `store::spec::ColumnType`) as an encoded vector, decoded only where
    /// read as values, and a column with NULLs under its mask (`nulls`, by
    /// position), as the padded side of an outer join is.
    pub(super) fn stored_vector(
        &self,
        id: ColumnId,
        base: Vector<'a>,
        nulls: Option<Arc<Vec<bool>>>,
    ) -> Vector<'a> {
        let encoding = match (&base, self.plan.column(id).ty) {
            (
                Vector::Base {
                    column: Column::Int32(_),
                    ..
                },
                SqlType::Bool,
            ) => Some(Encoding::Bool),
            (
                Vector::Base {
                    column: Column::Int64(_),
                    ..
                },
                SqlType::Double,
            ) => Some(Encoding::Double),
            _ => None,
        };
        let values = match encoding {
            Some(encoding) => Vector::Encoded {
                raw: Box::new(base),
                encoding,
            },
            None => base,
        };
        match nulls {
            Some(nulls) => Vector::Masked {
                values: Box::new(values),
                nulls,
            },
            None => values,
        }
    }

    fn filter(&self, rel: Relation<'a>, predicate: &[Expr]) -> Result<Relation<'a>> {
        self.filter_live(rel, predicate, &[])
    }

    /// The positions of `rel` that satisfy `predicate` and are not in
    /// `deleted` (ascending; a scan's deleted combined ids).
    pub(super) fn filter_live(
        &self,
        rel: Relation<'a>,
        predicate: &[Expr],
        deleted: &'a [u32],
    ) -> Result<Relation<'a>> {
        let all = Expr::And(predicate.to_vec());
        let fault = Fault::default();
        let pos = {
            let mut pred = to_pred(self.ctx, &all, &rel, &fault)?;
            if !deleted.is_empty() {
                // Last: the filter's conjuncts leave it fewer candidates.
                pred = Pred::and(vec![pred, Pred::not_in_sorted(deleted)]);
            }
            select(self.ctx, "sql_filter", rel.len, &pred)?
        };
        fault.check()?;
        Ok(rel.take(self.ctx, &pos))
    }

    /// The equalities past the hashed keys and the residual of an inner
    /// join, checked on its joined pairs.
    fn inner_checks(
        &self,
        out: Relation<'a>,
        extra: &[(Expr, Expr)],
        residual: &[Expr],
    ) -> Result<Relation<'a>> {
        let mut checks: Vec<Expr> = extra
            .iter()
            .map(|(a, b)| Expr::cmp(CmpOp::Eq, a.clone(), b.clone()))
            .collect();
        checks.extend(residual.iter().cloned());
        if checks.is_empty() {
            Ok(out)
        } else {
            self.filter(out, &checks)
        }
    }

    /// Hash join on the keys, built on the smaller input.
    fn join(
        &self,
        left: Relation<'a>,
        right: Relation<'a>,
        keys: &[(Expr, Expr)],
    ) -> Result<Relation<'a>> {
        if keys.is_empty() {
            return Err(SqlError::unsupported("a cross join without an equality"));
        }
        let (l_keys, r_keys): (Vec<&Expr>, Vec<&Expr>) = keys.iter().map(|(l, r)| (l, r)).unzip();
        let KeyCodes {
            left: l_owned,
            right: r_owned,
            ..
        } = self.key_codes(&left, &right, &l_keys, &r_keys, NullKeys::MatchNothing)?;
        let (left, right) = (&left, &right);
        let mut lx = Vec::new();
        let mut rx = Vec::new();
        for i in 0..keys.len() {
            let a = key_expr(l_keys[i], left, l_owned[i].as_ref())?;
            let b = key_expr(r_keys[i], right, r_owned[i].as_ref())?;
            let (sa, sb) = (a.scale()?, b.scale()?);
            lx.push(scaled_up(a, sb.saturating_sub(sa)));
            rx.push(scaled_up(b, sa.saturating_sub(sb)));
        }
        let left_builds = left.len <= right.len;
        let (build, probe, bk, pk) = if left_builds {
            (left, right, &lx, &rx)
        } else {
            (right, left, &rx, &lx)
        };
        let table = JoinTable::build(self.ctx, "sql_join_build", Input::all(build.len), bk)?;
        let pairs = table.inner(self.ctx, "sql_join_probe", Input::all(probe.len), pk)?;
        let (l_pos, r_pos) = if left_builds {
            (&pairs.build, &pairs.probe)
        } else {
            (&pairs.probe, &pairs.build)
        };
        let mut out = left.take(self.ctx, l_pos);
        out.cols.extend(right.take(self.ctx, r_pos).cols);
        Ok(out)
    }

    /// A cross product with a one-row side (an uncorrelated scalar
    /// subquery): that row's values repeated at every position of the other.
    fn cross(&self, left: Relation<'a>, right: Relation<'a>) -> Result<Relation<'a>> {
        let (mut many, one) = match (left.len, right.len) {
            (_, 1) => (left, right),
            (1, _) => (right, left),
            _ => {
                return Err(SqlError::unsupported(
                    "a cross join (a table with no equality condition linking it to the others)",
                ));
            }
        };
        let zeros = vec![0u32; many.len];
        many.cols.extend(one.take(self.ctx, &zeros).cols);
        Ok(many)
    }

    /// A semi or anti join whose right side is a filtered scan: the left
    /// side first and, when it is at most a [`REDUCE_FIRST_RATIO`]th of the
    /// table, the table's rows reduced to the keys the left side has
    /// *before* the filter, which then runs on those rows only — TPC-H
    /// Q21's NOT EXISTS tests lateness on the lineitems of the candidate
    /// orders, not on all of lineitem. (The reduction is what
    /// [`Self::keyed_join`] does for a smaller left side anyway; here it also
    /// spares the filter its pass over the whole table.) Otherwise the
    /// filter first, as for any scan. The scan's line in EXPLAIN ANALYZE
    /// counts the reduction and the filter.
    fn reduce_then_filter(
        &self,
        left: &'a Plan,
        right: &'a Plan,
        kind: JoinKind,
        keys: &[(Expr, Expr)],
        residual: &[Expr],
    ) -> Result<Relation<'a>> {
        let Plan::Scan {
            table,
            columns,
            filter,
            ..
        } = right
        else {
            return Err(SqlError::invalid("reduce_then_filter takes a scan"));
        };
        let l = self.node(left)?;
        let mark = self.mark();
        let all = self.scan(table, columns, &[])?;
        let (r, reduce) = if l.len.saturating_mul(REDUCE_FIRST_RATIO) <= all.len {
            let pos = self.semi_positions(&all, &l, keys, NullKeys::of(kind))?;
            (self.filter(all.take(self.ctx, &pos), filter)?, Reduce::Done)
        } else {
            (self.filter(all, filter)?, Reduce::IfSmaller)
        };
        self.measured(right, mark, r.len);
        self.keyed_join(l, r, kind, keys, residual, reduce)
    }

    /// Semi, anti and left outer joins: the hash table is built on the right
    /// side (the subquery, or the side that may be NULL) and the left side
    /// probes it, keeping its order (a semi or anti join whose left side is
    /// the smaller first reduces the right side to the rows whose keys the
    /// left has); `residual` is checked on each pair.
    fn keyed_join(
        &self,
        left: Relation<'a>,
        right: Relation<'a>,
        kind: JoinKind,
        keys: &[(Expr, Expr)],
        residual: &[Expr],
        reduce: Reduce,
    ) -> Result<Relation<'a>> {
        if keys.is_empty() {
            if !residual.is_empty() {
                return Err(SqlError::unsupported(
                    "a subquery correlated without an equality",
                ));
            }
            let keep = match kind {
                JoinKind::Semi => right.len > 0,
                JoinKind::Anti | JoinKind::AntiIn => right.len == 0,
                _ => return Err(SqlError::unsupported("an outer join without an equality")),
            };
            let pos: Vec<u32> = if keep {
                (0..left.len as u32).collect()
            } else {
                Vec::new()
            };
            return Ok(left.take(self.ctx, &pos));
        }
        // NOT IN (SELECT y …) with one key and no residual (uncorrelated):
        // SQL's three-valued answer. Over an empty subquery every row
        // passes, NULL or not; a NULL among the y makes every test NULL or
        // false (no row); else a row whose x is NULL fails (NULL) and the
        // others pass when unmatched. Other NOT INs refuse NULL keys.
        let null_aware = kind == JoinKind::AntiIn && keys.len() == 1 && residual.is_empty();
        if null_aware && right.len == 0 {
            let all: Vec<u32> = (0..left.len as u32).collect();
            return Ok(left.take(self.ctx, &all));
        }
        let nulls = if null_aware {
            NullKeys::MatchNothing
        } else {
            NullKeys::of(kind)
        };
        // (Not for NOT IN: the reduction's codes would refuse its NULLs.)
        let right = if matches!(kind, JoinKind::Semi | JoinKind::Anti)
            && reduce == Reduce::IfSmaller
            && left.len < right.len
        {
            // The smaller left side first keeps only the subquery rows
            // whose keys it has (a semi join built on the left side): the
            // others cannot meet any left row. The hash table of the join
            // proper is then built on what remains.
            let pos = self.semi_positions(&right, &left, keys, NullKeys::of(kind))?;
            right.take(self.ctx, &pos)
        } else {
            right
        };
        let (l_keys, r_keys): (Vec<&Expr>, Vec<&Expr>) = keys.iter().map(|(l, r)| (l, r)).unzip();
        let KeyCodes {
            left: l_owned,
            right: r_owned,
            coded,
        } = self.key_codes(&left, &right, &l_keys, &r_keys, nulls)?;
        // NOT IN's NULLs, read off the codes (a key that was not coded
        // holds none on either side).
        let mut left_nulls = Vec::new();
        if null_aware && coded[0] {
            let (Some(Vector::Int(l)), Some(Vector::Int(r))) = (&l_owned[0], &r_owned[0]) else {
                panic!("a coded key is integer codes on both sides");
            };
            if r.contains(&NULL_CODE_RIGHT) {
                return Ok(left.take(self.ctx, &[]));
            }
            left_nulls = (0..l.len() as u32)
                .filter(|&p| l[p as usize] == NULL_CODE_LEFT)
                .collect();
        }
        let mut lx = Vec::new();
        let mut rx = Vec::new();
        for i in 0..keys.len() {
            let a = key_expr(l_keys[i], &left, l_owned[i].as_ref())?;
            let b = key_expr(r_keys[i], &right, r_owned[i].as_ref())?;
            let (sa, sb) = (a.scale()?, b.scale()?);
            lx.push(scaled_up(a, sb.saturating_sub(sa)));
            rx.push(scaled_up(b, sa.saturating_sub(sb)));
        }
        let cond = Expr::and_all(residual.to_vec());
        let (lref, rref) = (&left, &right);
        let fault = Fault::default();
        let fref = &fault;
        // The residual on (left position, right position).
        let check = move |p: u32, b: u32| {
            fref.truth(eval_with(&cond, &|c| match lref.get(c) {
                Some(v) => v.value_at(p as usize),
                None => rref.get(c).map_or(Scalar::Null, |v| v.value_at(b as usize)),
            }))
        };
        let table = JoinTable::build(self.ctx, "sql_join_build", Input::all(right.len), &rx)?;
        let compiled = residual::compiled(residual, lref, rref);
        let res: Option<&Residual> = match &compiled {
            _ if residual.is_empty() => None,
            Some(compiled) => Some(compiled),
            None => Some(&check),
        };
        let exec_kind = match kind {
            JoinKind::Semi => ExecJoinKind::Semi,
            JoinKind::Anti | JoinKind::AntiIn => ExecJoinKind::Anti,
            _ => ExecJoinKind::LeftOuter,
        };
        let out = table.probe(
            self.ctx,
            "sql_join_probe",
            exec_kind,
            Input::all(left.len),
            &lx,
            res,
        )?;
        fault.check()?;
        match out {
            JoinOutput::Positions(mut pos) => {
                // NOT IN: a NULL x is no match, but no pass either.
                if !left_nulls.is_empty() {
                    pos.retain(|p| left_nulls.binary_search(p).is_err());
                }
                Ok(left.take(self.ctx, &pos))
            }
            JoinOutput::Pairs(pairs) => {
                let mut out = left.take(self.ctx, &pairs.probe);
                if right.len == 0 {
                    for (id, _) in &right.cols {
                        out.cols
                            .push((*id, Vector::Values(vec![Scalar::Null; out.len])));
                    }
                } else if pairs.build.contains(&NO_ROW) {
                    // NULL-padded: the right side's row 0 under a NULL mask.
                    let nulls = Arc::new(pairs.build.iter().map(|&b| b == NO_ROW).collect());
                    let at: Vec<u32> = pairs
                        .build
                        .iter()
                        .map(|&b| if b == NO_ROW { 0 } else { b })
                        .collect();
                    for (id, v) in right.take(self.ctx, &at).cols {
                        out.cols.push((
                            id,
                            Vector::Masked {
                                values: Box::new(v),
                                nulls: Arc::clone(&nulls),
                            },
                        ));
                    }
                } else {
                    out.cols.extend(right.take(self.ctx, &pairs.build).cols);
                }
                Ok(out)
            }
            JoinOutput::Marks(_) => Err(SqlError::invalid("a mark join in a SQL plan")),
        }
    }

    /// The positions of `probe` whose keys (the right sides of `keys`) some
    /// row of `build` (the left sides) has: a semi join built on `build`.
    pub(super) fn semi_positions(
        &self,
        probe: &Relation<'a>,
        build: &Relation<'a>,
        keys: &[(Expr, Expr)],
        nulls: NullKeys,
    ) -> Result<Vec<u32>> {
        let (b_keys, p_keys): (Vec<&Expr>, Vec<&Expr>) = keys.iter().map(|(l, r)| (l, r)).unzip();
        let KeyCodes {
            left: b_owned,
            right: p_owned,
            ..
        } = self.key_codes(build, probe, &b_keys, &p_keys, nulls)?;
        let mut bx = Vec::new();
        let mut px = Vec::new();
        for i in 0..keys.len() {
            let a = key_expr(b_keys[i], build, b_owned[i].as_ref())?;
            let b = key_expr(p_keys[i], probe, p_owned[i].as_ref())?;
            let (sa, sb) = (a.scale()?, b.scale()?);
            bx.push(scaled_up(a, sb.saturating_sub(sa)));
            px.push(scaled_up(b, sa.saturating_sub(sb)));
        }
        let table = JoinTable::build(self.ctx, "sql_join_build", Input::all(build.len), &bx)?;
        Ok(table.semi(self.ctx, "sql_join_reduce", Input::all(probe.len), &px)?)
    }

    /// Join keys materialized before the operators can read them: shared
    /// integer codes for strings (two dictionaries' codes do not match: one
    /// map over both sides' strings; sequential — a note for later: a
    /// parallel dictionary merge belongs in maestro-execution) and for
    /// numbers holding NULLs, and 128-bit values (sums, their extremes)
    /// narrowed to 64 bits where they fit.
    fn key_codes(
        &self,
        left: &Relation<'a>,
        right: &Relation<'a>,
        l_keys: &[&Expr],
        r_keys: &[&Expr],
        nulls: NullKeys,
    ) -> Result<KeyCodes<'a>> {
        let mut out = KeyCodes {
            left: Vec::new(),
            right: Vec::new(),
            coded: Vec::new(),
        };
        for (l, r) in l_keys.iter().zip(r_keys) {
            // (A side holding NULLs is coded: the other side need not be
            // evaluated as a number first.)
            let numeric = if self.ty(l) == SqlType::Str {
                None
            } else {
                match self.numeric_key(l, left)? {
                    NumericKey::HoldsNulls => None,
                    NumericKey::Ready(a) => match self.numeric_key(r, right)? {
                        NumericKey::Ready(b) => Some((a, b)),
                        NumericKey::HoldsNulls => None,
                    },
                }
            };
            out.coded.push(numeric.is_none());
            match numeric {
                Some((a, b)) => {
                    out.left.push(a);
                    out.right.push(b);
                }
                // Strings, and numbers holding NULLs: codes shared by the
                // two sides, a NULL coded differently on each side (and
                // unlike any value) so that it matches nothing.
                None => {
                    let mut codes = HashMap::new();
                    let a = self.intern_key(l, left, &mut codes, NULL_CODE_LEFT)?;
                    let b = self.intern_key(r, right, &mut codes, NULL_CODE_RIGHT)?;
                    if nulls == NullKeys::Refuse
                        && (a.contains(&NULL_CODE_LEFT) || b.contains(&NULL_CODE_RIGHT))
                    {
                        return Err(SqlError::unsupported(format!(
                            "NOT IN (SELECT …) or stacked EXISTS/NOT EXISTS on {} = {}, which \
                             holds NULLs",
                            self.plan.show(l),
                            self.plan.show(r)
                        )));
                    }
                    out.left.push(Some(Vector::Int(a)));
                    out.right.push(Some(Vector::Int(b)));
                }
            }
        }
        Ok(out)
    }

    /// A numeric key the operators cannot evaluate as it is, materialized;
    /// [`NumericKey::HoldsNulls`] if it holds a NULL (the caller codes it).
    pub(super) fn numeric_key(&self, e: &Expr, rel: &Relation<'a>) -> Result<NumericKey<'a>> {
        if to_exec_expr(e, rel).is_some() {
            return Ok(NumericKey::Ready(None));
        }
        let v = eval_vector(self.ctx, e, self.ty(e), rel)?;
        if v.col().is_none() && (0..rel.len).any(|p| v.value_at(p) == Scalar::Null) {
            return Ok(NumericKey::HoldsNulls);
        }
        let v = narrowed(columnar(v)?);
        Ok(NumericKey::Ready(
            v.col().is_some_and(|c| c.is_narrow_numeric()).then_some(v),
        ))
    }

    /// `e`'s values on `rel` as integer codes shared through `codes` with
    /// the other side of a join (equal values, equal codes: numbers of
    /// different scales too), a NULL as `null_code`.
    fn intern_key(
        &self,
        e: &Expr,
        rel: &Relation,
        codes: &mut HashMap<KeyValue, i64>,
        null_code: i64,
    ) -> Result<Vec<i64>> {
        let v = eval_vector(self.ctx, e, self.ty(e), rel)?;
        Ok((0..rel.len)
            .map(|p| match KeyValue::of(v.value_at(p)) {
                Some(k) => {
                    let n = codes.len() as i64;
                    *codes.entry(k).or_insert(n)
                }
                None => null_code,
            })
            .collect())
    }

    /// `e`'s strings on `rel` as codes in order of first appearance (a
    /// NULL is -1: one group of its own, as GROUP BY wants).
    pub(super) fn intern(
        &self,
        e: &Expr,
        rel: &Relation,
        codes: &mut HashMap<String, i64>,
    ) -> Result<Vec<i64>> {
        let v = eval_vector(self.ctx, e, SqlType::Str, rel)?;
        Ok((0..rel.len)
            .map(|p| match v.value_at(p) {
                Scalar::Str(s) => {
                    let n = codes.len() as i64;
                    *codes.entry(s).or_insert(n)
                }
                _ => -1,
            })
            .collect())
    }

    /// ORDER BY [LIMIT]: every key as a column the operator sorts; a key
    /// with NULLs (from an outer join) sorts first by a NULL indicator.
    fn sort(
        &self,
        rel: &Relation<'a>,
        keys: &[(Expr, Direction, bool)],
        limit: Option<usize>,
    ) -> Result<Relation<'a>> {
        let mut vectors: Vec<(Vector, Order)> = Vec::new();
        for (e, d, nulls_first) in keys {
            let order = match d {
                Direction::Asc => Order::Asc,
                Direction::Desc => Order::Desc,
            };
            let v = eval_vector(self.ctx, e, self.ty(e), rel)?;
            match without_nulls(&v, rel.len) {
                None => vectors.push((columnar(v)?, order)),
                Some((is_null, filled)) => {
                    let first = if *nulls_first {
                        Order::Desc
                    } else {
                        Order::Asc
                    };
                    vectors.push((Vector::Int(is_null), first));
                    if let Some(f) = filled {
                        vectors.push((columnar(f)?, order));
                    }
                }
            }
        }
        // A full sort compares each key O(n log n) times: keys read through
        // row ids are gathered into contiguous values first (n reads).
        if limit.is_none() {
            for (v, _) in &mut vectors {
                if let Some(g) = self.gathered_sort_key(v, rel.len)? {
                    *v = g;
                }
            }
        }
        let sort_keys: Vec<SortKey> = vectors
            .iter()
            .map(|(v, order)| SortKey {
                col: v.col().expect("columnar vectors are columns"),
                order: *order,
            })
            .collect();
        let pos = sort(self.ctx, "sql_sort", Input::all(rel.len), &sort_keys, limit)?;
        Ok(rel.take(self.ctx, &pos))
    }

    /// A sort key read through row ids, as contiguous integers that order
    /// as its values do: numbers, dates and dictionary codes (which order
    /// like their strings), gathered once — the comparisons then read an
    /// array in position order instead of the column at scattered rows (TPC-H
    /// Q16 sorts its groups by three keys read back at representative rows).
    /// A delta's rows (the column's tail) are gathered too: its dictionary
    /// columns share the main's dictionary, so their codes order alike.
    /// `None` for a key without row ids or a heap string.
    fn gathered_sort_key(&self, v: &Vector<'a>, len: usize) -> Result<Option<Vector<'a>>> {
        let Vector::Base {
            column,
            rows: Some(_),
            ..
        } = v
        else {
            return Ok(None);
        };
        if matches!(column, maestro_storage::column::Column::StrHeap(_)) {
            return Ok(None);
        }
        let Some(c) = v.col() else {
            return Ok(None);
        };
        let p = maestro_execution::project(
            self.ctx,
            "sql_sort_key",
            Input::all(len),
            &ExecExpr::col(c),
        )?;
        Ok(Some(Vector::Int(p.values)))
    }

    /// The result rows, typed as the plan says.
    fn output(&self, rel: &Relation, outputs: &[(String, Expr)]) -> Result<QueryResult> {
        let types: Vec<SqlType> = outputs.iter().map(|(_, e)| self.ty(e)).collect();
        let mut result = QueryResult {
            columns: outputs
                .iter()
                .zip(&types)
                .map(|((n, _), t)| (n.clone(), column_type(*t)))
                .collect(),
            rows: Vec::with_capacity(rel.len),
        };
        // Each output's vector looked up once, not per cell: a plain column
        // is read directly, anything else evaluated row by row.
        let readers: Vec<(&Expr, Option<&Vector>, SqlType)> = outputs
            .iter()
            .zip(&types)
            .map(|((_, e), t)| {
                let v = match e {
                    Expr::Column(c) => rel.get(*c),
                    _ => None,
                };
                (e, v, *t)
            })
            .collect();
        for p in 0..rel.len {
            let row = readers
                .iter()
                .map(|&(e, v, t)| match v {
                    Some(v) => cell(v.value_at(p), t),
                    None => cell(eval_row(e, rel, p)?, t),
                })
                .collect::<Result<_>>()?;
            result.rows.push(row);
        }
        Ok(result)
    }
}

/// For a vector with NULLs: a 0/1 NULL indicator, and the values with each
/// NULL replaced by some value of the vector (`None` if all are NULL).
#[allow(clippy::type_complexity)]
pub(crate) fn without_nulls<'d>(
    v: &Vector<'d>,
    len: usize,
) -> Option<(Vec<i64>, Option<Vector<'d>>)> {
    if let Vector::Masked { values, nulls } = v {
        if !nulls.contains(&true) {
            return None;
        }
        let is_null = nulls.iter().map(|&n| i64::from(n)).collect();
        return Some((is_null, Some((**values).clone())));
    }
    let Vector::Values(vals) = v else {
        return None;
    };
    let is_null: Vec<i64> = vals.iter().map(|s| i64::from(*s == Scalar::Null)).collect();
    if !is_null.contains(&1) {
        return None;
    }
    let filler = vals.iter().find(|s| **s != Scalar::Null).cloned();
    let filled = filler.map(|f| {
        Vector::Values(
            (0..len)
                .map(|p| match &vals[p] {
                    Scalar::Null => f.clone(),
                    s => s.clone(),
                })
                .collect(),
        )
    });
    Some((is_null, filled))
}

/// A join key: its materialized vector if given, else the key as an
/// operator expression.
fn key_expr<'r>(e: &Expr, rel: &'r Relation, owned: Option<&'r Vector>) -> Result<ExecExpr<'r>> {
    if let Some(c) = owned.and_then(Vector::col) {
        return Ok(ExecExpr::col(c));
    }
    to_exec_expr(e, rel).ok_or_else(|| {
        SqlError::unsupported(
            "a join key that is not an integer, decimal, date or string expression",
        )
    })
}

/// `rows` integers from `start` by `step` (the binder checked they fit).
fn series(start: i64, step: i64, rows: usize) -> Vec<i64> {
    let mut v = Vec::with_capacity(rows);
    let mut x = start;
    for k in 0..rows {
        v.push(x);
        if k + 1 < rows {
            x += step;
        }
    }
    v
}

/// 128-bit values as 64-bit ones when they all fit (the operators' keys
/// and aggregate arguments are 64-bit).
pub(crate) fn narrowed(v: Vector<'_>) -> Vector<'_> {
    match v {
        Vector::Wide { values, scale } => {
            match values.iter().map(|&x| i64::try_from(x)).collect() {
                Ok(values) if scale == 0 => Vector::Int(values),
                Ok(values) => Vector::Dec { values, scale },
                Err(_) => Vector::Wide { values, scale },
            }
        }
        v => v,
    }
}

fn column_type(t: SqlType) -> ColumnType {
    match t {
        SqlType::Int => ColumnType::Int,
        SqlType::Decimal(s) => ColumnType::Decimal(s),
        SqlType::Double => ColumnType::Double,
        SqlType::Date => ColumnType::Date,
        SqlType::Timestamp => ColumnType::Timestamp,
        SqlType::Bool => ColumnType::Bool,
        SqlType::Str | SqlType::Interval => ColumnType::Str,
    }
}

/// An output cell; an integer beyond 64 bits is an error (PostgreSQL's
/// "bigint out of range"), not a wrapped value.
fn cell(v: Scalar, t: SqlType) -> Result<Value> {
    Ok(match (v, t) {
        (Scalar::Null, _) => Value::Null,
        (Scalar::Num { value, .. }, SqlType::Int) => Value::Int(
            i64::try_from(value)
                .map_err(|_| SqlError::invalid(format!("bigint out of range: {value}")))?,
        ),
        (Scalar::Num { value, scale }, SqlType::Decimal(s)) => Value::Decimal {
            value: if s >= scale {
                value * 10i128.pow(u32::from(s - scale))
            } else {
                value / 10i128.pow(u32::from(scale - s))
            },
            scale: s,
        },
        (Scalar::Num { value, .. }, SqlType::Timestamp) => Value::Timestamp(
            i64::try_from(value)
                .map_err(|_| SqlError::invalid(format!("timestamp out of range: {value}")))?,
        ),
        (Scalar::Num { value, scale }, _) => {
            Value::Double(ratio_f64(value, 10i128.pow(u32::from(scale))))
        }
        (Scalar::Double(d), _) => Value::Double(d),
        (Scalar::Date(d), _) => Value::Date(Date(d)),
        (Scalar::Str(s), _) => Value::Str(s),
        (Scalar::Bool(b), _) => Value::Str(b.to_string()),
    })
}

/// `e` scaled up by `by` digits (to compare keys of different scales).
fn scaled_up(e: ExecExpr<'_>, by: u8) -> ExecExpr<'_> {
    match by {
        0 => e,
        d => ExecExpr::int(10i64.pow(u32::from(d))) * e,
    }
}

/// The names and SQL types of the columns [`run`] returns for `plan`, known
/// before running it (what a wire protocol's Describe announces). A boolean
/// column comes back from [`run`] as the strings `true`/`false`.
pub fn result_columns(plan: &LogicalPlan) -> Vec<(String, SqlType)> {
    match &plan.root {
        Plan::Project { outputs, .. } => outputs
            .iter()
            .map(|(n, e)| (n.clone(), type_of(e, &|c| plan.column(c).ty)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The codes of a NULL join key on each side ([`Lowering::intern_key`]):
/// negative, unlike any value's code, and unlike each other, so a NULL
/// matches nothing — not even a NULL.
const NULL_CODE_LEFT: i64 = -1;
const NULL_CODE_RIGHT: i64 = -2;

/// What a join does with a NULL key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NullKeys {
    /// It matches nothing: inner, semi, left outer joins and NOT EXISTS's
    /// anti join, where that is SQL's answer for `=` (a NOT EXISTS row
    /// with a NULL key is kept).
    MatchNothing,
    /// It is refused (0A000): NOT IN's anti join, where a NULL key makes
    /// the test NULL (the row dropped, not kept as a NOT EXISTS would);
    /// and stacked semi/anti joins, which reduce one table for both.
    Refuse,
}

impl NullKeys {
    pub(super) fn of(kind: JoinKind) -> NullKeys {
        match kind {
            JoinKind::AntiIn => NullKeys::Refuse,
            _ => NullKeys::MatchNothing,
        }
    }
}

/// A join's keys as [`Lowering::key_codes`] gives them, per key: each
/// side's materialized vector (`None`: the operators read it as it is) and
/// whether the key was coded (`Vector::Int` codes on both sides, a NULL as
/// [`NULL_CODE_LEFT`] / [`NULL_CODE_RIGHT`]).
struct KeyCodes<'a> {
    left: Vec<Option<Vector<'a>>>,
    right: Vec<Option<Vector<'a>>>,
    coded: Vec<bool>,
}

/// A numeric join key, as [`Lowering::numeric_key`] finds it.
pub(super) enum NumericKey<'a> {
    /// Read by the operators as it is (`None`) or materialized.
    Ready(Option<Vector<'a>>),
    /// It holds a NULL: coded instead ([`Lowering::intern_key`]).
    HoldsNulls,
}

/// A join key's value in a form where equal values are equal: a number
/// without trailing fractional zeros (`1.50` and `1.5`, `2` and `2.0`).
#[derive(Debug, Hash, PartialEq, Eq)]
enum KeyValue {
    Num {
        value: i128,
        scale: u8,
    },
    /// The bits of a double, -0.0 as 0.0.
    Double(u64),
    Date(i32),
    Str(String),
    Bool(bool),
}

impl KeyValue {
    /// `None` for NULL.
    fn of(s: Scalar) -> Option<KeyValue> {
        Some(match s {
            Scalar::Null => return None,
            Scalar::Num {
                mut value,
                mut scale,
            } => {
                while scale > 0 && value % 10 == 0 {
                    value /= 10;
                    scale -= 1;
                }
                KeyValue::Num { value, scale }
            }
            Scalar::Double(d) => KeyValue::Double(if d == 0.0 { 0 } else { d.to_bits() }),
            Scalar::Date(d) => KeyValue::Date(d),
            Scalar::Str(s) => KeyValue::Str(s),
            Scalar::Bool(b) => KeyValue::Bool(b),
        })
    }
}

#[cfg(test)]
mod key_value_tests {
    use super::*;

    #[test]
    fn equal_numbers_of_other_scales_are_one_key_and_null_is_none() {
        let num = |value, scale| KeyValue::of(Scalar::Num { value, scale });
        assert_eq!(num(150, 2), num(15, 1));
        assert_eq!(num(2, 0), num(2000, 3));
        assert_ne!(num(15, 1), num(15, 0));
        assert_eq!(num(0, 4), num(0, 0));
        assert_eq!(
            KeyValue::of(Scalar::Double(-0.0)),
            KeyValue::of(Scalar::Double(0.0))
        );
        assert_eq!(KeyValue::of(Scalar::Null), None);
    }
}
