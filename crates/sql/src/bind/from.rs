//! The FROM clause: tables (with aliases) into the scope, as cross products
//! in FROM order; inner-join ON conditions become WHERE conjuncts.

use sqlparser::ast::{self, Ident, JoinConstraint, JoinOperator, Spanned, TableFactor};

use super::Binder;
use super::expr::ExprCtx;
use super::scope::{Scope, TableScope, normalize};
use crate::error::{ErrorKind, Result, SqlError};
use crate::plan::{Expr, Plan};

impl Binder<'_> {
    /// The FROM clause as cross products in FROM order, and the ON conjuncts.
    pub(super) fn from(
        &mut self,
        from: &[ast::TableWithJoins],
        scope: &mut Scope,
    ) -> Result<(Plan, Vec<Expr>)> {
        let mut plan: Option<Plan> = None;
        let mut on = Vec::new();
        let mut pending_on = Vec::new();
        let add = |p: Plan, plan: &mut Option<Plan>| {
            *plan = Some(match plan.take() {
                None => p,
                Some(left) => Plan::Join {
                    left: Box::new(left),
                    right: Box::new(p),
                    keys: Vec::new(),
                },
            });
        };
        if from.is_empty() {
            return Err(SqlError::unsupported("SELECT without FROM"));
        }
        for twj in from {
            let p = self.table_factor(&twj.relation, scope)?;
            add(p, &mut plan);
            for j in &twj.joins {
                let constraint = match &j.join_operator {
                    JoinOperator::Join(c) | JoinOperator::Inner(c) => Some(c),
                    JoinOperator::CrossJoin(_) => None,
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "{} (only inner joins)",
                            join_name(other)
                        ))
                        .at(j.relation.span()));
                    }
                };
                let p = self.table_factor(&j.relation, scope)?;
                add(p, &mut plan);
                match constraint {
                    Some(JoinConstraint::On(e)) => pending_on.push(e.clone()),
                    Some(JoinConstraint::None) | None => {}
                    Some(_) => {
                        return Err(SqlError::unsupported("JOIN … USING / NATURAL JOIN")
                            .at(j.relation.span()));
                    }
                }
            }
        }
        // ON conditions may name any table of the FROM clause bound so far;
        // binding them after the whole FROM is a superset of that.
        let ctx = ExprCtx {
            scope,
            aggs_forbidden_in: Some("JOIN … ON"),
        };
        for e in &pending_on {
            let p = self.bind_expr(e, &ctx)?;
            self.bool_clause(&p, "JOIN … ON", e)?;
            on.extend(p.conjuncts());
        }
        Ok((plan.expect("FROM is not empty"), on))
    }

    fn table_factor(&mut self, t: &TableFactor, scope: &mut Scope) -> Result<Plan> {
        let TableFactor::Table {
            name, alias, args, ..
        } = t
        else {
            return Err(match t {
                TableFactor::Derived { .. } => SqlError::unsupported("subqueries in FROM"),
                _ => SqlError::unsupported(format!("FROM item {t}")),
            }
            .at(t.span()));
        };
        if args.is_some() {
            return Err(SqlError::unsupported("table functions").at(t.span()));
        }
        let ident: &Ident = match name.0.as_slice() {
            [ast::ObjectNamePart::Identifier(id)] => id,
            _ => return Err(SqlError::unsupported(format!("table name {name}")).at(t.span())),
        };
        let table = normalize(ident);
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
        let alias_name = alias.as_ref().map_or(table.clone(), |a| normalize(&a.name));
        let mut columns = Vec::new();
        let mut scan_cols = Vec::new();
        for (i, c) in def.columns.iter().enumerate() {
            let id = self.new_column(format!("{alias_name}.{}", c.name), c.ty);
            columns.push((c.name.clone(), id));
            scan_cols.push((id, i));
        }
        let at = alias.as_ref().map_or(ident, |a| &a.name);
        scope.add(
            TableScope {
                alias: alias_name.clone(),
                columns,
            },
            at,
        )?;
        Ok(Plan::Scan {
            table,
            alias: alias_name,
            columns: scan_cols,
            filter: Vec::new(),
            rows: def.rows,
        })
    }
}

/// The SQL spelling of a join this slice does not run.
fn join_name(op: &JoinOperator) -> &'static str {
    match op {
        JoinOperator::Left(_) | JoinOperator::LeftOuter(_) => "LEFT [OUTER] JOIN",
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
