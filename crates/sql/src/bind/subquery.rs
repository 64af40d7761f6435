//! Subqueries in expressions, unnested into joins of the query they appear
//! in (the binder's half of the optimizer's subquery unnesting):
//!
//! - an uncorrelated scalar subquery (an aggregate without GROUP BY, so
//!   exactly one row) becomes one more FROM item, a one-row cross product;
//! - a correlated scalar subquery whose correlation is equalities
//!   `outer = inner` becomes its aggregate grouped by the inner sides, joined
//!   on `outer = group`: an inner join (one more FROM item) when the WHERE
//!   condition rejects the NULL of a row without a group, else a LEFT JOIN
//!   after the other conditions — also for COUNT, whose missing group
//!   counts 0 (read as `COALESCE(count, 0)`);
//! - `[NOT] EXISTS` and `[NOT] IN (SELECT …)` become semi (anti) joins on
//!   the IN key and the correlated equalities, other correlated conditions
//!   checked on each pair (TPC-H Q21's `l2.l_suppkey <> l1.l_suppkey`).

use std::collections::BTreeSet;

use sqlparser::ast;

use super::expr::ExprCtx;
use super::{Binder, Pending};
use crate::error::{Result, SqlError};
use crate::plan::{AggFunc, CmpOp, ColumnId, Expr, Plan};
use crate::types::SqlType;

/// The plan below a subquery's projection, without sorts (they do not
/// change what a subquery yields).
fn strip(plan: Plan) -> Result<(Plan, Vec<(String, Expr)>)> {
    let Plan::Project { input, outputs } = plan else {
        return Err(SqlError::invalid(
            "a subquery plan ends with its projection",
        ));
    };
    let mut p = *input;
    while let Plan::Sort { input, .. } = p {
        p = *input;
    }
    Ok((p, outputs))
}

/// `c` as `outer = inner`, if it is an equality with one side reading only
/// `inner` columns and the other none of them.
fn split_equality(c: &Expr, inner: &BTreeSet<ColumnId>) -> Option<(Expr, Expr)> {
    let Expr::Cmp(CmpOp::Eq, a, b) = c else {
        return None;
    };
    let within = |e: &Expr| {
        let cols = e.columns();
        !cols.is_empty() && cols.iter().all(|x| inner.contains(x))
    };
    let outside = |e: &Expr| e.columns().iter().all(|x| !inner.contains(x));
    if within(b) && outside(a) {
        Some(((**a).clone(), (**b).clone()))
    } else if within(a) && outside(b) {
        Some(((**b).clone(), (**a).clone()))
    } else {
        None
    }
}

/// Whether a plan groups or limits at its top (below which a correlated
/// condition could not be moved up to a join).
fn groups_or_limits(p: &Plan) -> bool {
    match p {
        Plan::Aggregate { .. } | Plan::Limit { .. } => true,
        Plan::Filter { input, .. } | Plan::Map { input, .. } | Plan::Sort { input, .. } => {
            groups_or_limits(input)
        }
        _ => false,
    }
}

impl Binder<'_> {
    /// `(SELECT …)` as a value.
    pub(super) fn scalar_subquery(&mut self, q: &ast::Query, ctx: &ExprCtx) -> Result<Expr> {
        let bound = self.query(q, Some(ctx.scope))?;
        let (plan, mut outputs) = strip(bound.plan)?;
        if outputs.len() != 1 {
            return Err(SqlError::mismatch(format!(
                "a scalar subquery must return one column, not {}",
                outputs.len()
            )));
        }
        let value = outputs.pop().expect("one output").1;
        let values = value.columns();
        if bound.correlated.is_empty() {
            if !plan.is_single_row() {
                return Err(SqlError::unsupported(
                    "a scalar subquery other than an aggregate without GROUP BY (it could return several rows)",
                ));
            }
            self.pending.push(Pending::Scalar {
                plan,
                conds: Vec::new(),
                values,
                correlated: false,
                count: false,
            });
            return Ok(value);
        }
        let Plan::Aggregate {
            input,
            groups,
            aggs,
        } = plan
        else {
            return Err(SqlError::unsupported(
                "a correlated scalar subquery other than an aggregate without GROUP BY or HAVING",
            ));
        };
        if !groups.is_empty() {
            return Err(SqlError::unsupported(
                "a correlated scalar subquery with GROUP BY",
            ));
        }
        // A COUNT of a group that does not exist is 0: the value reads it
        // as COALESCE(count, 0), and the join must keep the outer rows
        // without a group (a LEFT JOIN).
        let counts: Vec<ColumnId> = aggs
            .iter()
            .filter(|(_, a)| {
                matches!(
                    a.func,
                    AggFunc::Count | AggFunc::CountStar | AggFunc::CountDistinct
                )
            })
            .map(|(id, _)| *id)
            .collect();
        let value = value.rewrite(&mut |e| match e {
            Expr::Column(c) if counts.contains(c) => Some(Expr::Case {
                whens: vec![(
                    Expr::IsNull {
                        expr: Box::new(e.clone()),
                        negated: true,
                    },
                    e.clone(),
                )],
                otherwise: Some(Box::new(Expr::Lit(crate::types::Literal::int(0)))),
            }),
            _ => None,
        });
        let inner: BTreeSet<ColumnId> = input.output_columns().into_iter().collect();
        let mut new_groups: Vec<(ColumnId, Expr)> = Vec::new();
        let mut conds = Vec::new();
        for c in &bound.correlated {
            let Some((outer, in_side)) = split_equality(c, &inner) else {
                return Err(SqlError::unsupported(
                    "a correlated scalar subquery whose correlation is not equalities (outer = inner)",
                ));
            };
            let id = match new_groups.iter().find(|g| g.1 == in_side) {
                Some(g) => g.0,
                None => {
                    let id = match &in_side {
                        Expr::Column(c) if !new_groups.iter().any(|g| g.0 == *c) => *c,
                        e => {
                            let ty = self.type_of(e);
                            self.new_column(format!("correlation key {}", new_groups.len() + 1), ty)
                        }
                    };
                    new_groups.push((id, in_side));
                    id
                }
            };
            conds.push(Expr::cmp(CmpOp::Eq, outer, Expr::Column(id)));
        }
        // Grouped, these aggregates are never of no rows (but may be of
        // only NULLs).
        for (id, a) in &aggs {
            if !a.arg.as_ref().is_some_and(|x| self.is_nullable(x)) {
                self.nullable.remove(id);
            }
        }
        self.pending.push(Pending::Scalar {
            plan: Plan::Aggregate {
                input,
                groups: new_groups,
                aggs,
            },
            conds,
            values,
            correlated: true,
            count: !counts.is_empty(),
        });
        Ok(value)
    }

    /// `[NOT] EXISTS (…)` (`probe` is `None`) or `probe [NOT] IN (…)`: a
    /// boolean marker column that the WHERE clause turns into the join.
    pub(super) fn semi_subquery(
        &mut self,
        q: &ast::Query,
        probe: Option<Expr>,
        negated: bool,
        ctx: &ExprCtx,
    ) -> Result<Expr> {
        let bound = self.query(q, Some(ctx.scope))?;
        let (plan, outputs) = strip(bound.plan)?;
        if !bound.correlated.is_empty() && groups_or_limits(&plan) {
            return Err(SqlError::unsupported(
                "a correlated EXISTS / IN subquery with GROUP BY, aggregates or LIMIT",
            ));
        }
        let inner: BTreeSet<ColumnId> = plan.output_columns().into_iter().collect();
        let mut keys = Vec::new();
        let mut residual = Vec::new();
        let what = if probe.is_some() { "IN" } else { "EXISTS" };
        let in_list = probe.is_some();
        if let Some(x) = probe {
            let [(_, y)] = outputs.as_slice() else {
                return Err(SqlError::mismatch(format!(
                    "IN (SELECT …) needs one column, not {}",
                    outputs.len()
                )));
            };
            let Expr::Cmp(_, x, y) = self.compare(CmpOp::Eq, x, y.clone())? else {
                return Err(SqlError::invalid("a comparison binds to a comparison"));
            };
            // Uncorrelated, NOT IN's NULLs are answered by its join
            // (`JoinKind::AntiIn`); correlated, the NULL answer would
            // depend on each row's subquery: refused.
            if negated
                && !bound.correlated.is_empty()
                && (self.is_nullable(&x) || self.is_nullable(&y))
            {
                return Err(SqlError::unsupported(
                    "a correlated NOT IN (SELECT …) over values that may be NULL",
                ));
            }
            if self.type_of(&x) == SqlType::Bool {
                return Err(SqlError::mismatch("IN (SELECT …) of boolean values"));
            }
            keys.push((*x, *y));
        }
        for c in bound.correlated {
            match split_equality(&c, &inner) {
                Some(k) => keys.push(k),
                None => residual.push(c),
            }
        }
        let not = if negated { "NOT " } else { "" };
        let marker = self.new_column(format!("{not}{what} (subquery)"), SqlType::Bool);
        self.pending.push(Pending::Semi {
            marker,
            anti: negated,
            in_list,
            plan,
            keys,
            residual,
        });
        Ok(Expr::Column(marker))
    }

    pub(super) fn is_nullable(&self, e: &Expr) -> bool {
        e.columns().iter().any(|c| self.nullable.contains(c))
    }
}
