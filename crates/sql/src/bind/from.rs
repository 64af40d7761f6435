//! The FROM clause: tables (with aliases), derived tables and WITH queries
//! into the scope. Inner joins are cross products in FROM order whose ON
//! conditions become WHERE conjuncts; a LEFT [OUTER] JOIN is a join node of
//! its own (its ON condition decides which rows match, not which survive).

use std::collections::BTreeSet;

use sqlparser::ast::{self, Ident, JoinConstraint, JoinOperator, Spanned, TableFactor};

use super::Binder;
use super::expr::ExprCtx;
use super::scope::{Scope, TableScope, normalize};
use crate::error::{ErrorKind, Result, SqlError};
use crate::plan::{ColumnId, Expr, JoinKind, Plan};

fn cross(left: Option<Plan>, right: Plan) -> Plan {
    match left {
        None => right,
        Some(left) => Plan::Join {
            left: Box::new(left),
            right: Box::new(right),
            kind: JoinKind::Inner,
            keys: Vec::new(),
            residual: Vec::new(),
        },
    }
}

impl Binder<'_> {
    /// The FROM clause as cross products in FROM order, and the ON
    /// conjuncts of its inner joins.
    pub(super) fn from(
        &mut self,
        from: &[ast::TableWithJoins],
        scope: &mut Scope,
    ) -> Result<(Plan, Vec<Expr>)> {
        if from.is_empty() {
            // SELECT without FROM: its expressions over one row.
            return Ok((Plan::OneRow, Vec::new()));
        }
        let mut plan: Option<Plan> = None;
        let mut pending_on = Vec::new();
        for twj in from {
            let mut chain = self.table_factor(&twj.relation, scope)?;
            for j in &twj.joins {
                let (constraint, outer) = match &j.join_operator {
                    JoinOperator::Join(c) | JoinOperator::Inner(c) => (Some(c), false),
                    JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (Some(c), true),
                    JoinOperator::CrossJoin(_) => (None, false),
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "{} (only inner and left outer joins)",
                            join_name(other)
                        ))
                        .at(j.relation.span()));
                    }
                };
                let left_cols: BTreeSet<ColumnId> = chain.output_columns().into_iter().collect();
                let p = self.table_factor(&j.relation, scope)?;
                let on = match constraint {
                    Some(JoinConstraint::On(e)) => Some(e),
                    Some(JoinConstraint::None) | None => None,
                    Some(_) => {
                        return Err(SqlError::unsupported("JOIN … USING / NATURAL JOIN")
                            .at(j.relation.span()));
                    }
                };
                if outer {
                    let Some(on) = on else {
                        return Err(SqlError::invalid("LEFT JOIN needs an ON condition")
                            .at(j.relation.span()));
                    };
                    chain = self.left_join(chain, p, &left_cols, on, scope)?;
                } else {
                    chain = cross(Some(chain), p);
                    pending_on.extend(on.cloned());
                }
            }
            plan = Some(cross(plan, chain));
        }
        // ON conditions may name any table of the FROM clause bound so far;
        // binding them after the whole FROM is a superset of that.
        let ctx = ExprCtx {
            scope,
            aggs_forbidden_in: Some("JOIN … ON"),
        };
        let mut on = Vec::new();
        for e in &pending_on {
            let p = self.bind_expr(e, &ctx)?;
            self.bool_clause(&p, "JOIN … ON", e)?;
            on.extend(p.conjuncts());
        }
        Ok((plan.expect("FROM is not empty"), on))
    }

    /// `left LEFT JOIN right ON on`: equalities between the sides are the
    /// keys, conditions on the right side alone filter it first, the rest is
    /// checked on each pair; the right side's columns may then be NULL.
    fn left_join(
        &mut self,
        left: Plan,
        right: Plan,
        left_cols: &BTreeSet<ColumnId>,
        on: &ast::Expr,
        scope: &Scope,
    ) -> Result<Plan> {
        let right_cols: BTreeSet<ColumnId> = right.output_columns().into_iter().collect();
        let ctx = ExprCtx {
            scope,
            aggs_forbidden_in: Some("JOIN … ON"),
        };
        let p = self.bind_expr(on, &ctx)?;
        self.bool_clause(&p, "JOIN … ON", on)?;
        self.no_subqueries("JOIN … ON")?;
        let within = |e: &Expr, s: &BTreeSet<ColumnId>| e.columns().iter().all(|c| s.contains(c));
        let mut keys = Vec::new();
        let mut right_filter = Vec::new();
        let mut residual = Vec::new();
        let both: BTreeSet<ColumnId> = left_cols.union(&right_cols).copied().collect();
        for c in p.conjuncts() {
            if !within(&c, &both) {
                return Err(SqlError::invalid(
                    "a LEFT JOIN's ON condition may only name the two tables it joins",
                )
                .at(on.span()));
            }
            if let Expr::Cmp(crate::plan::CmpOp::Eq, a, b) = &c {
                let (a_cols, b_cols) = (a.columns(), b.columns());
                if !a_cols.is_empty() && !b_cols.is_empty() {
                    if within(a, left_cols) && within(b, &right_cols) {
                        keys.push(((**a).clone(), (**b).clone()));
                        continue;
                    }
                    if within(b, left_cols) && within(a, &right_cols) {
                        keys.push(((**b).clone(), (**a).clone()));
                        continue;
                    }
                }
            }
            let cols = c.columns();
            if !cols.is_empty() && within(&c, &right_cols) {
                right_filter.push(c);
            } else {
                residual.push(c);
            }
        }
        if keys.is_empty() {
            return Err(SqlError::unsupported(
                "LEFT JOIN without an equality between the two sides in ON",
            )
            .at(on.span()));
        }
        self.nullable.extend(right_cols.iter().copied());
        let right = if right_filter.is_empty() {
            right
        } else {
            Plan::Filter {
                input: Box::new(right),
                predicate: right_filter,
            }
        };
        Ok(Plan::Join {
            left: Box::new(left),
            right: Box::new(right),
            kind: JoinKind::LeftOuter,
            keys,
            residual,
        })
    }

    fn table_factor(&mut self, t: &TableFactor, scope: &mut Scope) -> Result<Plan> {
        let (name, alias) = match t {
            TableFactor::Table {
                name, alias, args, ..
            } => {
                if let Some(args) = args {
                    let is_series = matches!(
                        name.0.as_slice(),
                        [ast::ObjectNamePart::Identifier(f)] if normalize(f) == "generate_series"
                    );
                    if !is_series {
                        return Err(SqlError::unsupported(format!(
                            "table function {name} (generate_series is the one here)"
                        ))
                        .at(t.span()));
                    }
                    return self.series(t, args, alias.as_ref(), scope);
                }
                (name, alias)
            }
            TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                if *lateral {
                    return Err(SqlError::unsupported("LATERAL").at(t.span()));
                }
                let (name, at) = match alias {
                    Some(a) => (normalize(&a.name), a.name.clone()),
                    None => {
                        self.unnamed += 1;
                        let n = format!("subquery{}", self.unnamed);
                        (n.clone(), Ident::new(n))
                    }
                };
                let cols: Vec<String> = alias
                    .iter()
                    .flat_map(|a| a.columns.iter().map(|c| normalize(&c.name)))
                    .collect();
                return self
                    .derived(subquery, &name, &cols, &at, scope)
                    .map_err(|e| e.at(t.span()));
            }
            _ => return Err(SqlError::unsupported(format!("FROM item {t}")).at(t.span())),
        };
        let ident: &Ident = match name.0.as_slice() {
            [ast::ObjectNamePart::Identifier(id)] => id,
            _ => return Err(SqlError::unsupported(format!("table name {name}")).at(t.span())),
        };
        let table = normalize(ident);
        let alias_name = alias.as_ref().map_or(table.clone(), |a| normalize(&a.name));
        let at = alias.as_ref().map_or(ident, |a| &a.name);
        // A WITH query: its body, bound again for each reference, seeing
        // only the WITH queries before it.
        if let Some(k) = self.ctes.iter().rposition(|c| c.0 == table) {
            let later = self.ctes.split_off(k + 1);
            let (_, mut cols, body) = self.ctes[k].clone();
            if let Some(a) = alias
                && !a.columns.is_empty()
            {
                cols = a.columns.iter().map(|c| normalize(&c.name)).collect();
            }
            let own = self.ctes.pop().expect("the WITH query");
            let r = self.derived(&body, &alias_name, &cols, at, scope);
            self.ctes.push(own);
            self.ctes.extend(later);
            return r.map_err(|e| e.at(t.span()));
        }
        let Some(def) = self.catalog.table(&table) else {
            return Err(SqlError::new(
                ErrorKind::UnknownTable,
                format!(
                    "unknown table \"{table}\" (tables: {})",
                    self.catalog.table_names().join(", ")
                ),
            )
            .at(ident.span));
        };
        if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
            return Err(SqlError::unsupported("column aliases on a table").at(t.span()));
        }
        let mut columns = Vec::new();
        let mut scan_cols = Vec::new();
        for (i, c) in def.columns.iter().enumerate() {
            let id = self.new_column(format!("{alias_name}.{}", c.name), c.ty);
            if c.nullable {
                self.nullable.insert(id);
            }
            columns.push((c.name.clone(), id));
            scan_cols.push((id, i));
        }
        scope.add(
            TableScope {
                alias: alias_name.clone(),
                columns,
                qualified_only: self.catalog.qualified_only(&table),
            },
            at,
        )?;
        Ok(Plan::Scan {
            table,
            alias: alias_name,
            columns: scan_cols,
            filter: Vec::new(),
            rows: def.rows,
            index: None,
        })
    }

    /// A derived table (or WITH query) `q AS name (cols)`: its plan, its
    /// outputs as the columns of `name` (computed ones by a Map).
    fn derived(
        &mut self,
        q: &ast::Query,
        name: &str,
        col_aliases: &[String],
        at: &Ident,
        scope: &mut Scope,
    ) -> Result<Plan> {
        let bound = self.query(q, None)?;
        let Plan::Project { input, outputs } = bound.plan else {
            return Err(SqlError::invalid("a query plan ends with its projection"));
        };
        if col_aliases.len() > outputs.len() {
            return Err(SqlError::invalid(format!(
                "table \"{name}\" has {} columns available but {} columns specified",
                outputs.len(),
                col_aliases.len()
            )));
        }
        let mut exprs = Vec::new();
        let mut columns: Vec<(String, ColumnId)> = Vec::new();
        for (i, (out_name, e)) in outputs.into_iter().enumerate() {
            let col_name = col_aliases.get(i).cloned().unwrap_or(out_name);
            let id = match e {
                Expr::Column(c) if !columns.iter().any(|x| x.1 == c) => c,
                e => {
                    let ty = self.type_of(&e);
                    let id = self.new_column(format!("{name}.{col_name}"), ty);
                    if self.is_nullable(&e) {
                        self.nullable.insert(id);
                    }
                    exprs.push((id, e));
                    id
                }
            };
            columns.push((col_name, id));
        }
        scope.add(
            TableScope {
                alias: name.to_string(),
                columns,
                qualified_only: false,
            },
            at,
        )?;
        Ok(if exprs.is_empty() {
            *input
        } else {
            Plan::Map { input, exprs }
        })
    }
}

/// The SQL spelling of a join this slice does not run.
fn join_name(op: &JoinOperator) -> &'static str {
    match op {
        JoinOperator::Right(_) | JoinOperator::RightOuter(_) => "RIGHT [OUTER] JOIN",
        JoinOperator::FullOuter(_) => "FULL OUTER JOIN",
        JoinOperator::Semi(_) | JoinOperator::LeftSemi(_) | JoinOperator::RightSemi(_) => {
            "SEMI JOIN"
        }
        JoinOperator::Anti(_) | JoinOperator::LeftAnti(_) | JoinOperator::RightAnti(_) => {
            "ANTI JOIN"
        }
        _ => "this kind of join",
    }
}
