//! Lowering: runs a [`LogicalPlan`] with `maestro-execution`'s operators on
//! the scheduler — `select` for filters, `JoinTable` build/probe for joins
//! (built on the smaller input), `aggregate` (hash, partial per task then
//! merged) for GROUP BY, `sort`/`top_k` for ORDER BY [LIMIT], `project` for
//! arithmetic — inside the one scheduler job of the statement
//! (`Executor::run_plan`), each operator partitioned by the context's
//! granularity policy. Intermediate results are relations of row ids into
//! the column store plus computed columns ([`vector`]).

mod aggregate;
mod compile;
mod eval;
mod vector;

use std::collections::HashMap;

use maestro_execution::{
    Col, ExecContext, Expr as ExecExpr, Input, JoinTable, Order, SortKey, select, sort,
};
use maestro_storage::column::Date;
use maestro_tpch::queries::{ColumnType, QueryResult, Value, ratio_f64};

use crate::bind::type_of;
use crate::catalog::Catalog;
use crate::error::{Result, SqlError};
use crate::plan::{ColumnId, Direction, Expr, LogicalPlan, Plan};
use crate::types::SqlType;
use compile::{columnar, eval_vector, to_exec_expr, to_pred};
use eval::eval_row;
use vector::{Relation, Scalar, Vector};

/// Runs `plan` in `ctx` (call it inside `Executor::run_plan`).
pub fn run(ctx: &ExecContext, catalog: &dyn Catalog, plan: &LogicalPlan) -> Result<QueryResult> {
    let Plan::Project { input, outputs } = &plan.root else {
        return Err(SqlError::invalid("a plan ends with its projection"));
    };
    let l = Lowering { ctx, catalog, plan };
    let rel = l.node(input)?;
    l.output(&rel, outputs)
}

struct Lowering<'a> {
    ctx: &'a ExecContext,
    catalog: &'a dyn Catalog,
    plan: &'a LogicalPlan,
}

impl<'a> Lowering<'a> {
    pub(super) fn ty(&self, e: &Expr) -> SqlType {
        type_of(e, &|c| self.plan.column(c).ty)
    }

    fn node(&self, p: &'a Plan) -> Result<Relation<'a>> {
        match p {
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
            Plan::Join { left, right, keys } => {
                let (l, r) = (self.node(left)?, self.node(right)?);
                self.join(l, r, keys)
            }
            Plan::Aggregate {
                input,
                groups,
                aggs,
            } => {
                let rel = self.node(input)?;
                self.aggregate(&rel, groups, aggs)
            }
            Plan::Sort { input, keys } => {
                let rel = self.node(input)?;
                self.sort(&rel, keys, None)
            }
            Plan::Limit { input, count } => match input.as_ref() {
                Plan::Sort { input, keys } => {
                    let rel = self.node(input)?;
                    self.sort(&rel, keys, Some(*count))
                }
                other => {
                    let rel = self.node(other)?;
                    let pos: Vec<u32> = (0..rel.len.min(*count) as u32).collect();
                    Ok(rel.take(self.ctx, &pos))
                }
            },
            Plan::Project { .. } => Err(SqlError::unsupported("a projection below the top")),
        }
    }

    fn scan(
        &self,
        table: &str,
        columns: &[(ColumnId, usize)],
        filter: &[Expr],
    ) -> Result<Relation<'a>> {
        let data = self
            .catalog
            .data(table)
            .ok_or_else(|| SqlError::invalid(format!("table {table} has no data")))?;
        let mut rel = Relation {
            len: data.num_rows(),
            cols: columns
                .iter()
                .map(|&(id, i)| {
                    (
                        id,
                        Vector::Base {
                            column: data.column_at(i),
                            rows: None,
                        },
                    )
                })
                .collect(),
        };
        if !filter.is_empty() {
            rel = self.filter(rel, filter)?;
        }
        Ok(rel)
    }

    fn filter(&self, rel: Relation<'a>, predicate: &[Expr]) -> Result<Relation<'a>> {
        let all = Expr::And(predicate.to_vec());
        let pos = {
            let pred = to_pred(self.ctx, &all, &rel)?;
            select(self.ctx, "sql_filter", rel.len, &pred)?
        };
        Ok(rel.take(self.ctx, &pos))
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
        let (l_owned, r_owned) = self.key_codes(&left, &right, &l_keys, &r_keys)?;
        let (left, right) = (&left, &right);
        let mut lx = Vec::new();
        let mut rx = Vec::new();
        for i in 0..keys.len() {
            let a = key_expr(l_keys[i], left, l_owned[i].as_deref())?;
            let b = key_expr(r_keys[i], right, r_owned[i].as_deref())?;
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

    /// Shared integer codes for string join keys (two dictionaries' codes do
    /// not match): one map over both sides' strings. Sequential; a note for
    /// later: a parallel dictionary merge belongs in maestro-execution.
    #[allow(clippy::type_complexity)]
    fn key_codes(
        &self,
        left: &Relation,
        right: &Relation,
        l_keys: &[&Expr],
        r_keys: &[&Expr],
    ) -> Result<(Vec<Option<Vec<i64>>>, Vec<Option<Vec<i64>>>)> {
        let mut lo = Vec::new();
        let mut ro = Vec::new();
        for (l, r) in l_keys.iter().zip(r_keys) {
            if self.ty(l) == SqlType::Str {
                let mut codes = HashMap::new();
                lo.push(Some(self.intern(l, left, &mut codes)?));
                ro.push(Some(self.intern(r, right, &mut codes)?));
            } else {
                lo.push(None);
                ro.push(None);
            }
        }
        Ok((lo, ro))
    }

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

    fn sort(
        &self,
        rel: &Relation<'a>,
        keys: &[(Expr, Direction)],
        limit: Option<usize>,
    ) -> Result<Relation<'a>> {
        let vectors: Vec<Vector> = keys
            .iter()
            .map(|(e, _)| columnar(eval_vector(self.ctx, e, self.ty(e), rel)?))
            .collect::<Result<_>>()?;
        let sort_keys: Vec<SortKey> = vectors
            .iter()
            .zip(keys)
            .map(|(v, (_, d))| SortKey {
                col: v.col().expect("columnar vectors are columns"),
                order: match d {
                    Direction::Asc => Order::Asc,
                    Direction::Desc => Order::Desc,
                },
            })
            .collect();
        let pos = sort(self.ctx, "sql_sort", Input::all(rel.len), &sort_keys, limit)?;
        Ok(rel.take(self.ctx, &pos))
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
        for p in 0..rel.len {
            let row = outputs
                .iter()
                .zip(&types)
                .map(|((_, e), t)| cell(eval_row(e, rel, p), *t))
                .collect();
            result.rows.push(row);
        }
        Ok(result)
    }
}

/// A join key: interned codes if given, else the key as an operator expression.
fn key_expr<'r>(e: &Expr, rel: &'r Relation, codes: Option<&'r [i64]>) -> Result<ExecExpr<'r>> {
    if let Some(c) = codes {
        return Ok(ExecExpr::col(Col::i64(c)));
    }
    to_exec_expr(e, rel).ok_or_else(|| {
        SqlError::unsupported(
            "a join key that is not an integer, decimal, date or string expression",
        )
    })
}

fn column_type(t: SqlType) -> ColumnType {
    match t {
        SqlType::Int => ColumnType::Int,
        SqlType::Decimal(s) => ColumnType::Decimal(s),
        SqlType::Double => ColumnType::Double,
        SqlType::Date => ColumnType::Date,
        SqlType::Str | SqlType::Bool | SqlType::Interval => ColumnType::Str,
    }
}

fn cell(v: Scalar, t: SqlType) -> Value {
    match (v, t) {
        (Scalar::Null, _) => Value::Null,
        (Scalar::Num { value, .. }, SqlType::Int) => Value::Int(value as i64),
        (Scalar::Num { value, scale }, SqlType::Decimal(s)) => Value::Decimal {
            value: if s >= scale {
                value * 10i128.pow(u32::from(s - scale))
            } else {
                value / 10i128.pow(u32::from(scale - s))
            },
            scale: s,
        },
        (Scalar::Num { value, scale }, _) => {
            Value::Double(ratio_f64(value, 10i128.pow(u32::from(scale))))
        }
        (Scalar::Double(d), _) => Value::Double(d),
        (Scalar::Date(d), _) => Value::Date(Date(d)),
        (Scalar::Str(s), _) => Value::Str(s),
        (Scalar::Bool(b), _) => Value::Str(b.to_string()),
    }
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
